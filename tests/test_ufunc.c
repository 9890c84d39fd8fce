/* User-defined elementwise functions (include/nd/ufunc.h): values against a
 * float64 reference written here, with random inputs and edge values;
 * broadcasting and views as inputs; NumPy's ufunc type resolution over
 * several loops; fusion (a chain with a user function in the middle is one
 * kernel); the CPU interpreter (ND_CPU_JIT=0, the tile function compiled at
 * definition) and the CPU JIT (ND_CPU_JIT=sync, the function pasted into
 * the kernel) giving the same bits; every bad input's error. On CUDA the
 * same tests run on the device (NVRTC compiles the function at definition
 * and inlines it into the kernels). */
#include "common.h"

#include <limits.h>
#include <unistd.h>

#include "backends/cpu/cpu_jit.h" /* the JIT's counters: which path ran */
#include "common/fault.h"

static const char *GAUSS_BODY = "return expf(-0.5f*(x-x0)*(x-x0)/(s*s)) / (2.5066283f*s);";

/* The float64 reference of GAUSS_BODY (the same operations, in double). */
static double gauss_ref(double x, double x0, double s) {
    return exp(-0.5 * (x - x0) * (x - x0) / (s * s)) / (2.5066283 * s);
}

static int is_cpu(void) { return strcmp(nd_backend_name(), "cpu") == 0; }

/* Restarts on the CPU backend's interpreter (mode "0") or JIT ("sync", every
 * kernel compiled); on CUDA nothing changes. */
static void restart_mode(const char *mode) {
    if (!is_cpu()) return;
    setenv("ND_CPU_JIT", mode, 1);
    setenv("ND_CPU_JIT_MIN", "0", 1);
    ndt_restart(NULL);
}

static uint64_t kernels_run(void) {
    nd_stats s;
    nd_get_stats(&s);
    return NDT_KERNELS(s);
}

/* x with edge values first, then uniform in [lo, hi). */
static ref_arr *with_edges(ndt_rng *r, nd_dtype t, int64_t n, double lo, double hi) {
    static const double edges[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0, 1e30, -1e30, 1e-40};
    ref_arr *a = ndt_rand(r, t, 1, (int64_t[]){n}, lo, hi);
    for (int64_t i = 0; i < n && i < (int64_t)(sizeof edges / sizeof edges[0]); i++) ref_setd(a, i, edges[i]);
    return a;
}

/* gaussian(x, x0, s) with x (n,), x0 (3, 1), s a weak float, against the
 * reference; returns the result's bytes (caller frees) for comparing modes. */
static float *gaussian_case(const char *mode) {
    restart_mode(mode);
    NDT_RNG(r);
    const int64_t n = 5003;
    ref_arr *x = with_edges(&r, ND_FLOAT32, n, -4, 4);
    ref_arr *x0 = ndt_rand(&r, ND_FLOAT32, 2, (int64_t[]){3, 1}, -2, 2);
    ref_setd(x0, 2, -0.0);
    const double s = 0.75;
    nd_ufunc *g = nd_ufunc_define("gaussian", "float(float x, float x0, float s)", GAUSS_BODY);
    cr_assert(g, "%s", nd_last_error());
    cr_expect_eq(nd_ufunc_nargs(g), 3);
    nd_array *ax = ndt_upload(x), *ax0 = ndt_upload(x0), *as = nd_scalar(s);
    uint64_t k0 = kernels_run();
    nd_cpu_jit_counts c0;
    nd_cpu_jit_get_counts(&c0);
    nd_array *y = nd_ufunc_call(g, 3, (nd_array *[]){ax, ax0, as});
    cr_assert(y, "%s", nd_last_error());
    cr_expect_eq(nd_dtype_of(y), ND_FLOAT32);
    ref_arr *want = ref_new(ND_FLOAT32, 2, (int64_t[]){3, n});
    double *scale = calloc((size_t)(3 * n), sizeof *scale);
    for (int64_t i = 0; i < 3; i++)
        for (int64_t j = 0; j < n; j++) {
            double xv = ref_getd(x, j), cv = ref_getd(x0, i);
            double w = gauss_ref(xv, cv, s);
            ref_setd(want, i * n + j, w);
            /* expf's error grows with its argument's size */
            double arg = 0.5 * (xv - cv) * (xv - cv) / (s * s);
            scale[i * n + j] = fabs(w) * (4 + (isfinite(arg) ? arg : 0));
        }
    ndt_check(y, want, 2e-7, 1e-37, scale, "gaussian (mode %s)", mode);
    cr_expect_eq(kernels_run() - k0, 1, "one kernel (mode %s)", mode);
    nd_cpu_jit_counts c1;
    nd_cpu_jit_get_counts(&c1);
    if (is_cpu() && strcmp(mode, "sync") == 0)
        cr_expect_gt(c1.launches, c0.launches, "the JIT ran the kernel");
    else if (is_cpu())
        cr_expect_eq(c1.launches, c0.launches, "the interpreter ran the kernel");
    float *bytes = malloc((size_t)(3 * n) * sizeof *bytes);
    cr_assert_eq(nd_to_host(y, bytes, (size_t)(3 * n) * sizeof *bytes), ND_OK);
    free(scale);
    ref_free(want);
    ref_free(x);
    ref_free(x0);
    nd_free(y);
    nd_free(ax);
    nd_free(ax0);
    nd_free(as);
    nd_ufunc_free(g);
    return bytes;
}

NDT_TEST(ufunc, gaussian_reference_interpreter_and_jit) {
    float *interp = gaussian_case("0");
    float *jit = gaussian_case("sync");
    /* the same function compiled with the same flags: the same bits */
    cr_expect(memcmp(interp, jit, 3 * 5003 * sizeof(float)) == 0,
              "the interpreter's tile function and the JIT's inlined function differ");
    free(interp);
    free(jit);
}

/* sum(2 * g(sin(x), y) + 1) over axis 1: one kernel, any mode. */
static void chain_case(const char *mode) {
    restart_mode(mode);
    NDT_RNG(r);
    const int64_t m = 7, n = 3001;
    ref_arr *x = ndt_rand(&r, ND_FLOAT64, 2, (int64_t[]){m, n}, -3, 3);
    ref_arr *yv = ndt_rand(&r, ND_FLOAT64, 1, (int64_t[]){n}, -1, 1);
    nd_ufunc *g = nd_ufunc_define("mix", "double(double a, double b)", "double t = a * b;\nreturn t - b / (1.0 + a * a);");
    cr_assert(g, "%s", nd_last_error());
    nd_array *ax = ndt_upload(x), *ay = ndt_upload(yv);
    uint64_t k0 = kernels_run();
    nd_scope_begin();
    nd_array *v = nd_ufunc_call(g, 2, (nd_array *[]){nd_sin(ax), ay});
    nd_array *res = nd_keep(nd_sum(nd_add(nd_mul(v, nd_scalar(2.0)), nd_scalar(1.0)), 1));
    nd_scope_end();
    ref_arr *want = ref_new(ND_FLOAT64, 1, (int64_t[]){m});
    for (int64_t i = 0; i < m; i++) {
        double acc = 0;
        for (int64_t j = 0; j < n; j++) {
            double a = sin(ref_getd(x, i * n + j)), b = ref_getd(yv, j);
            acc += 2 * (a * b - b / (1.0 + a * a)) + 1;
        }
        ref_setd(want, i, acc);
    }
    ndt_check(res, want, 1e-12, 1e-9, NULL, "chain (mode %s)", mode);
    cr_expect_eq(kernels_run() - k0, 1, "sin, the user function, *, + and the sum are one kernel (mode %s)", mode);
    ref_free(x);
    ref_free(yv);
    ref_free(want);
    nd_free(res);
    nd_free(ax);
    nd_free(ay);
    nd_ufunc_free(g);
}

NDT_TEST(ufunc, fuses_into_one_kernel) {
    chain_case("0");
    chain_case("sync");
}

/* Broadcasting (3-d against 2-d against 0-d) and views (transpose, flip)
 * as inputs, in both modes. */
NDT_TEST(ufunc, broadcasting_and_views) {
    const char *modes[] = {"0", "sync"};
    for (int mi = 0; mi < 2; mi++) {
        restart_mode(modes[mi]);
        NDT_RNG(r);
        ref_arr *a = ndt_rand(&r, ND_FLOAT32, 3, (int64_t[]){4, 1, 6}, -2, 2);
        ref_arr *b = ndt_rand(&r, ND_FLOAT32, 2, (int64_t[]){6, 5}, -2, 2); /* used transposed: (5, 6) */
        ref_arr *c = ndt_rand(&r, ND_FLOAT32, 0, NULL, 1, 2);
        nd_ufunc *g = nd_ufunc_define("fma3", "float a, float b, float c", "return a * b + c;");
        cr_assert(g, "%s", nd_last_error());
        nd_array *aa = ndt_upload(a), *ab = ndt_upload(b), *ac = ndt_upload(c);
        nd_scope_begin();
        nd_array *bt = nd_transpose(ab, NULL);            /* (5, 6) */
        nd_array *af = nd_flip(aa, 2);                   /* reversed last axis */
        nd_array *y = nd_keep(nd_ufunc_call(g, 3, (nd_array *[]){af, bt, ac}));
        nd_scope_end();
        cr_assert(y, "%s", nd_last_error());
        ref_arr *want = ref_new(ND_FLOAT32, 3, (int64_t[]){4, 5, 6});
        for (int64_t i = 0; i < 4; i++)
            for (int64_t j = 0; j < 5; j++)
                for (int64_t k = 0; k < 6; k++) {
                    double va = ref_getd(a, i * 6 + (5 - k)), vb = ref_getd(b, k * 5 + j);
                    /* float32 arithmetic, each operation rounded (no FMA on the CPU) */
                    float p = (float)va * (float)vb;
                    ref_setd(want, (i * 5 + j) * 6 + k, (double)(p + (float)ref_getd(c, 0)));
                }
        if (is_cpu()) ndt_check(y, want, 0, 0, NULL, "broadcast a*b+c, exact on the CPU (mode %s)", modes[mi]);
        else ndt_check(y, want, 1e-6, 1e-6, NULL, "broadcast a*b+c (CUDA may contract to an FMA)");
        /* no broadcast: an error naming the function and both shapes */
        nd_array *bad = nd_ufunc_call(g, 3, (nd_array *[]){aa, ab, ac});
        cr_expect_null(bad);
        NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_ufunc_call");
        ref_free(a);
        ref_free(b);
        ref_free(c);
        ref_free(want);
        nd_free(y);
        nd_free(aa);
        nd_free(ab);
        nd_free(ac);
        nd_ufunc_free(g);
    }
}

/* NumPy's ufunc type resolution: the first loop every input casts to safely. */
NDT_TEST(ufunc, promotion_picks_the_first_safe_loop) {
    nd_ufunc *g = nd_ufunc_define("affine", "int32_t(int32_t a, int32_t b)", "return a * 3 + b;");
    cr_assert(g, "%s", nd_last_error());
    cr_assert_eq(nd_ufunc_add_loop(g, "float(float a, float b)", NULL), ND_OK, "%s", nd_last_error());
    cr_assert_eq(nd_ufunc_add_loop(g, "double(double a, double b)", "return a * 3.0 + b + 0.5;"), ND_OK,
                 "%s", nd_last_error());
    struct {
        nd_dtype ta, tb; /* ND_NUM_DTYPES: a weak scalar (int for b = 5, float for 2.5) */
        int weak_b;      /* 0 strong, 1 Python int 5, 2 Python float 2.5 */
        nd_dtype want;
    } cases[] = {
        {ND_INT8, ND_INT16, 0, ND_INT32},     {ND_UINT16, ND_BOOL, 0, ND_INT32},
        {ND_INT32, ND_INT32, 0, ND_INT32},    {ND_INT64, ND_INT32, 0, ND_FLOAT64},
        {ND_UINT32, ND_INT8, 0, ND_FLOAT64},  {ND_FLOAT16, ND_FLOAT32, 0, ND_FLOAT32},
        {ND_BFLOAT16, ND_INT8, 0, ND_FLOAT32}, {ND_INT16, ND_FLOAT32, 0, ND_FLOAT32},
        {ND_UINT64, ND_INT8, 0, ND_FLOAT64},  {ND_FLOAT64, ND_INT8, 0, ND_FLOAT64},
        {ND_INT8, ND_NUM_DTYPES, 1, ND_INT32}, {ND_INT8, ND_NUM_DTYPES, 2, ND_FLOAT32},
        {ND_FLOAT64, ND_NUM_DTYPES, 1, ND_FLOAT64},
    };
    NDT_RNG(r);
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        ref_arr *a = ndt_rand_small(&r, cases[ci].ta, 1, (int64_t[]){37});
        ref_arr *b = cases[ci].weak_b ? NULL : ndt_rand_small(&r, cases[ci].tb, 1, (int64_t[]){37});
        nd_array *aa = ndt_upload(a);
        nd_array *ab = cases[ci].weak_b == 1 ? nd_scalar_int(5) : cases[ci].weak_b == 2 ? nd_scalar(2.5) : ndt_upload(b);
        nd_array *y = nd_ufunc_call(g, 2, (nd_array *[]){aa, ab});
        cr_assert(y, "case %zu: %s", ci, nd_last_error());
        cr_expect_eq(nd_dtype_of(y), cases[ci].want, "case %zu (%s, %s): result %s, want %s", ci,
                     nd_dtype_name(cases[ci].ta), b ? nd_dtype_name(cases[ci].tb) : "weak",
                     nd_dtype_name(nd_dtype_of(y)), nd_dtype_name(cases[ci].want));
        ref_arr *want = ref_new(cases[ci].want, 1, (int64_t[]){37});
        for (int64_t i = 0; i < 37; i++) {
            double va = ref_getd(a, i);
            double vb = cases[ci].weak_b == 1 ? 5 : cases[ci].weak_b == 2 ? 2.5 : ref_getd(b, i);
            double w;
            if (cases[ci].want == ND_INT32) w = (double)((int32_t)va * 3 + (int32_t)vb);
            else if (cases[ci].want == ND_FLOAT32) w = (double)((float)va * 3.0f + (float)vb);
            else w = va * 3.0 + vb + 0.5;
            ref_setd(want, i, w);
        }
        ndt_check(y, want, 1e-6, 1e-6, NULL, "case %zu", ci);
        ref_free(a);
        if (b) ref_free(b);
        ref_free(want);
        nd_free(y);
        nd_free(aa);
        nd_free(ab);
    }
    /* a Python int that does not fit the loop's int32: NumPy's OverflowError */
    nd_array *i8 = nd_zeros(ND_INT8, 1, (int64_t[]){3});
    nd_array *big = nd_scalar_int((int64_t)1 << 40);
    cr_expect_null(nd_ufunc_call(g, 2, (nd_array *[]){i8, big}));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_ufunc_call");
    /* a loop with the same parameter types again */
    cr_expect_eq(nd_ufunc_add_loop(g, "int64_t(int32_t a, int32_t b)", NULL), ND_ERR_ARG);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_ufunc_add_loop");
    /* another number of parameters */
    cr_expect_eq(nd_ufunc_add_loop(g, "float(float a)", "return a;"), ND_ERR_ARG);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_ufunc_add_loop");
    nd_free(i8);
    nd_free(big);
    nd_ufunc_free(g);
}

/* Integer and bool loops: exact, unsigned wrap-around, bool in and out. */
NDT_TEST(ufunc, integer_and_bool_loops) {
    const char *modes[] = {"0", "sync"};
    for (int mi = 0; mi < 2; mi++) {
        restart_mode(modes[mi]);
        nd_ufunc *h = nd_ufunc_define("mixbits", "uint32_t(uint32_t a, uint32_t b)", "return (a << 3) ^ (b * 2654435761u);");
        nd_ufunc *p = nd_ufunc_define("pick", "bool(bool c, int64_t v)", "return c && v > 3;");
        cr_assert(h && p, "%s", nd_last_error());
        NDT_RNG(r);
        ref_arr *a = ndt_rand_bits(&r, ND_UINT32, 1, (int64_t[]){1000});
        ref_arr *b = ndt_rand_bits(&r, ND_UINT32, 1, (int64_t[]){1000});
        ref_arr *c = ndt_rand(&r, ND_BOOL, 1, (int64_t[]){1000}, 0, 1);
        ref_arr *v = ndt_rand_bits(&r, ND_INT64, 1, (int64_t[]){1000});
        ref_setu(v, 0, (uint64_t)INT64_MIN);
        ref_setu(v, 1, (uint64_t)INT64_MAX);
        ref_setu(c, 0, 1);
        ref_setu(c, 1, 1);
        nd_array *aa = ndt_upload(a), *ab = ndt_upload(b), *ac = ndt_upload(c), *av = ndt_upload(v);
        nd_array *y = nd_ufunc_call(h, 2, (nd_array *[]){aa, ab});
        nd_array *q = nd_ufunc_call(p, 2, (nd_array *[]){ac, av});
        cr_assert(y && q, "%s", nd_last_error());
        ref_arr *wy = ref_new(ND_UINT32, 1, (int64_t[]){1000}), *wq = ref_new(ND_BOOL, 1, (int64_t[]){1000});
        for (int64_t i = 0; i < 1000; i++) {
            uint32_t x = (uint32_t)ref_getu(a, i), z = (uint32_t)ref_getu(b, i);
            ref_setu(wy, i, (uint32_t)((x << 3) ^ (uint32_t)(z * 2654435761u)));
            ref_setu(wq, i, ref_getu(c, i) && (int64_t)ref_getu(v, i) > 3);
        }
        ndt_check(y, wy, 0, 0, NULL, "uint32 loop (mode %s)", modes[mi]);
        ndt_check(q, wq, 0, 0, NULL, "bool loop (mode %s)", modes[mi]);
        /* a float input fits neither: the message lists the loops */
        nd_array *f = nd_zeros(ND_FLOAT32, 1, (int64_t[]){4});
        cr_expect_null(nd_ufunc_call(h, 2, (nd_array *[]){f, f}));
        cr_expect(strstr(nd_last_error(), "uint32_t(uint32_t, uint32_t)") != NULL, "%s", nd_last_error());
        NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_ufunc_call");
        ref_free(a);
        ref_free(b);
        ref_free(c);
        ref_free(v);
        ref_free(wy);
        ref_free(wq);
        nd_free(f);
        nd_free(y);
        nd_free(q);
        nd_free(aa);
        nd_free(ab);
        nd_free(ac);
        nd_free(av);
        nd_ufunc_free(h);
        nd_ufunc_free(p);
    }
}

/* Empty and 0-d inputs, and a user function defined again (the same loop,
 * its compiled code reused) after the first was freed. */
NDT_TEST(ufunc, empty_zero_d_and_redefinition) {
    nd_ufunc *g = nd_ufunc_define("half", "double x", "return x * 0.5;");
    cr_assert(g, "%s", nd_last_error());
    nd_array *e = nd_zeros(ND_FLOAT64, 2, (int64_t[]){0, 3});
    nd_array *y = nd_ufunc_call(g, 1, (nd_array *[]){e});
    cr_assert(y, "%s", nd_last_error());
    cr_expect_eq(nd_size(y), 0);
    cr_expect_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_array *z = nd_full(ND_FLOAT64, 0, NULL, 3.0);
    nd_array *w = nd_ufunc_call(g, 1, (nd_array *[]){z});
    cr_assert(w, "%s", nd_last_error());
    cr_expect_eq(nd_ndim(w), 0);
    cr_expect_eq(nd_item(w), 1.5);
    nd_ufunc_free(g);
    nd_free(w); /* computed: stays valid after the ufunc is freed */
    nd_ufunc *g2 = nd_ufunc_define("half", "double x", "return x * 0.5;");
    cr_assert(g2, "%s", nd_last_error());
    nd_array *w2 = nd_ufunc_call(g2, 1, (nd_array *[]){z});
    nd_ufunc_free(g2); /* recorded, not yet run: still runs */
    cr_expect_eq(nd_item(w2), 1.5, "%s", nd_last_error());
    nd_free(w2);
    nd_free(y);
    nd_free(e);
    nd_free(z);
}

/* Two different functions with the same name and shapes never share a
 * cached kernel or plan. */
NDT_TEST(ufunc, different_bodies_never_share_kernels) {
    nd_scope_begin();
    nd_ufunc *a = nd_ufunc_define("f", "float x", "return x + 1.0f;");
    nd_ufunc *b = nd_ufunc_define("f", "float x", "return x + 2.0f;");
    cr_assert(a && b, "%s", nd_last_error());
    nd_array *x = nd_full(ND_FLOAT32, 1, (int64_t[]){100}, 1.0);
    for (int round = 0; round < 3; round++) {
        nd_array *ya = nd_ufunc_call(a, 1, (nd_array *[]){x});
        cr_expect_eq(nd_item(nd_view(ya, "7")), 2.0, "round %d: %s", round, nd_last_error());
        nd_array *yb = nd_ufunc_call(b, 1, (nd_array *[]){x});
        cr_expect_eq(nd_item(nd_view(yb, "7")), 3.0, "round %d: %s", round, nd_last_error());
        nd_free(ya);
        nd_free(yb);
    }
    nd_free(x);
    nd_ufunc_free(a);
    nd_ufunc_free(b);
    nd_scope_end();
}

/* ---------------------------------------------------------------- errors */

NDT_TEST(ufunc, compile_error_names_the_users_line) {
    nd_ufunc *g = nd_ufunc_define("broken", "float(float x, float y)",
                                  "float t = x * 2.0f;\n"
                                  "return t + z;\n");
    cr_expect_null(g);
    const char *m = nd_last_error();
    cr_expect(strstr(m, "broken:2:") || strstr(m, "broken(2)"),
              "the message should give line 2 of the body: %s", m);
    cr_expect(strstr(m, "'broken'") != NULL, "%s", m);
    NDT_EXPECT_ERR(ND_ERR_COMPILE, "nd_ufunc_define");
    /* a loop added later is compiled too */
    nd_ufunc *ok = nd_ufunc_define("fine", "float x", "return x;");
    cr_assert(ok, "%s", nd_last_error());
    cr_expect_eq(nd_ufunc_add_loop(ok, "double x", "return x +;"), ND_ERR_COMPILE);
    m = nd_last_error();
    cr_expect(strstr(m, "fine:1:") || strstr(m, "fine(1)"), "line 1 of the body: %s", m);
    NDT_EXPECT_ERR(ND_ERR_COMPILE, "nd_ufunc_add_loop");
    nd_ufunc_free(ok);
}

NDT_TEST(ufunc, bad_signatures) {
    nd_scope_begin();
    const char *bad[] = {
        "",                              /* nothing */
        "float",                         /* a type without a name */
        "float(float x",                 /* no ')' */
        "floot x",                       /* unknown type */
        "float16 x",                     /* not a loop type */
        "float x, float x",              /* a name twice */
        "float x,",                      /* a missing parameter */
        "float(float x) junk",           /* trailing text */
        "float()",                       /* no parameters */
        "float a, float b, float c, float d, float e", /* too many */
        "float x y",                     /* two names */
        "float int32_t",                 /* a type as a name */
        "complex(float x)",              /* unknown result type */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_expect_null(nd_ufunc_define("g", bad[i], "return 0;"), "signature \"%s\"", bad[i]);
        cr_expect(strstr(nd_last_error(), "signature") != NULL, "\"%s\": %s", bad[i], nd_last_error());
        NDT_EXPECT_ERR(ND_ERR_ARG, "nd_ufunc_define");
    }
    const char *names[] = {"", "1abc", "a-b", "with space",
                           "a_name_that_is_far_too_long_to_be_one_because_it_has_more_than_63_chars"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        cr_expect_null(nd_ufunc_define(names[i], "float x", "return x;"), "name \"%s\"", names[i]);
        NDT_EXPECT_ERR(ND_ERR_ARG, "nd_ufunc_define");
    }
    cr_expect_null(nd_ufunc_define(NULL, "float x", "return x;"));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_ufunc_define");
    cr_expect_null(nd_ufunc_define("g", NULL, "return x;"));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_ufunc_define");
    cr_expect_null(nd_ufunc_define("g", "float x", NULL));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_ufunc_define");
    /* the result type may be omitted: the promotion of the parameters */
    nd_ufunc *g = nd_ufunc_define("g", "int8_t a, uint8_t b", "return a + b;");
    cr_assert(g, "%s", nd_last_error());
    nd_array *a = nd_full(ND_INT8, 1, (int64_t[]){2}, -100);
    nd_array *b = nd_full(ND_UINT8, 1, (int64_t[]){2}, 250);
    nd_array *y = nd_ufunc_call(g, 2, (nd_array *[]){a, b});
    cr_assert(y, "%s", nd_last_error());
    cr_expect_eq(nd_dtype_of(y), ND_INT16, "int8 and uint8 promote to int16");
    cr_expect_eq(nd_item(nd_view(y, "1")), 150.0);
    /* int8 does not cast safely to the uint8 parameter */
    cr_expect_null(nd_ufunc_call(g, 2, (nd_array *[]){a, a}));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_ufunc_call");
    nd_free(y);
    nd_free(a);
    nd_free(b);
    nd_ufunc_free(g);
    nd_scope_end();
}

NDT_TEST(ufunc, bad_calls) {
    nd_scope_begin();
    nd_ufunc *g = nd_ufunc_define("gaussian", "float(float x, float x0, float s)", GAUSS_BODY);
    cr_assert(g, "%s", nd_last_error());
    nd_array *x = nd_zeros(ND_FLOAT32, 1, (int64_t[]){4});
    cr_expect_null(nd_ufunc_call(NULL, 1, (nd_array *[]){x}));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_ufunc_call");
    cr_expect_null(nd_ufunc_call(g, 2, (nd_array *[]){x, x}));
    cr_expect(strstr(nd_last_error(), "takes 3 inputs, got n = 2") != NULL, "%s", nd_last_error());
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_ufunc_call");
    cr_expect_null(nd_ufunc_call(g, 3, NULL));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_ufunc_call");
    cr_expect_null(nd_ufunc_call(g, 3, (nd_array *[]){x, NULL, x}));
    cr_expect(strstr(nd_last_error(), "args[1]") != NULL, "%s", nd_last_error());
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_ufunc_call");
    cr_expect_null(nd_ufunc_call(g, -1, (nd_array *[]){x}));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_ufunc_call");
    cr_expect_eq(nd_ufunc_add_loop(NULL, "float x", "return x;"), ND_ERR_ARG);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_ufunc_add_loop");
    cr_expect_eq(nd_ufunc_nargs(NULL), -1);
    nd_ufunc_free(NULL); /* ignored */
    /* nothing else was lost: x is still usable */
    nd_array *ok = nd_ufunc_call(g, 3, (nd_array *[]){x, x, nd_scalar(1.0)});
    cr_assert(ok, "%s", nd_last_error());
    cr_expect_float_eq(nd_item(nd_view(ok, "0")), 1.0f / 2.5066283f, 1e-7);
    nd_free(ok);
    nd_free(x);
    nd_ufunc_free(g);
    nd_scope_end();
}

NDT_TEST(ufunc, no_compiler_is_a_clear_error_on_the_cpu) {
    if (!is_cpu()) cr_skip_test("the CUDA backend compiles with NVRTC");
    setenv("ND_CC", "/nonexistent/nd-test-cc", 1);
    nd_ufunc *g = nd_ufunc_define("nocc", "float x", "return x * 7.25f;");
    unsetenv("ND_CC");
    cr_expect_null(g);
    cr_expect(strstr(nd_last_error(), "ND_CC") != NULL, "%s", nd_last_error());
    NDT_EXPECT_ERR(ND_ERR_UNSUPPORTED, "nd_ufunc_define");
}

/* Every host allocation and compile of a definition and a call failed in
 * turn: each either works or fails with an error naming the function,
 * never crashes or leaks (the ASan build checks), and the user function
 * works once the fault is gone. */
NDT_TEST(ufunc, injected_faults) {
    if (!is_cpu()) cr_skip_test("the CPU sweep covers the frontend; CUDA's NVRTC is swept by test_faults");
    const char *body = "return x * 4.0f - 1.0f;";
    nd_array *x = nd_full(ND_FLOAT32, 1, (int64_t[]){64}, 2.0);
    cr_assert_eq(nd_sync(), ND_OK);
    for (int kind = 0; kind < 2; kind++) {
        nd_fault_kind fk = kind ? ND_FAULT_COMPILE : ND_FAULT_HOST_ALLOC;
        nd_fault_arm(fk, 0, 0);
        nd_ufunc *g = nd_ufunc_define(kind ? "faultc" : "faulta", "float x", body);
        nd_array *y = nd_ufunc_call(g, 1, (nd_array *[]){x});
        cr_assert(y && nd_sync() == ND_OK, "%s", nd_last_error());
        int64_t points = nd_fault_count(fk);
        nd_fault_disarm();
        nd_free(y);
        nd_ufunc_free(g);
        for (int64_t p = 1; p <= points; p++) {
            /* a new name each time: a definition seen before is not compiled again */
            char name[32];
            snprintf(name, sizeof name, "fault%d_%lld", kind, (long long)p);
            nd_fault_arm(fk, p, 0);
            g = nd_ufunc_define(name, "float x", body);
            y = g ? nd_ufunc_call(g, 1, (nd_array *[]){x}) : NULL;
            nd_status st = y ? nd_sync() : nd_last_status();
            nd_fault_disarm();
            if (st != ND_OK) {
                const char *m = nd_last_error();
                cr_expect(strstr(m, "nd_ufunc") || strstr(m, "nd_sync"), "point %lld: %s", (long long)p, m);
            }
            nd_clear_error();
            nd_free(y);
            nd_ufunc_free(g);
        }
    }
    nd_ufunc *g = nd_ufunc_define("faultok", "float x", body);
    nd_array *y = nd_ufunc_call(g, 1, (nd_array *[]){x}), *y5 = nd_view(y, "5");
    cr_expect_eq(nd_item(y5), 7.0, "%s", nd_last_error());
    nd_free(y5);
    nd_free(y);
    nd_free(x);
    nd_ufunc_free(g);
}
