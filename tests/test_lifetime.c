/* Handle lifetime under misuse: a second nd_free of a handle, or an op on a
 * freed handle, is a clear ND_ERR_ARG (never two later arrays sharing one
 * handle); handles that outlive nd_shutdown lose their memory at the
 * shutdown, are rejected by every op with ND_ERR_STATE and are still
 * released by nd_free; repeated (make, shutdown, free) cycles do not grow
 * the process. Reference counting (nd_retain) and scopes keep working. */
#include "common.h"

#include <math.h>
#include <unistd.h>

static double sum_of(nd_array *a) {
    nd_array *s = nd_sum(a, ND_ALL_AXES);
    double v = nd_item(s);
    nd_free(s);
    return v;
}

/* ------------------------------------------------------------ nd_free twice */

NDT_TEST(lifetime, double_free_is_an_error_and_handles_stay_distinct) {
    nd_array *a = nd_full(ND_FLOAT64, ND_SHAPE(10), 1.0);
    cr_assert(a);
    nd_free(a);
    cr_expect_eq(nd_last_status(), ND_OK, "%s", nd_last_error());
    nd_free(a); /* the bug under test */
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_free");
    /* The next arrays get handles of their own (before: both got a). */
    nd_array *b = nd_full(ND_FLOAT64, ND_SHAPE(10), 2.0);
    nd_array *c = nd_full(ND_FLOAT64, ND_SHAPE(10), 3.0);
    cr_assert(b && c);
    cr_expect_neq(b, c, "two live arrays share one handle");
    cr_expect_eq(sum_of(b), 20.0);
    cr_expect_eq(sum_of(c), 30.0);
    nd_free(b);
    nd_free(c);
    cr_expect_eq(nd_last_status(), ND_OK, "%s", nd_last_error());
}

NDT_TEST(lifetime, double_free_found_after_many_other_frees) {
    nd_array *a = nd_ones(ND_INT32, ND_SHAPE(4));
    nd_free(a);
    /* A hundred handles made and freed between the two frees. */
    for (int i = 0; i < 100; i++) nd_free(nd_zeros(ND_FLOAT32, ND_SHAPE(3)));
    cr_assert_eq(nd_last_status(), ND_OK, "%s", nd_last_error());
    nd_free(a);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_free");
    nd_array *x = nd_arange(ND_INT64, 0, 5, 1), *y = nd_arange(ND_INT64, 0, 7, 1);
    cr_expect_neq(x, y);
    cr_expect_eq(sum_of(x), 10.0);
    cr_expect_eq(sum_of(y), 21.0);
    nd_free(x);
    nd_free(y);
}

NDT_TEST(lifetime, retain_counts_and_the_extra_free_is_caught) {
    nd_array *a = nd_full(ND_FLOAT32, ND_SHAPE(2, 3), 4.0);
    cr_assert_eq(nd_retain(a), a);
    nd_free(a);                      /* one reference left */
    cr_expect_eq(sum_of(a), 24.0);   /* still alive */
    nd_free(a);                      /* the last */
    cr_expect_eq(nd_last_status(), ND_OK, "%s", nd_last_error());
    nd_free(a);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_free");
    cr_expect_null(nd_retain(a));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_retain");
}

NDT_TEST(lifetime, ops_on_a_freed_handle_are_errors) {
    nd_array *a = nd_full(ND_FLOAT64, ND_SHAPE(5), 1.5);
    nd_array *b = nd_full(ND_FLOAT64, ND_SHAPE(5), 2.5);
    nd_free(a);
    cr_expect_null(nd_add(b, a));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_add");
    cr_expect_null(nd_sum(a, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_sum");
    cr_expect_null(nd_view(a, "1:"));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_view");
    double out[5];
    cr_expect_eq(nd_to_host(a, out, sizeof out), ND_ERR_ARG);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_to_host");
    cr_expect(isnan(nd_item(a)));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_item");
    cr_expect_eq(nd_assign(b, a), ND_ERR_ARG);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_assign");
    cr_expect_eq(nd_fill(a, 1.0), ND_ERR_ARG);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_fill");
    nd_array *pair[2] = {b, a};
    cr_expect_null(nd_concatenate(2, pair, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_concatenate");
    cr_expect_eq(nd_ndim(a), -1);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_ndim");
    /* b is untouched. */
    cr_expect_eq(sum_of(b), 12.5);
    nd_free(b);
}

NDT_TEST(lifetime, free_of_a_handle_its_scope_released) {
    nd_scope_begin();
    nd_array *a = nd_ones(ND_FLOAT64, ND_SHAPE(3));
    nd_array *kept = nd_keep(nd_mul(a, nd_scalar(2.0)));
    nd_scope_end(); /* releases a */
    nd_free(a);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_free");
    cr_expect_eq(sum_of(kept), 6.0);
    nd_free(kept);
    /* A handle freed inside its scope is not released again at the end. */
    nd_scope_begin();
    nd_array *b = nd_ones(ND_FLOAT64, ND_SHAPE(3));
    nd_free(b);
    nd_scope_end();
    cr_expect_eq(nd_last_status(), ND_OK, "%s", nd_last_error());
}

/* ------------------------------------------------------------ weak scalars */

/* Weak scalars of one dtype and value share a buffer (frontend/creation.c,
 * weak_buffer): each still reads its own value and dtype, values that
 * differ only in dtype (the bits of 1.0 as a Python int) or only in the
 * sign of zero do not mix, a named scalar's buffer is not handed to the
 * next scalar of its value, views and frees of one leave the others alone,
 * and a scalar kept past nd_shutdown is a dead handle while a new one of
 * the same value works. */
NDT_TEST(lifetime, weak_scalars_of_one_value_stay_independent) {
    const int64_t one_bits = 4607182418800017408ll; /* 1.0's bits */
    nd_array *a = nd_scalar(1.0), *b = nd_scalar(1.0);
    cr_assert(a && b, "%s", nd_last_error());
    /* Named: the next scalar of that value is a buffer of its own. */
    cr_assert_eq(nd_set_name(b, "one"), ND_OK, "%s", nd_last_error());
    nd_array *d = nd_scalar(1.0);
    cr_assert(d, "%s", nd_last_error());
    cr_expect_null(nd_get_name(d), "a new scalar took the name '%s' of another", nd_get_name(d));
    nd_array *c = nd_scalar_int(one_bits);
    nd_array *z = nd_scalar(0.0), *nz = nd_scalar(-0.0), *n = nd_scalar(NAN);
    cr_assert(a && b && c && z && nz && n, "%s", nd_last_error());
    cr_expect_eq(nd_dtype_of(c), ND_INT64);
    double v;
    int64_t iv;
    cr_assert_eq(nd_to_host(c, &iv, sizeof iv), ND_OK, "%s", nd_last_error());
    cr_expect_eq(iv, one_bits, "the int scalar reads %lld", (long long)iv);
    cr_assert_eq(nd_to_host(nz, &v, sizeof v), ND_OK, "%s", nd_last_error());
    cr_expect(v == 0.0 && signbit(v), "-0.0 reads %g", v);
    cr_expect(!signbit(nd_item(z)));
    cr_expect(isnan(nd_item(n)));
    /* One freed, a view of the other: the rest read as before. */
    nd_free(a);
    nd_array *bv = nd_reshape(b, ND_SHAPE(1, 1));
    cr_assert(bv, "%s", nd_last_error());
    cr_expect_eq(nd_item(bv), 1.0);
    nd_array *two = nd_scalar_int(2), *sum = nd_add(two, b); /* weak + weak: float64 3 */
    cr_expect_eq(nd_item(sum), 3.0);
    cr_expect_eq(nd_item(d), 1.0);
    /* Many scalars in a loop, the values cycling through the cache. */
    double total = 0;
    for (int i = 0; i < 200; i++) {
        nd_scope_begin();
        nd_array *s = nd_scalar((double)(i % 37));
        total += nd_item(nd_mul(s, nd_scalar(2.0)));
        nd_scope_end();
    }
    double want = 0;
    for (int i = 0; i < 200; i++) want += 2.0 * (i % 37);
    cr_expect_eq(total, want);
    nd_array *all[] = {b, c, z, nz, n, bv, sum, d, two};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) nd_free(all[i]);
    cr_expect_eq(nd_last_status(), ND_OK, "%s", nd_last_error());
    nd_array *kept = nd_scalar(5.0);
    nd_shutdown();
    cr_assert_eq(nd_init(NULL), ND_OK, "%s", nd_last_error());
    nd_array *fresh = nd_scalar(5.0);
    cr_assert(fresh, "%s", nd_last_error());
    cr_expect_eq(nd_item(fresh), 5.0);
    cr_expect_eq(nd_last_status(), ND_OK, "%s", nd_last_error());
    nd_array *bad = nd_add(kept, fresh);
    cr_expect_null(bad);
    NDT_EXPECT_ERR(ND_ERR_STATE, "nd_add");
    nd_free(kept);
    nd_free(fresh);
    cr_expect_eq(nd_last_status(), ND_OK, "%s", nd_last_error());
}

/* ------------------------------------------------------------ shutdown */

static size_t resident_bytes(void) {
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    fclose(f);
    return (size_t)resident * (size_t)sysconf(_SC_PAGESIZE);
}

/* The program: 50 cycles of (8 MiB array, sum, shutdown, free)
 * grew the process by 8 MiB a cycle: handles alive at nd_shutdown kept
 * their buffers, and nd_free after it could not release them. Under
 * AddressSanitizer freed memory sits in its quarantine (RSS says nothing),
 * so there LeakSanitizer is the check: the buffers were unreachable. */
NDT_TEST(lifetime, shutdown_with_live_handles_does_not_leak) {
    enum { CYCLES = 50 };
    const int64_t n = (8 << 20) / 8;
    size_t rss_after[CYCLES];
    for (int c = 0; c < CYCLES; c++) {
        nd_array *a = nd_full(ND_FLOAT64, ND_SHAPE(n), 0.5);
        cr_assert(a, "%s", nd_last_error());
        double s = sum_of(a);
        cr_assert_eq(s, 0.5 * (double)n, "cycle %d: sum %g (%s)", c, s, nd_last_error());
        nd_shutdown();
        nd_free(a); /* after the shutdown: releases the dead handle */
        cr_assert_eq(nd_last_status(), ND_OK, "cycle %d: %s", c, nd_last_error());
        rss_after[c] = resident_bytes();
        cr_assert_eq(nd_init(NULL), ND_OK, "%s", nd_last_error());
    }
#ifdef NDT_ASAN
    (void)rss_after;
#else
    double grew = ((double)rss_after[CYCLES - 1] - (double)rss_after[9]) / (1 << 20);
    cr_expect_lt(grew, 48.0,
                 "the process grew by %.1f MiB over %d cycles (8 MiB an array): shutdown keeps "
                 "the memory of live handles", grew, CYCLES - 10);
#endif
}

NDT_TEST(lifetime, handles_after_shutdown_are_a_clear_error) {
    nd_array *a = nd_full(ND_FLOAT64, ND_SHAPE(4, 4), 2.0);
    nd_array *w = nd_scalar(3.0);
    nd_array *v = nd_view(a, "1:3, ::2");
    cr_assert(a && w && v);
    cr_assert_eq(sum_of(a), 32.0);
    nd_shutdown();
    /* Rejected before the runtime restarts (nothing starts it)... */
    cr_expect_null(nd_add(a, a));
    NDT_EXPECT_ERR(ND_ERR_STATE, "nd_add");
    cr_assert_eq(nd_init(NULL), ND_OK, "%s", nd_last_error());
    /* ... and after. */
    nd_array *fresh = nd_ones(ND_FLOAT64, ND_SHAPE(4, 4));
    cr_expect_null(nd_add(fresh, a));
    nd_status st = nd_last_status();
    const char *m = nd_last_error();
    cr_expect_eq(st, ND_ERR_STATE, "%s", m);
    cr_expect(strstr(m, "nd_add") && strstr(m, "before nd_shutdown"), "message: %s", m);
    nd_clear_error();
    double out[16];
    cr_expect_eq(nd_to_host(a, out, sizeof out), ND_ERR_STATE);
    NDT_EXPECT_ERR(ND_ERR_STATE, "nd_to_host");
    cr_expect(isnan(nd_item(w)));
    NDT_EXPECT_ERR(ND_ERR_STATE, "nd_item");
    cr_expect_null(nd_sum(v, ND_ALL_AXES));
    NDT_EXPECT_ERR(ND_ERR_STATE, "nd_sum");
    cr_expect_eq(nd_assign(a, fresh), ND_ERR_STATE);
    NDT_EXPECT_ERR(ND_ERR_STATE, "nd_assign");
    cr_expect_eq(nd_assign(fresh, a), ND_ERR_STATE);
    NDT_EXPECT_ERR(ND_ERR_STATE, "nd_assign");
    cr_expect_null(nd_mul(fresh, w));
    NDT_EXPECT_ERR(ND_ERR_STATE, "nd_mul");
    cr_expect_null(nd_view(a, "0"));
    NDT_EXPECT_ERR(ND_ERR_STATE, "nd_view");
    /* The shape is still there to read; counting and freeing work. */
    cr_expect_eq(nd_ndim(v), 2);
    cr_expect_eq(nd_shape(v)[1], 2);
    cr_expect_eq(nd_retain(a), a);
    nd_free(a);
    nd_free(a);
    nd_free(v);
    nd_free(w);
    cr_expect_eq(nd_last_status(), ND_OK, "%s", nd_last_error());
    /* The new runtime is unaffected. */
    cr_expect_eq(sum_of(fresh), 16.0);
    nd_free(fresh);
}

/* A grid swept in place in one flush keeps a twin (scheduler/store_chains.c:
 * memory the chain alternates with, which outlives the flush). Alive at
 * nd_shutdown, the grid's memory and its twin's are released there (no
 * leak under LeakSanitizer, no double release), and the handle is freed
 * after. */
NDT_TEST(lifetime, shutdown_releases_a_swept_grid_and_its_twin) {
    enum { N = 64 };
    double *host = malloc(N * N * sizeof *host);
    for (int i = 0; i < N * N; i++) host[i] = (double)(i % 17) - 8.0;
    nd_array *g = nd_from_host(host, ND_FLOAT64, ND_SHAPE(N, N));
    for (int sweep = 0; sweep < 4; sweep++) {
        nd_scope_begin();
        nd_array *s = nd_add(nd_add(nd_view(g, ":-2, 1:-1"), nd_view(g, "2:, 1:-1")),
                             nd_add(nd_view(g, "1:-1, :-2"), nd_view(g, "1:-1, 2:")));
        nd_assign(nd_view(g, "1:-1, 1:-1"), nd_mul(s, nd_scalar(0.25)));
        nd_scope_end();
    }
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    /* The reference: the same four sweeps on the host. */
    double *next = malloc(N * N * sizeof *next);
    for (int sweep = 0; sweep < 4; sweep++) {
        memcpy(next, host, N * N * sizeof *next);
        for (int r = 1; r < N - 1; r++)
            for (int c = 1; c < N - 1; c++)
                next[r * N + c] = 0.25 * ((host[(r - 1) * N + c] + host[(r + 1) * N + c]) +
                                          (host[r * N + c - 1] + host[r * N + c + 1]));
        memcpy(host, next, N * N * sizeof *next);
    }
    double *got = malloc(N * N * sizeof *got);
    cr_assert_eq(nd_to_host(g, got, N * N * sizeof *got), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < N * N; i++)
        if (fabs(got[i] - host[i]) > 1e-12 * (1 + fabs(host[i]))) {
            cr_expect_fail("element %d: %.17g, want %.17g", i, got[i], host[i]);
            break;
        }
    nd_shutdown();
    nd_free(g);
    cr_expect_eq(nd_last_status(), ND_OK, "%s", nd_last_error());
    cr_assert_eq(nd_init(NULL), ND_OK, "%s", nd_last_error());
    free(host);
    free(next);
    free(got);
}

/* nd_stats.handles_alive counts the handles made and not yet freed: a
 * view is a handle of its own, nd_free and a scope's end take theirs
 * away (the tests' own leak check, NDT_TEST, rests on it). */
static uint64_t alive(void) {
    nd_stats s;
    nd_get_stats(&s);
    return s.handles_alive;
}

NDT_TEST(lifetime, handles_alive_counts_what_is_not_freed) {
    const uint64_t base = alive();
    nd_array *a = nd_zeros(ND_FLOAT32, ND_SHAPE(4, 3));
    nd_array *v = nd_view(a, "0:2");
    cr_assert(a && v, "%s", nd_last_error());
    cr_assert_eq(alive(), base + 2, "an array and its view: %llu alive, want %llu", (unsigned long long)alive(),
                 (unsigned long long)(base + 2));
    nd_free(a);
    cr_assert_eq(alive(), base + 1, "the view outlives its base's handle: %llu alive", (unsigned long long)alive());
    nd_scope_begin();
    nd_array *t = nd_add(v, v), *u = nd_mul(t, v);
    cr_assert(t && u, "%s", nd_last_error());
    cr_assert_eq(alive(), base + 3, "two made in a scope: %llu alive", (unsigned long long)alive());
    nd_scope_end();
    cr_assert_eq(alive(), base + 1, "the scope's end frees them: %llu alive", (unsigned long long)alive());
    nd_free(v);
    cr_assert_eq(alive(), base, "all freed: %llu alive, want %llu", (unsigned long long)alive(),
                 (unsigned long long)base);
}
