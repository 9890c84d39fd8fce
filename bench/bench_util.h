/*
 * bench_util.h — timing helpers shared by the benchmark programs: a monotonic
 * clock, medians, a multi-threaded copy used as the memory-bandwidth floor,
 * and the one-line JSON result every benchmark prints for bench/run_cpu.sh.
 *
 * Timing rules (bench/README.md): warm up first, report the median of at
 * least 7 timed runs, use fresh random inputs (never zeros: the kernel may
 * map all-zero pages to one shared page and read nothing), and check the
 * answer before timing anything.
 */
#ifndef ND_BENCH_UTIL_H
#define ND_BENCH_UTIL_H

#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* BENCH_SETTLE_MS milliseconds of idle (default 0) before a timed call,
 * the same before nd's and before a library's alone: a call timed right
 * after heavy work (a float64 GEMM making the next input) can run under
 * the power cap that work left, and the two would not be compared alike. */
static inline void bench_settle(void)
{
    const char *v = getenv("BENCH_SETTLE_MS");
    long ms = v ? strtol(v, NULL, 10) : 0;
    if (ms > 0) usleep((useconds_t)(ms * 1000));
}

static inline int bench_cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

/* Median of v[0..n) (sorts v). */
static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Worker threads for the copy floor: ND_NUM_THREADS if set (the library's own
 * worker count), otherwise the online cores. */
static inline int bench_threads(void)
{
    const char *env = getenv("ND_NUM_THREADS");
    long t = env && atoi(env) > 0 ? atoi(env) : sysconf(_SC_NPROCESSORS_ONLN);
    if (t < 1)
        t = 1;
    if (t > 256)
        t = 256;
    return (int)t;
}

typedef struct {
    char *dst;
    const char *src;
    size_t bytes;
} bench_copy_job;

static inline void *bench_copy_worker(void *arg)
{
    bench_copy_job *job = arg;
    memcpy(job->dst, job->src, job->bytes);
    return NULL;
}

/* memcpy of `bytes` split over `threads` threads (1 = the caller alone). */
static inline void bench_parallel_copy(void *dst, const void *src, size_t bytes, int threads)
{
    bench_copy_job jobs[256];
    pthread_t tids[256];
    int created[256] = {0};
    size_t chunk = (bytes / (size_t)threads + 63) & ~(size_t)63;
    for (int t = 0; t < threads; t++) {
        size_t lo = (size_t)t * chunk;
        if (lo >= bytes)
            break;
        size_t len = bytes - lo < chunk ? bytes - lo : chunk;
        jobs[t] = (bench_copy_job){(char *)dst + lo, (const char *)src + lo, len};
        created[t] = t < threads - 1 &&
                     pthread_create(&tids[t], NULL, bench_copy_worker, &jobs[t]) == 0;
        if (!created[t])
            bench_copy_worker(&jobs[t]); /* last chunk (or no thread): do it here */
    }
    for (int t = 0; t < threads; t++)
        if (created[t])
            pthread_join(tids[t], NULL);
}

/* The copy floor: the best (fastest) median over 1 thread and bench_threads()
 * threads of copying `bytes`, both buffers touched beforehand, after one
 * warm-up copy. Returns copy bandwidth in bytes/s counting read + write. */
static inline double bench_copy_bandwidth(size_t bytes, int runs, int *threads_used)
{
    char *src = malloc(bytes), *dst = malloc(bytes);
    if (!src || !dst) {
        free(src);
        free(dst);
        return 0.0;
    }
    for (size_t i = 0; i < bytes; i++)
        src[i] = (char)(i * 131u + 7u); /* not zero pages */
    memset(dst, 1, bytes);
    int candidates[2] = {1, bench_threads()};
    double best = 0.0;
    for (int c = 0; c < 2; c++) {
        double times[64];
        if (runs > 64)
            runs = 64;
        bench_parallel_copy(dst, src, bytes, candidates[c]);
        for (int r = 0; r < runs; r++) {
            double t0 = bench_now();
            bench_parallel_copy(dst, src, bytes, candidates[c]);
            times[r] = bench_now() - t0;
        }
        double bw = 2.0 * (double)bytes / bench_median(times, runs);
        if (bw > best) {
            best = bw;
            if (threads_used)
                *threads_used = candidates[c];
        }
    }
    free(src);
    free(dst);
    return best;
}

#endif
