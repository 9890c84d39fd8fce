/* The host's copy bandwidth, for ND_PROFILE's "of copy" column: measured
 * as the benchmarks measure their floors (bench/bench_util.h,
 * bench_copy_bandwidth): (read + write bytes) / time of a memcpy of a
 * block well above the caches, the best of one thread and one thread per
 * core, each the median of a few runs. About 0.1 s, once, at exit. */
#include "common/copy_bandwidth.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/alloc.h"

#define BLOCK_BYTES ((size_t)128 << 20)
#define RUNS 5
#define MAX_THREADS 64

typedef struct {
    char *dst;
    const char *src;
    size_t bytes;
} part;

static void *copy_part(void *arg) {
    part *p = arg;
    memcpy(p->dst, p->src, p->bytes);
    return NULL;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double timed_copy(char *dst, const char *src, size_t bytes, int threads) {
    pthread_t tid[MAX_THREADS];
    part parts[MAX_THREADS];
    size_t chunk = (bytes / (size_t)threads + 4095) & ~(size_t)4095;
    uint8_t joined[MAX_THREADS] = {0};
    double t0 = now();
    int n = 0;
    for (; n < threads && (size_t)n * chunk < bytes; n++) {
        size_t at = (size_t)n * chunk;
        parts[n] = (part){dst + at, src + at, at + chunk > bytes ? bytes - at : chunk};
        /* Part 0 is copied here; a part without a thread too. */
        if (n > 0 && pthread_create(&tid[n], NULL, copy_part, &parts[n]) != 0) {
            copy_part(&parts[n]);
            joined[n] = 1;
        }
    }
    copy_part(&parts[0]);
    for (int t = 1; t < n; t++)
        if (!joined[t]) pthread_join(tid[t], NULL);
    return now() - t0;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double nd_host_copy_bandwidth(char *how, size_t cap) {
    char *src = nd_malloc(BLOCK_BYTES), *dst = nd_malloc(BLOCK_BYTES);
    if (!src || !dst) {
        free(src);
        free(dst);
        return 0;
    }
    for (size_t i = 0; i < BLOCK_BYTES; i += 4096) src[i] = (char)i; /* touched pages, not the zero page */
    memset(dst, 1, BLOCK_BYTES);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int candidates[2] = {1, cores < 1 ? 1 : cores > MAX_THREADS ? MAX_THREADS : (int)cores};
    double best = 0;
    int best_threads = 1;
    for (int c = 0; c < 2; c++) {
        if (c == 1 && candidates[1] == 1) break;
        double t[RUNS];
        timed_copy(dst, src, BLOCK_BYTES, candidates[c]);
        for (int r = 0; r < RUNS; r++) t[r] = timed_copy(dst, src, BLOCK_BYTES, candidates[c]);
        qsort(t, RUNS, sizeof *t, cmp_double);
        double bw = t[RUNS / 2] > 0 ? 2.0 * (double)BLOCK_BYTES / t[RUNS / 2] : 0;
        if (bw > best) best = bw, best_threads = candidates[c];
    }
    free(src);
    free(dst);
    if (how) snprintf(how, cap, "memcpy of %zu MiB, %d thread%s", BLOCK_BYTES >> 20, best_threads,
                      best_threads == 1 ? "" : "s");
    return best;
}
