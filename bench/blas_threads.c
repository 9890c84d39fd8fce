/*
 * blas_threads.c — float32 matmul of n x n matrices through the BLAS alone
 * and through nd, in one process, with the CPU time every thread spent
 * meanwhile: which threads hold the cores while the BLAS computes.
 *
 * Usage: bench_blas_threads [N [RUNS]]   (default 4096, 5; ND_* apply)
 *
 * Phases, in this order:
 *   blas-before-nd  cblas_sgemm on the main thread before nd_init
 *   blas-with-nd    the same after nd_init (nd's workers exist, idle)
 *   blas-thread     the same from a thread of its own (as nd's executor)
 *   nd-matmul       nd_matmul + nd_sync on the CPU backend
 *   nd-chain        nd's matmul_chain body: sum(sin(d) + cos(d), 1),
 *                   d = a @ b + c (the side-by-side suite's workload)
 * Each line: median and minimum wall time of RUNS runs, GFLOP/s, and the
 * CPU seconds of nd's threads by name (nd-pool-*, nd-executor, nd-jit)
 * and of the others (the main thread and the BLAS's threads, which keep
 * the program's name). Idle nd workers show ~0 s; a BLAS that gets its
 * cores shows cpu/wall near its thread count.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <cblas.h>
#include <dirent.h>
#include <math.h>
#include <nd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

#define MAX_THREADS 1024

typedef struct {
    int tid;
    char name[16];
    double cpu;
} thread_cpu;

/* Every thread of this process: id, name, user + system CPU seconds. */
static int snapshot(thread_cpu *t)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return 0;
    long hz = sysconf(_SC_CLK_TCK);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < MAX_THREADS) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], buf[1024];
        snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t k = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[k] = '\0';
        char *close = strrchr(buf, ')'), *open = strchr(buf, '(');
        if (!close || !open)
            continue;
        thread_cpu *x = &t[n];
        x->tid = atoi(e->d_name);
        size_t len = (size_t)(close - open - 1) < sizeof x->name - 1 ? (size_t)(close - open - 1) : sizeof x->name - 1;
        memcpy(x->name, open + 1, len);
        x->name[len] = '\0';
        /* after ')': state ppid pgrp session tty tpgid flags minflt cminflt
         * majflt cmajflt utime stime */
        unsigned long ut = 0, st = 0;
        if (sscanf(close + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
            continue;
        x->cpu = (double)(ut + st) / (double)hz;
        n++;
    }
    closedir(d);
    return n;
}

static thread_cpu before[MAX_THREADS], after[MAX_THREADS];
static int n_before;

static void cpu_start(void) { n_before = snapshot(before); }

/* CPU seconds since cpu_start: nd's pool, executor, JIT, the rest. */
static void cpu_report(double wall)
{
    int n = snapshot(after);
    double pool = 0, exec = 0, jit = 0, other = 0;
    int n_pool = 0, n_other = 0;
    for (int i = 0; i < n; i++) {
        double c = after[i].cpu;
        for (int j = 0; j < n_before; j++)
            if (before[j].tid == after[i].tid)
                c -= before[j].cpu;
        if (strncmp(after[i].name, "nd-pool", 7) == 0)
            pool += c, n_pool++;
        else if (strcmp(after[i].name, "nd-executor") == 0)
            exec += c;
        else if (strcmp(after[i].name, "nd-jit") == 0)
            jit += c;
        else
            other += c, n_other++;
    }
    printf("  cpu s: main+BLAS %.2f (%d threads, %.1f cores busy), nd-pool %.2f (%d), nd-executor %.2f, nd-jit %.2f\n",
           other, n_other, wall > 0 ? other / wall : 0.0, pool, n_pool, exec, jit);
}

typedef struct {
    int n, runs;
    float *a, *b, *c;
    double times[64];
    const char *report; /* phase name: report from this thread before it ends */
    double t0;
} blas_job;

static void line(const char *phase, int n, double *times, int runs, double wall);

static void *blas_runs(void *arg)
{
    blas_job *j = arg;
    for (int r = 0; r < j->runs; r++) {
        double t0 = bench_now();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, j->n, j->n, j->n, 1.0f, j->a, j->n, j->b, j->n,
                    0.0f, j->c, j->n);
        j->times[r] = bench_now() - t0;
    }
    if (j->report) /* while this thread, and its CPU time, still exist */
        line(j->report, j->n, j->times, j->runs, bench_now() - j->t0);
    return NULL;
}

static void line(const char *phase, int n, double *times, int runs, double wall)
{
    double mn = times[0];
    for (int r = 1; r < runs; r++)
        mn = times[r] < mn ? times[r] : mn;
    double med = bench_median(times, runs);
    printf("%-15s median %9.2f ms  min %9.2f ms  %8.1f GFLOP/s\n", phase, med * 1e3, mn * 1e3,
           2.0 * n * (double)n * n / med * 1e-9);
    cpu_report(wall);
    fflush(stdout);
}

static void blas_phase(const char *phase, blas_job *j, int own_thread)
{
    cpu_start();
    j->t0 = bench_now();
    j->report = phase;
    if (own_thread) {
        pthread_t t;
        if (pthread_create(&t, NULL, blas_runs, j) != 0)
            printf("%-15s could not start a thread\n", phase);
        else
            pthread_join(t, NULL);
    } else {
        blas_runs(j);
    }
    j->report = NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4096, runs = argc > 2 ? atoi(argv[2]) : 5;
    if (n < 1 || runs < 1 || runs > 64) {
        fprintf(stderr, "usage: bench_blas_threads [N [RUNS <= 64]]\n");
        return 2;
    }
    size_t elems = (size_t)n * (size_t)n;
    blas_job j = {n, runs, malloc(elems * 4), malloc(elems * 4), malloc(elems * 4), {0}, NULL, 0};
    if (!j.a || !j.b || !j.c) {
        fprintf(stderr, "bench_blas_threads: out of memory\n");
        return 1;
    }
    uint64_t s = 12345;
    for (size_t i = 0; i < elems; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        j.a[i] = (float)((s >> 40) * (1.0 / 16777216.0)) - 0.5f;
        j.b[i] = (float)((s >> 16 & 0xffffff) * (1.0 / 16777216.0)) - 0.5f;
        j.c[i] = 0.0f;
    }
    printf("sgemm %d x %d x %d, %d runs each (after one warm-up); ND_NUM_THREADS=%s OPENBLAS_NUM_THREADS=%s "
           "ND_LOG=%s\n", n, n, n, runs, getenv("ND_NUM_THREADS") ? getenv("ND_NUM_THREADS") : "(unset)",
           getenv("OPENBLAS_NUM_THREADS") ? getenv("OPENBLAS_NUM_THREADS") : "(unset)",
           getenv("ND_LOG") ? getenv("ND_LOG") : "(unset)");
    blas_job warm = j;
    warm.runs = 1;
    blas_runs(&warm);
    blas_phase("blas-before-nd", &j, 0);

    if (nd_init(NULL) != ND_OK) {
        fprintf(stderr, "bench_blas_threads: nd_init: %s\n", nd_last_error());
        return 1;
    }
    printf("nd backend %s\n", nd_backend_name());
    blas_phase("blas-with-nd", &j, 0);
    blas_phase("blas-thread", &j, 1);

    nd_array *a = nd_from_host(j.a, ND_FLOAT32, ND_SHAPE(n, n));
    nd_array *b = nd_from_host(j.b, ND_FLOAT32, ND_SHAPE(n, n));
    nd_array *c = nd_from_host(j.c, ND_FLOAT32, ND_SHAPE(n, n));
    double times[64];
    for (int phase = 0; phase < 2; phase++) {
        for (int r = -1; r < runs; r++) { /* r = -1: warm-up, untimed */
            if (r == 0)
                cpu_start();
            double t0 = bench_now();
            nd_scope_begin();
            nd_array *d = nd_matmul(a, b);
            if (phase == 1) {
                nd_array *e = nd_add(d, c);
                d = nd_sum(nd_add(nd_sin(e), nd_cos(e)), 1);
            }
            nd_array *kept = nd_keep(d);
            nd_scope_end();
            nd_status st = nd_sync();
            nd_free(kept);
            if (st != ND_OK) {
                fprintf(stderr, "bench_blas_threads: %s\n", nd_last_error());
                return 1;
            }
            if (r >= 0)
                times[r] = bench_now() - t0;
        }
        double wall = 0;
        for (int r = 0; r < runs; r++)
            wall += times[r];
        line(phase ? "nd-chain" : "nd-matmul", n, times, runs, wall);
    }
    nd_free(a);
    nd_free(b);
    nd_free(c);
    nd_shutdown();
    free(j.a);
    free(j.b);
    free(j.c);
    return 0;
}
