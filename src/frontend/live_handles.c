/* nd_shutdown's report of the handles still alive (ND_LOG >= 1): how many,
 * and which calls made them, so a leak is not silent. With call sites
 * (ND_DEBUG_CALLSITES) each origin names its line: "2 by nd_add
 * (heat.c:42)". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "frontend/frontend.h"

typedef struct {
    const char *origin;
    int64_t count;
} origin_count;

static int by_origin(const void *x, const void *y) {
    const char *a = ((const origin_count *)x)->origin, *b = ((const origin_count *)y)->origin;
    return a == b ? 0 : !a ? 1 : !b ? -1 : strcmp(a, b);
}

static int by_count(const void *x, const void *y) {
    const origin_count *a = x, *b = y;
    return a->count != b->count ? (a->count < b->count ? 1 : -1) : by_origin(x, y);
}

/* The most frequent origins named in the report. */
#define ND_LIVE_REPORT_ORIGINS 8

void nd_report_live_handles(void) {
    const int64_t n = nd_array_live_count();
    if (n == 0 || !nd_log_enabled(1)) return;
    origin_count *c = nd_malloc((size_t)n * sizeof *c);
    if (!c) {
        nd_logf(1, "nd_shutdown: %lld array handles were still alive (never freed with nd_free or a scope)",
                (long long)n);
        return;
    }
    int64_t k = 0, with_site = 0;
    for (const nd_array *a = nd_array_live_first(); a; a = a->live_next) c[k++] = (origin_count){a->origin, 1};
    qsort(c, (size_t)n, sizeof *c, by_origin);
    int64_t groups = 0;
    for (int64_t i = 0; i < n; i++) {
        if (groups && by_origin(&c[groups - 1], &c[i]) == 0) c[groups - 1].count++;
        else c[groups++] = c[i];
        with_site += c[i].origin && strchr(c[i].origin, '(') != NULL;
    }
    qsort(c, (size_t)groups, sizeof *c, by_count);
    char list[1024];
    size_t len = 0;
    list[0] = '\0';
    for (int64_t g = 0; g < groups && g < ND_LIVE_REPORT_ORIGINS && len < sizeof list; g++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%lld by %s", g ? ", " : "", (long long)c[g].count,
                                c[g].origin ? c[g].origin : "an internal call");
    if (groups > ND_LIVE_REPORT_ORIGINS && len < sizeof list)
        snprintf(list + len, sizeof list - len, ", and %lld more calls", (long long)(groups - ND_LIVE_REPORT_ORIGINS));
    nd_logf(1, "nd_shutdown: %lld array handle%s still alive (never freed with nd_free or a scope): made %s%s",
            (long long)n, n == 1 ? " was" : "s were", list,
            with_site ? "" : " (build with -DND_DEBUG_CALLSITES to see the lines)");
    free(c);
}
