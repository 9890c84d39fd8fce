#include "common/strbuf.h"
#include "common/alloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void nd_strbuf_printf(nd_strbuf *sb, const char *fmt, ...) {
    if (sb->failed) return;
    for (;;) {
        size_t room = sb->cap - sb->len;
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(sb->buf ? sb->buf + sb->len : NULL, room, fmt, ap);
        va_end(ap);
        if (n < 0) {
            sb->failed = 1;
            return;
        }
        if ((size_t)n < room) {
            sb->len += (size_t)n;
            return;
        }
        size_t cap = sb->cap ? sb->cap * 2 : 4096;
        while (cap - sb->len <= (size_t)n) cap *= 2;
        char *p = nd_realloc(sb->buf, cap);
        if (!p) {
            sb->failed = 1;
            return;
        }
        sb->buf = p;
        sb->cap = cap;
    }
}

void nd_strbuf_free(nd_strbuf *sb) {
    free(sb->buf);
    sb->buf = NULL;
    sb->len = sb->cap = 0;
}
