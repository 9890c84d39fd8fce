/* A persistent worker pool on libuv threads. The caller is worker 0 and
 * works too; the others sleep on a condition variable between jobs (never
 * spinning), so a job costs one broadcast and one wait. Jobs hand out their
 * work in small pieces through an atomic counter (cpu_kernel.c), so a
 * worker the OS runs late takes fewer pieces; and one that is not running
 * at all when the caller has claimed the last piece is not waited for: the
 * job closes, and a helper that wakes after that finds nothing to join. On
 * a busy machine a job then costs what the threads that got a core did,
 * not a wait for a descheduled thread. Small kernels never come here. */
#include <stdio.h>
#include <stdlib.h>
#include <uv.h>

#include "backends/cpu/cpu_internal.h"
#include "common/alloc.h"
#include "common/api_guard.h"
#include "common/error.h"
#include "common/thread_name.h"

typedef struct {
    nd_cpu_pool *pool;
    int id;
} worker_arg;

struct nd_cpu_pool {
    int n; /* workers including the caller */
    uv_thread_t *threads;
    worker_arg *args;
    uv_mutex_t mu;
    uv_cond_t work, done;
    uint64_t gen; /* job number */
    int active;   /* workers that may take part in the current job */
    int joined;   /* helpers that took part in it */
    int running;  /* helpers still running it */
    int closed;   /* the caller is done: no helper joins any more */
    int stop;
    void (*fn)(void *arg, int worker);
    void *arg;
};

static void worker_main(void *varg) {
    worker_arg *wa = (worker_arg *)varg;
    nd_cpu_pool *p = wa->pool;
    uint64_t seen = 0;
    nd_api_forbid(); /* user threads wait for this one holding the API lock */
    char name[16];
    snprintf(name, sizeof name, "nd-pool-%d", wa->id);
    nd_thread_set_name(name);
    uv_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && p->gen == seen) uv_cond_wait(&p->work, &p->mu);
        if (p->stop) break;
        seen = p->gen;
        if (p->closed || wa->id >= p->active) continue;
        int id = ++p->joined; /* scratch is per worker number, not per thread */
        p->running++;
        void (*fn)(void *, int) = p->fn;
        void *arg = p->arg;
        uv_mutex_unlock(&p->mu);
        fn(arg, id);
        uv_mutex_lock(&p->mu);
        if (--p->running == 0 && p->closed) uv_cond_signal(&p->done);
    }
    uv_mutex_unlock(&p->mu);
}

nd_status nd_cpu_pool_create(int num_threads, nd_cpu_pool **out) {
    *out = NULL;
    if (num_threads < 1) num_threads = 1;
    nd_cpu_pool *p = nd_calloc(1, sizeof *p);
    if (!p) return nd_error_set(ND_ERR_OOM, "cpu backend: out of memory creating the thread pool");
    p->n = num_threads;
    p->threads = nd_calloc((size_t)num_threads, sizeof *p->threads);
    p->args = nd_calloc((size_t)num_threads, sizeof *p->args);
    if (!p->threads || !p->args) {
        free(p->threads);
        free(p->args);
        free(p);
        return nd_error_set(ND_ERR_OOM, "cpu backend: out of memory creating the thread pool");
    }
    if (uv_mutex_init(&p->mu) != 0 || uv_cond_init(&p->work) != 0 || uv_cond_init(&p->done) != 0) {
        free(p->threads);
        free(p->args);
        free(p);
        return nd_error_set(ND_ERR_BACKEND, "cpu backend: could not create thread pool locks");
    }
    for (int i = 1; i < num_threads; i++) {
        p->args[i].pool = p;
        p->args[i].id = i;
        if (uv_thread_create(&p->threads[i], worker_main, &p->args[i]) != 0) {
            p->n = i; /* run with the workers we got */
            break;
        }
    }
    *out = p;
    return ND_OK;
}

int nd_cpu_pool_size(const nd_cpu_pool *p) { return p ? p->n : 1; }

void nd_cpu_pool_run(nd_cpu_pool *p, int n, void (*fn)(void *arg, int worker), void *arg) {
    if (!p || n > p->n) n = p ? p->n : 1;
    if (n <= 1) {
        fn(arg, 0);
        return;
    }
    uv_mutex_lock(&p->mu);
    p->fn = fn;
    p->arg = arg;
    p->active = n;
    p->joined = 0;
    p->running = 0;
    p->closed = 0;
    p->gen++;
    uv_cond_broadcast(&p->work);
    uv_mutex_unlock(&p->mu);
    fn(arg, 0);
    uv_mutex_lock(&p->mu);
    p->closed = 1;
    while (p->running > 0) uv_cond_wait(&p->done, &p->mu);
    uv_mutex_unlock(&p->mu);
}

void nd_cpu_pool_destroy(nd_cpu_pool *p) {
    if (!p) return;
    uv_mutex_lock(&p->mu);
    p->stop = 1;
    uv_cond_broadcast(&p->work);
    uv_mutex_unlock(&p->mu);
    for (int i = 1; i < p->n; i++) uv_thread_join(&p->threads[i]);
    uv_cond_destroy(&p->work);
    uv_cond_destroy(&p->done);
    uv_mutex_destroy(&p->mu);
    free(p->threads);
    free(p->args);
    free(p);
}
