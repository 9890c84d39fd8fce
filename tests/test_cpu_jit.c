/* The CPU backend's JIT (src/backends/cpu/cpu_jit.h): kernels compiled with
 * the system C compiler must give the float64 reference's answers and the
 * interpreter's bits. Every test runs with a fresh cache directory,
 * ND_CPU_JIT_MIN=0 (every elementwise kernel qualifies) and
 * ND_CPU_JIT=sync (the first launch waits for the compiler), unless it
 * tests another setting. The process-wide counters of the JIT tell whether
 * a kernel really ran compiled. CPU only. */
#include "common.h"

#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include "backends/cpu/cpu_jit.h"

static char g_dir[512];

static void remove_dir(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char path[1024];
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (unlink(path) != 0) remove_dir(path);
    }
    closedir(d);
    rmdir(dir);
}

/* Files in the cache's cpu/ folder whose names start with prefix. */
static int count_files(const char *prefix) {
    char path[600];
    snprintf(path, sizeof path, "%s/cpu", g_dir);
    DIR *d = opendir(path);
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return n;
}

static char g_cc[512]; /* ND_CC as the suite was started with ("" = unset) */

/* Restarts the runtime with ND_CPU_JIT=mode and ND_CC=cc (NULL: as the
 * suite was started, so ND_CC=clang runs it with clang). */
static void restart_jit(const char *mode, const char *cc) {
    setenv("ND_CPU_JIT", mode, 1);
    if (!cc) cc = g_cc;
    if (*cc) setenv("ND_CC", cc, 1);
    else unsetenv("ND_CC");
    ndt_restart(NULL);
}

static int g_dir_fresh; /* g_dir is this test's own, removed after it */

static void jit_start(void) {
    setenv("ND_CACHE_DIR", g_dir, 1);
    setenv("ND_BACKEND", "cpu", 1);
    setenv("ND_CPU_JIT", "sync", 1);
    setenv("ND_CPU_JIT_MIN", "0", 1);
    const char *cc = getenv("ND_CC");
    snprintf(g_cc, sizeof g_cc, "%s", cc ? cc : "");
    ndt_setup();
}

static void jit_setup(void) {
    ndt_temp_dir(g_dir, sizeof g_dir, "jit-test");
    g_dir_fresh = 1;
    jit_start();
}

/* The tests that compile every op and count no compiles: under
 * ND_TEST_JIT_CACHE their cache is shared by the stages of
 * scripts/test.sh (tests/common.h, ndt_jit_cache_dir). */
static void jit_setup_shared(void) {
    g_dir_fresh = ndt_jit_cache_dir(g_dir, sizeof g_dir, "cpu-jit-suite");
    jit_start();
}

static void jit_teardown(void) {
    ndt_teardown();
    if (g_dir_fresh) remove_dir(g_dir);
}

#define JIT_TEST(name) NDT_TEST_WITH(cpu_jit, name, jit_setup, jit_teardown, 240)
#define JIT_TEST_SHARED_CACHE(name) NDT_TEST_WITH(cpu_jit, name, jit_setup_shared, jit_teardown, 240)

static nd_cpu_jit_counts counts(void) {
    nd_cpu_jit_counts c;
    nd_cpu_jit_get_counts(&c);
    return c;
}

/* ------------------------------------------------- every op, every dtype */

/* Floats get NaN, infinities, signed zeros and overflowing values at a few
 * places, strip and work-item boundaries among them. */
static void add_specials(ref_arr *a) {
    if (!ref_is_float(a->dt)) return;
    const double sv[8] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 300, -300, 1e-30};
    const int64_t at[8] = {0, 1023, 1024, 32767, 32768, 40000, 65535, 77};
    for (int i = 0; i < 8; i++)
        if (at[i] < a->size) ref_setd(a, at[i], sv[i]);
}

typedef struct {
    ref_arr *x, *y, *pos, *ex, *cond;
} inputs;

static inputs make_inputs(ndt_rng *r, nd_dtype t, int ndim, const int64_t *shape) {
    int fl = ref_is_float(t);
    inputs in;
    in.x = fl ? ndt_rand(r, t, ndim, shape, -3, 3) : ndt_rand_small(r, t, ndim, shape);
    in.y = fl ? ndt_rand(r, t, ndim, shape, -3, 3) : ndt_rand_small(r, t, ndim, shape);
    in.pos = ndt_rand(r, t, ndim, shape, fl ? 0.1 : 1, fl ? 3 : 100);  /* sqrt, log, pow */
    in.ex = ndt_rand(r, t, ndim, shape, fl ? -2 : 0, fl ? 2 : 4);        /* exponents */
    in.cond = ndt_rand(r, ND_BOOL, ndim, shape, 0, 1);
    for (int64_t i = 0; i < in.x->size; i += 3) ref_cast_elem(in.y, i, in.x, i); /* ties */
    add_specials(in.x);
    add_specials(in.pos);
    return in;
}

static void free_inputs(inputs *in) {
    ref_free(in->x);
    ref_free(in->y);
    ref_free(in->pos);
    ref_free(in->ex);
    ref_free(in->cond);
}

/* Outputs: every op of ref.h, where, and a cast to every dtype (of y: NumPy
 * leaves casts of NaN and out-of-range values to the platform). */
#define N_OUT (R_NUM_OPS + 1 + NDT_NUM_DTYPES)

static int op_defined(ref_op op, nd_dtype t) {
    /* NumPy: TypeError */
    if ((op == R_INVERT || op == R_BITWISE_AND || op == R_BITWISE_OR || op == R_BITWISE_XOR) &&
        ref_is_float(t))
        return 0;
    return !(t == ND_BOOL && (op == R_NEG || op == R_SUB || op == R_SIGN || op == R_POSITIVE));
}

/* Records every output of dtype t in one flush (they fuse into one kernel). */
static void record_all(const inputs *in, nd_array *out[N_OUT]) {
    nd_array *x = ndt_upload(in->x), *y = ndt_upload(in->y), *p = ndt_upload(in->pos);
    nd_array *e = ndt_upload(in->ex), *c = ndt_upload(in->cond);
    nd_dtype t = in->x->dt;
    for (int o = 0; o < R_NUM_OPS; o++) {
        ref_op op = (ref_op)o;
        out[o] = NULL;
        if (!op_defined(op, t)) continue;
        if (ref_op_is_unary(op)) out[o] = ndt_unary_fn(op)(op == R_SQRT || op == R_LOG ? p : x);
        else out[o] = op == R_POW ? nd_pow(p, e) : ndt_binary_fn(op)(x, y);
    }
    out[R_NUM_OPS] = nd_where(c, x, y);
    for (int u = 0; u < NDT_NUM_DTYPES; u++) out[R_NUM_OPS + 1 + u] = nd_astype(y, ndt_all_dtypes[u]);
    nd_free(x);
    nd_free(y);
    nd_free(p);
    nd_free(e);
    nd_free(c);
}

static void check_against_reference(const inputs *in, nd_array *out[N_OUT]) {
    nd_dtype t = in->x->dt;
    for (int o = 0; o < R_NUM_OPS; o++) {
        ref_op op = (ref_op)o;
        if (!out[o]) continue;
        /* the library's result dtype is checked by test_elementwise; here
         * the values: computed in that dtype (comparisons: in t) */
        nd_dtype rt = nd_dtype_of(out[o]), ct = ref_op_is_cmp(op) ? t : rt;
        ref_arr *want;
        if (ref_op_is_unary(op)) want = ref_unary(op, op == R_SQRT || op == R_LOG ? in->pos : in->x, ct, rt);
        else if (op == R_POW) want = ref_binary(op, in->pos, in->ex, ct, rt);
        else want = ref_binary(op, in->x, in->y, ct, rt);
        double tol = ndt_rtol(rt);
        ndt_check(out[o], want, tol, tol, NULL, "jit %s(%s)", ref_op_name(op), ref_dtype_name(t));
        ref_free(want);
    }
    ref_arr *w = ref_where(in->cond, in->x, in->y, t);
    ndt_check(out[R_NUM_OPS], w, 0, 0, NULL, "jit where(bool, %s, %s)", ref_dtype_name(t),
              ref_dtype_name(t));
    ref_free(w);
    for (int u = 0; u < NDT_NUM_DTYPES; u++) {
        ref_arr *c = ref_astype(in->y, ndt_all_dtypes[u]);
        ndt_check(out[R_NUM_OPS + 1 + u], c, 0, 0, NULL, "jit astype(%s -> %s)",
                  ref_dtype_name(t), ref_dtype_name(ndt_all_dtypes[u]));
        ref_free(c);
    }
}

/* Downloads every output (NULL stays NULL) and frees the arrays. */
static void download_all(nd_array *out[N_OUT], ref_arr *got[N_OUT]) {
    for (int o = 0; o < N_OUT; o++) {
        got[o] = out[o] ? ndt_download(out[o]) : NULL;
        nd_free(out[o]);
    }
}

/* Compiled and interpreted results must be the same bits: same element
 * functions, no contraction. NaN matches NaN: which operand's NaN a binary
 * op passes on depends on the operand order the compiler picked. */
static void expect_same_bits(ref_arr *a[], ref_arr *b[], int n, const char *what) {
    for (int o = 0; o < n; o++) {
        if (!a[o] || !b[o]) {
            cr_expect(a[o] == b[o], "%s: output %d exists in one run only", what, o);
            continue;
        }
        size_t bytes = (size_t)a[o]->size * ref_itemsize(a[o]->dt);
        int64_t first = -1;
        for (int64_t i = 0; first < 0 && i < a[o]->size; i++) {
            size_t es = ref_itemsize(a[o]->dt);
            if (memcmp(a[o]->data + (size_t)i * es, b[o]->data + (size_t)i * es, es) &&
                !(ref_is_float(a[o]->dt) && isnan(ref_getd(a[o], i)) && isnan(ref_getd(b[o], i))))
                first = i;
        }
        cr_expect(first < 0, "%s: output %d (%s): compiled and interpreted differ first at "
                  "element %lld (%.17g vs %.17g; %zu bytes) [seed %llu]", what, o,
                  ref_dtype_name(a[o]->dt), (long long)first,
                  first < 0 ? 0 : ref_getd(a[o], first), first < 0 ? 0 : ref_getd(b[o], first),
                  bytes, (unsigned long long)ndt_current_seed());
    }
}

static void free_all(ref_arr *a[], int n) {
    for (int o = 0; o < n; o++) ref_free(a[o]);
}

/* Shape (2, 33001): one kernel per dtype over 66002 points, three work
 * items (two threads), 33 strips per row and a ragged last strip. */
static void every_op(nd_dtype t) {
    NDT_RNG(r);
    const int64_t shape[2] = {2, 33001};
    inputs in = make_inputs(&r, t, 2, shape);
    nd_array *out[N_OUT];
    ref_arr *jit[N_OUT], *interp[N_OUT];
    nd_cpu_jit_counts c0 = counts();
    record_all(&in, out);
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_cpu_jit_counts c1 = counts();
    cr_expect_gt(c1.launches, c0.launches, "%s: no kernel ran compiled", ref_dtype_name(t));
    cr_expect_eq(c1.failed, c0.failed, "%s: a compile failed", ref_dtype_name(t));
    check_against_reference(&in, out);
    download_all(out, jit);

    restart_jit("0", NULL);
    record_all(&in, out);
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    cr_expect_eq(counts().launches, c1.launches, "ND_CPU_JIT=0 still ran compiled code");
    download_all(out, interp);
    expect_same_bits(jit, interp, N_OUT, ref_dtype_name(t));
    free_all(jit, N_OUT);
    free_all(interp, N_OUT);
    free_inputs(&in);
}

/* Under AddressSanitizer the middle integer widths (int16, int32, int64,
 * uint8, uint16, uint32) are left out: what ASan checks here is nd's code
 * generator, loader and interpreter, which walk those the same way as
 * int8 and uint64 (the compiled code itself is not instrumented); without
 * them the suite took 22 s of CI's ASan stage against 33. The release
 * build runs every dtype against the reference. */
#ifdef NDT_ASAN
#define MIDDLE_WIDTH_OR_SKIP(t) cr_skip_test("%s: int8 and uint64's paths; left out under AddressSanitizer", nd_dtype_name(t))
#else
#define MIDDLE_WIDTH_OR_SKIP(t) every_op(t)
#endif

JIT_TEST_SHARED_CACHE(every_op_bool) { every_op(ND_BOOL); }
JIT_TEST_SHARED_CACHE(every_op_int8) { every_op(ND_INT8); }
JIT_TEST_SHARED_CACHE(every_op_int16) { MIDDLE_WIDTH_OR_SKIP(ND_INT16); }
JIT_TEST_SHARED_CACHE(every_op_int32) { MIDDLE_WIDTH_OR_SKIP(ND_INT32); }
JIT_TEST_SHARED_CACHE(every_op_int64) { MIDDLE_WIDTH_OR_SKIP(ND_INT64); }
JIT_TEST_SHARED_CACHE(every_op_uint8) { MIDDLE_WIDTH_OR_SKIP(ND_UINT8); }
JIT_TEST_SHARED_CACHE(every_op_uint16) { MIDDLE_WIDTH_OR_SKIP(ND_UINT16); }
JIT_TEST_SHARED_CACHE(every_op_uint32) { MIDDLE_WIDTH_OR_SKIP(ND_UINT32); }
JIT_TEST_SHARED_CACHE(every_op_uint64) { every_op(ND_UINT64); }
JIT_TEST_SHARED_CACHE(every_op_float16) { every_op(ND_FLOAT16); }
JIT_TEST_SHARED_CACHE(every_op_bfloat16) { every_op(ND_BFLOAT16); }
JIT_TEST_SHARED_CACHE(every_op_float32) { every_op(ND_FLOAT32); }
JIT_TEST_SHARED_CACHE(every_op_float64) { every_op(ND_FLOAT64); }

/* ------------------------------------------------ chains, views, writes */

/* y = sin(a*b) - cos(a)*exp(-b*b) + tanh(a)*log(|b| + 1): every vectorised
 * function of cpu_sleef.c, so values cross five helper calls and live in
 * strips between the loops. */
static nd_array *transcendentals(nd_array *a, nd_array *b) {
    nd_scope_begin();
    nd_array *one = nd_scalar(1.0);
    nd_array *y = nd_add(nd_sub(nd_sin(nd_mul(a, b)), nd_mul(nd_cos(a), nd_exp(nd_neg(nd_mul(b, b))))),
                         nd_mul(nd_tanh(a), nd_log(nd_add(nd_abs(b), one))));
    nd_keep(y);
    nd_scope_end();
    return y;
}

JIT_TEST_SHARED_CACHE(transcendental_chain) {
    NDT_RNG(r);
    const nd_dtype ts[3] = {ND_FLOAT32, ND_FLOAT64, ND_FLOAT16};
    for (int k = 0; k < 3; k++) {
        nd_dtype t = ts[k];
        ref_arr *ra = ndt_rand(&r, t, 1, (int64_t[]){100003}, -4, 4);
        ref_arr *rb = ndt_rand(&r, t, 1, (int64_t[]){100003}, -4, 4);
        add_specials(ra);
        ref_arr *got[2];
        for (int run = 0; run < 2; run++) {
            nd_array *a = ndt_upload(ra), *b = ndt_upload(rb);
            nd_array *y = transcendentals(a, b);
            got[run] = ndt_download(y);
            if (run == 0) {
                ref_arr *want = ref_new(t, 1, (int64_t[]){100003});
                double *scale = malloc(sizeof(double) * 100003);
                for (int64_t i = 0; i < want->size; i++) {
                    /* every op rounds to t, as the library's do */
#define R(v) ref_round_to(t, (v))
                    double x = ref_getd(ra, i), z = ref_getd(rb, i);
                    double p = R(sin(R(x * z))), q = R(R(cos(x)) * R(exp(R(-R(z * z)))));
                    double u = R(R(tanh(x)) * R(log(R(R(fabs(z)) + 1))));
#undef R
                    ref_setd(want, i, p - q + u);
                    scale[i] = fabs(p) + fabs(q) + fabs(u) + 1e-300;
                }
                double tol = ndt_rtol(t) * (t == ND_FLOAT32 ? 4 : 1);
                ndt_check(y, want, tol, 0, scale, "jit transcendentals (%s)", ref_dtype_name(t));
                ref_free(want);
                free(scale);
            }
            /* freed before the restart: nd_shutdown forgets live handles */
            nd_free(a);
            nd_free(b);
            nd_free(y);
            restart_jit(run == 0 ? "0" : "sync", NULL);
        }
        expect_same_bits(&got[0], &got[1], 1, "transcendentals");
        free_all(got, 2);
        ref_free(ra);
        ref_free(rb);
    }
    cr_expect_gt(counts().launches, 0);
}

/* Reversed, strided, transposed and broadcast reads, a strided store into
 * a view, and rows shorter than a strip: the n-d walk. */
JIT_TEST(views_broadcasts_and_strided_stores) {
    NDT_RNG(r);
    const nd_dtype ts[3] = {ND_FLOAT64, ND_INT32, ND_FLOAT16};
    for (int k = 0; k < 3; k++) {
        nd_dtype t = ts[k];
        ref_arr *rx = ndt_rand_small(&r, t, 2, (int64_t[]){300, 257});
        ref_arr *rc = ndt_rand_small(&r, t, 2, (int64_t[]){128, 300});
        ref_arr *rr = ndt_rand_small(&r, t, 1, (int64_t[]){128});
        ref_arr *got[2][2];
        for (int run = 0; run < 2; run++) {
            nd_array *x = ndt_upload(rx), *c = ndt_upload(rc), *row = ndt_upload(rr);
            nd_array *d = nd_zeros(t, ND_SHAPE(600, 130));
            nd_scope_begin();
            nd_array *a = nd_view(x, "::-1, 1::2");          /* (300,128), strides (-257,2) */
            nd_array *b = nd_transpose(c, NULL);              /* (300,128), strides (1,300) */
            nd_array *y = nd_keep(nd_add(nd_mul(a, b), row)); /* row broadcast */
            nd_assign(nd_view(d, "::2, 1:-1"), nd_sub(nd_maximum(a, row), b));
            nd_scope_end();
            nd_cpu_jit_counts c0 = counts();
            got[run][0] = ndt_download(y);
            got[run][1] = ndt_download(d);
            if (run == 0) {
                cr_expect_gt(counts().launches, c0.launches, "%s: not compiled", ref_dtype_name(t));
                ref_arr *ra = ref_strided(rx, 2, (int64_t[]){300, 128}, (int64_t[]){-257, 2},
                                          299 * 257 + 1);
                ref_arr *rb = ref_transpose(rc, NULL);
                ref_arr *ab = ref_binary(R_MUL, ra, rb, t, t);
                ref_arr *wy = ref_binary(R_ADD, ab, rr, t, t);
                ref_arr *mx = ref_binary(R_MAX, ra, rr, t, t);
                ref_arr *wv = ref_binary(R_SUB, mx, rb, t, t);
                ref_arr *wd = ref_new(t, 2, (int64_t[]){600, 130});
                for (int64_t i = 0; i < 300; i++)
                    for (int64_t j = 0; j < 128; j++) ref_cast_elem(wd, 2 * i * 130 + 1 + j, wv, i * 128 + j);
                ndt_check_default(y, wy, "jit strided/transposed/broadcast reads");
                ndt_check_default(d, wd, "jit store into d[::2, 1:-1]");
                ref_free(ra); ref_free(rb); ref_free(ab); ref_free(wy); ref_free(mx); ref_free(wv);
                ref_free(wd);
            }
            nd_free(x); nd_free(c); nd_free(row); nd_free(d); nd_free(y);
            restart_jit(run == 0 ? "0" : "sync", NULL);
        }
        expect_same_bits(got[0], got[1], 2, "views");
        free_all(got[0], 2);
        free_all(got[1], 2);
        ref_free(rx); ref_free(rc); ref_free(rr);
    }
}

/* arange and linspace: index maps (INDEX instructions) feeding arithmetic. */
JIT_TEST(index_maps) {
    const nd_dtype ts[3] = {ND_FLOAT64, ND_INT32, ND_FLOAT32};
    const int64_t n = 70001;
    for (int k = 0; k < 3; k++) {
        nd_dtype t = ts[k];
        ref_arr *got[2][2];
        for (int run = 0; run < 2; run++) {
            nd_cpu_jit_counts c0 = counts();
            nd_array *a = nd_arange(t, -5, (double)n - 5, 1);
            nd_array *l = nd_linspace(t, -1, 1, n);
            nd_array *al = nd_mul(a, l), *y = nd_add(al, l);
            got[run][0] = ndt_download(a);
            got[run][1] = ndt_download(y);
            if (run == 0) {
                cr_expect_gt(counts().launches, c0.launches, "%s: not compiled", ref_dtype_name(t));
                ref_arr *wa = ref_new(t, 1, &n);
                for (int64_t i = 0; i < n; i++) ref_setd(wa, i, (double)i - 5);
                ndt_check_default(a, wa, "jit arange");
                ref_free(wa);
            }
            nd_free(a);
            nd_free(l);
            nd_free(al);
            nd_free(y);
            restart_jit(run == 0 ? "0" : "sync", NULL);
        }
        expect_same_bits(got[0], got[1], 2, "arange, linspace");
        free_all(got[0], 2);
        free_all(got[1], 2);
    }
}

/* A gather fused with a map (ND_IR_GATHER) runs compiled: the values of
 * the interpreter, every dtype width, negative indices wrapped; a bad
 * index fails the kernel with the interpreter's message (the least bad
 * point), never read through. */
JIT_TEST(gather_fused_with_a_map) {
    const nd_dtype ts[4] = {ND_FLOAT64, ND_INT16, ND_FLOAT32, ND_UINT8};
    const int64_t n = 70001, m = 50021;
    int64_t *ix = malloc(sizeof *ix * (size_t)m);
    for (int64_t i = 0; i < m; i++) ix[i] = (i * 7919) % (2 * n) - n;
    for (int k = 0; k < 4; k++) {
        nd_dtype t = ts[k];
        ref_arr *got[2][1];
        for (int run = 0; run < 2; run++) {
            nd_cpu_jit_counts c0 = counts();
            nd_array *a64 = nd_arange(ND_FLOAT64, 0, (double)n, 1), *a = nd_astype(a64, t);
            nd_array *idx = nd_from_host(ix, ND_INT64, ND_SHAPE(m));
            nd_scope_begin();
            nd_array *y = nd_keep(nd_add(nd_take(a, idx, 0), nd_astype(nd_scalar(3), t)));
            nd_scope_end();
            got[run][0] = ndt_download(y);
            if (run == 0) cr_expect_gt(counts().launches, c0.launches, "%s: not compiled", ref_dtype_name(t));
            if (run == 0) {
                const int64_t keep0 = ix[777], keep1 = ix[40000];
                ix[777] = n + 1;
                ix[40000] = -n - 1;
                nd_array *bad_idx = nd_from_host(ix, ND_INT64, ND_SHAPE(m));
                nd_scope_begin();
                nd_array *z = nd_keep(nd_add(nd_take(a, bad_idx, 0), nd_astype(nd_scalar(3), t)));
                nd_scope_end();
                cr_expect_eq(nd_sync(), ND_ERR_INDEX);
                char want[96];
                snprintf(want, sizeof want, "nd_take: index %lld is out of bounds for axis 0 with size %lld",
                         (long long)(n + 1), (long long)n);
                cr_expect(strstr(nd_last_error(), want), "message '%s', want '%s'", nd_last_error(), want);
                nd_clear_error();
                ix[777] = keep0;
                ix[40000] = keep1;
                nd_free(z);
                nd_free(bad_idx);
            }
            nd_free(a);
            nd_free(a64);
            nd_free(idx);
            nd_free(y);
            restart_jit(run == 0 ? "0" : "sync", NULL);
        }
        expect_same_bits(got[0], got[1], 1, "take + 3");
        free_all(got[0], 1);
        free_all(got[1], 1);
    }
    free(ix);
}

/* A gather of two to five and seven index arrays (nd_index "$0, $1[, $2
 * ..]") fused with a map runs compiled with the interpreter's values; a
 * bad index in the second axis is named with that axis' size. */
JIT_TEST(gather_of_several_index_arrays) {
    const int64_t R = 37, C = 53, D = 11, E = 5, m = 60013;
    const int64_t sh[7] = {R, C, D, E, 3, 4, 2};
    int64_t *v[7];
    for (int k = 0; k < 7; k++) v[k] = malloc(sizeof *v[k] * (size_t)m);
    for (int64_t i = 0; i < m; i++) {
        v[0][i] = (i * 31) % (2 * R) - R;
        v[1][i] = (i * 7919) % (2 * C) - C;
        v[2][i] = (i * 13) % D;
        v[3][i] = (i * 17) % (2 * E) - E;
        for (int k = 4; k < 7; k++) v[k][i] = (i * (19 + 2 * k)) % (2 * sh[k]) - sh[k];
    }
    static const char *const spec[8] = {NULL, NULL, "$0, $1", "$0, $1, $2", "$0, $1, $2, $3", "$0, $1, $2, $3, $4",
                                        NULL, "$0, $1, $2, $3, $4, $5, $6"};
    for (int na = 2; na <= 7; na += na == 5 ? 2 : 1) {
        ref_arr *got[2][1];
        int64_t n = 1;
        for (int k = 0; k < na; k++) n *= sh[k];
        for (int run = 0; run < 2; run++) {
            nd_cpu_jit_counts c0 = counts();
            nd_array *flat = nd_arange(ND_FLOAT32, 0, (double)n, 1), *a = nd_reshape(flat, na, sh);
            nd_array *ix[7];
            for (int k = 0; k < 7; k++) ix[k] = nd_from_host(v[k], ND_INT64, ND_SHAPE(m));
            nd_scope_begin();
            nd_array *y = nd_keep(nd_mul(nd_index(a, spec[na], na, ix), nd_scalar(0.5)));
            nd_scope_end();
            got[run][0] = ndt_download(y);
            if (run == 0) cr_expect_gt(counts().launches, c0.launches, "%d arrays: not compiled", na);
            if (run == 0) {
                const int64_t keep = v[1][4321];
                v[1][4321] = C + 2;
                nd_array *bad = nd_from_host(v[1], ND_INT64, ND_SHAPE(m));
                nd_array *bx[7] = {ix[0], bad, ix[2], ix[3], ix[4], ix[5], ix[6]};
                nd_scope_begin();
                nd_array *z = nd_keep(nd_mul(nd_index(a, spec[na], na, bx), nd_scalar(0.5)));
                nd_scope_end();
                cr_expect_eq(nd_sync(), ND_ERR_INDEX);
                char want[96];
                snprintf(want, sizeof want, "nd_index: index %lld is out of bounds for axis 1 with size %lld",
                         (long long)(C + 2), (long long)C);
                cr_expect(strstr(nd_last_error(), want), "message '%s', want '%s'", nd_last_error(), want);
                nd_clear_error();
                v[1][4321] = keep;
                nd_free(z);
                nd_free(bad);
            }
            nd_free(a);
            nd_free(flat);
            for (int k = 0; k < 7; k++) nd_free(ix[k]);
            nd_free(y);
            restart_jit(run == 0 ? "0" : "sync", NULL);
        }
        expect_same_bits(got[0], got[1], 1, "a[i, j(, k ..)] * 0.5");
        free_all(got[0], 1);
        free_all(got[1], 1);
    }
    for (int k = 0; k < 7; k++) free(v[k]);
}

/* x = x*3 - 1 in place: the load and the store share a buffer. */
JIT_TEST(in_place_update) {
    NDT_RNG(r);
    ref_arr *rx = ndt_rand(&r, ND_FLOAT32, 1, (int64_t[]){70001}, -5, 5);
    nd_array *x = ndt_upload(rx);
    nd_cpu_jit_counts c0 = counts();
    for (int it = 0; it < 3; it++) {
        nd_scope_begin();
        nd_assign(x, nd_sub(nd_mul(x, nd_scalar(3.0)), nd_scalar(1.0)));
        nd_scope_end();
    }
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    cr_expect_gt(counts().launches, c0.launches);
    ref_arr *want = ref_new(ND_FLOAT32, 1, (int64_t[]){70001});
    for (int64_t i = 0; i < want->size; i++) {
        float v = (float)ref_getd(rx, i);
        for (int it = 0; it < 3; it++) v = v * 3.0f - 1.0f;
        ref_setd(want, i, v);
    }
    ndt_check(x, want, 0, 0, NULL, "jit x = x*3 - 1 in place");
    nd_free(x);
    ref_free(rx);
    ref_free(want);
}

/* ----------------------------------------- cache, background, fallback */

static nd_array *small_chain(const ref_arr *ra, const ref_arr *rb, ref_arr **want) {
    nd_array *a = ndt_upload(ra), *b = ndt_upload(rb);
    nd_scope_begin();
    nd_array *y = nd_keep(nd_add(nd_mul(a, b), nd_mul(nd_scalar(0.5), a)));
    nd_scope_end();
    nd_free(a);
    nd_free(b);
    *want = ref_new(ND_FLOAT32, 1, ra->shape);
    for (int64_t i = 0; i < ra->size; i++) {
        float x = (float)ref_getd(ra, i), z = (float)ref_getd(rb, i);
        ref_setd(*want, i, x * z + 0.5f * x);
    }
    return y;
}

/* Runs small_chain once and checks it exactly. */
static void run_small_chain(ndt_rng *r, const char *what) {
    ref_arr *ra = ndt_rand(r, ND_FLOAT32, 1, (int64_t[]){50000}, -2, 2);
    ref_arr *rb = ndt_rand(r, ND_FLOAT32, 1, (int64_t[]){50000}, -2, 2);
    ref_arr *want;
    nd_array *y = small_chain(ra, rb, &want);
    ndt_check(y, want, 0, 0, NULL, "%s", what);
    nd_free(y);
    ref_free(ra);
    ref_free(rb);
    ref_free(want);
}

JIT_TEST(second_process_loads_from_disk) {
    NDT_RNG(r);
    nd_cpu_jit_counts c0 = counts();
    run_small_chain(&r, "compiled");
    nd_cpu_jit_counts c1 = counts();
    cr_expect_eq(c1.compiled, c0.compiled + 1, "one kernel, one compile");
    cr_expect_eq(count_files("k-"), 1, "one shared object in the cache");
    cr_expect_eq(count_files("tmp-"), 0, "temporary files left behind");
    restart_jit("sync", NULL); /* a new backend: only the disk cache remains */
    run_small_chain(&r, "loaded from the cache");
    nd_cpu_jit_counts c2 = counts();
    cr_expect_eq(c2.compiled, c1.compiled, "compiled again instead of loading");
    cr_expect_gt(c2.loaded, c1.loaded);
    cr_expect_gt(c2.launches, c1.launches);
}

/* The default mode: the interpreter runs the kernel while it compiles, and
 * a later iteration of the same loop runs compiled. */
JIT_TEST(background_compile_is_used_later) {
    NDT_RNG(r);
    restart_jit("1", NULL);
    nd_cpu_jit_counts c0 = counts();
    double t0 = (double)time(NULL);
    int it = 0;
    while (counts().launches == c0.launches && (double)time(NULL) - t0 < 120) {
        run_small_chain(&r, "while compiling in the background");
        if (++it > 1) usleep(20000);
    }
    cr_expect_gt(counts().launches, c0.launches, "never ran compiled in %d iterations", it);
    run_small_chain(&r, "compiled in the background");
}

/* No compiler, or a failing one: every kernel is interpreted, the answers
 * are unchanged, nothing is cached. */
JIT_TEST(missing_compiler_falls_back) {
    NDT_RNG(r);
    restart_jit("sync", "/nonexistent/bin/cc");
    nd_cpu_jit_counts c0 = counts();
    run_small_chain(&r, "without a compiler");
    nd_cpu_jit_counts c1 = counts();
    cr_expect_eq(c1.launches, c0.launches);
    cr_expect_eq(c1.compiled, c0.compiled);
    cr_expect_eq(count_files("k-"), 0);
}

JIT_TEST(failing_compiler_falls_back) {
    NDT_RNG(r);
    restart_jit("sync", "false");
    nd_cpu_jit_counts c0 = counts();
    run_small_chain(&r, "with a compiler that fails");
    run_small_chain(&r, "again (no second attempt)");
    nd_cpu_jit_counts c1 = counts();
    cr_expect_eq(c1.launches, c0.launches);
    cr_expect_eq(c1.failed, c0.failed + 1, "one failure, not one per launch");
    cr_expect_eq(count_files("failed-"), 2, "source and compiler output are kept");
}

JIT_TEST(small_kernels_stay_interpreted) {
    NDT_RNG(r);
    setenv("ND_CPU_JIT_MIN", "1000000", 1);
    restart_jit("sync", NULL);
    nd_cpu_jit_counts c0 = counts();
    run_small_chain(&r, "below ND_CPU_JIT_MIN");
    cr_expect_eq(counts().launches, c0.launches);
    cr_expect_eq(count_files("k-"), 0);
}

JIT_TEST(invalid_settings_fail_nd_init) {
    nd_shutdown();
    setenv("ND_CPU_JIT", "maybe", 1);
    cr_expect_eq(nd_init(NULL), ND_ERR_ARG);
    cr_expect(strstr(nd_last_error(), "ND_CPU_JIT"), "%s", nd_last_error());
    setenv("ND_CPU_JIT", "sync", 1);
    setenv("ND_CPU_JIT_MIN", "-1", 1);
    cr_expect_eq(nd_init(NULL), ND_ERR_ARG);
    cr_expect(strstr(nd_last_error(), "ND_CPU_JIT_MIN"), "%s", nd_last_error());
    setenv("ND_CPU_JIT_MIN", "0", 1);
    nd_clear_error();
    ndt_setup();
}

/* Shutting down while the background thread compiles stops the compiler and
 * leaves no temporary files (whichever finishes first). */
JIT_TEST(shutdown_during_a_compile_is_clean) {
    NDT_RNG(r);
    restart_jit("1", NULL);
    run_small_chain(&r, "a compile starts");
    nd_shutdown();
    cr_expect_eq(count_files("tmp-"), 0, "temporary files left behind");
    ndt_setup();
    run_small_chain(&r, "after a restart");
}
