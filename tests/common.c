/* Fixture, PRNG, upload/download and comparison helpers; also the test
 * executables' main, which exits 77 (meson's SKIP) when every test of a suite
 * was skipped, e.g. the CUDA run on a machine without a GPU. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* fork, pipe */
#endif
#include "common.h"

#include <criterion/hooks.h>
#include <errno.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

const nd_dtype ndt_all_dtypes[NDT_NUM_DTYPES] = {
    ND_BOOL,   ND_INT8,    ND_INT16,   ND_INT32,   ND_INT64,   ND_UINT8,  ND_UINT16,
    ND_UINT32, ND_UINT64,  ND_FLOAT16, ND_BFLOAT16, ND_FLOAT32, ND_FLOAT64};

static int want_cuda(void) {
    const char *b = getenv("ND_BACKEND");
    return b && strcmp(b, "cuda") == 0;
}

int ndt_backend_is_cuda(void) {
    const char *n = nd_backend_name();
    return n && strcmp(n, "cuda") == 0;
}

static void start(const nd_config *cfg) {
    nd_status st = nd_init(cfg);
    if (st != ND_OK) {
        if (want_cuda() && (st == ND_ERR_UNSUPPORTED || st == ND_ERR_BACKEND))
            cr_skip_test("no CUDA device: %s", nd_last_error());
        cr_assert_fail("nd_init failed: %s: %s", nd_status_name(st), nd_last_error());
    }
    if (want_cuda())
        cr_assert(ndt_backend_is_cuda(), "ND_BACKEND=cuda but the backend is '%s'",
                  nd_backend_name());
    nd_clear_error();
}

void ndt_setup(void) { start(NULL); }
/* The check NDT_TEST runs after a test's body, in the body, because
 * Criterion 2.4 ignores an assertion failing in a teardown (the test still
 * counts as passed), and a leak at the process's exit fails nothing either.
 * The leak sanitizer cannot tell the tests' own leaks from Criterion's. */
static int live_handles_allowed;
void ndt_allow_live_handles(void) { live_handles_allowed = 1; }

void ndt_expect_no_live_handles(void) {
    if (live_handles_allowed) return;
    nd_stats s;
    nd_get_stats(&s);
    nd_clear_error();
    cr_assert_eq(s.handles_alive, 0,
                 "%llu array handle%s still alive at the test's end: free each with nd_free or make it in a "
                 "scope (ND_LOG=1 names the calls that made them)",
                 (unsigned long long)s.handles_alive, s.handles_alive == 1 ? " was" : "s were");
}

void ndt_teardown(void) { nd_shutdown(); }

void ndt_restart(const nd_config *cfg) {
    /* nd_shutdown forgets the handles still alive (their memory leaks),
     * so the check at the body's end would not see those made before. */
    ndt_expect_no_live_handles();
    nd_shutdown();
    start(cfg);
}

void ndt_temp_dir(char *dir, size_t cap, const char *tag) {
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, cap, "%s/nd-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", tag);
    cr_assert(mkdtemp(dir), "mkdtemp(%s) failed", dir);
}

void ndt_restart_compiling(char *dir, size_t cap, const char *tag) {
    char name[256];
    snprintf(name, sizeof name, "%s-cache", tag);
    ndt_temp_dir(dir, cap, name);
    setenv("ND_CPU_JIT", "sync", 1);
    setenv("ND_CPU_JIT_MIN", "0", 1);
    nd_config cfg = ND_CONFIG_INIT;
    cfg.cache_dir = dir;
    ndt_restart(&cfg);
}

int ndt_jit_cache_dir(char *dir, size_t cap, const char *tag) {
    const char *shared = getenv("ND_TEST_JIT_CACHE");
    if (shared && *shared) {
        snprintf(dir, cap, "%s/%s", shared, tag);
        cr_assert(mkdir(dir, 0700) == 0 || errno == EEXIST, "mkdir(%s) failed", dir);
        return 0;
    }
    ndt_temp_dir(dir, cap, tag);
    return 1;
}

void ndt_remove_dir(const char *dir) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) cr_log_warn("could not remove %s", dir);
}

/* ------------------------------------------------------------------ PRNG */

static uint64_t g_seed;

uint64_t ndt_current_seed(void) { return g_seed; }

static uint64_t splitmix(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void ndt_rng_init(ndt_rng *r, const char *name) {
    uint64_t base = 20261122;
    const char *e = getenv("ND_TEST_SEED");
    if (e && strcmp(e, "random") == 0) base = (uint64_t)time(NULL) ^ (uint64_t)clock();
    else if (e && *e) base = strtoull(e, NULL, 0);
    uint64_t h = 1469598103934665603ull; /* FNV-1a of the test name */
    for (const char *p = name; p && *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
    r->seed = base ^ h;
    g_seed = r->seed;
    uint64_t x = r->seed;
    for (int i = 0; i < 4; i++) r->s[i] = splitmix(&x);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t ndt_next(ndt_rng *r) {
    uint64_t *s = r->s, res = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return res;
}

double ndt_uniform(ndt_rng *r, double lo, double hi) {
    return lo + (hi - lo) * ((double)(ndt_next(r) >> 11) * 0x1p-53);
}

int64_t ndt_int(ndt_rng *r, int64_t lo, int64_t hi) {
    uint64_t span = (uint64_t)hi - (uint64_t)lo + 1;
    return span == 0 ? (int64_t)ndt_next(r) : (int64_t)((uint64_t)lo + ndt_next(r) % span);
}

static void int_range(nd_dtype t, double *lo, double *hi) {
    switch (t) {
    case ND_BOOL: *lo = 0; *hi = 1; break;
    case ND_INT8: *lo = -128; *hi = 127; break;
    case ND_INT16: *lo = -32768; *hi = 32767; break;
    case ND_INT32: *lo = -2147483648.0; *hi = 2147483647.0; break;
    case ND_UINT8: *lo = 0; *hi = 255; break;
    case ND_UINT16: *lo = 0; *hi = 65535; break;
    case ND_UINT32: *lo = 0; *hi = 4294967295.0; break;
    case ND_UINT64: *lo = 0; *hi = 0x1p53; break;
    default: *lo = -0x1p53; *hi = 0x1p53; break;
    }
}

ref_arr *ndt_rand(ndt_rng *r, nd_dtype t, int ndim, const int64_t *shape, double lo, double hi) {
    ref_arr *a = ref_new(t, ndim, shape);
    if (ref_is_float(t)) {
        for (int64_t i = 0; i < a->size; i++) ref_setd(a, i, ndt_uniform(r, lo, hi));
        return a;
    }
    if (t == ND_BOOL) {
        for (int64_t i = 0; i < a->size; i++) ref_setu(a, i, ndt_next(r) >> 63);
        if (a->size >= 8) { /* both values present */
            ref_setu(a, 0, 1);
            ref_setu(a, 1, 0);
        }
        return a;
    }
    double dlo, dhi;
    int_range(t, &dlo, &dhi);
    lo = ceil(lo < dlo ? dlo : lo);
    hi = floor(hi > dhi ? dhi : hi);
    for (int64_t i = 0; i < a->size; i++) {
        int64_t v = ndt_int(r, (int64_t)lo, (int64_t)hi);
        ref_setu(a, i, (uint64_t)v);
    }
    return a;
}

ref_arr *ndt_rand_bits(ndt_rng *r, nd_dtype t, int ndim, const int64_t *shape) {
    if (ref_is_float(t) || t == ND_BOOL) return ndt_rand(r, t, ndim, shape, -8, 8);
    ref_arr *a = ref_new(t, ndim, shape);
    for (int64_t i = 0; i < a->size; i++) ref_setu(a, i, ndt_next(r));
    return a;
}

ref_arr *ndt_rand_small(ndt_rng *r, nd_dtype t, int ndim, const int64_t *shape) {
    if (ref_is_unsigned(t)) return ndt_rand(r, t, ndim, shape, 0, 200);
    return ndt_rand(r, t, ndim, shape, -100, 100);
}

/* ------------------------------------------------------- device transfers */

nd_array *ndt_upload(const ref_arr *a) {
    nd_array *x = nd_from_host(a->data, a->dt, a->ndim, a->shape);
    cr_assert(x, "nd_from_host(%s) failed: %s", ref_dtype_name(a->dt), nd_last_error());
    return x;
}

#define GUARD 64

ref_arr *ndt_download(nd_array *a) {
    cr_assert(a, "expected an array, got NULL: %s (%s)", nd_status_name(nd_last_status()),
              nd_last_error());
    ref_arr *r = ref_new(nd_dtype_of(a), nd_ndim(a), nd_shape(a));
    size_t bytes = (size_t)r->size * ref_itemsize(r->dt);
    unsigned char *buf = malloc(bytes + GUARD);
    memset(buf, 0xAB, bytes + GUARD);
    nd_status st = nd_to_host(a, buf, bytes);
    cr_assert_eq(st, ND_OK, "nd_to_host failed: %s: %s", nd_status_name(st), nd_last_error());
    for (size_t i = 0; i < GUARD; i++)
        cr_assert_eq(buf[bytes + i], 0xAB, "nd_to_host wrote past the %zu bytes it was given",
                     bytes);
    memcpy(r->data, buf, bytes);
    free(buf);
    return r;
}

double ndt_rtol(nd_dtype t) {
    switch (t) {
    case ND_FLOAT16: return 1e-2;
    case ND_BFLOAT16: return 3e-2;
    case ND_FLOAT32: return 1e-5;
    case ND_FLOAT64: return 1e-12;
    default: return 0;
    }
}

static void fmt_shape(char *buf, size_t cap, int ndim, const int64_t *shape) {
    size_t n = (size_t)snprintf(buf, cap, "(");
    for (int d = 0; d < ndim && n < cap; d++)
        n += (size_t)snprintf(buf + n, cap - n, "%lld%s", (long long)shape[d],
                              ndim == 1 || d + 1 < ndim ? "," : "");
    if (n < cap) snprintf(buf + n, cap - n, ")");
}

int ndt_check(nd_array *got, const ref_arr *want, double rtol, double atol, const double *scale,
              const char *fmt, ...) {
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (!got) {
        cr_expect_fail("%s: got NULL: %s (%s) [seed %llu]", what,
                       nd_status_name(nd_last_status()), nd_last_error(),
                       (unsigned long long)g_seed);
        nd_clear_error();
        return 0;
    }
    if (nd_dtype_of(got) != want->dt) {
        cr_expect_fail("%s: dtype %s, expected %s", what, nd_dtype_name(nd_dtype_of(got)),
                       ref_dtype_name(want->dt));
        return 0;
    }
    int same = nd_ndim(got) == want->ndim;
    for (int d = 0; same && d < want->ndim; d++) same = nd_shape(got)[d] == want->shape[d];
    if (!same) {
        char a[200], b[200];
        fmt_shape(a, sizeof a, nd_ndim(got), nd_shape(got));
        fmt_shape(b, sizeof b, want->ndim, want->shape);
        cr_expect_fail("%s: shape %s, expected %s", what, a, b);
        return 0;
    }
    ref_arr *g = ndt_download(got);
    int64_t bad = 0;
    for (int64_t i = 0; i < want->size; i++) {
        int ok;
        if (ref_is_float(want->dt)) {
            double x = ref_getd(g, i), y = ref_getd(want, i);
            double tol = atol + rtol * (scale ? scale[i] : fabs(y));
            ok = (isnan(x) && isnan(y)) || x == y || fabs(x - y) <= tol;
            if (!ok && bad < 5)
                cr_expect_fail("%s: element %lld is %.17g, expected %.17g (tol %.3g) [seed %llu]",
                               what, (long long)i, x, y, tol, (unsigned long long)g_seed);
        } else {
            uint64_t x = ref_getu(g, i), y = ref_getu(want, i);
            ok = x == y;
            if (!ok && bad < 5) {
                if (ref_is_unsigned(want->dt) || want->dt == ND_BOOL)
                    cr_expect_fail("%s: element %lld is %llu, expected %llu [seed %llu]", what,
                                   (long long)i, (unsigned long long)x, (unsigned long long)y,
                                   (unsigned long long)g_seed);
                else
                    cr_expect_fail("%s: element %lld is %lld, expected %lld [seed %llu]", what,
                                   (long long)i, (long long)x, (long long)y,
                                   (unsigned long long)g_seed);
            }
        }
        bad += !ok;
    }
    if (bad > 5) cr_expect_fail("%s: %lld of %lld elements differ", what, (long long)bad,
                                (long long)want->size);
    ref_free(g);
    return bad == 0;
}

int ndt_check_default(nd_array *got, const ref_arr *want, const char *what) {
    double r = ndt_rtol(want->dt);
    return ndt_check(got, want, r, r, NULL, "%s", what);
}

ndt_un_fn ndt_unary_fn(ref_op op) {
    switch (op) {
    case R_NEG: return nd_neg;
    case R_ABS: return nd_abs;
    case R_SQRT: return nd_sqrt;
    case R_EXP: return nd_exp;
    case R_LOG: return nd_log;
    case R_SIN: return nd_sin;
    case R_COS: return nd_cos;
    case R_TANH: return nd_tanh;
    case R_TAN: return nd_tan;
    case R_FLOOR: return nd_floor;
    case R_CEIL: return nd_ceil;
    case R_SQUARE: return nd_square;
    case R_ARCSIN: return nd_arcsin;
    case R_ARCCOS: return nd_arccos;
    case R_ARCTAN: return nd_arctan;
    case R_SINH: return nd_sinh;
    case R_COSH: return nd_cosh;
    case R_ARCSINH: return nd_arcsinh;
    case R_ARCCOSH: return nd_arccosh;
    case R_ARCTANH: return nd_arctanh;
    case R_EXP2: return nd_exp2;
    case R_EXPM1: return nd_expm1;
    case R_LOG2: return nd_log2;
    case R_LOG10: return nd_log10;
    case R_LOG1P: return nd_log1p;
    case R_CBRT: return nd_cbrt;
    case R_RINT: return nd_rint;
    case R_RECIPROCAL: return nd_reciprocal;
    case R_TRUNC: return nd_trunc;
    case R_SIGN: return nd_sign;
    case R_POSITIVE: return nd_positive;
    case R_DEG2RAD: return nd_deg2rad;
    case R_RAD2DEG: return nd_rad2deg;
    case R_ISNAN: return nd_isnan;
    case R_ISINF: return nd_isinf;
    case R_ISFINITE: return nd_isfinite;
    case R_SIGNBIT: return nd_signbit;
    case R_ISPOSINF: return nd_isposinf;
    case R_ISNEGINF: return nd_isneginf;
    case R_INVERT: return nd_invert;
    default: return nd_logical_not;
    }
}

ndt_bin_fn ndt_binary_fn(ref_op op) {
    switch (op) {
    case R_ADD: return nd_add;
    case R_SUB: return nd_sub;
    case R_MUL: return nd_mul;
    case R_DIV: return nd_div;
    case R_POW: return nd_pow;
    case R_MAX: return nd_maximum;
    case R_MIN: return nd_minimum;
    case R_EQ: return nd_eq;
    case R_NE: return nd_ne;
    case R_LT: return nd_lt;
    case R_LE: return nd_le;
    case R_GT: return nd_gt;
    case R_ARCTAN2: return nd_arctan2;
    case R_HYPOT: return nd_hypot;
    case R_COPYSIGN: return nd_copysign;
    case R_FMAX: return nd_fmax;
    case R_FMIN: return nd_fmin;
    case R_FLOOR_DIVIDE: return nd_floor_divide;
    case R_REMAINDER: return nd_remainder;
    case R_FMOD: return nd_fmod;
    case R_LOGICAL_AND: return nd_logical_and;
    case R_LOGICAL_OR: return nd_logical_or;
    case R_LOGICAL_XOR: return nd_logical_xor;
    case R_BITWISE_AND: return nd_bitwise_and;
    case R_BITWISE_OR: return nd_bitwise_or;
    case R_BITWISE_XOR: return nd_bitwise_xor;
    case R_HEAVISIDE: return nd_heaviside;
    default: return nd_ge;
    }
}

/* ------------------------------------------------------------------ main */

static size_t g_total, g_skipped;

ReportHook(POST_ALL)(struct criterion_global_stats *st) {
    g_total = st->nb_tests;
    g_skipped = st->tests_skipped;
}

/* For ND_BACKEND=cuda: starts the runtime once in a throwaway child so a
 * machine without a GPU skips the whole suite at once (and visibly) instead
 * of failing nd_init in every test. The parent never touches CUDA, so the
 * per-test children Criterion forks stay clean. Returns 1 if the backend
 * started, 0 if it is unavailable (reason in msg). */
static int probe_backend(char *msg, size_t cap) {
    int fds[2];
    if (pipe(fds) != 0) return 1;
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
        close(fds[0]);
        nd_status st = nd_init(NULL);
        int code = 0;
        if (st != ND_OK) {
            const char *m = nd_last_error();
            code = (st == ND_ERR_UNSUPPORTED || st == ND_ERR_BACKEND) ? 77 : 1;
            if (m && write(fds[1], m, strlen(m)) < 0) code = 1;
        } else {
            nd_shutdown();
        }
        _exit(code);
    }
    close(fds[1]);
    ssize_t n = read(fds[0], msg, cap - 1);
    msg[n > 0 ? n : 0] = 0;
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return !(WIFEXITED(status) && WEXITSTATUS(status) == 77);
}

int ndt_one_device(const char *what) {
    if (!ndt_devices_split()) return 1;
    /* stderr, not cr_log_warn: Criterion 2.4's runner then exits 1 with
     * every test passing. */
    fprintf(stderr, "[SKIP] one assertion under ND_DEVICES=%s (several devices): %s\n", getenv("ND_DEVICES"), what);
    return 0;
}

int main(int argc, char *argv[]) {
    char why[512] = "";
    if (want_cuda() && !probe_backend(why, sizeof why)) {
        fprintf(stderr, "SKIP (ND_BACKEND=cuda): %s\n", why);
        return 77;
    }
    struct criterion_test_set *tests = criterion_initialize();
    int result = 0;
    if (criterion_handle_args(argc, argv, true)) result = !criterion_run_all_tests(tests);
    criterion_finalize(tests);
    if (result == 0 && g_total > 0 && g_skipped == g_total) {
        fprintf(stderr, "all %zu tests skipped (backend %s unavailable?); run with --verbose "
                        "to see why\n", g_total, getenv("ND_BACKEND") ? getenv("ND_BACKEND") : "auto");
        return 77;
    }
    return result;
}

void ndt_expect_bools(nd_array *got, const char *want, const char *what) {
    cr_assert(got, "%s: %s", what, nd_last_error());
    cr_assert_eq(nd_dtype_of(got), ND_BOOL, "%s: dtype %d, NumPy gives bool", what,
                 nd_dtype_of(got));
    int64_t n = (int64_t)strlen(want);
    cr_assert_leq(n, 64, "%s: at most 64 expected values", what);
    cr_assert_eq(nd_size(got), n, "%s: size", what);
    uint8_t g[64];
    cr_assert_eq(nd_to_host(got, g, sizeof g), ND_OK, "%s: %s", what, nd_last_error());
    for (int64_t i = 0; i < n; i++)
        cr_expect_eq(g[i], want[i] - '0', "%s: element %lld is %d, NumPy 2.4 gives %c", what,
                     (long long)i, g[i], want[i]);
}

void ndt_expect_same_bits(const ref_arr *got, const ref_arr *want, const char *what) {
    cr_assert_eq(got->dt, want->dt, "%s: dtype", what);
    cr_assert_eq(got->size, want->size, "%s: size", what);
    const size_t item = ref_itemsize(got->dt), n = (size_t)got->size * item;
    for (size_t i = 0; i < n; i++)
        if (got->data[i] != want->data[i])
            cr_assert_fail("%s: byte %zu differs (element %zu): %g vs %g", what, i, i / item,
                           ref_getd(got, (int64_t)(i / item)), ref_getd(want, (int64_t)(i / item)));
}

ref_arr *ndt_edge_floats(ndt_rng *r, nd_dtype t, int64_t n, double lo, double hi) {
    static const double edges[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0, 1e30, -1e30, 1e-40};
    ref_arr *a = ndt_rand(r, t, 1, (int64_t[]){n}, lo, hi);
    for (int64_t i = 0; i < n && i < 8; i++) ref_setd(a, i, edges[i]);
    return a;
}
