/* State of the API lock (common/api_guard.h). */
#include "common/api_guard.h"

_Thread_local nd_api_thread_state nd_api_tls;
nd_api_replay_hooks nd_api_replay;
int32_t nd_api_replays_live;

void nd_api_leave_slow(void) {
    if (nd_api_tls.depth == 1 && nd_api_tls.err_new != 0) nd_error_report();
    if (--nd_api_tls.depth == 0) {
        nd_api_tls.err_new = 0; /* errors of the report's handler: not reported again */
        nd_api_tls.fn = NULL;
        nd_api_tls.site_file = NULL;
        nd_api_unlock();
    }
}

#if defined(__linux__)
#include <errno.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

uint32_t nd_api_lock_word;

/* Spins this many rounds before sleeping: most public calls hold the lock
 * for well under a microsecond, so a waiter usually gets it without the
 * two system calls of a sleep and a wake-up (glibc's adaptive mutex spins
 * as long). */
#define ND_API_LOCK_SPINS 100

static void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Taken by another thread: spin, then mark the word "held, with sleepers"
 * (2) and sleep until it reads 0 when swapped (then this thread holds it,
 * still marked 2, so its release wakes the next sleeper: a spurious
 * wake-up at worst, never a lost one). */
void nd_api_lock_slow(void) {
    for (int i = 0; i < ND_API_LOCK_SPINS; i++) {
        uint32_t unlocked = 0;
        if (__atomic_load_n(&nd_api_lock_word, __ATOMIC_RELAXED) == 0 &&
            __atomic_compare_exchange_n(&nd_api_lock_word, &unlocked, 1, 0, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            return;
        cpu_relax();
    }
    while (__atomic_exchange_n(&nd_api_lock_word, 2, __ATOMIC_ACQUIRE) != 0)
        syscall(SYS_futex, &nd_api_lock_word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
}

void nd_api_unlock_wake(void) {
    syscall(SYS_futex, &nd_api_lock_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

#if ND_API_BIAS
uint32_t nd_api_bias_state; /* ND_API_BIAS_UNCLAIMED */
/* The owner's word alone on its cache line: the revoker's reads of it, and
 * the owner's stores, stay away from the lock word's and revoke's line. */
uint32_t nd_api_bias_busy __attribute__((aligned(64)));
uint32_t nd_api_bias_revoke __attribute__((aligned(64)));

static int membarrier_call(int cmd) { return (int)syscall(SYS_membarrier, cmd, 0, 0); }

/* Whether this process may use membarrier's private expedited barrier
 * (Linux 4.14 on; a seccomp filter or valgrind may refuse it), registered
 * for it here. */
static int membarrier_ready(void) {
    int cmds = membarrier_call(MEMBARRIER_CMD_QUERY);
    return cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
           membarrier_call(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
}

/* Called holding the word, while the state is not OFF. */
void nd_api_bias_settle(void) {
    if (nd_api_bias_state == ND_API_BIAS_UNCLAIMED) {
        /* ND_LOCK_BIAS=0 keeps every thread on the word (to compare the
         * two; nd_init checks the value, common/env.c). */
        const char *env = getenv("ND_LOCK_BIAS");
        if ((env && strcmp(env, "0") == 0) || !membarrier_ready()) {
            nd_api_bias_state = ND_API_BIAS_OFF;
            return;
        }
        /* This thread owns it from now on: it is inside (busy) before it
         * lets the word go, and no revoker can have run (that needs the
         * state OWNED). */
        nd_api_bias_state = ND_API_BIAS_OWNED;
        nd_api_tls.bias = 1;
        __atomic_store_n(&nd_api_bias_busy, 1, __ATOMIC_RELAXED);
        if (__atomic_exchange_n(&nd_api_lock_word, 0, __ATOMIC_RELEASE) == 2) nd_api_unlock_wake();
        return;
    }
    /* Another thread owns it: revoke. After the barrier the owner either
     * shows busy (and this thread waits for it to leave, acquiring what it
     * wrote) or sees the revocation at its next entry and takes the word,
     * which this thread holds. */
    __atomic_store_n(&nd_api_bias_revoke, 1, __ATOMIC_RELAXED);
    /* A fork's child (the forking thread alone, the owner not there unless
     * it forked) keeps the registration on Linux (threads::
     * biased_lock_after_fork revokes in one); should a kernel drop it,
     * the child registers again. An owner inside the API when another
     * thread forked leaves busy set in the child, which then waits for
     * ever, as it would on a lock word held at the fork. */
    if (membarrier_call(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0 &&
        (!membarrier_ready() || membarrier_call(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0)) {
        /* Registered when the bias was claimed: cannot fail. Going on
         * could give wrong values. */
        fprintf(stderr, "nd: membarrier failed while revoking the API lock's bias: %s\n", strerror(errno));
        abort();
    }
    for (unsigned round = 0; __atomic_load_n(&nd_api_bias_busy, __ATOMIC_ACQUIRE); round++) {
        /* The owner may be inside a long call (an nd_sync): spin a little,
         * then yield, then sleep in short naps. */
        if (round < 1000) cpu_relax();
        else if (round < 1100) sched_yield();
        else nanosleep(&(struct timespec){0, 50000}, NULL);
    }
    nd_api_bias_state = ND_API_BIAS_OFF;
}

/* The owner found the bias revoked at its entry: it is not inside any
 * more, and takes the word like every other thread from now on. */
void nd_api_bias_lost(void) {
    nd_api_tls.bias = 0;
    __atomic_store_n(&nd_api_bias_busy, 0, __ATOMIC_RELEASE);
    nd_api_lock();
}
#endif
#else
/* Adaptive (glibc): under contention a waiter spins briefly before it
 * sleeps; most public calls hold the lock for well under a microsecond. */
#ifdef PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP
pthread_mutex_t nd_api_mutex = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;
#else
pthread_mutex_t nd_api_mutex = PTHREAD_MUTEX_INITIALIZER;
#endif
#endif
