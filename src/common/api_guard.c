/* State of the API lock (common/api_guard.h). */
#include "common/api_guard.h"

_Thread_local nd_api_thread_state nd_api_tls;

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
#include <linux/futex.h>
#include <sys/syscall.h>
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
#else
/* Adaptive (glibc): under contention a waiter spins briefly before it
 * sleeps; most public calls hold the lock for well under a microsecond. */
#ifdef PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP
pthread_mutex_t nd_api_mutex = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;
#else
pthread_mutex_t nd_api_mutex = PTHREAD_MUTEX_INITIALIZER;
#endif
#endif
