/* A growable string that printf appends to: generated source code (the CUDA
 * kernels, the CPU JIT's C). */
#ifndef ND_COMMON_STRBUF_H
#define ND_COMMON_STRBUF_H

#include <stddef.h>

#include "common/error.h"

typedef struct {
    char *buf; /* NUL-terminated once anything was appended */
    size_t len, cap;
    int failed; /* an allocation failed: the result is unusable */
} nd_strbuf;

/* Appends; after a failure it does nothing (check `failed` once at the end). */
void nd_strbuf_printf(nd_strbuf *sb, const char *fmt, ...) ND_PRINTF(2, 3);
void nd_strbuf_free(nd_strbuf *sb);

#endif
