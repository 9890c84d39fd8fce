/* The ND_PROFILE table: entries summed by (kind, name), printed sorted by
 * total time. A handful of distinct kernels is the normal case, so a linear
 * table with a hash check is enough. */
#include "common/profile.h"
#include "common/alloc.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/hash.h"

typedef struct {
    uint64_t key;
    nd_profile_kind kind;
    char name[112];
    uint64_t count;
    double seconds, bytes, flops;
} profile_row;

struct nd_profile {
    profile_row *rows;
    uint32_t n, cap;
};

nd_profile *nd_profile_new(void) { return nd_calloc(1, sizeof(nd_profile)); }

void nd_profile_free(nd_profile *p) {
    if (!p) return;
    free(p->rows);
    free(p);
}

void nd_profile_add(nd_profile *p, nd_profile_kind kind, const char *name, double seconds, double bytes,
                    double flops) {
    if (!p) return;
    uint64_t key = nd_hash_bytes(nd_hash_u64(ND_HASH_SEED, (uint64_t)kind), name, strlen(name));
    profile_row *r = NULL;
    for (uint32_t i = 0; i < p->n && !r; i++)
        if (p->rows[i].key == key && p->rows[i].kind == kind && strcmp(p->rows[i].name, name) == 0) r = &p->rows[i];
    if (!r) {
        if (!nd_grow((void **)&p->rows, &p->cap, p->n + 1, sizeof *p->rows)) return;
        r = &p->rows[p->n++];
        memset(r, 0, sizeof *r);
        r->key = key;
        r->kind = kind;
        snprintf(r->name, sizeof r->name, "%s", name);
    }
    r->count++;
    r->seconds += seconds;
    r->bytes += bytes;
    r->flops += flops;
}

static const char *const KIND_NAMES[] = {"kernel", "library", "copy"};
static_assert(sizeof KIND_NAMES / sizeof KIND_NAMES[0] == ND_PROFILE_KIND_COUNT, "one name per profile kind");

const char *nd_profile_kind_name(nd_profile_kind kind) {
    return (unsigned)kind < ND_PROFILE_KIND_COUNT ? KIND_NAMES[kind] : "?";
}

static int by_time_desc(const void *a, const void *b) {
    double x = ((const profile_row *)a)->seconds, y = ((const profile_row *)b)->seconds;
    return x < y ? 1 : x > y ? -1 : 0;
}

void nd_profile_print(const nd_profile *p, FILE *f, const char *title) {
    if (!p || p->n == 0) return;
    profile_row *rows = nd_malloc(sizeof *rows * p->n);
    if (!rows) return;
    memcpy(rows, p->rows, sizeof *rows * p->n);
    qsort(rows, p->n, sizeof *rows, by_time_desc);
    double total = 0;
    for (uint32_t i = 0; i < p->n; i++) total += rows[i].seconds;
    fprintf(f, "\nnd profile (%s): %.3f ms in %u distinct steps\n", title, total * 1e3, p->n);
    fprintf(f, "%-8s %-56s %8s %11s %6s %10s %12s\n", "kind", "name", "count", "total ms", "share", "avg us",
            "achieved");
    for (uint32_t i = 0; i < p->n; i++) {
        const profile_row *r = &rows[i];
        char rate[32] = "-";
        if (r->seconds > 0 && r->flops > 0)
            snprintf(rate, sizeof rate, "%.2f TFLOP/s", r->flops / r->seconds * 1e-12);
        else if (r->seconds > 0 && r->bytes >= 4096 * (double)r->count)
            snprintf(rate, sizeof rate, "%.1f GB/s", r->bytes / r->seconds * 1e-9);
        fprintf(f, "%-8s %-56.56s %8llu %11.3f %5.1f%% %10.2f %12s\n", nd_profile_kind_name(r->kind), r->name,
                (unsigned long long)r->count, r->seconds * 1e3, total > 0 ? 100.0 * r->seconds / total : 0.0,
                r->seconds * 1e6 / (double)r->count, rate);
    }
    free(rows);
}
