/* Several user threads calling the API at once (nd.h, "Threads"): results
 * are as if the calls ran one after another, scopes and the last error are
 * per thread, the runtime starts once however many threads race to start
 * it, and a thread that exits or a shutdown releases every thread's scoped
 * handles.
 *
 * Worker threads never call Criterion's asserts (they unwind the test's
 * own thread): each records its first failure in its `job`, and the test's
 * thread asserts after joining. Every value read back is compared with a
 * float64 reference computed here from the same host inputs. */
#include "common.h"

#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <unistd.h>
#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#endif
#include <sys/wait.h>

#include "common/api_guard.h"

#define N_THREADS 4

typedef struct {
    int id;
    uint64_t seed;
    int iters;
    nd_array *shared;         /* read-only input shared by every thread */
    const double *shared_host;
    int64_t shared_n;
    pthread_barrier_t *barrier;
    int failures;
    int restarts_met; /* shutdown_while_others_record: iterations a restart cut */
    char first[512];
} job;

static void fail(job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(job *j, const char *fmt, ...) {
    if (j->failures++) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(j->first, sizeof j->first, fmt, ap);
    va_end(ap);
}

/* Per-thread inputs: splitmix64, so no state is shared between threads. */
static double next_uniform(uint64_t *x, double lo, double hi) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return lo + (hi - lo) * (double)(z >> 11) * 0x1p-53;
}

static int close_to(double got, double want, double rtol) {
    if (isnan(want)) return isnan(got);
    return fabs(got - want) <= rtol * (1.0 + fabs(want));
}

/* Compares n float64 values read back from a with want. */
static void check_values(job *j, nd_array *a, const double *want, int64_t n, double rtol,
                         const char *what) {
    double *got = malloc((size_t)n * sizeof *got);
    if (!got) {
        fail(j, "thread %d: %s: out of memory in the test", j->id, what);
        return;
    }
    nd_status st = nd_to_host(a, got, (size_t)n * sizeof *got);
    if (st != ND_OK) {
        fail(j, "thread %d: %s: nd_to_host: %s: %s", j->id, what, nd_status_name(st),
             nd_last_error());
    } else {
        for (int64_t i = 0; i < n; i++) {
            if (!close_to(got[i], want[i], rtol)) {
                fail(j, "thread %d: %s: element %lld is %.17g, want %.17g (seed %llu)", j->id,
                     what, (long long)i, got[i], want[i], (unsigned long long)j->seed);
                break;
            }
        }
    }
    free(got);
}

/* The sum of all of a's elements (the temporary freed). */
static double sum_of(nd_array *a) {
    nd_array *s = nd_sum(a, ND_ALL_AXES);
    double v = nd_item(s);
    nd_free(s);
    return v;
}

static void check_status(job *j, const char *what) {
    if (nd_last_status() != ND_OK) {
        fail(j, "thread %d: %s: unexpected error %s: %s", j->id, what,
             nd_status_name(nd_last_status()), nd_last_error());
        nd_clear_error();
    }
}

#define R 24
#define C 20

/* One iteration of a thread's program: an elementwise chain, reductions, a
 * few in-place stencil sweeps (nd_assign into a view read through shifted
 * views), random draws and reads of the shared input, each inside a scope,
 * each value compared with the float64 reference. */
static void program(job *j, int iter) {
    double x[R * C], ref[R * C], g[R * C], gnext[R * C];
    for (int i = 0; i < R * C; i++) x[i] = next_uniform(&j->seed, -4, 4);

    nd_scope_begin();
    nd_array *xa = nd_from_host(x, ND_FLOAT64, ND_SHAPE(R, C));

    /* y = sqrt(|x| * 3 + 1) - x * x / 7 */
    nd_array *y = nd_sub(nd_sqrt(nd_add(nd_mul(nd_abs(xa), nd_scalar(3.0)), nd_scalar(1.0))),
                         nd_div(nd_mul(xa, xa), nd_scalar(7.0)));
    for (int i = 0; i < R * C; i++) ref[i] = sqrt(fabs(x[i]) * 3.0 + 1.0) - x[i] * x[i] / 7.0;
    check_values(j, y, ref, R * C, 1e-13, "elementwise chain");

    /* Column sums (axis 0) and the total through nd_item. */
    double colsum[C], total = 0;
    for (int c = 0; c < C; c++) {
        colsum[c] = 0;
        for (int r = 0; r < R; r++) colsum[c] += ref[r * C + c];
        total += colsum[c];
    }
    check_values(j, nd_sum(y, 0), colsum, C, 1e-12, "nd_sum axis 0");
    double item = sum_of(y);
    if (!close_to(item, total, 1e-12))
        fail(j, "thread %d: nd_item(nd_sum(y)) = %.17g, want %.17g", j->id, item, total);
    double mx = nd_item(nd_max(xa, ND_ALL_AXES)), want_mx = x[0];
    for (int i = 1; i < R * C; i++) want_mx = x[i] > want_mx ? x[i] : want_mx;
    if (mx != want_mx) fail(j, "thread %d: nd_max = %.17g, want %.17g", j->id, mx, want_mx);

    /* Stencil: g[1:-1, 1:-1] = 0.2 * (c + n + s + w + e), three sweeps, one
     * nd_sync; the whole right-hand side is read before the store. */
    nd_array *grid = nd_copy(xa);
    memcpy(g, x, sizeof g);
    for (int sweep = 0; sweep < 3; sweep++) {
        nd_scope_begin();
        nd_array *sum = nd_add(nd_add(nd_add(nd_add(nd_view(grid, "1:-1, 1:-1"),
                                                    nd_view(grid, ":-2, 1:-1")),
                                             nd_view(grid, "2:, 1:-1")),
                                      nd_view(grid, "1:-1, :-2")),
                               nd_view(grid, "1:-1, 2:"));
        nd_status st = nd_assign(nd_view(grid, "1:-1, 1:-1"), nd_mul(sum, nd_scalar(0.2)));
        if (st != ND_OK)
            fail(j, "thread %d: nd_assign: %s: %s", j->id, nd_status_name(st), nd_last_error());
        nd_scope_end();
        memcpy(gnext, g, sizeof g);
        for (int r = 1; r < R - 1; r++)
            for (int c = 1; c < C - 1; c++)
                gnext[r * C + c] = 0.2 * ((((g[r * C + c] + g[(r - 1) * C + c]) + g[(r + 1) * C + c]) +
                                           g[r * C + c - 1]) + g[r * C + c + 1]);
        memcpy(g, gnext, sizeof g);
    }
    if (nd_sync() != ND_OK) fail(j, "thread %d: nd_sync: %s", j->id, nd_last_error());
    check_values(j, grid, g, R * C, 1e-13, "stencil");

    /* Random draws: the values depend on how the threads' calls interleave
     * (the stream counter is global), so check the range and compute on the
     * values read back. */
    nd_array *u = nd_random_uniform(ND_FLOAT64, ND_SHAPE(200), -2.0, 3.0);
    double uh[200], twice[200], usum = 0;
    if (nd_to_host(u, uh, sizeof uh) != ND_OK) {
        fail(j, "thread %d: nd_to_host(random): %s", j->id, nd_last_error());
    } else {
        for (int i = 0; i < 200; i++) {
            if (!(uh[i] >= -2.0 && uh[i] < 3.0))
                fail(j, "thread %d: random element %d = %g outside [-2, 3)", j->id, i, uh[i]);
            twice[i] = uh[i] * 2.0 + 1.0;
            usum += uh[i];
        }
        check_values(j, nd_add(nd_mul(u, nd_scalar(2.0)), nd_scalar(1.0)), twice, 200, 1e-15,
                     "random * 2 + 1");
        double m = nd_item(nd_mean(u, ND_ALL_AXES));
        if (!close_to(m, usum / 200, 1e-12))
            fail(j, "thread %d: nd_mean(random) = %.17g, want %.17g", j->id, m, usum / 200);
    }

    /* The shared input, read only: shared * (id + 1) + x[0], and its sum. */
    if (j->shared) {
        const int64_t n = j->shared_n;
        double *want = calloc((size_t)n, sizeof *want), s = 0;
        if (!want) {
            fail(j, "thread %d: out of memory in the test", j->id);
            return;
        }
        double k = (double)(j->id + 1);
        for (int64_t i = 0; i < n; i++) {
            want[i] = j->shared_host[i] * k + x[0];
            s += j->shared_host[i] * k;
        }
        nd_array *sh = nd_retain(j->shared);
        check_values(j, nd_add(nd_mul(sh, nd_scalar(k)), nd_scalar(x[0])), want, n, 1e-15,
                     "shared input");
        double got = nd_item(nd_sum(nd_mul(sh, nd_scalar(k)), ND_ALL_AXES));
        if (!close_to(got, s, 1e-12))
            fail(j, "thread %d: sum of the shared input = %.17g, want %.17g", j->id, got, s);
        nd_free(sh);
        free(want);
    }
    nd_scope_end();
    check_status(j, iter == 0 ? "first iteration" : "an iteration");
}

static void *run_program(void *arg) {
    job *j = arg;
    if (j->barrier) pthread_barrier_wait(j->barrier);
    for (int it = 0; it < j->iters && j->failures == 0; it++) program(j, it);
    return NULL;
}

static void run_threads(job *jobs, int n, void *(*fn)(void *)) {
    pthread_t t[16];
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, (unsigned)n);
    for (int i = 0; i < n; i++) {
        jobs[i].barrier = &barrier;
        cr_assert_eq(pthread_create(&t[i], NULL, fn, &jobs[i]), 0);
    }
    for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
    pthread_barrier_destroy(&barrier);
    for (int i = 0; i < n; i++)
        cr_expect_eq(jobs[i].failures, 0, "%d failure(s); first: %s", jobs[i].failures,
                     jobs[i].first);
}

static job new_job(int id, const char *test, int iters) {
    NDT_RNG(r);
    (void)test;
    job j = {.id = id, .seed = r.seed ^ (0x51ed2701u * (uint64_t)(id + 1)), .iters = iters};
    return j;
}

NDT_TEST(threads, independent_programs) {
    job jobs[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) jobs[i] = new_job(i, __func__, 12);
    run_threads(jobs, N_THREADS, run_program);
    cr_expect_eq(nd_sync(), ND_OK, "%s", nd_last_error());
}

/* The same programs without the executor thread: every flush runs on the
 * thread that triggers it. */
NDT_TEST(threads, independent_programs_no_executor) {
    setenv("ND_EXECUTOR_THREAD", "0", 1);
    ndt_restart(&(nd_config){0});
    unsetenv("ND_EXECUTOR_THREAD");
    job jobs[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) jobs[i] = new_job(i, __func__, 8);
    run_threads(jobs, N_THREADS, run_program);
}

NDT_TEST(threads, shared_read_only_input) {
    NDT_RNG(r);
    enum { N = 3000 };
    double *host = malloc(N * sizeof *host);
    for (int i = 0; i < N; i++) host[i] = ndt_uniform(&r, -10, 10);
    nd_array *shared = nd_from_host(host, ND_FLOAT64, ND_SHAPE(N));
    cr_assert(shared, "%s", nd_last_error());
    job jobs[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) {
        jobs[i] = new_job(i, __func__, 8);
        jobs[i].shared = shared;
        jobs[i].shared_host = host;
        jobs[i].shared_n = N;
    }
    run_threads(jobs, N_THREADS, run_program);
    /* Still the input it was, with one reference. */
    double *back = malloc(N * sizeof *back);
    cr_assert_eq(nd_to_host(shared, back, N * sizeof *back), ND_OK, "%s", nd_last_error());
    cr_expect(memcmp(back, host, N * sizeof *back) == 0, "the shared input changed");
    nd_free(shared);
    free(back);
    free(host);
    cr_expect_eq(nd_last_status(), ND_OK, "%s", nd_last_error());
}

/* ------------------------------------------------------------ errors */

static void *error_thread(void *arg) {
    job *j = arg;
    pthread_barrier_wait(j->barrier);
    if (j->id == 0) {
        /* Fails: (3,) and (4,) do not broadcast. */
        nd_array *a = nd_zeros(ND_FLOAT32, ND_SHAPE(3)), *b = nd_zeros(ND_FLOAT32, ND_SHAPE(4));
        nd_array *c = nd_add(a, b);
        if (c || nd_last_status() != ND_ERR_SHAPE || !strstr(nd_last_error(), "nd_add"))
            fail(j, "thread 0: nd_add of (3,) and (4,) gave %p, %s: '%s'", (void *)c,
                 nd_status_name(nd_last_status()), nd_last_error());
        pthread_barrier_wait(j->barrier); /* 1: the error is set */
        pthread_barrier_wait(j->barrier); /* 2: the other threads worked */
        if (nd_last_status() != ND_ERR_SHAPE || !strstr(nd_last_error(), "nd_add"))
            fail(j, "thread 0: its error changed to %s: '%s'", nd_status_name(nd_last_status()),
                 nd_last_error());
        nd_clear_error();
        nd_free(a);
        nd_free(b);
    } else {
        pthread_barrier_wait(j->barrier); /* 1 */
        if (nd_last_status() != ND_OK)
            fail(j, "thread %d sees another thread's error: %s: '%s'", j->id,
                 nd_status_name(nd_last_status()), nd_last_error());
        /* Work, and an error of its own that thread 0 must not see. */
        nd_array *a = nd_arange(ND_FLOAT64, 0, 10, 1);
        double s = sum_of(a);
        if (s != 45.0) fail(j, "thread %d: sum(arange(10)) = %g", j->id, s);
        if (nd_view(a, "5, 5") != NULL || nd_last_status() != ND_ERR_INDEX)
            fail(j, "thread %d: nd_view(a, \"5, 5\") of a 1-d array did not fail", j->id);
        nd_clear_error();
        nd_free(a);
        pthread_barrier_wait(j->barrier); /* 2 */
        check_status(j, "after its own work");
    }
    return NULL;
}

NDT_TEST(threads, errors_are_per_thread) {
    job jobs[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) jobs[i] = new_job(i, __func__, 1);
    run_threads(jobs, N_THREADS, error_thread);
    cr_expect_eq(nd_last_status(), ND_OK, "the test's thread sees: %s", nd_last_error());
}

/* ------------------------------------------------------------ scopes */

static void *scope_thread(void *arg) {
    job *j = arg;
    pthread_barrier_wait(j->barrier);
    nd_scope_begin();
    nd_array *mine = nd_full(ND_FLOAT64, ND_SHAPE(100), (double)(j->id + 1));
    pthread_barrier_wait(j->barrier); /* every thread has a scope open */
    if (j->id == 0) {
        /* Thread 0 closes its scope and one more: only its own scope
         * closes; the extra nd_scope_end is its error alone. */
        nd_scope_end();
        nd_scope_end();
        if (nd_last_status() != ND_ERR_STATE || !strstr(nd_last_error(), "nd_scope_end"))
            fail(j, "thread 0: an unmatched nd_scope_end gave %s: '%s'",
                 nd_status_name(nd_last_status()), nd_last_error());
        nd_clear_error();
    }
    pthread_barrier_wait(j->barrier); /* thread 0's scopes are closed */
    if (j->id != 0) {
        /* Its handle survived thread 0's scope end. */
        double s = sum_of(mine);
        if (s != 100.0 * (j->id + 1))
            fail(j, "thread %d: its scoped array sums to %g, want %g", j->id, s,
                 100.0 * (j->id + 1));
        /* nd_keep moves a handle out of this thread's outermost scope. */
        nd_array *kept = nd_keep(nd_mul(mine, nd_scalar(2.0)));
        nd_scope_end();
        s = sum_of(kept);
        if (s != 200.0 * (j->id + 1))
            fail(j, "thread %d: a kept array sums to %g, want %g", j->id, s, 200.0 * (j->id + 1));
        nd_free(kept);
    }
    check_status(j, "scopes");
    return NULL;
}

NDT_TEST(threads, scopes_are_per_thread) {
    job jobs[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) jobs[i] = new_job(i, __func__, 1);
    /* A scope of the test's own thread stays open meanwhile. */
    nd_scope_begin();
    nd_array *outer = nd_ones(ND_INT32, ND_SHAPE(7));
    run_threads(jobs, N_THREADS, scope_thread);
    cr_expect_eq(sum_of(outer), 7.0, "%s", nd_last_error());
    nd_scope_end();
    cr_expect_eq(nd_last_status(), ND_OK, "%s", nd_last_error());
}

/* A thread that exits with scopes open: its handles are released (the
 * memory of their buffers goes back), nothing leaks (LeakSanitizer). */
static void *exit_in_scope_thread(void *arg) {
    job *j = arg;
    nd_scope_begin();
    nd_array *a = nd_full(ND_FLOAT64, ND_SHAPE(1000), 3.0);
    nd_scope_begin();
    nd_array *b = nd_add(a, a);
    double s = sum_of(b);
    if (s != 6000.0) fail(j, "thread %d: sum = %g, want 6000", j->id, s);
    return NULL; /* both scopes still open */
}

NDT_TEST(threads, thread_exit_releases_its_scopes) {
    nd_stats before, after;
    cr_assert_eq(nd_sync(), ND_OK);
    nd_get_stats(&before);
    job jobs[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) jobs[i] = new_job(i, __func__, 1);
    run_threads(jobs, N_THREADS, exit_in_scope_thread);
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_get_stats(&after);
    cr_expect_eq(after.bytes_allocated, before.bytes_allocated,
                 "buffers of exited threads' scopes are still allocated: %llu bytes before, "
                 "%llu after",
                 (unsigned long long)before.bytes_allocated,
                 (unsigned long long)after.bytes_allocated);
}

/* nd_shutdown while another thread has a scope open: the shutdown releases
 * the memory of that thread's arrays but leaves its scope and handles, which
 * it may be using at that moment: they are handles that outlived the
 * runtime (ND_ERR_STATE on use, never freed memory) until that thread
 * closes the scope, which then releases them. The thread that shuts down
 * has its own scopes closed. */
static void *shutdown_scope_thread(void *arg) {
    job *j = arg;
    nd_scope_begin();
    nd_array *a = nd_full(ND_FLOAT64, ND_SHAPE(500), 1.0);
    if (sum_of(a) != 500.0) fail(j, "thread %d: wrong sum", j->id);
    pthread_barrier_wait(j->barrier); /* 1: scope open */
    pthread_barrier_wait(j->barrier); /* 2: the runtime was shut down and restarted */
    if (nd_sum(a, ND_ALL_AXES) != NULL || nd_last_status() != ND_ERR_STATE ||
        !strstr(nd_last_error(), "before nd_shutdown"))
        fail(j, "thread %d: its scoped array after nd_shutdown gave %s: '%s'", j->id,
             nd_status_name(nd_last_status()), nd_last_error());
    nd_clear_error();
    nd_scope_end(); /* releases the dead handle */
    check_status(j, "nd_scope_end after the restart");
    nd_scope_begin();
    nd_array *b = nd_full(ND_FLOAT64, ND_SHAPE(5), 2.0);
    if (sum_of(b) != 10.0) fail(j, "thread %d: wrong sum after restart", j->id);
    nd_scope_end();
    check_status(j, "after the restart");
    return NULL;
}

NDT_TEST(threads, shutdown_and_other_threads_scopes) {
    pthread_t t[2];
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, 3);
    job jobs[2];
    for (int i = 0; i < 2; i++) {
        jobs[i] = new_job(i, __func__, 1);
        jobs[i].barrier = &barrier;
        cr_assert_eq(pthread_create(&t[i], NULL, shutdown_scope_thread, &jobs[i]), 0);
    }
    nd_scope_begin();
    nd_array *mine = nd_ones(ND_FLOAT32, ND_SHAPE(9));
    cr_assert(mine);
    pthread_barrier_wait(&barrier); /* 1 */
    nd_shutdown();
    cr_assert_eq(nd_init(NULL), ND_OK, "%s", nd_last_error());
    /* This thread's scope was closed by its own shutdown. */
    nd_scope_end();
    NDT_EXPECT_ERR(ND_ERR_STATE, "nd_scope_end");
    pthread_barrier_wait(&barrier); /* 2 */
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    pthread_barrier_destroy(&barrier);
    for (int i = 0; i < 2; i++)
        cr_expect_eq(jobs[i].failures, 0, "%s", jobs[i].first);
}

/* ------------------------------------------------------------ start-up */

static int init_results[16];

static void *init_thread(void *arg) {
    job *j = arg;
    pthread_barrier_wait(j->barrier);
    if (j->id % 2 == 0) {
        init_results[j->id] = (int)nd_init(NULL);
        if (init_results[j->id] != ND_OK &&
            (init_results[j->id] != ND_ERR_STATE || !strstr(nd_last_error(), "nd_init")))
            fail(j, "thread %d: nd_init gave %s: '%s'", j->id,
                 nd_status_name((nd_status)init_results[j->id]), nd_last_error());
        nd_clear_error();
    }
    /* Lazy start: the first call of any function starts the runtime. */
    nd_array *a = nd_arange(ND_INT64, 0, 100 + j->id, 1);
    double s = sum_of(a), n = 100 + j->id;
    if (s != n * (n - 1) / 2)
        fail(j, "thread %d: sum(arange(%g)) = %g (%s)", j->id, n, s, nd_last_error());
    nd_free(a);
    check_status(j, "after a raced start");
    return NULL;
}

NDT_TEST(threads, start_raced_from_several_threads) {
    enum { N = 8 };
    for (int round = 0; round < 4; round++) {
        nd_shutdown();
        memset(init_results, -1, sizeof init_results);
        job jobs[N];
        for (int i = 0; i < N; i++) jobs[i] = new_job(i, __func__, 1);
        run_threads(jobs, N, init_thread);
        int ok = 0;
        for (int i = 0; i < N; i += 2) ok += init_results[i] == ND_OK;
        cr_expect_leq(ok, 1, "round %d: nd_init succeeded %d times", round, ok);
        cr_expect_eq(nd_last_status(), ND_OK, "%s", nd_last_error());
    }
}

/* nd_shutdown and nd_init from one thread while others record: a call
 * either runs whole before the shutdown or after it, so the others see
 * either right values or clear errors (ND_ERR_STATE: their handles were
 * made before the shutdown, or their scope was closed by it), never a
 * crash or a wrong value. */
static int restarts_done;

static void *record_through_restarts(void *arg) {
    job *j = arg;
    pthread_barrier_wait(j->barrier);
    for (int it = 0; !__atomic_load_n(&restarts_done, __ATOMIC_ACQUIRE) && it < 100000; it++) {
        nd_scope_begin();
        nd_array *a = nd_full(ND_FLOAT64, ND_SHAPE(50), (double)(it % 7));
        nd_array *b = nd_mul(nd_add(a, nd_scalar(1.0)), nd_scalar(2.0));
        nd_array *s = nd_sum(b, ND_ALL_AXES);
        double v = nd_item(s);
        nd_status st = nd_last_status();
        if (st == ND_OK && v != 50.0 * 2.0 * (double)(it % 7 + 1))
            fail(j, "thread %d: iteration %d: sum %.17g, want %.17g", j->id, it, v,
                 50.0 * 2.0 * (double)(it % 7 + 1));
        nd_scope_end();
        st = nd_last_status();
        if (st == ND_ERR_STATE) j->restarts_met++;
        if (st != ND_OK && st != ND_ERR_STATE)
            fail(j, "thread %d: iteration %d: %s: %s", j->id, it, nd_status_name(st),
                 nd_last_error());
        nd_clear_error();
    }
    return NULL;
}

NDT_TEST(threads, shutdown_while_others_record) {
    pthread_t t[3];
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, 4);
    job jobs[3];
    restarts_done = 0;
    for (int i = 0; i < 3; i++) {
        jobs[i] = new_job(i, __func__, 1);
        jobs[i].barrier = &barrier;
        cr_assert_eq(pthread_create(&t[i], NULL, record_through_restarts, &jobs[i]), 0);
    }
    pthread_barrier_wait(&barrier);
    for (int r = 0; r < 20; r++) {
        usleep(2000);
        nd_shutdown();
        usleep(500);
        /* The others may have restarted it already (lazily). */
        nd_status st = nd_init(NULL);
        cr_expect(st == ND_OK || st == ND_ERR_STATE, "restart %d: %s", r, nd_last_error());
        nd_clear_error();
    }
    __atomic_store_n(&restarts_done, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
    pthread_barrier_destroy(&barrier);
    int hit = 0;
    for (int i = 0; i < 3; i++) {
        cr_expect_eq(jobs[i].failures, 0, "%s", jobs[i].first);
        hit += jobs[i].restarts_met;
    }
    if (getenv("NDT_VERBOSE")) fprintf(stderr, "%d iterations met a restart\n", hit);
}

/* The API lock's bias (common/api_guard.h): the first thread that takes
 * the lock enters with plain stores until a second thread arrives and
 * revokes the bias. Mutual exclusion is checked directly: a plain counter
 * incremented inside the guard by the owner, hammering, and by three
 * threads that arrive while it does; a lost update shows as a short
 * count. Where the bias can be used (Linux with membarrier, not under
 * ThreadSanitizer) the test also checks that the owner had it before the
 * others came and that it is gone after. */
static uint64_t guarded_count;      /* changed only inside the guard */
static int64_t owner_progress;      /* atomic: the owner's increments so far */
static int late_threads_done;       /* atomic */

/* A read, a pause of `pause` rounds and a write. The owner's pause is
 * long (tens of microseconds, longer than a system call's return), so a
 * thread let in while the owner is inside, at the revocation or after,
 * overlaps it and one of the two increments is lost. */
static void guarded_increment(int pause) {
    ND_API_GUARD_AS("guarded_increment");
    uint64_t c = guarded_count;
    for (int k = 0; k < pause; k++) __asm__ __volatile__("" ::: "memory");
    guarded_count = c + 1;
}

static void *late_thread(void *arg) {
    job *j = arg;
    while (__atomic_load_n(&owner_progress, __ATOMIC_RELAXED) < 20000) sched_yield();
    for (int i = 0; i < j->iters; i++) guarded_increment(10);
    __atomic_fetch_add(&late_threads_done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* Whether the bias can be in use here. */
static int bias_possible(void) {
#if ND_API_BIAS
    int cmds = (int)syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    return cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) && !getenv("ND_LOCK_BIAS");
#else
    return 0;
#endif
}

NDT_TEST(threads, biased_lock_excludes_late_threads) {
    enum { LATE = 3, EACH = 2000 };
    guarded_count = 0;
    owner_progress = 0;
    late_threads_done = 0;
    guarded_increment(10); /* the runtime started in this thread: it took the lock first */
    int64_t own = 1;
    int biased = bias_possible();
#if ND_API_BIAS
    if (biased)
        cr_expect(nd_api_tls.bias && nd_api_bias_state == ND_API_BIAS_OWNED,
                  "the first thread does not own the bias (state %u)", nd_api_bias_state);
#endif
    if (!biased)
        fprintf(stderr, "threads::biased_lock_excludes_late_threads: the bias is off here "
                        "(ThreadSanitizer, no membarrier or ND_LOCK_BIAS set): mutual exclusion only\n");
    pthread_t t[LATE];
    job jobs[LATE];
    for (int i = 0; i < LATE; i++) {
        jobs[i] = new_job(i, __func__, EACH);
        cr_assert_eq(pthread_create(&t[i], NULL, late_thread, &jobs[i]), 0);
    }
    while (__atomic_load_n(&late_threads_done, __ATOMIC_ACQUIRE) < LATE) {
        guarded_increment(own < 20000 ? 10 : 50000);
        if (++own % 256 == 0 || own > 20000) __atomic_store_n(&owner_progress, own, __ATOMIC_RELAXED);
    }
    for (int i = 0; i < LATE; i++) pthread_join(t[i], NULL);
    cr_expect_eq(guarded_count, (uint64_t)(own + (int64_t)LATE * EACH),
                 "%llu increments counted, %lld made: the lock let two threads in at once",
                 (unsigned long long)guarded_count, (long long)(own + (int64_t)LATE * EACH));
#if ND_API_BIAS
    if (biased)
        cr_expect(!nd_api_tls.bias && nd_api_bias_state == ND_API_BIAS_OFF,
                  "the bias was not revoked (state %u)", nd_api_bias_state);
#endif
    /* And the library works on from every thread, on the word. */
    nd_array *a = nd_arange(ND_FLOAT64, 0, 10, 1);
    cr_expect_eq(sum_of(a), 45.0);
    nd_free(a);
}

/* A fork's child has the forking thread alone (common/api_guard.c,
 * nd_api_bias_settle): forked by the owner it keeps the bias, forked by
 * another thread it revokes the absent owner's bias (membarrier's
 * registration is inherited) and takes the word.
 * Either way the lock works there. The child runs only the guard, not the
 * runtime, whose threads a fork does not copy. */
static int child_status_of_fork(int expect_bias) {
    (void)expect_bias; /* read only where the bias is built (not under TSan) */
    pid_t pid = fork();
    if (pid == 0) {
        guarded_increment(10);
        guarded_increment(10);
        int ok = guarded_count >= 2;
#if ND_API_BIAS
        if (expect_bias >= 0)
            ok = ok && nd_api_tls.bias == expect_bias &&
                 nd_api_bias_state == (expect_bias ? ND_API_BIAS_OWNED : ND_API_BIAS_OFF);
#endif
        _exit(ok ? 0 : 3);
    }
    int status = -1;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void *fork_from_other_thread(void *arg) {
    *(int *)arg = child_status_of_fork(bias_possible() ? 0 : -1);
    return NULL;
}

NDT_TEST(threads, biased_lock_after_fork) {
    guarded_count = 0;
    guarded_increment(10);
    int owner_child = child_status_of_fork(bias_possible() ? 1 : -1);
    cr_expect_eq(owner_child, 0, "the owner's child: status %d", owner_child);
    int other_child = -1;
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, fork_from_other_thread, &other_child), 0);
    pthread_join(t, NULL);
    cr_expect_eq(other_child, 0, "another thread's child: status %d", other_child);
    /* The parent still holds the bias: that thread never took the lock. */
#if ND_API_BIAS
    if (bias_possible()) cr_expect(nd_api_tls.bias, "the owner lost the bias to a fork");
#endif
}
