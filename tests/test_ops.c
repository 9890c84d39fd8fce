/* The cross-backend op test: every elementwise op of common/ops.h x every
 * dtype it takes x every backend available, against a reference written
 * in ops_ref.c, independently of the library (exact integer math in 64 bits, the
 * float ops in double or long double, NumPy 2 semantics).
 *
 * The test works on kernel IR, not on the public API, because the IR is
 * what every backend executes and some of it (integer DIV) is reachable
 * only through internal callers; one kernel per op holds that op once per
 * dtype (CAST: one kernel per source dtype, to all 15). Backends:
 *   cpu_interpreter  the CPU backend with ND_CPU_JIT=0
 *   cpu_jit          the CPU backend with every kernel compiled (ND_CPU_JIT=sync)
 *   cuda_emulated    the CUDA code generator's source for the same kernels,
 *                    compiled by NVRTC for sm_90 (no device needed: proves it
 *                    builds under NVRTC's rules) and run on the host as C++
 *                    against src/backends/cuda/tests/emulate_shim.h (needs a
 *                    CUDA build and g++; the host's libm stands in for
 *                    CUDA's transcendental functions)
 *   cuda             the real CUDA backend, when ND_BACKEND=cuda and a
 *                    device is present
 *
 * Inputs: every pair of a dtype's edge values (NaN, +-inf, +-0, subnormals,
 * the largest finite values, INT_MIN, -1, 0, values at the edges of exp's,
 * log's and floor's domains, ...) and then random values (random bits, so
 * every exponent, and small uniform values).
 *
 * Comparison: bits, for every op whose result is exactly defined (integer
 * ops, comparisons, casts, + - * / sqrt floor ceil maximum minimum of floats:
 * IEEE rounds those correctly, and float16/bfloat16 computed in float32 then
 * rounded are still correctly rounded, since 24 >= 2 * 11 + 2). Any NaN
 * matches any NaN: payload and sign of a NaN are not specified by IEEE and
 * differ between x86 and NVIDIA GPUs. Transcendental ops (exp, log, sin,
 * cos, tanh, float pow) are compared in units in the last place of the
 * result dtype (ulp_bound in ops_ref.c says how many and why); their results for
 * NaN, +-inf and +-0 inputs must still be exact.
 *
 * Complex dtypes: operands are pairs of part edges (0, -0, 1, -1.5, pi,
 * tiny and huge magnitudes, subnormals, +-inf, NaN in either part), then
 * random values. The reference is NumPy's complex loop evaluated in the
 * parts' own precision (+ - * / square reciprocal: NumPy's formulas,
 * Smith's division; pow's integer exponents by NumPy's repeated squaring)
 * or C99's cexpl/clogl/csqrtl .. casinl .. catanhl in long double (glibc:
 * Annex G's special values; log1p/expm1 by Taylor series near 0; pow
 * glibc's cpow in double, to a tolerance scaled by its condition number),
 * ops_ref.c. Results compare part by part:
 * NaN matches NaN, an infinity must be the same infinity, a finite part
 * must be within complex_tol ulps of the larger part's magnitude (a
 * normwise bound: CUDA may contract a*b - c*d into an FMA); exact ops
 * (+ -, negative, conj, comparisons, maximum, casts, real, imag) to the
 * bit, zeros' signs included. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "common.h"

#include <dlfcn.h>
#include <float.h>
#include <unistd.h>

#include "backends/backend.h"
#include "backends/cpu/cpu_jit.h"
#include "backends/kernel_ir.h"
#include "graph/buffer.h" /* ND_MEMORY_HOST */
#if defined(NDT_CUDA_BUILT)
#include <nvrtc.h>

#include "backends/cuda/cuda_internal.h"
#include "backends/cuda/tests/emulate_harness.h"
#endif

#include "ops_ref.h"

#define N 2048      /* points per kernel */
#define MAX_D 15    /* dtypes per kernel */

/* ------------------------------------------------------------ inputs */

static int float_edges(nd_dtype t, double *e) {
    int n = 0;
    const double common[] = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, 2.0, 3.0, -3.0, 7.0,
                             0.1, 1e-3, 10.0, 20.0, -20.0, 100.0, M_PI, -M_PI / 2, 1e6, 1e22,
                             INFINITY, -INFINITY, NAN, -NAN /* signbit */, 8388607.5, -8388607.5, 88.72283, 88.7229,
                             -87.33, -103.97, -104.0, 709.78, 709.79, -745.13, -746.0,
                             /* exp2's overflow and underflow edges */
                             128.0, -150.0, 1024.0, -1075.0};
    for (size_t k = 0; k < sizeof common / sizeof *common; k++) e[n++] = common[k];
    switch (t) {
    case ND_FLOAT16:
        e[n++] = 0x1p-24; e[n++] = -0x1p-24; e[n++] = 0x1.ff8p-15; e[n++] = 0x1p-14;
        e[n++] = 65504.0; e[n++] = -65504.0; e[n++] = 1.0 + 0x1p-10; e[n++] = 1.0 - 0x1p-11;
        e[n++] = 11.089; e[n++] = -17.33; e[n++] = 1024.5;
        break;
    case ND_BFLOAT16:
        e[n++] = 0x1p-133; e[n++] = -0x1p-133; e[n++] = 0x1p-126; e[n++] = 0x1.fep127;
        e[n++] = -0x1.fep127; e[n++] = 1.0 + 0x1p-7; e[n++] = 1.0 - 0x1p-8; e[n++] = 128.5;
        break;
    case ND_FLOAT32:
        e[n++] = 0x1p-149; e[n++] = -0x1p-149; e[n++] = 0x1.fffffcp-127; e[n++] = FLT_MIN;
        e[n++] = FLT_MAX; e[n++] = -FLT_MAX; e[n++] = 1.0 + FLT_EPSILON; e[n++] = 1.0 - FLT_EPSILON / 2;
        e[n++] = 0x1p23; e[n++] = 0x1p24 + 2;
        break;
    default: /* float64 */
        e[n++] = DBL_TRUE_MIN; e[n++] = -DBL_TRUE_MIN; e[n++] = 0x1.ffffffffffffep-1023;
        e[n++] = DBL_MIN; e[n++] = DBL_MAX; e[n++] = -DBL_MAX; e[n++] = 1.0 + DBL_EPSILON;
        e[n++] = 1.0 - DBL_EPSILON / 2; e[n++] = 0x1p52 + 0.5; e[n++] = 1e300; e[n++] = -1e-300;
        break;
    }
    return n;
}

static int int_edges(nd_dtype t, int64_t *e) {
    int n = 0, w = bits_of(t);
    int64_t mn = ref_is_signed(t) ? (w == 64 ? INT64_MIN : -(1ll << (w - 1))) : 0;
    int64_t mx = ref_is_signed(t) ? (w == 64 ? INT64_MAX : (1ll << (w - 1)) - 1)
                                  : (w == 64 ? -1 : (int64_t)((1ull << w) - 1));
    /* 31 .. 64: shift counts at the widths */
    const int64_t common[] = {0, 1, -1, 2, -2, 3, -3, 5, 7, -7, 8, 100, -100, 127, -128,
                              31, 32, 33, 63, 64};
    for (size_t k = 0; k < sizeof common / sizeof *common; k++) e[n++] = common[k];
    e[n++] = mn; e[n++] = mn + 1; e[n++] = mx; e[n++] = mx - 1; e[n++] = mx / 2; e[n++] = mn / 2;
    /* rounding traps for int -> float casts: through double, then float,
     * 2^62 + 2^38 + 1 lands on a float midpoint (so does 2^30 + 2^22 + 2^5
     * through float for bfloat16) */
    if (w == 64) e[n++] = (1ll << 62) + (1ll << 38) + 1;
    if (w >= 32) e[n++] = (1ll << 30) + (1ll << 22) + (1ll << 5);
    return n;
}

static void set_edge(ref_arr *a, int64_t i, nd_dtype t, int k, const double *fe, const int64_t *ie) {
    if (t == ND_BOOL) ref_setu(a, i, (uint64_t)(k & 1));
    else if (is_f(t)) ref_setd(a, i, fe[k]);
    else ref_setu(a, i, (uint64_t)ie[k]);
}

/* Part edges of complex operands: both parts of every pair of them. */
static int part_edges(nd_dtype t, double *e) {
    const int f = t == ND_COMPLEX64;
    const double v[] = {0.0, -0.0, 1.0, -1.5, M_PI, f ? 1e-30 : 1e-300, f ? 3e-45 : 5e-324,
                        f ? 1e30 : 1e300, f ? 3e38 : 1.7e308, 0.75, INFINITY, -INFINITY, NAN};
    for (size_t k = 0; k < sizeof v / sizeof *v; k++) e[k] = v[k];
    return (int)(sizeof v / sizeof *v);
}

static int is_cplx(nd_dtype t) { return t == ND_COMPLEX64 || t == ND_COMPLEX128; }

static void set_random(ndt_rng *r, ref_arr *a, int64_t i, nd_dtype t) {
    if (is_cplx(t)) {
        if (ndt_next(r) & 1) {
            cref_set(a, i, ndt_uniform(r, -10, 10), ndt_uniform(r, -10, 10));
        } else { /* random bits of each part: every exponent */
            size_t sz = ref_itemsize(t);
            uint64_t v[2] = {ndt_next(r), ndt_next(r)};
            memcpy(a->data + (size_t)i * sz, v, sz);
        }
        return;
    }
    uint64_t u = ndt_next(r);
    if (t == ND_BOOL) ref_setu(a, i, u & 1);
    else if (!is_f(t)) ref_setu(a, i, (u & 3) ? u >> 2 : (uint64_t)ndt_int(r, -20, 20));
    else if (u & 1) ref_setd(a, i, ndt_uniform(r, -10, 10));
    else {
        /* random bits of the dtype: every exponent, NaNs and infinities too */
        size_t sz = ref_itemsize(t);
        uint64_t v = ndt_next(r);
        memcpy(a->data + (size_t)i * sz, &v, sz);
    }
}

/* Operands of dtype t: every pair of edges (a, b), then random values. */
static void make_inputs(ndt_rng *r, nd_dtype t, int arity, ref_arr *in[3]) {
    if (is_cplx(t)) {
        /* unary: every (re, im) pair of part edges; binary: pairs of those
         * complex edges, picked at random (13^4 pairs do not fit in N) */
        double pe[16];
        int np_ = part_edges(t, pe), ne = np_ * np_;
        int64_t shape[1] = {N};
        for (int q = 0; q < arity; q++) in[q] = ref_new(t, 1, shape);
        for (int64_t i = 0; i < N; i++) {
            for (int q = 0; q < arity; q++) {
                int k = arity == 1 ? (int)i : (int)(ndt_next(r) % (uint64_t)ne);
                if (arity == 1 && i >= ne) set_random(r, in[q], i, t);
                else if (i < N * 3 / 4) cref_set(in[q], i, pe[k / np_], pe[k % np_]);
                else set_random(r, in[q], i, t);
            }
        }
        return;
    }
    double fe[64];
    int64_t ie[64];
    int ne = t == ND_BOOL ? 2 : is_f(t) ? float_edges(t, fe) : int_edges(t, ie);
    int64_t shape[1] = {N};
    for (int q = 0; q < arity; q++) in[q] = ref_new(t, 1, shape);
    for (int64_t i = 0; i < N; i++) {
        if (arity == 1 && i < ne) set_edge(in[0], i, t, (int)i, fe, ie);
        else if (arity == 2 && i < (int64_t)ne * ne) {
            set_edge(in[0], i, t, (int)(i / ne), fe, ie);
            set_edge(in[1], i, t, (int)(i % ne), fe, ie);
        } else
            for (int q = 0; q < arity; q++) set_random(r, in[q], i, t);
    }
}

/* ------------------------------------------------------------ kernels */

/* One kernel: op over each of its dtypes (CAST: from one dtype to each). */
typedef struct {
    nd_op op;
    nd_kernel k;
    nd_ir_access loads[3 * MAX_D];
    nd_ir_inst insts[4 * MAX_D];
    nd_ir_store stores[MAX_D];
    int n_parts;
    nd_dtype in_dt[MAX_D];     /* operand dtype of part p */
    ref_arr *in[MAX_D][3];     /* operands of part p (WHERE: cond, a, b) */
    ref_arr *want[MAX_D];      /* reference result of part p */
    int slot_in[MAX_D][3], slot_out[MAX_D];
} op_case;

static void access_1d(nd_ir_access *a, int slot, nd_dtype t) {
    memset(a, 0, sizeof *a);
    a->slot = slot;
    a->dtype = (uint8_t)t;
    a->strides[0] = 1;
}

static void build_case(op_case *c, nd_op op, nd_dtype cast_from, ndt_rng *r) {
    memset(c, 0, sizeof *c);
    c->op = op;
    nd_kernel *k = &c->k;
    int arity = nd_op_arity(op), slot = 0;
    for (int d = 0; d < ND_NUM_DTYPES; d++) {
        nd_dtype t = (nd_dtype)d, src = op == ND_OP_CAST ? cast_from : t;
        if (!op_takes(op, src)) continue;
        int p = c->n_parts++;
        c->in_dt[p] = src;
        nd_dtype opnd[3] = {src, src, src};
        if (op == ND_OP_WHERE) opnd[0] = ND_BOOL;
        /* (re, im) -> complex: operands of the part dtype */
        if (op == ND_OP_MAKE_COMPLEX) opnd[0] = opnd[1] = src == ND_COMPLEX64 ? ND_FLOAT32 : ND_FLOAT64;
        if (op == ND_OP_WHERE) {
            int64_t shape[1] = {N};
            make_inputs(r, src, 2, &c->in[p][1]);
            c->in[p][0] = ref_new(ND_BOOL, 1, shape);
            for (int64_t i = 0; i < N; i++) ref_setu(c->in[p][0], i, ndt_next(r) & 1);
        } else if (op == ND_OP_CAST) {
            if (p == 0) make_inputs(r, src, 1, c->in[p]);
            else { /* a copy of the same bits */
                int64_t shape[1] = {N};
                c->in[p][0] = ref_new(src, 1, shape);
                memcpy(c->in[p][0]->data, c->in[0][0]->data, N * ref_itemsize(src));
            }
        } else {
            make_inputs(r, opnd[0], arity, c->in[p]);
        }
        int first = k->n_insts;
        for (int q = 0; q < arity; q++) {
            c->slot_in[p][q] = slot;
            access_1d(&c->loads[k->n_loads], slot++, opnd[q]);
            c->insts[k->n_insts++] = (nd_ir_inst){ND_IR_LOAD, (uint8_t)opnd[q], 0, k->n_loads++, 0, 0, 0, 0};
        }
        nd_dtype rt = op == ND_OP_CAST ? t : op_result(op, src);
        c->insts[k->n_insts++] = (nd_ir_inst){(uint8_t)op, (uint8_t)rt, 0, first,
                                              arity > 1 ? first + 1 : 0, arity > 2 ? first + 2 : 0, 0, 0};
        c->slot_out[p] = slot;
        access_1d(&c->stores[k->n_stores].at, slot++, rt);
        c->stores[k->n_stores++].value = k->n_insts - 1;
        int64_t shape[1] = {N};
        c->want[p] = ref_new(rt, 1, shape);
        for (int64_t i = 0; i < N; i++) ref_elem(op, src, c->in[p], i, c->want[p]);
    }
    k->ndim = 1;
    k->shape[0] = N;
    k->n_slots = slot;
    k->loads = c->loads;
    k->insts = c->insts;
    k->stores = c->stores;
    /* a structural hash the backends' kernel caches can key on: one per
     * case, never 0 (0 keeps a kernel out of the CPU JIT) */
    k->hash = 0x6f70735f74657374ull ^ ((uint64_t)op << 8) ^ ((uint64_t)cast_from << 16) ^
              ((uint64_t)N << 24);
    snprintf(k->name, sizeof k->name, "%s_%s", nd_op_label(op),
             op == ND_OP_CAST ? ref_dtype_name(cast_from) : "all");
    for (char *s = k->name; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9'))) *s = '_';
}

static int g_n_cases;
static op_case *g_cases;

static void build_all(void) {
    NDT_RNG(r);
    g_cases = calloc(ND_NUM_ELEMENTWISE_OPS + ND_NUM_DTYPES, sizeof *g_cases);
    cr_assert(g_cases);
    g_n_cases = 0;
    for (int op = 0; op < ND_NUM_ELEMENTWISE_OPS; op++) {
        if (op == ND_OP_CAST)
            for (int d = 0; d < ND_NUM_DTYPES; d++) build_case(&g_cases[g_n_cases++], ND_OP_CAST, (nd_dtype)d, &r);
        else build_case(&g_cases[g_n_cases++], (nd_op)op, ND_BOOL, &r);
    }
}

static void free_all(void) {
    for (int c = 0; c < g_n_cases; c++)
        for (int p = 0; p < g_cases[c].n_parts; p++) {
            for (int q = 0; q < 3; q++) ref_free(g_cases[c].in[p][q]);
            ref_free(g_cases[c].want[p]);
        }
    free(g_cases);
    g_cases = NULL;
}

/* ------------------------------------------------------------ checking */

/* Monotone integer image of a float's bits (-0 and +0 both 0). */
static int64_t ordered(uint64_t bits, nd_dtype t) {
    int w = bits_of(t);
    uint64_t sign = 1ull << (w - 1), mag = bits & (sign - 1);
    return (bits & sign) ? -(int64_t)mag : (int64_t)mag;
}

/* The spacing of dtype t's values at magnitude v > 0 (normal range). */
static double ulp_at(double v, nd_dtype t) {
    const int p = t == ND_FLOAT16 ? 11 : t == ND_BFLOAT16 ? 8 : t == ND_FLOAT32 ? 24 : 53;
    int e;
    frexp(v, &e); /* v in [2^(e-1), 2^e) */
    return ldexp(1.0, e - p);
}

static int is_special(const ref_arr *a, int64_t i) {
    if (is_cplx(a->dt)) {
        double re, im;
        cref_get(a, i, &re, &im);
        return !isfinite(re) || !isfinite(im);
    }
    double v = ref_getd(a, i);
    return isnan(v) || isinf(v) || v == 0;
}

static void describe(char *out, size_t cap, const ref_arr *a, int64_t i) {
    if (is_cplx(a->dt)) {
        double re, im;
        cref_get(a, i, &re, &im);
        snprintf(out, cap, "(%.9g%+.9gj)", re, im);
    } else if (is_f(a->dt)) snprintf(out, cap, "%.17g", ref_getd(a, i));
    else if (ref_is_unsigned(a->dt)) snprintf(out, cap, "%llu", (unsigned long long)uval(a, i));
    else snprintf(out, cap, "%lld", (long long)sval(a, i));
}

/* Tolerance of a complex result, in ulps of the part dtype at the larger
 * part's magnitude: 0 for the exact ops; a few for NumPy's formulas (an
 * FMA changes the rounding of a*b - c*d, Smith's division rounds a ratio
 * and a reciprocal first); the C99 functions: the double-precision
 * libm/CUDA functions they call (2 ulp each, CUDA), combined. */
static int complex_tol(nd_op op) {
    switch (op) {
    case ND_OP_MUL: case ND_OP_SQUARE: return 2;
    case ND_OP_DIV: case ND_OP_RECIPROCAL: return 4;
    case ND_OP_EXP: case ND_OP_LOG: case ND_OP_SQRT: return 4;
    /* products of two 2-ulp functions (CUDA's sin, cosh, ...) and Kahan's
     * tanh formula */
    case ND_OP_SIN: case ND_OP_COS: case ND_OP_TAN: case ND_OP_SINH: case ND_OP_COSH:
    case ND_OP_TANH: return 8;
    /* Kahan's formulas: two square roots, a product, then atan2 and asinh
     * or log1p (2 to 4 ulp each on CUDA) */
    case ND_OP_ARCSIN: case ND_OP_ARCCOS: case ND_OP_ARCTAN: case ND_OP_ARCSINH:
    case ND_OP_ARCCOSH: case ND_OP_ARCTANH: return 16;
    /* log or exp (4) and a rounded scaling; log1p's and expm1's formulas */
    case ND_OP_LOG10: case ND_OP_LOG2: case ND_OP_EXP2: case ND_OP_LOG1P: case ND_OP_EXPM1: return 8;
    case ND_OP_SIGN: return 4;
    /* times the condition number |w| (|log|z|| + pi), check_complex */
    case ND_OP_POW: return 8;
    default: return 0;
    }
}

/* NumPy's a*b - c*d and a*b + c*d with each product kept exact (long
 * double holds the exponent range; with a 64-bit significand the products
 * of float32 parts are exact and those of float64 parts close): what an
 * FMA computes where a product overflows or cancels. NumPy's own AVX-512
 * complex multiply does this (its scalar path does not). */
static int fused_mul(nd_op op, const op_case *c, int p, int64_t i, double *zr, double *zi) {
    if (op != ND_OP_MUL && op != ND_OP_SQUARE) return 0;
    double xr, xi, yr, yi;
    cref_get(c->in[p][0], i, &xr, &xi);
    if (op == ND_OP_MUL) cref_get(c->in[p][1], i, &yr, &yi);
    else yr = xr, yi = xi;
    long double r = (long double)xr * yr - (long double)xi * yi;
    long double m = (long double)xr * yi + (long double)xi * yr;
    if (c->want[p]->dt == ND_COMPLEX64) *zr = (float)r, *zi = (float)m;
    else *zr = (double)r, *zi = (double)m;
    return 1;
}

static int check_complex(const char *backend, const op_case *c, int p, const void *got_buf) {
    const ref_arr *want = c->want[p];
    nd_dtype rt = want->dt;
    nd_dtype pt = rt == ND_COMPLEX64 ? ND_FLOAT32 : ND_FLOAT64;
    int tol = complex_tol(c->op), bad = 0;
    ref_arr got = *want;
    got.data = (unsigned char *)got_buf;
    for (int64_t i = 0; i < N; i++) {
        double g[2], w[2];
        cref_get(&got, i, &g[0], &g[1]);
        cref_get(want, i, &w[0], &w[1]);
        double fz[2];
        int alt = 0;
    again:;
        double scale = fmax(isfinite(w[0]) ? fabs(w[0]) : 0, isfinite(w[1]) ? fabs(w[1]) : 0);
        double ktol = tol;
        if (c->op == ND_OP_POW) {
            /* z ** w = exp(w log z): an error of an ulp in log z is |w log z|
             * ulps of the result (and repeated squaring's n roundings) */
            double x[2], y[2];
            cref_get(c->in[p][0], i, &x[0], &x[1]);
            cref_get(c->in[p][1], i, &y[0], &y[1]);
            double lz = fabs(log(hypot(x[0], x[1]))) + M_PI, cond = hypot(y[0], y[1]) * lz;
            /* past 2^20 the last bits of the phase w log z decide even
             * the signs (NumPy's own result is noise there): not compared */
            if (cond > 0x1p20) continue;
            ktol = tol * fmax(1.0, cond);
        }
        int ok = 1;
        for (int k = 0; k < 2; k++) {
            if (isnan(g[k]) && isnan(w[k])) continue;
            if (tol == 0) {
                ok &= memcmp(&g[k], &w[k], sizeof g[k]) == 0;
                continue;
            }
            /* a fused multiply-add keeps an overflowing product exact, so
             * inf - inf in the reference can come out as an infinity
             * (NumPy's own AVX-512 loops give -inf-infj for
             * (1.7e308-infj)*(1.7e308-1.5j), its scalar path nan-infj) */
            const int fused = c->op == ND_OP_MUL || c->op == ND_OP_SQUARE || c->op == ND_OP_DIV ||
                              c->op == ND_OP_RECIPROCAL || c->op == ND_OP_POW;
            /* Annex G leaves the sign of an infinite part beside a NaN one
             * unspecified (cexp(inf + inf j) = +-inf + nan j) */
            if (isinf(w[k]) && isinf(g[k]) && isnan(w[1 - k]) && isnan(g[1 - k])) continue;
            if (isnan(w[k]) && isinf(g[k]) && fused) continue;
            /* beside an infinite part the normwise error of a finite one is
             * 0 whatever it is: an FMA leaves the rounding error of the other
             * product where NumPy's scalar loop cancels to 0 */
            if (fused && (isinf(w[1 - k]) && isinf(g[1 - k])) && isfinite(w[k]) && isfinite(g[k])) continue;
            if (isinf(w[k]) || isinf(g[k]) || isnan(g[k]) || isnan(w[k])) {
                ok &= g[k] == w[k];
                continue;
            }
            /* below the smallest normal, an ulp is the subnormal spacing */
            double s = fmax(scale, pt == ND_FLOAT32 ? 0x1p-126 : 0x1p-1022);
            ok &= fabs(g[k] - w[k]) <= ktol * ulp_at(s, pt);
        }
        if (ok) continue;
        if (!alt && fused_mul(c->op, c, p, i, &fz[0], &fz[1])) {
            alt = 1; /* the same product with FMAs: allowed too */
            w[0] = fz[0], w[1] = fz[1];
            goto again;
        }
        if (alt) cref_get(want, i, &w[0], &w[1]);
        if (++bad <= 4) {
            double x[2] = {0, 0}, y[2] = {0, 0};
            if (c->op != ND_OP_CAST || is_cplx(c->in_dt[p])) cref_get(c->in[p][0], i, &x[0], &x[1]);
            else x[0] = ref_getd(c->in[p][0], i);
            if (nd_op_arity(c->op) == 2) cref_get(c->in[p][1], i, &y[0], &y[1]);
            cr_log_error("%s: %s %s -> %s: (%.17g%+.17gj), (%.17g%+.17gj) gave (%.17g%+.17gj), want "
                         "(%.17g%+.17gj) (tolerance %d ulp of the larger part)",
                         backend, nd_op_label(c->op), ref_dtype_name(c->in_dt[p]), ref_dtype_name(rt),
                         x[0], x[1], y[0], y[1], g[0], g[1], w[0], w[1], tol);
        }
    }
    if (bad > 4)
        cr_log_error("%s: %s %s -> %s: %d of %d elements differ", backend, nd_op_label(c->op),
                     ref_dtype_name(c->in_dt[p]), ref_dtype_name(rt), bad, N);
    return bad;
}

/* Compares part p of case c with the reference; returns the mismatches. */
static int check_part(const char *backend, const op_case *c, int p, const void *got_buf) {
    const ref_arr *want = c->want[p];
    nd_dtype rt = want->dt, t = c->in_dt[p];
    if (is_cplx(rt)) return check_complex(backend, c, p, got_buf);
    int tol = ulp_bound(c->op, rt), bad = 0;
    size_t sz = ref_itemsize(rt);
    for (int64_t i = 0; i < N; i++) {
        uint64_t g = ref_decode_u(got_buf, rt, i), w = ref_getu(want, i);
        if (is_f(rt)) {
            uint64_t gb = 0, wb = 0;
            memcpy(&gb, (const char *)got_buf + i * sz, sz);
            memcpy(&wb, want->data + i * sz, sz);
            double gv = ref_decode(got_buf, rt, i), wv = ref_getd(want, i);
            if (isnan(gv) && isnan(wv)) continue;
            if (gb == wb) continue;
            const double floor_mag = ulp_floor(c->op);
            int exact = tol == 0 || isnan(gv) || isnan(wv) ||
                        (c->op != ND_OP_POW && c->op != ND_OP_ARCTAN2 && floor_mag == 0 &&
                         is_special(c->in[p][0], i));
            int64_t dist = ordered(gb, rt) - ordered(wb, rt);
            if (!exact && dist <= tol && dist >= -tol) continue;
            if (!exact && floor_mag > 0 && isfinite(gv) && isfinite(wv) &&
                fabs(gv - wv) <= tol * ulp_at(fmax(fabs(wv), floor_mag), rt))
                continue;
        } else if (g == w) {
            continue;
        }
        if (++bad <= 4) {
            char x[64] = "", y[64] = "", gs[64], ws[64];
            const ref_arr *a = c->in[p][0], *b = c->in[p][1];
            describe(x, sizeof x, a, i);
            if (b && c->op != ND_OP_WHERE) describe(y, sizeof y, b, i);
            ref_arr gw = *want;
            gw.data = (unsigned char *)got_buf;
            describe(gs, sizeof gs, &gw, i);
            describe(ws, sizeof ws, want, i);
            cr_log_error("%s: %s %s -> %s: %s(%s%s%s) gave %s, want %s (%s)", backend,
                         nd_op_label(c->op), ref_dtype_name(t), ref_dtype_name(rt),
                         nd_op_label(c->op), x, *y ? ", " : "", y, gs, ws,
                         tol ? "ulp-compared" : "bits");
        }
    }
    if (bad > 4)
        cr_log_error("%s: %s %s -> %s: %d of %d elements differ", backend, nd_op_label(c->op),
                     ref_dtype_name(t), ref_dtype_name(rt), bad, N);
    return bad;
}

/* Every case on one runner: run(case, host slot buffers) fills the outputs. */
typedef int (*runner_fn)(void *ctx, op_case *c, void **host);

static int check_all(const char *backend, runner_fn run, void *ctx) {
    int bad_parts = 0, parts = 0;
    for (int ci = 0; ci < g_n_cases; ci++) {
        op_case *c = &g_cases[ci];
        void *host[3 * MAX_D + MAX_D] = {0};
        for (int p = 0; p < c->n_parts; p++) {
            for (int q = 0; q < nd_op_arity(c->op); q++) host[c->slot_in[p][q]] = c->in[p][q]->data;
            host[c->slot_out[p]] = malloc(N * ref_itemsize(c->want[p]->dt));
            cr_assert(host[c->slot_out[p]]);
            memset(host[c->slot_out[p]], 0xAB, N * ref_itemsize(c->want[p]->dt));
        }
        int ok = run(ctx, c, host);
        for (int p = 0; p < c->n_parts; p++) {
            parts++;
            if (!ok) bad_parts++;
            else bad_parts += check_part(backend, c, p, host[c->slot_out[p]]) != 0;
            free(host[c->slot_out[p]]);
        }
        if (!ok) cr_log_error("%s: kernel '%s' did not run: %s", backend, c->k.name, nd_last_error());
    }
    cr_log_info("%s: %d (op, dtype) pairs checked, %d differ", backend, parts, bad_parts);
    return bad_parts;
}

/* ------------------------------------------------------------ backends */

static int run_backend(void *ctx, op_case *c, void **host) {
    nd_backend *be = (nd_backend *)ctx;
    int dev = be->memory != ND_MEMORY_HOST, ok = 1;
    void *slots[3 * MAX_D + MAX_D] = {0};
    size_t bytes[3 * MAX_D + MAX_D] = {0};
    for (int p = 0; p < c->n_parts; p++) {
        for (int q = 0; q < nd_op_arity(c->op); q++) bytes[c->slot_in[p][q]] = N * ref_itemsize(c->in[p][q]->dt);
        bytes[c->slot_out[p]] = N * ref_itemsize(c->want[p]->dt);
    }
    for (int s = 0; s < c->k.n_slots; s++) {
        if (!dev) {
            slots[s] = host[s];
            continue;
        }
        if (be->alloc(be, be->memory, bytes[s], &slots[s]) != ND_OK ||
            be->copy(be, slots[s], be->memory, host[s], ND_MEMORY_HOST, bytes[s]) != ND_OK)
            ok = 0;
    }
    nd_scalar_bits none = {0};
    if (ok) ok = be->run_kernel(be, &c->k, slots, &none) == ND_OK;
    if (ok) ok = be->synchronize(be) == ND_OK;
    for (int s = 0; dev && s < c->k.n_slots; s++) {
        if (ok && slots[s]) ok = be->copy(be, host[s], ND_MEMORY_HOST, slots[s], be->memory, bytes[s]) == ND_OK;
        if (slots[s]) be->release(be, be->memory, slots[s], bytes[s]);
    }
    if (ok && dev) ok = be->synchronize(be) == ND_OK;
    return ok;
}

static char g_cache[512];

static int g_cache_fresh; /* g_cache is this test's own, removed after it */

static nd_backend *cpu_backend(const char *jit) {
    setenv("ND_CPU_JIT", jit, 1);
    setenv("ND_CPU_JIT_MIN", "0", 1);
    /* counts no compiles: shared by scripts/test.sh's stages (ndt_jit_cache_dir) */
    g_cache_fresh = ndt_jit_cache_dir(g_cache, sizeof g_cache, "ops-suite");
    nd_backend_config cfg = {0};
    cfg.num_threads = 2;
    cfg.cache_dir = g_cache;
    nd_backend *be = NULL;
    cr_assert_eq(nd_cpu_backend_create(&cfg, &be), ND_OK, "cpu backend: %s", nd_last_error());
    return be;
}

static void remove_cache(void) {
    if (g_cache_fresh) ndt_remove_dir(g_cache);
}

Test(ops, cpu_interpreter, .timeout = 300) {
    build_all();
    nd_backend *be = cpu_backend("0");
    int bad = check_all("cpu interpreter", run_backend, be);
    be->destroy(be);
    remove_cache();
    free_all();
    cr_expect_eq(bad, 0, "cpu interpreter: %d (op, dtype) pairs differ from the reference", bad);
}

Test(ops, cpu_jit, .timeout = 300) {
    build_all();
    nd_backend *be = cpu_backend("sync");
    nd_cpu_jit_counts before, after;
    nd_cpu_jit_get_counts(&before);
    int bad = check_all("cpu jit", run_backend, be);
    nd_cpu_jit_get_counts(&after);
    be->destroy(be);
    remove_cache();
    int cases = g_n_cases;
    free_all();
    cr_expect_eq(bad, 0, "cpu jit: %d (op, dtype) pairs differ from the reference", bad);
    if (after.failed > before.failed || after.launches - before.launches < cases)
        cr_skip_test("no working C compiler for the JIT (%lld of %d kernels ran compiled)",
                     (long long)(after.launches - before.launches), cases);
}

Test(ops, cuda, .timeout = 600) {
    const char *b = getenv("ND_BACKEND");
    if (!b || strcmp(b, "cuda") != 0) cr_skip_test("ND_BACKEND is not cuda");
    nd_backend_config cfg = {0};
    cfg.cuda_graphs = 0;
    nd_backend *be = NULL;
    if (nd_cuda_backend_create(&cfg, &be) != ND_OK) cr_skip_test("no CUDA device: %s", nd_last_error());
    build_all();
    int bad = check_all("cuda", run_backend, be);
    be->destroy(be);
    free_all();
    cr_expect_eq(bad, 0, "cuda: %d (op, dtype) pairs differ from the reference", bad);
}

/* ------------------------------------------------- emulated CUDA (host) */

#if defined(NDT_CUDA_BUILT)
typedef int (*emu_launch_fn)(int c, const char *name, unsigned grid, int sync,
                             const unsigned long long *w);

typedef struct {
    emu_launch_fn launch;
    nd_cuda_kinfo *info;
    int vec; /* run the 16-byte vector variant where there is one */
} emu_ctx;

static int run_emulated(void *ctx, op_case *c, void **host) {
    emu_ctx *e = (emu_ctx *)ctx;
    int ci = (int)(c - g_cases);
    unsigned long long w[ND_CUDA_MAX_WORDS] = {0};
    nd_cuda_kinfo own; /* a shape-generic kernel's extent goes into its word */
    const nd_cuda_kinfo *info = nd_cuda_launch_info(&e->info[ci], &c->k, &own, (uint64_t *)w);
    for (int s = 0; s < c->k.n_slots; s++) w[s] = (unsigned long long)(uintptr_t)host[s];
    nd_cuda_fill_round_keys(info, (uint64_t *)w);
    if (e->vec && info->vec) return e->launch(ci, info->name_vec, emu_grid_for(info->n / info->vec), 0, w);
    return e->launch(ci, info->name, emu_grid_for(info->items), info->march > 0, w);
}

/* NVRTC as nd calls it (through its loader, cuda_loader.h; the runtime and
 * cuBLAS are never loaded here), with the include nd gives it (cuRAND's
 * Philox). */
static int nvrtc_compiles(const char *src) { return emu_nvrtc_compiles(src, "ops.cu", nd_cuda_include_option()); }

Test(ops, cuda_emulated, .timeout = 600) {
    if (system("g++ --version >/dev/null 2>&1") != 0) cr_skip_test("no g++ to run generated CUDA on the host");
    /* The shim comes from the source tree this binary was built in: a
     * binary staged to another machine (scripts/gpu/stage.sh) has none. */
    if (!emu_shim()) cr_skip_test("%s is not here (a binary built elsewhere)", ND_EMU_SHIM);
    build_all();
    nd_cuda_kinfo *info = calloc((size_t)g_n_cases, sizeof *info);
    nd_strbuf cpp = {0};
    /* NVRTC compiles each kernel alone, as the backend does (a few times
     * faster than one program of them all); the host build puts every
     * kernel in one translation unit, each in its own namespace (its
     * prelude and element functions included), so one g++ serves all; the
     * preludes' one include (cuRAND's Philox) goes first, at global scope,
     * so that it declares its functions for every namespace */
    nd_strbuf_printf(&cpp, "#include <curand_philox4x32_x.h>\n");
    int nvrtc_failed = 0;
    for (int ci = 0; ci < g_n_cases; ci++) {
        char *src = NULL;
        cr_assert_eq(nd_cuda_kernel_info(&g_cases[ci].k, &info[ci]), ND_OK, "%s", nd_last_error());
        cr_assert_eq(nd_cuda_codegen(&g_cases[ci].k, &info[ci], &src), ND_OK, "%s", nd_last_error());
        if (!nvrtc_compiles(src) && nvrtc_failed++ < 5) cr_log_error("NVRTC failed on case %d (%s)", ci, info[ci].name);
        const char *open = "#undef ND_COMMON_ELEMENT_FNS_H\nnamespace ndk_case%d {\n";
        nd_strbuf_printf(&cpp, open, ci);
        nd_strbuf_printf(&cpp, "%s\n}\n", src);
        free(src);
    }
    nd_strbuf_printf(&cpp, "extern \"C\" int emu_launch(int c, const char *name, unsigned grid, int sync, "
                           "const unsigned long long *w) {\n");
    for (int ci = 0; ci < g_n_cases; ci++) {
        const nd_cuda_kinfo *in = &info[ci];
        nd_strbuf_printf(&cpp, "  if (c == %d) { ndk_case%d::ndk_args A; memcpy(&A, w, sizeof A);\n", ci, ci);
        nd_strbuf_printf(&cpp, "    if (!strcmp(name, \"%s\")) { emu_grid(grid, sync, [&] { ndk_case%d::%s(A); }); return 1; }\n",
                         in->name, ci, in->name);
        if (in->vec)
            nd_strbuf_printf(&cpp, "    if (!strcmp(name, \"%s\")) { emu_grid(grid, sync, [&] { ndk_case%d::%s(A); }); return 1; }\n",
                             in->name_vec, ci, in->name_vec);
        nd_strbuf_printf(&cpp, "  }\n");
    }
    nd_strbuf_printf(&cpp, "  return 0;\n}\n");
    cr_assert(!cpp.failed);
    cr_expect_eq(nvrtc_failed, 0, "the generated CUDA of %d cases does not compile with NVRTC (sm_90)", nvrtc_failed);

    const char *tmp = getenv("TMPDIR");
    char dir[512], cmd[600];
    snprintf(dir, sizeof dir, "%s/nd-ops-emu-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    cr_assert(mkdtemp(dir));
    void *h = emu_build(cpp.buf, dir, "ops", nd_cuda_include_option());
    cr_assert(h, "the host build of the generated CUDA failed (its source in %s)", dir);
    emu_ctx e = {(emu_launch_fn)(uintptr_t)dlsym(h, "emu_launch"), info, 0};
    cr_assert(e.launch);
    int bad = check_all("cuda emulated", run_emulated, &e);
    e.vec = 1;
    bad += check_all("cuda emulated (vector variant)", run_emulated, &e);
    dlclose(h);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) cr_log_warn("could not remove %s", dir);
    nd_strbuf_free(&cpp);
    free(info);
    free_all();
    cr_expect_eq(bad, 0, "cuda emulated: %d (op, dtype) pairs differ from the reference", bad);
}

/* y = a[mask] * 2 + 1 as the scheduler builds its kernel (load, parameter,
 * multiply, parameter, add, store; float32, unit strides) at 20 lengths
 * that a mask's count could give: one cache key and one source for all of
 * them (the kernel cache would compile it once), compiled once by NVRTC
 * and g++, then run on the host at each length, scalar and vector
 * variants, against float64, with guard elements past the end. A length
 * of the other size class, a 2-d space and a random draw keep their own
 * keys. */
static void generic_kernel(nd_kernel *k, nd_ir_access *ld, nd_ir_inst *in, nd_ir_store *st, uint8_t *pd,
                           int64_t n) {
    memset(k, 0, sizeof *k);
    access_1d(ld, 0, ND_FLOAT32);
    memset(st, 0, sizeof *st);
    access_1d(&st->at, 1, ND_FLOAT32);
    st->value = 4;
    pd[0] = pd[1] = ND_FLOAT32;
    in[0] = (nd_ir_inst){ND_IR_LOAD, ND_FLOAT32, 0, 0, 0, 0, 0, 0};
    in[1] = (nd_ir_inst){ND_IR_PARAM, ND_FLOAT32, 0, 0, 0, 0, 0, 0};
    in[2] = (nd_ir_inst){ND_OP_MUL, ND_FLOAT32, 0, 0, 1, 0, 0, 0};
    in[3] = (nd_ir_inst){ND_IR_PARAM, ND_FLOAT32, 0, 1, 0, 0, 0, 0};
    in[4] = (nd_ir_inst){ND_OP_ADD, ND_FLOAT32, 0, 2, 3, 0, 0, 0};
    k->ndim = 1;
    k->shape[0] = n;
    k->n_slots = 2;
    k->n_params = 2;
    k->param_dtypes = pd;
    k->n_loads = 1;
    k->loads = ld;
    k->n_insts = 5;
    k->insts = in;
    k->n_stores = 1;
    k->stores = st;
    snprintf(k->name, sizeof k->name, "mul_add");
    k->hash = nd_kernel_hash(k);
}

Test(ops, cuda_emulated_lengths_share_one_kernel, .timeout = 300) {
    if (system("g++ --version >/dev/null 2>&1") != 0) cr_skip_test("no g++ to run generated CUDA on the host");
    if (!emu_shim()) cr_skip_test("%s is not here (a binary built elsewhere)", ND_EMU_SHIM);
    unsetenv("ND_CUDA_GENERIC");
    static const int64_t lens[20] = {0, 1, 2, 3, 7, 15, 16, 17, 31, 100, 255, 256, 257, 1000, 1023, 2048, 4099,
                                     12345, 65536, 70001};
    nd_kernel k;
    nd_ir_access ld;
    nd_ir_inst in[5];
    nd_ir_store st;
    uint8_t pd[2];
    generic_kernel(&k, &ld, in, &st, pd, lens[0]);
    nd_cuda_kinfo info;
    cr_assert_eq(nd_cuda_kernel_info(&k, &info), ND_OK, "%s", nd_last_error());
    cr_assert(info.generic && info.vec == 4 && !info.wide, "generic %d vec %d wide %d", info.generic, info.vec, info.wide);
    uint64_t key = nd_cuda_kernel_key(&k);
    char *src = NULL;
    cr_assert_eq(nd_cuda_codegen(&k, &info, &src), ND_OK, "%s", nd_last_error());
    int distinct_sources = 1;
    for (int i = 1; i < 20; i++) {
        generic_kernel(&k, &ld, in, &st, pd, lens[i]);
        nd_cuda_kinfo other;
        char *s2 = NULL;
        cr_assert_eq(nd_cuda_kernel_info(&k, &other), ND_OK, "%s", nd_last_error());
        cr_assert_eq(nd_cuda_codegen(&k, &other, &s2), ND_OK, "%s", nd_last_error());
        cr_expect_eq(nd_cuda_kernel_key(&k), key, "length %lld has another cache key", (long long)lens[i]);
        cr_expect_str_eq(other.name, info.name, "length %lld names its kernel otherwise", (long long)lens[i]);
        distinct_sources += strcmp(s2, src) != 0;
        free(s2);
    }
    cr_expect_eq(distinct_sources, 1, "20 lengths gave %d sources: each would compile", distinct_sources);
    /* another size class (64-bit indices), and kernels that keep literal extents */
    generic_kernel(&k, &ld, in, &st, pd, (int64_t)1 << 31);
    cr_expect_eq(nd_cuda_shape_class(&k), 1);
    cr_expect_neq(nd_cuda_kernel_key(&k), key, "2^31 points share the 32-bit kernel's key");
    generic_kernel(&k, &ld, in, &st, pd, 600);
    k.ndim = 2;
    k.shape[0] = 20;
    k.shape[1] = 30;
    ld.strides[0] = st.at.strides[0] = 30;
    ld.strides[1] = st.at.strides[1] = 1;
    cr_expect_eq(nd_cuda_shape_class(&k), -1, "a 2-d space is generic");
    generic_kernel(&k, &ld, in, &st, pd, 600);
    in[0] = (nd_ir_inst){ND_IR_INDEX, ND_INT64, 0, 0, 0, 0, 0, 0};
    in[2] = (nd_ir_inst){ND_IR_RAND_UNIFORM, ND_FLOAT32, 0, 0, 0, 1, 0, 0};
    cr_expect_eq(nd_cuda_shape_class(&k), -1, "a kernel with random draws is generic");
    setenv("ND_CUDA_GENERIC", "0", 1);
    generic_kernel(&k, &ld, in, &st, pd, 600);
    cr_expect_eq(nd_cuda_shape_class(&k), -1, "ND_CUDA_GENERIC=0 is ignored");
    cr_expect_eq(nd_cuda_kernel_key(&k), k.hash);
    unsetenv("ND_CUDA_GENERIC");

    /* compile once, run at every length */
    cr_expect(nvrtc_compiles(src), "the generic kernel does not compile with NVRTC (sm_90)");
    nd_strbuf cpp = {0};
    nd_strbuf_printf(&cpp, "%s\n", src);
    nd_strbuf_printf(&cpp, "extern \"C\" int emu_launch(const char *name, unsigned grid, const unsigned long long *w) {\n"
                           "  ndk_args A; memcpy(&A, w, sizeof A);\n"
                           "  if (!strcmp(name, \"%s\")) { emu_grid(grid, 0, [&] { %s(A); }); return 1; }\n"
                           "  if (!strcmp(name, \"%s\")) { emu_grid(grid, 0, [&] { %s(A); }); return 1; }\n"
                           "  return 0;\n}\n", info.name, info.name, info.name_vec, info.name_vec);
    cr_assert(!cpp.failed);
    const char *tmp = getenv("TMPDIR");
    char dir[512], cmd[600];
    snprintf(dir, sizeof dir, "%s/nd-ops-len-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    cr_assert(mkdtemp(dir));
    void *h = emu_build(cpp.buf, dir, "len", nd_cuda_include_option());
    cr_assert(h, "the host build of the generic kernel failed (its source in %s)", dir);
    int (*launch)(const char *, unsigned, const unsigned long long *) =
        (int (*)(const char *, unsigned, const unsigned long long *))(uintptr_t)dlsym(h, "emu_launch");
    cr_assert(launch);
    NDT_RNG(r);
    const float two = 2.0f, one = 1.0f;
    int bad = 0;
    for (int i = 0; i < 20; i++) {
        int64_t n = lens[i];
        generic_kernel(&k, &ld, in, &st, pd, n);
        /* aligned for the vector variant; the output's guard poisoned */
        size_t bytes = ((size_t)(n + 16) * 4 + 63) & ~(size_t)63; /* a multiple of the alignment */
        float *a = aligned_alloc(64, bytes), *y = aligned_alloc(64, bytes);
        cr_assert(a && y);
        for (int vec = 0; vec < 2; vec++) {
            for (int64_t j = 0; j < n + 16; j++) a[j] = (float)ndt_uniform(&r, -4, 4);
            memset(y, 0xAB, (size_t)(n + 16) * 4);
            unsigned long long w[ND_CUDA_MAX_WORDS] = {0};
            w[0] = (unsigned long long)(uintptr_t)a;
            w[1] = (unsigned long long)(uintptr_t)y;
            uint32_t b2, b1;
            memcpy(&b2, &two, 4);
            memcpy(&b1, &one, 4);
            w[2] = b2;
            w[3] = b1;
            nd_cuda_kinfo own;
            const nd_cuda_kinfo *li = nd_cuda_launch_info(&info, &k, &own, (uint64_t *)w);
            cr_assert_eq(w[li->extent_word], (unsigned long long)n);
            if (vec) cr_assert(launch(li->name_vec, emu_grid_for(li->n / li->vec), w));
            else cr_assert(launch(li->name, emu_grid_for(li->items), w));
            for (int64_t j = 0; j < n && bad < 10; j++) {
                double want = (double)a[j] * 2.0 + 1.0;
                if (fabs((double)y[j] - want) > 1e-6 * fabs(want) + 1e-30) {
                    cr_log_error("length %lld%s: y[%lld] = %g, want %g", (long long)n, vec ? " (vector)" : "",
                                 (long long)j, (double)y[j], want);
                    bad++;
                }
            }
            uint32_t guard;
            for (int64_t j = n; j < n + 16; j++) {
                memcpy(&guard, &y[j], 4);
                if (guard != 0xABABABABu && bad++ < 10)
                    cr_log_error("length %lld%s: wrote y[%lld] past the end", (long long)n, vec ? " (vector)" : "",
                                 (long long)j);
            }
        }
        free(a);
        free(y);
    }
    dlclose(h);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) cr_log_warn("could not remove %s", dir);
    nd_strbuf_free(&cpp);
    free(src);
    cr_expect_eq(bad, 0, "the generic kernel computed %d wrong or stray elements", bad);
}
#else
Test(ops, cuda_emulated) { cr_skip_test("built without the CUDA toolkit"); }
Test(ops, cuda_emulated_lengths_share_one_kernel) { cr_skip_test("built without the CUDA toolkit"); }
#endif
