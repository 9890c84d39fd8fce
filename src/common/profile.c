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
    int local;
} profile_row;

struct nd_profile {
    profile_row *rows;
    uint32_t n, cap;
    double copy_bw; /* bytes per second, 0 = not measured */
    char copy_how[96];
};

nd_profile *nd_profile_new(void) { return nd_calloc(1, sizeof(nd_profile)); }

void nd_profile_free(nd_profile *p) {
    if (!p) return;
    free(p->rows);
    free(p);
}

void nd_profile_add(nd_profile *p, nd_profile_kind kind, const char *name, double seconds, double bytes,
                    double flops, int local) {
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
        r->local = local;
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

void nd_profile_set_copy_bandwidth(nd_profile *p, double bytes_per_second, const char *how) {
    if (!p) return;
    p->copy_bw = bytes_per_second;
    snprintf(p->copy_how, sizeof p->copy_how, "%s", how ? how : "");
}

void nd_profile_bytes_text(char *buf, size_t cap, double b) {
    if (b >= 1e9) snprintf(buf, cap, "%.2f GB", b * 1e-9);
    else if (b >= 1e6) snprintf(buf, cap, "%.2f MB", b * 1e-6);
    else if (b >= 1e3) snprintf(buf, cap, "%.1f kB", b * 1e-3);
    else snprintf(buf, cap, "%.0f B", b);
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
    if (p->copy_bw > 0)
        fprintf(f, "copy bandwidth %.1f GB/s (read + write, %s); bytes = unique bytes each call must "
                "move (each element read once, each written once)\n",
                p->copy_bw * 1e-9, p->copy_how);
    else
        fprintf(f, "bytes = unique bytes each call must move (each element read once, each written once)\n");
    fprintf(f, "%-8s %-56s %8s %11s %6s %10s %10s %11s %8s\n", "kind", "name", "count", "total ms", "share",
            "avg us", "bytes", "achieved", "of copy");
    for (uint32_t i = 0; i < p->n; i++) {
        const profile_row *r = &rows[i];
        char rate[32] = "-", frac[16] = "-", per[24] = "-";
        double avg_bytes = r->bytes / (double)r->count;
        if (r->bytes > 0) nd_profile_bytes_text(per, sizeof per, avg_bytes);
        if (r->seconds > 0 && r->flops > 0) {
            snprintf(rate, sizeof rate, "%.2f TFLOP/s", r->flops / r->seconds * 1e-12);
        } else if (r->seconds > 0 && avg_bytes >= 4096) {
            /* Below a page per call the time is launch overhead, not
             * bandwidth. */
            double bw = r->bytes / r->seconds;
            snprintf(rate, sizeof rate, "%.1f GB/s", bw * 1e-9);
            if (r->local && p->copy_bw > 0) snprintf(frac, sizeof frac, "%.0f%%", 100.0 * bw / p->copy_bw);
        }
        fprintf(f, "%-8s %-56.56s %8llu %11.3f %5.1f%% %10.2f %10s %11s %8s\n", nd_profile_kind_name(r->kind),
                r->name, (unsigned long long)r->count, r->seconds * 1e3,
                total > 0 ? 100.0 * r->seconds / total : 0.0, r->seconds * 1e6 / (double)r->count, per, rate, frac);
    }
    free(rows);
}
