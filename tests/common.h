/* Shared fixture and helpers of the Criterion suites.
 *
 * Every suite is built once and registered per backend (ND_BACKEND=cpu,
 * ND_BACKEND=cuda); the fixture starts the runtime with nd_init(NULL) so the
 * environment picks the backend, and skips visibly when it is missing.
 * Inputs come from a per-test PRNG (seed printed on failure, override with
 * ND_TEST_SEED=<n> or ND_TEST_SEED=random) and results are compared with the
 * float64 reference in ref.c. */
#ifndef ND_TESTS_COMMON_H
#define ND_TESTS_COMMON_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nd.h"
#include "ref.h"

/* Seconds per test; generous because CUDA compiles kernels on first use and
 * sanitizers slow everything down. */
#ifndef NDT_TIMEOUT
#define NDT_TIMEOUT 90
#endif

/* Which sanitizer the suite is built under (GCC's macros, clang's
 * __has_feature): a few of the longest tests do less there
 * (tests/README.md, "Running"). */
#if defined(__SANITIZE_ADDRESS__)
#define NDT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NDT_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define NDT_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define NDT_TSAN 1
#endif
#endif

void ndt_setup(void);
void ndt_teardown(void);
/* Fails the test if array handles are still alive (NDT_TEST runs it after
 * each body); ndt_allow_live_handles turns it off for a test that leaves
 * handles alive on purpose (nd_shutdown's report of them). */
void ndt_expect_no_live_handles(void);
void ndt_allow_live_handles(void);

/* A test whose body runs between `setup` and `teardown` and then must have
 * freed every array handle it made. */
#define NDT_TEST_WITH(suite, name, setup, teardown, seconds)                                 \
    static void ndt_body_##suite##_##name(void);                                             \
    Test(suite, name, .init = setup, .fini = teardown, .timeout = seconds) {                 \
        ndt_body_##suite##_##name();                                                         \
        ndt_expect_no_live_handles();                                                        \
    }                                                                                        \
    static void ndt_body_##suite##_##name(void)

#define NDT_TEST(suite, name) NDT_TEST_WITH(suite, name, ndt_setup, ndt_teardown, NDT_TIMEOUT)

/* Shuts the runtime down and starts it again with cfg (backend still from
 * ND_BACKEND when cfg->backend is 0); first fails the test if array
 * handles are still alive (ndt_expect_no_live_handles). */
void ndt_restart(const nd_config *cfg);
/* Restarts the runtime with an empty kernel cache directory made under
 * $TMPDIR (or /tmp) from `tag`, written to dir, and every elementwise
 * kernel compiled before its first launch on the CPU (ND_CPU_JIT=sync,
 * ND_CPU_JIT_MIN=0): for tests that count compiles (nd_stats
 * kernels_compiled; NVRTC's on CUDA). ndt_remove_dir(dir) after. */
void ndt_restart_compiling(char *dir, size_t cap, const char *tag);
/* A fresh directory $TMPDIR (or /tmp)/nd-<tag>-XXXXXX, written to dir;
 * the test fails if it cannot be made. ndt_remove_dir(dir) after. */
void ndt_temp_dir(char *dir, size_t cap, const char *tag);
void ndt_remove_dir(const char *dir);
/* A kernel cache directory for a test that compiles many kernels and
 * counts none of its compiles (the CPU JIT's every-op tests): under
 * ND_TEST_JIT_CACHE, that directory's `tag` folder, made if missing and
 * shared by every stage of scripts/test.sh (the kernels' sources are still
 * generated, hashed and looked up in each; the system compiler runs once a
 * kernel instead of once a stage); otherwise a fresh one under $TMPDIR (or
 * /tmp). Written to dir; returns 1 when it is fresh, for the caller to
 * remove (ndt_remove_dir) when done, 0 when shared. */
int ndt_jit_cache_dir(char *dir, size_t cap, const char *tag);
/* The kernels nd_stats s counts as one device would run them: under
 * ND_DEVICES=cpu:N a kernel runs once per device (docs/internals.md
 * "Several devices"); the suites' structural counts are one device's. */
#define NDT_KERNELS(s) ((s).kernels_run - (s).device_kernels + (s).kernels_split)
/* Whether ND_DEVICES=cpu:N (N > 1) splits arrays over devices: tests of
 * one-device structure (which pooled block a temporary reuses) skip. */
static inline int ndt_devices_split(void) {
    const char *d = getenv("ND_DEVICES");
    if (!d) return 0;
    if (strncmp(d, "cpu:", 4) == 0) return atoi(d + 4) > 1;
    return strchr(d, ',') != NULL; /* a GPU list of several logical devices */
}
/* 1 on one device. Under several devices (ndt_devices_split) 0, and a
 * line on stderr ("[SKIP] one assertion ...") names it and why: for
 * an assertion on one device's structure (a plan picture, a copy or
 * compile count) that a split plan legitimately changes, never for a
 * value. Use: if (ndt_one_device("the copy count: ...")) cr_expect(...). */
int ndt_one_device(const char *what);
/* The same for temporaries: without the pieces of split arrays. */
#define NDT_TEMPS(s) ((s).temp_allocations - (s).piece_allocations)
int ndt_backend_is_cuda(void);

/* ---- PRNG (xoshiro256**), seeded per test from its name */
typedef struct {
    uint64_t s[4];
    uint64_t seed;
} ndt_rng;
void ndt_rng_init(ndt_rng *r, const char *test_name);
uint64_t ndt_next(ndt_rng *r);
double ndt_uniform(ndt_rng *r, double lo, double hi); /* [lo, hi) */
int64_t ndt_int(ndt_rng *r, int64_t lo, int64_t hi);  /* [lo, hi] */
uint64_t ndt_current_seed(void);                       /* of the last ndt_rng_init */
#define NDT_RNG(r) ndt_rng r; ndt_rng_init(&r, __func__)

/* Random reference arrays. Floats: uniform in [lo, hi) rounded to the dtype;
 * ints: uniform integers in [lo, hi] clamped to the dtype's range; bool:
 * random 0/1 (both present for sizes >= 8). */
ref_arr *ndt_rand(ndt_rng *r, nd_dtype t, int ndim, const int64_t *shape, double lo, double hi);
/* Ints: every bit random (exercises wrap-around); floats as ndt_rand(-8, 8). */
ref_arr *ndt_rand_bits(ndt_rng *r, nd_dtype t, int ndim, const int64_t *shape);
/* Sensible default range per dtype: ints within +-100 (0..200 unsigned). */
ref_arr *ndt_rand_small(ndt_rng *r, nd_dtype t, int ndim, const int64_t *shape);

/* nd_from_host of a reference array (asserts success). */
nd_array *ndt_upload(const ref_arr *a);
/* nd_to_host into a poisoned buffer (0xAB); asserts success and that no byte
 * past the end was touched. */
ref_arr *ndt_download(nd_array *a);

/* Relative tolerance per dtype: float16 1e-2, bfloat16 3e-2, float32 1e-5,
 * float64 1e-12, integers and bool exact (0). */
double ndt_rtol(nd_dtype t);

/* Checks dtype, shape and every element of got against want:
 * |got - want| <= atol + rtol * (scale ? scale[i] : |want|); ints exact; NaN
 * matches NaN. Reports the first mismatches. Returns 1 if everything matched. */
int ndt_check(nd_array *got, const ref_arr *want, double rtol, double atol, const double *scale,
              const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* ndt_check with the dtype's rtol and atol = rtol. */
int ndt_check_default(nd_array *got, const ref_arr *want, const char *what);
/* got is a bool array equal to want, a string of '0'/'1' per element (at
 * most 64; e.g. NumPy's printed result "0101"). */
void ndt_expect_bools(nd_array *got, const char *want, const char *what);
/* got and want (downloaded results, ndt_download) hold the same bytes:
 * same dtype and size, every byte equal (NaN payloads and -0.0 included). */
void ndt_expect_same_bits(const ref_arr *got, const ref_arr *want, const char *what);
/* n floats of dtype t from [lo, hi), the first eight (where n allows) NaN,
 * inf, -inf, -0.0, 0.0, 1e30, -1e30 and a subnormal 1e-40. */
ref_arr *ndt_edge_floats(ndt_rng *r, nd_dtype t, int64_t n, double lo, double hi);

/* Expects nd_last_status() == want and a message naming func, then clears. */
#define NDT_EXPECT_ERR(want, func)                                                           \
    do {                                                                                     \
        nd_status st_ = nd_last_status();                                                    \
        const char *m_ = nd_last_error();                                                    \
        cr_expect_eq(st_, (want), "%s: expected %s, got %s (message: %s)", (func),           \
                     nd_status_name(want), nd_status_name(st_), m_ ? m_ : "(null)");         \
        cr_expect(m_ && strstr(m_, (func)), "message should name %s: '%s'", (func),          \
                  m_ ? m_ : "(null)");                                                       \
        nd_clear_error();                                                                    \
    } while (0)
/* Same, where the contract leaves two codes plausible. */
#define NDT_EXPECT_ERR2(w1, w2, func)                                                        \
    do {                                                                                     \
        nd_status st_ = nd_last_status();                                                    \
        const char *m_ = nd_last_error();                                                    \
        cr_expect(st_ == (w1) || st_ == (w2), "%s: expected %s or %s, got %s (message: %s)",  \
                  (func), nd_status_name(w1), nd_status_name(w2), nd_status_name(st_),       \
                  m_ ? m_ : "(null)");                                                       \
        cr_expect(m_ && strstr(m_, (func)), "message should name %s: '%s'", (func),          \
                  m_ ? m_ : "(null)");                                                       \
        nd_clear_error();                                                                    \
    } while (0)

/* The nd function of a reference op (unary ops: R_NEG .. R_NOT). */
typedef nd_array *(*ndt_un_fn)(nd_array *);
typedef nd_array *(*ndt_bin_fn)(nd_array *, nd_array *);
ndt_un_fn ndt_unary_fn(ref_op op);
ndt_bin_fn ndt_binary_fn(ref_op op);

/* Every real dtype, for loops (the suites of the real routines; complex
 * dtypes have test_complex.c and their rows of test_ops.c). */
#define NDT_NUM_DTYPES 13
extern const nd_dtype ndt_all_dtypes[NDT_NUM_DTYPES];

#endif
