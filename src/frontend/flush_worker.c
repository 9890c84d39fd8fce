/* The executor thread: nd_flush plans the pending graph on the caller's
 * thread (planning reads where buffers' values live) and hands the planned
 * job to this thread, which binds memory and launches it, while the caller
 * records the next batch. One job at a time: the next flush, and anything
 * that reads buffer state (host reads, stats, dumps, shutdown), first waits
 * for the job in flight (nd_flush_worker_drain). An error from running a
 * job is kept and returned, with its message, by the next drain, so it
 * reaches the caller at its next nd_sync.
 *
 * Waiting spins before it sleeps. Waking a thread blocked on a condition
 * variable took 20-45 us on the H100 machine (a virtual machine), at times
 * 380 us, more than planning the flush that woke it, and a thread that
 * slept resumes with cold caches (binding a plan took 30 us after a sleep,
 * 12 us hot). Early flushes come in bursts (12 nodes, then 24, ...) a few
 * tens of microseconds apart, so the executor polls for the next job until
 * WORKER_SPIN_US after its last one before it sleeps, and a caller draining
 * a job in flight polls for DRAIN_SPIN_US. Both yield the processor while
 * they poll, so a one-core machine still runs the other thread.
 *
 * The first flush after an nd_sync came to a sleeping executor: the sync's
 * wait for the device outlasts the polling that began at the job before it
 * (a loop of 50 stencil sweeps: ~300 us from the last hand-off to the next
 * loop's first). So the end of an nd_sync keeps the executor polling
 * (nd_flush_worker_keep_polling), waking it if it slept: its wake-up then
 * overlaps the caller's recording of that first flush instead of
 * following it. Only after a sync that followed hand-offs: a program whose
 * flushes all run on the caller's thread (one flush per nd_sync) does not
 * keep a thread polling beside it. */
#include "frontend/flush_worker.h"
#include "common/alloc.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "common/api_guard.h"
#include "common/error.h"
#include "common/thread_name.h"

struct nd_flush_worker {
    nd_scheduler_ctx *ctx;
    uv_thread_t thread;
    uv_mutex_t lock;
    uv_cond_t changed;
    nd_flush_job job;
    int busy; /* job holds work not yet run (atomic: polled without the lock) */
    int ran;  /* job ran; its buffers still to release (on the caller's thread) */
    int stop; /* atomic, as busy */
    int sleeping;         /* in uv_cond_wait (atomic, set under the lock) */
    int posted;           /* jobs handed off since keep_polling (caller's thread only) */
    uint64_t poll_until;  /* uv_hrtime until which it polls for a job (atomic) */
    nd_status error; /* first error since the last drain */
    char message[512];
};

#define WORKER_SPIN_US 300
#define DRAIN_SPIN_US 2000

static int load(const int *flag) { return __atomic_load_n(flag, __ATOMIC_ACQUIRE); }
static void store(int *flag, int v) { __atomic_store_n(flag, v, __ATOMIC_RELEASE); }

/* A polling loop's pause: on a core shared with the caller's thread
 * (simultaneous multithreading), a loop of bare loads takes issue slots
 * from it. */
static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Sequentially consistent: keep_polling's store, then its load of
 * `sleeping`, pairs with worker_main's store of `sleeping`, then its load
 * of this deadline. */
static void poll_a_while(nd_flush_worker *w) {
    __atomic_store_n(&w->poll_until, uv_hrtime() + WORKER_SPIN_US * 1000u, __ATOMIC_SEQ_CST);
}

/* The executor's polling: until a job (or stop) comes or poll_until
 * passes, which the caller may push on meanwhile. */
static void poll_for_job(nd_flush_worker *w) {
    for (unsigned i = 0;; i++) {
        if (load(&w->busy) || load(&w->stop)) return;
        cpu_relax();
        if ((i & 15u) == 15u) {
            if (uv_hrtime() > __atomic_load_n(&w->poll_until, __ATOMIC_RELAXED)) return;
            sched_yield();
        }
    }
}

/* Polls until *flag == want or `us` microseconds pass; 1 if it got there. */
static int spin_for(const int *flag, int want, uint64_t us) {
    const uint64_t end = uv_hrtime() + us * 1000u;
    for (unsigned i = 0;; i++) {
        if (load(flag) == want) return 1;
        cpu_relax();
        if ((i & 15u) == 15u) {
            if (uv_hrtime() > end) return 0;
            sched_yield();
        }
    }
}

static void worker_main(void *arg) {
    nd_flush_worker *w = arg;
    /* The caller holds the API lock while it waits for this thread: this
     * thread, and everything it calls (the backend, buffer hooks), must
     * never take it (a debug build asserts so). */
    nd_api_forbid();
    nd_thread_set_name("nd-executor");
    uv_mutex_lock(&w->lock);
    for (;;) {
        /* Poll until the deadline, then sleep; woken without a job (by
         * keep_polling, or spuriously), poll again until the new deadline,
         * if any. */
        while (!load(&w->busy) && !load(&w->stop)) {
            uv_mutex_unlock(&w->lock);
            poll_for_job(w);
            uv_mutex_lock(&w->lock);
            if (load(&w->busy) || load(&w->stop)) break;
            /* Sleeping, then the deadline read again: either keep_polling
             * sees the flag and wakes this thread (under the lock, so not
             * before the wait) or this thread sees its new deadline. */
            __atomic_store_n(&w->sleeping, 1, __ATOMIC_SEQ_CST);
            if (uv_hrtime() >= __atomic_load_n(&w->poll_until, __ATOMIC_SEQ_CST))
                uv_cond_wait(&w->changed, &w->lock);
            store(&w->sleeping, 0);
        }
        if (!load(&w->busy) && load(&w->stop)) break;
        nd_flush_job job = w->job;
        uv_mutex_unlock(&w->lock);
        nd_status rc = nd_scheduler_execute(w->ctx, &job); /* job stays in w->job for finish */
        uv_mutex_lock(&w->lock);
        if (rc != ND_OK && w->error == ND_OK) {
            w->error = rc;
            snprintf(w->message, sizeof w->message, "%s", nd_last_error());
        }
        poll_a_while(w);
        store(&w->busy, 0);
        w->ran = 1;
        uv_cond_broadcast(&w->changed);
    }
    uv_mutex_unlock(&w->lock);
}

nd_flush_worker *nd_flush_worker_start(nd_scheduler_ctx *ctx) {
    nd_flush_worker *w = nd_calloc(1, sizeof *w);
    if (!w) return NULL;
    w->ctx = ctx;
    if (uv_mutex_init(&w->lock) != 0) {
        free(w);
        return NULL;
    }
    if (uv_cond_init(&w->changed) != 0) {
        uv_mutex_destroy(&w->lock);
        free(w);
        return NULL;
    }
    if (uv_thread_create(&w->thread, worker_main, w) != 0) {
        uv_cond_destroy(&w->changed);
        uv_mutex_destroy(&w->lock);
        free(w);
        return NULL;
    }
    return w;
}

/* With the lock held and the job done: its buffers go, on this thread. */
static void finish_locked(nd_flush_worker *w) {
    if (!w->ran) return;
    nd_scheduler_finish(w->ctx, &w->job);
    w->ran = 0;
}

void nd_flush_worker_wait(nd_flush_worker *w) {
    if (!w) return;
    (void)spin_for(&w->busy, 0, DRAIN_SPIN_US);
    uv_mutex_lock(&w->lock);
    while (load(&w->busy)) uv_cond_wait(&w->changed, &w->lock);
    finish_locked(w);
    uv_mutex_unlock(&w->lock);
}

nd_status nd_flush_worker_drain(nd_flush_worker *w) {
    if (!w) return ND_OK;
    (void)spin_for(&w->busy, 0, DRAIN_SPIN_US);
    uv_mutex_lock(&w->lock);
    while (load(&w->busy)) uv_cond_wait(&w->changed, &w->lock);
    finish_locked(w);
    nd_status err = w->error;
    char message[sizeof w->message];
    memcpy(message, w->message, sizeof message);
    w->error = ND_OK;
    uv_mutex_unlock(&w->lock);
    if (err != ND_OK) nd_error_set(err, "%s", message);
    return err;
}

nd_status nd_flush_worker_post(nd_flush_worker *w, const nd_flush_job *job) {
    nd_status st = nd_flush_worker_drain(w);
    uv_mutex_lock(&w->lock);
    w->job = *job;
    w->posted++;
    store(&w->busy, 1);
    uv_cond_broadcast(&w->changed);
    uv_mutex_unlock(&w->lock);
    return st;
}

void nd_flush_worker_keep_polling(nd_flush_worker *w) {
    if (!w || !w->posted) return;
    w->posted = 0;
    poll_a_while(w);
    if (!__atomic_load_n(&w->sleeping, __ATOMIC_SEQ_CST)) return;
    uv_mutex_lock(&w->lock);
    uv_cond_broadcast(&w->changed);
    uv_mutex_unlock(&w->lock);
}

void nd_flush_worker_stop(nd_flush_worker *w) {
    if (!w) return;
    (void)nd_flush_worker_drain(w);
    uv_mutex_lock(&w->lock);
    store(&w->stop, 1);
    uv_cond_broadcast(&w->changed);
    uv_mutex_unlock(&w->lock);
    uv_thread_join(&w->thread);
    uv_cond_destroy(&w->changed);
    uv_mutex_destroy(&w->lock);
    free(w);
}
