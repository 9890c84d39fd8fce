/* The API lock: every public function of nd.h starts with ND_API_GUARD(),
 * so any number of user threads may call the library and the calls run as
 * if one after another (nd.h, "Threads").
 *
 * One process-wide mutex, taken by the outermost public call of a thread
 * and released when it returns; public functions call each other (nd_item
 * calls nd_to_host, which calls nd_sync), so a per-thread depth makes the
 * lock recursive without a recursive mutex's owner checks. The guard is a
 * variable with a cleanup attribute (GCC and Clang): it is released on
 * every return path, early returns included, after the return value is
 * computed, and nobody has to remember an unlock.
 *
 * The outermost call also leaves its name in the thread's state, so that an
 * error raised deep inside (a backend's out of memory, a missing CUDA
 * device) names the public function the user called (nd_error_set adds
 * the prefix; common/error.c), and the call site a program built with
 * ND_DEBUG_CALLSITES passed (nd/callsites.h sets it just before the call;
 * the outermost call's end forgets it).
 *
 * Errors are counted per thread (err_gen), and those recorded inside the
 * outermost call in progress apart (err_new): when that call ends with
 * err_new > 0 it reports the last error (ND_LOG, the handler of
 * nd_set_error_handler) before it lets the lock go, once per failing call,
 * on the caller's thread. nd's own threads never get there: their failures
 * reach a user thread through the call that waits for them (nd_sync, a
 * read), which records them again.
 *
 * Threads that belong to nd (the executor, the CPU backend's workers) never
 * take the lock: user threads hold it while they wait for them.
 * nd_api_forbid marks such a thread; a debug build asserts that it never
 * enters the API.
 *
 * Functions that touch only per-thread or constant state (nd_last_error,
 * nd_dtype_name, ...) start with ND_API_UNLOCKED() instead, which says so
 * and takes nothing. scripts/check_api_guard.py (a test) fails when a
 * function of nd.h starts with neither. */
#ifndef ND_COMMON_API_GUARD_H
#define ND_COMMON_API_GUARD_H

#include <assert.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    /* depth: public calls of this thread in progress; err_new: errors
     * recorded since the outermost one began (nd_error_set counts them only
     * inside a call, and its end zeroes them, so 0 whenever depth is 0).
     * One word too (`call`): the outermost call's end without an error is
     * one compare of it with ND_API_CALL_CLEAN. */
    union {
        struct {
            int32_t depth;
            uint32_t err_new;
        };
        uint64_t call;
    };
    const char *fn;    /* the outermost public call, NULL outside the API */
    uint32_t err_gen;  /* errors this thread recorded (nd_error_set) */
    int32_t forbidden; /* an nd-internal thread: must never enter */
    int32_t bias;      /* this thread owns the API lock's bias (below) */
    const char *site_file;  /* its call site (ND_DEBUG_CALLSITES), or NULL */
    int32_t site_line;
    uint32_t scope;         /* the innermost named scope's number (common/names.h),
                               0 outside one: every node recorded takes it */
    /* While nd_body_trace runs the body's function: its depth, and the
     * last public function the body called (so that what a body may not
     * do is named: nd_item). 0 and NULL otherwise. */
    int32_t trace_depth;
    const char *traced_fn;
    /* This thread's scope replay while a scope at its call site is being
     * learnt or replayed (frontend/scope_replay.h), NULL otherwise: a public
     * call that is not one of the replay's own interrupts it first. */
    struct nd_scope_replay *replay;
} nd_api_thread_state;

/* Initial-exec TLS: one %fs-relative load instead of a __tls_get_addr
 * call on every public call (the state is 48 bytes; glibc reserves static
 * TLS space for libraries loaded later with dlopen). */
extern _Thread_local nd_api_thread_state nd_api_tls
    __attribute__((visibility("hidden"), tls_model("initial-exec")));

/* The lock itself. On Linux a futex word (0 free, 1 held, 2 held and
 * someone may sleep on it): taking and releasing it uncontended is one
 * atomic instruction each, inline, where glibc's adaptive mutex cost ~60
 * instructions a pair, paid twice by a loop body that records an op and
 * frees a handle (a fifth of recording an op). Contended, a waiter spins
 * briefly, as the adaptive mutex did, then sleeps in the kernel. Elsewhere
 * a plain pthread mutex.
 *
 * Biased to the first thread that takes it (Linux, where the kernel has
 * membarrier's private expedited command; not under ThreadSanitizer, which
 * cannot see the barrier's ordering): that thread, the owner, enters with
 * a plain store of `nd_api_bias_busy` and a plain load of
 * `nd_api_bias_revoke`, and leaves with a plain (release) store, no atomic
 * read-modify-write. A locked instruction waits for every store before it
 * to drain, and recording an op makes dozens, so on a server Xeon the two
 * a public call paid were a large share of a small op's time. The first
 * time another thread takes the word, it revokes the bias for good
 * (api_guard.c, nd_api_bias_settle): it sets `nd_api_bias_revoke`, runs
 * membarrier, which makes every thread of the process pass a full memory
 * barrier, and waits until busy reads 0. Either the owner's store of busy
 * was visible by that barrier (the revoker then waits for it to leave) or
 * its load of revoke came after it (it sees the revocation and takes the
 * word instead): the asymmetric form of Dekker's algorithm, where the
 * rare side pays for the barrier the common side leaves out. From then
 * on every thread, the owner too, takes the word. A program that never
 * starts a second thread never pays an atomic instruction for the lock. */
#if defined(__linux__)
#if defined(__SANITIZE_THREAD__)
#define ND_API_BIAS 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ND_API_BIAS 0
#endif
#endif
#ifndef ND_API_BIAS
#define ND_API_BIAS 1
#endif
extern uint32_t nd_api_lock_word __attribute__((visibility("hidden")));
void nd_api_lock_slow(void) __attribute__((visibility("hidden")));
void nd_api_unlock_wake(void) __attribute__((visibility("hidden")));
/* The bias: its state (ND_API_BIAS_*, changed only by a holder of the
 * word), the owner's "inside" word (written by the owner alone) and the
 * revocation (set once, by a holder of the word). */
enum { ND_API_BIAS_UNCLAIMED, ND_API_BIAS_OWNED, ND_API_BIAS_OFF };
extern uint32_t nd_api_bias_state __attribute__((visibility("hidden")));
extern uint32_t nd_api_bias_busy __attribute__((visibility("hidden")));
extern uint32_t nd_api_bias_revoke __attribute__((visibility("hidden")));
/* Out of line: a holder of the word claims an unclaimed bias or revokes
 * another thread's; the owner that finds its bias revoked takes the word. */
void nd_api_bias_settle(void) __attribute__((visibility("hidden")));
void nd_api_bias_lost(void) __attribute__((visibility("hidden")));
static inline void nd_api_lock(void) {
#if ND_API_BIAS
    if (__builtin_expect(nd_api_tls.bias, 1)) {
        __atomic_store_n(&nd_api_bias_busy, 1, __ATOMIC_RELAXED);
        __atomic_signal_fence(__ATOMIC_SEQ_CST); /* the compiler keeps the order; membarrier the CPU */
        if (__builtin_expect(!__atomic_load_n(&nd_api_bias_revoke, __ATOMIC_RELAXED), 1)) return;
        nd_api_bias_lost();
        return;
    }
#endif
    uint32_t unlocked = 0;
    if (!__atomic_compare_exchange_n(&nd_api_lock_word, &unlocked, 1, 0, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
        nd_api_lock_slow();
#if ND_API_BIAS
    if (__builtin_expect(__atomic_load_n(&nd_api_bias_state, __ATOMIC_RELAXED) != ND_API_BIAS_OFF, 0))
        nd_api_bias_settle();
#endif
}
static inline void nd_api_unlock(void) {
#if ND_API_BIAS
    if (__builtin_expect(nd_api_tls.bias, 1)) {
        __atomic_store_n(&nd_api_bias_busy, 0, __ATOMIC_RELEASE);
        return;
    }
#endif
    if (__atomic_exchange_n(&nd_api_lock_word, 0, __ATOMIC_RELEASE) == 2) nd_api_unlock_wake();
}
#else
#define ND_API_BIAS 0
extern pthread_mutex_t nd_api_mutex __attribute__((visibility("hidden")));
static inline void nd_api_lock(void) { pthread_mutex_lock(&nd_api_mutex); }
static inline void nd_api_unlock(void) { pthread_mutex_unlock(&nd_api_mutex); }
#endif

/* The scope replay's hooks (frontend/scope_replay.c sets them before its
 * first replay; common/ sits below the frontend, so it reaches them
 * through pointers).
 * - interrupt: a public call other than the replay's own (elementwise ops,
 *   weak scalars, nd_keep, nd_scope_end) while a replay is active; the
 *   replay records what it has deferred, so the call sees ordinary arrays.
 * - interrupt_all: replays only run on the thread that owns the lock's
 *   bias, so a thread that takes the word is another one; before its call
 *   it undoes every replay still going, since the call may write an array
 *   a deferred op reads. nd_api_replays_live counts them (under the lock). */
typedef struct {
    void (*interrupt)(const char *fn);
    void (*interrupt_all)(void);
} nd_api_replay_hooks;
extern nd_api_replay_hooks nd_api_replay __attribute__((visibility("hidden")));
extern int32_t nd_api_replays_live __attribute__((visibility("hidden")));

/* (Fields reached directly, not through &nd_api_tls: UBSan's null check
 * misreads the address of an initial-exec TLS variable.) */
static inline __attribute__((always_inline)) int nd_api_enter_as(const char *fn, int replay_aware) {
    if (nd_api_tls.depth++ == 0) {
        assert(!nd_api_tls.forbidden && "an nd-internal thread called the public API (deadlock)");
        assert(nd_api_tls.err_new == 0 && "errors counted outside a public call");
        nd_api_lock();
        nd_api_tls.fn = fn;
        if (!replay_aware && __builtin_expect(nd_api_tls.replay != NULL, 0)) nd_api_replay.interrupt(fn);
        if (!nd_api_tls.bias && __builtin_expect(nd_api_replays_live != 0, 0)) nd_api_replay.interrupt_all();
    } else if (__builtin_expect(nd_api_tls.depth == nd_api_tls.trace_depth + 1, 0)) {
        nd_api_tls.traced_fn = fn; /* a body's own call (never true outside a trace: depth > 1) */
    }
    return 0;
}
static inline int nd_api_enter(const char *fn) { return nd_api_enter_as(fn, 0); }

/* The outermost call recorded an error: ND_LOG and the error handler hear
 * of it (common/error.c). */
void nd_error_report(void) __attribute__((visibility("hidden")));

/* `call` of the outermost call (depth 1) that recorded no error. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ND_API_CALL_CLEAN ((uint64_t)1)
#else
#define ND_API_CALL_CLEAN ((uint64_t)1 << 32)
#endif

/* The lock alone, for the scope replay's steady state (frontend/
 * scope_replay.c, fast_placeholder): an outermost call that records no
 * error, calls no other function and reads nothing the call's state
 * (nd_api_tls.fn, depth) tells others, on the thread that owns the bias.
 * Returns 0, having taken nothing, where that is not so (another thread
 * has called nd, or a build without the bias): the caller then takes the
 * whole guard. nd_api_leave_biased(done) releases it, done saying whether
 * the call ended there. */
static inline __attribute__((always_inline)) int nd_api_try_enter_biased(void) {
#if ND_API_BIAS
    if (!nd_api_tls.bias || nd_api_tls.depth != 0) return 0;
    __atomic_store_n(&nd_api_bias_busy, 1, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST); /* as nd_api_lock */
    if (__builtin_expect(!__atomic_load_n(&nd_api_bias_revoke, __ATOMIC_RELAXED), 1)) return 1;
    __atomic_store_n(&nd_api_bias_busy, 0, __ATOMIC_RELEASE); /* as if it never came */
#endif
    return 0;
}
static inline __attribute__((always_inline)) void nd_api_leave_biased(int done) {
#if ND_API_BIAS
    /* A call that ends here forgets its site (ND_DEBUG_CALLSITES), as
     * nd_api_leave; one that goes on to the whole guard keeps it for the
     * messages of its general path. */
    if (done) nd_api_tls.site_file = NULL;
    __atomic_store_n(&nd_api_bias_busy, 0, __ATOMIC_RELEASE);
#else
    (void)done;
#endif
}

/* nd_api_leave of a nested call, or of the outermost one that reports an
 * error (api_guard.c): out of line, so that every public function's end
 * is the common case's few instructions. */
void nd_api_leave_slow(void) __attribute__((visibility("hidden")));

static inline void nd_api_leave(int *unused) {
    (void)unused;
    if (__builtin_expect(nd_api_tls.call == ND_API_CALL_CLEAN, 1)) {
        nd_api_tls.call = 0;
        nd_api_tls.fn = NULL;
        nd_api_tls.site_file = NULL;
        nd_api_unlock();
    } else {
        nd_api_leave_slow();
    }
}

/* First statement of every public function that reaches shared state. */
#define ND_API_GUARD()                                                                      \
    __attribute__((cleanup(nd_api_leave), unused)) int nd_api_guard_ = nd_api_enter(__func__)

/* The guard taken for the public function fn by a function that does its
 * whole work and that it forwards to (elementwise.c's binary ops: one
 * frame holds the lock and records the node, where a guard in each public
 * op and a call to the shared recording cost a prologue and the arguments
 * passed on). Its first statement; the public function's first is
 * ND_API_GUARD_IN(that function), and scripts/check_api_guard.py checks
 * that the two match. */
#define ND_API_GUARD_AS(fn)                                                                 \
    __attribute__((cleanup(nd_api_leave), unused)) int nd_api_guard_ = nd_api_enter(fn)
/* First statement of a void public function with a fast path that takes
 * the lock itself (nd_api_try_enter_biased): the call is done when `done`
 * (that path) returns nonzero, else it takes the guard as ND_API_GUARD. */
#define ND_API_GUARD_UNLESS(done)                                                           \
    if (done) return;                                                                       \
    ND_API_GUARD()
/* The guard of the scope replay's own entry points (frontend/scope_replay.c):
 * they carry on the replay instead of interrupting it. */
#define ND_API_GUARD_REPLAY(fn)                                                             \
    __attribute__((cleanup(nd_api_leave), unused)) int nd_api_guard_ = nd_api_enter_as(fn, 1)
#define ND_API_GUARD_IN(callee) ((void)0)

/* First statement of a public function that reads only per-thread or
 * constant state, and so needs no lock (checked like ND_API_GUARD). */
#define ND_API_UNLOCKED() ((void)0)

/* The public function this thread is inside (outermost), or NULL. */
static inline const char *nd_api_current(void) { return nd_api_tls.fn; }

/* Its call site when the program passed one (ND_DEBUG_CALLSITES): the
 * file as the compiler spelled __FILE__, or NULL. */
static inline const char *nd_api_site_file(void) { return nd_api_tls.site_file; }
static inline int nd_api_site_line(void) { return nd_api_tls.site_line; }

/* Whether this thread holds the API lock (for assertions). */
static inline int nd_api_held(void) { return nd_api_tls.depth > 0; }

/* Marks the calling thread as nd's own: it must never take the API lock. */
static inline void nd_api_forbid(void) { nd_api_tls.forbidden = 1; }

#endif
