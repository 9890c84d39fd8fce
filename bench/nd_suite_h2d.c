/*
 * nd_suite_h2d.c — h2d_sum, nd's host-to-device streaming target: the sum
 * of a large float32 array that lives in host memory.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "nd_suite.h"

/* ------------------------------------------------------------ h2d_sum */

/* The source lives in plain host memory and is filled by all cores with a
 * hash of the index (uniform in [0, 1), never zero pages); the same pass sums
 * it in float64 for the reference. */
static float hash_unit(uint64_t i)
{
    uint64_t z = i + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (float)(z >> 40) * (1.0f / 16777216.0f);
}

typedef struct {
    float *dst;
    int64_t lo, hi;
    double sum;
} fill_job;

static void *fill_worker(void *arg)
{
    fill_job *job = arg;
    double sum = 0;
    for (int64_t i = job->lo; i < job->hi; i++) {
        job->dst[i] = hash_unit((uint64_t)i);
        sum += job->dst[i];
    }
    job->sum = sum;
    return NULL;
}

static double fill_parallel(float *dst, int64_t n)
{
    enum { MAX_THREADS = 64 };
    int threads = bench_threads() < MAX_THREADS ? bench_threads() : MAX_THREADS;
    fill_job jobs[MAX_THREADS];
    pthread_t tids[MAX_THREADS];
    bool started[MAX_THREADS] = {false};
    for (int t = 0; t < threads; t++) {
        jobs[t] = (fill_job){dst, n * t / threads, n * (t + 1) / threads, 0};
        started[t] = pthread_create(&tids[t], NULL, fill_worker, &jobs[t]) == 0;
        if (!started[t])
            fill_worker(&jobs[t]);
    }
    double sum = 0;
    for (int t = 0; t < threads; t++) {
        if (started[t])
            pthread_join(tids[t], NULL);
        sum += jobs[t].sum;
    }
    return sum;
}

static int64_t h2d_elements(const suite_sizes *sz)
{
    return (int64_t)(sz->h2d_gib * 1073741824.0 / 4.0);
}

static void h2d_measure(const suite_sizes *sz, suite_measure *m)
{
    m->n = h2d_elements(sz);
    m->bytes = 4.0 * (double)m->n;
    m->flops = (double)m->n;
}

/* A new nd array from the host source before every run, so nd holds no
 * device copy of the last one; 4096 elements change each time (the
 * reference follows them) so no run sees exactly the last run's data. */
static nd_status h2d_prepare(suite_state *s, bool for_check)
{
    (void)for_check;
    int64_t n = h2d_elements(s->sz);
    float *src = s->host;
    suite_replace(&s->in[0], NULL);
    if (!src) {
        src = s->host = malloc((size_t)n * sizeof(float));
        if (!src) {
            fprintf(stderr, "nd_suite: no %.2f GiB of host memory for h2d_sum\n", s->sz->h2d_gib);
            return ND_ERR_OOM;
        }
        s->ref = fill_parallel(src, n);
    } else {
        for (int k = 0; k < 4096; k++) {
            int64_t i = (int64_t)(((uint64_t)s->seed * 4096 + (uint64_t)k) * 0x9e3779b97f4a7c15ull %
                                  (uint64_t)n);
            float v = hash_unit((uint64_t)i ^ (s->seed << 40) ^ (uint64_t)k);
            s->ref += (double)v - (double)src[i];
            src[i] = v;
        }
    }
    s->seed++;
    s->in[0] = nd_from_host(src, ND_FLOAT32, ND_SHAPE(n));
    return s->in[0] ? ND_OK : nd_last_status();
}

static nd_status h2d_run(suite_state *s)
{
    s->out[0] = nd_sum(s->in[0], ND_ALL_AXES);
    return suite_settle(s->out, 1);
}

static double h2d_check(suite_state *s)
{
    if (!suite_dtype_is(s->out[0], ND_FLOAT32, "the sum"))
        return INFINITY;
    return fabs(nd_item(s->out[0]) - s->ref) / s->ref;
}

const suite_workload suite_h2d_sum = {
    .name = "h2d_sum",
    .dtype = "float32",
    .check_kind = "scalar",
    .tol = 1e-5,
    .check_every_run = true,
    .gpu_only = true,
    .big = true,
    .measure = h2d_measure,
    .prepare = h2d_prepare,
    .run = h2d_run,
    .check = h2d_check,
};
