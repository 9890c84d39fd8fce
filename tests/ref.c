/* Reference arrays, broadcasting, elementwise ops, reductions and matmul in
 * float64 (floats) or wrapping 64-bit integer arithmetic (ints). Slow and
 * obvious on purpose. */
#include "ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

ref_arr *ref_new(nd_dtype t, int ndim, const int64_t *shape) {
    ref_arr *a = calloc(1, sizeof *a);
    a->dt = t;
    a->ndim = ndim;
    a->size = 1;
    for (int d = 0; d < ndim; d++) {
        a->shape[d] = shape[d];
        a->size *= shape[d];
    }
    a->data = calloc((size_t)(a->size ? a->size : 1), ref_itemsize(t));
    return a;
}

void ref_free(ref_arr *a) {
    if (!a) return;
    free(a->data);
    free(a);
}

ref_arr *ref_astype(const ref_arr *a, nd_dtype t) {
    ref_arr *b = ref_new(t, a->ndim, a->shape);
    for (int64_t i = 0; i < a->size; i++) ref_cast_elem(b, i, a, i);
    return b;
}

ref_arr *ref_from_doubles(nd_dtype t, int ndim, const int64_t *shape, const double *v) {
    ref_arr *a = ref_new(t, ndim, shape);
    for (int64_t i = 0; i < a->size; i++) ref_setd(a, i, v[i]);
    return a;
}

static void contiguous_strides(int ndim, const int64_t *shape, int64_t *st) {
    int64_t s = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        st[d] = s;
        s *= shape[d];
    }
}

ref_arr *ref_strided(const ref_arr *a, int ndim, const int64_t *shape, const int64_t *strides,
                     int64_t offset) {
    ref_arr *b = ref_new(a->dt, ndim, shape);
    size_t is = ref_itemsize(a->dt);
    int64_t idx[ND_MAX_DIMS] = {0};
    for (int64_t i = 0; i < b->size; i++) {
        int64_t src = offset;
        for (int d = 0; d < ndim; d++) src += idx[d] * strides[d];
        memcpy(b->data + (size_t)i * is, a->data + (size_t)src * is, is);
        for (int d = ndim - 1; d >= 0; d--) {
            if (++idx[d] < shape[d]) break;
            idx[d] = 0;
        }
    }
    return b;
}

ref_arr *ref_transpose(const ref_arr *a, const int *perm) {
    int64_t st[ND_MAX_DIMS], nst[ND_MAX_DIMS], nsh[ND_MAX_DIMS];
    contiguous_strides(a->ndim, a->shape, st);
    for (int d = 0; d < a->ndim; d++) {
        int p = perm ? perm[d] : a->ndim - 1 - d;
        nsh[d] = a->shape[p];
        nst[d] = st[p];
    }
    return ref_strided(a, a->ndim, nsh, nst, 0);
}

ref_arr *ref_reshape(const ref_arr *a, int ndim, const int64_t *shape) {
    ref_arr *b = ref_new(a->dt, ndim, shape);
    memcpy(b->data, a->data, (size_t)a->size * ref_itemsize(a->dt));
    return b;
}

int ref_broadcast_shapes(int na, const int64_t *sa, int nb, const int64_t *sb, int *nout,
                         int64_t *out) {
    int n = na > nb ? na : nb;
    for (int d = 0; d < n; d++) {
        int64_t x = d - (n - na) >= 0 ? sa[d - (n - na)] : 1;
        int64_t y = d - (n - nb) >= 0 ? sb[d - (n - nb)] : 1;
        if (x != y && x != 1 && y != 1) return 0;
        out[d] = x == 1 ? y : x;
    }
    *nout = n;
    return 1;
}

int64_t ref_bcast_index(const ref_arr *a, int nout, const int64_t *out, int64_t i) {
    int64_t idx = 0, mul = 1;
    for (int d = nout - 1; d >= 0; d--) {
        int64_t c = i % out[d];
        i /= out[d];
        int ad = d - (nout - a->ndim);
        if (ad < 0) continue;
        if (a->shape[ad] != 1) idx += c * mul;
        mul *= a->shape[ad];
    }
    return idx;
}

ref_arr *ref_broadcast_to(const ref_arr *a, int ndim, const int64_t *shape) {
    ref_arr *b = ref_new(a->dt, ndim, shape);
    size_t is = ref_itemsize(a->dt);
    for (int64_t i = 0; i < b->size; i++)
        memcpy(b->data + (size_t)i * is, a->data + (size_t)ref_bcast_index(a, ndim, shape, i) * is,
               is);
    return b;
}

/* ------------------------------------------------------------ elementwise */

int ref_op_is_unary(ref_op op) { return op <= R_NOT; }
int ref_op_is_cmp(ref_op op) {
    return (op >= R_EQ && op <= R_GE) || (op >= R_ISNAN && op <= R_ISNEGINF) ||
           (op >= R_LOGICAL_AND && op <= R_LOGICAL_XOR);
}

const char *ref_op_name(ref_op op) {
    static const char *const n[R_NUM_OPS] = {
        "neg", "abs", "sqrt", "exp", "log", "sin", "cos", "tanh", "tan", "floor", "ceil", "square",
        "arcsin", "arccos", "arctan", "sinh", "cosh", "arcsinh", "arccosh", "arctanh", "exp2",
        "expm1", "log2", "log10", "log1p", "cbrt", "rint", "reciprocal", "trunc", "sign",
        "positive", "deg2rad", "rad2deg", "isnan", "isinf", "isfinite", "signbit", "isposinf", "isneginf", "invert",
        "logical_not", "add", "sub", "mul", "div", "pow", "maximum", "minimum", "eq", "ne",
        "lt", "le", "gt", "ge", "arctan2", "hypot", "copysign", "fmax", "fmin", "floor_divide",
        "remainder", "fmod", "logical_and", "logical_or", "logical_xor", "bitwise_and",
        "bitwise_or", "bitwise_xor", "heaviside"};
    return (unsigned)op < R_NUM_OPS ? n[op] : "?";
}

static double unary_f(ref_op op, double x) {
    switch (op) {
    case R_NEG: return -x;
    case R_ABS: return fabs(x);
    case R_SQRT: return sqrt(x);
    case R_EXP: return exp(x);
    case R_LOG: return log(x);
    case R_SIN: return sin(x);
    case R_COS: return cos(x);
    case R_TANH: return tanh(x);
    case R_TAN: return tan(x);
    case R_FLOOR: return floor(x);
    case R_CEIL: return ceil(x);
    case R_SQUARE: return x * x;
    case R_ARCSIN: return asin(x);
    case R_ARCCOS: return acos(x);
    case R_ARCTAN: return atan(x);
    case R_SINH: return sinh(x);
    case R_COSH: return cosh(x);
    case R_ARCSINH: return asinh(x);
    case R_ARCCOSH: return acosh(x);
    case R_ARCTANH: return atanh(x);
    case R_EXP2: return exp2(x);
    case R_EXPM1: return expm1(x);
    case R_LOG2: return log2(x);
    case R_LOG10: return log10(x);
    case R_LOG1P: return log1p(x);
    case R_CBRT: return cbrt(x);
    case R_RINT: return nearbyint(x); /* half to even in the default mode */
    case R_RECIPROCAL: return 1.0 / x;
    case R_TRUNC: return trunc(x);
    case R_SIGN: return x > 0 ? 1.0 : x < 0 ? -1.0 : x == 0 ? 0.0 : x;
    case R_POSITIVE: return x;
    case R_DEG2RAD: return x * (M_PI / 180.0);
    case R_RAD2DEG: return x * (180.0 / M_PI);
    case R_ISNAN: return isnan(x);
    case R_ISINF: return isinf(x);
    case R_ISFINITE: return isfinite(x);
    case R_SIGNBIT: return signbit(x) != 0;
    case R_ISPOSINF: return isinf(x) && x > 0;
    case R_ISNEGINF: return isinf(x) && x < 0;
    case R_NOT: return x == 0;
    default: return NAN;
    }
}

static uint64_t unary_u(ref_op op, uint64_t u, int is_signed) {
    switch (op) {
    case R_NEG: return 0 - u;
    case R_ABS: return is_signed && (int64_t)u < 0 ? 0 - u : u;
    case R_SQUARE: return u * u;
    case R_NOT: return u == 0;
    case R_ISNAN: case R_ISINF: case R_ISPOSINF: case R_ISNEGINF: return 0;
    case R_ISFINITE: return 1;
    case R_SIGNBIT: return is_signed && (int64_t)u < 0;
    case R_INVERT: return ~u;
    /* NumPy's integer 1/x truncates: only 1 and -1 are nonzero */
    case R_RECIPROCAL: return u == 1 || (is_signed && u == (uint64_t)-1) ? u : 0;
    case R_SIGN: return is_signed && (int64_t)u < 0 ? (uint64_t)-1 : u != 0;
    default: return u; /* floor/ceil/trunc/positive of an integer is itself */
    }
}

ref_arr *ref_unary(ref_op op, const ref_arr *a, nd_dtype ct, nd_dtype rt) {
    if (op == R_INVERT && ct == ND_BOOL) op = R_NOT; /* NumPy: ~ of bool is not */
    ref_arr *ac = ref_astype(a, ct);
    ref_arr *o = ref_new(rt, a->ndim, a->shape);
    for (int64_t i = 0; i < a->size; i++) {
        if (ref_is_float(ct)) {
            ref_setd(o, i, unary_f(op, ref_getd(ac, i)));
        } else {
            uint64_t r = unary_u(op, ref_getu(ac, i), ref_is_signed(ct));
            if (ref_is_float(rt)) ref_setd(o, i, ref_is_signed(ct) ? (double)(int64_t)r : (double)r);
            else ref_setu(o, i, r);
        }
    }
    ref_free(ac);
    return o;
}

static int cmp_result(ref_op op, int c /* -1, 0, 1 */, int unordered) {
    if (unordered) return op == R_NE;
    switch (op) {
    case R_EQ: return c == 0;
    case R_NE: return c != 0;
    case R_LT: return c < 0;
    case R_LE: return c <= 0;
    case R_GT: return c > 0;
    default: return c >= 0;
    }
}

/* NumPy's npy_divmod: floor division's quotient, the remainder with the
 * divisor's sign */
double ref_np_divmod(double a, double b, double *modulus) {
    double mod = fmod(a, b);
    if (b == 0) {
        *modulus = mod;
        return a / b;
    }
    double div = (a - mod) / b;
    if (mod != 0) {
        if ((b < 0) != (mod < 0)) {
            mod += b;
            div -= 1.0;
        }
    } else {
        mod = copysign(0.0, b);
    }
    double fl = div != 0 ? floor(div) : copysign(0.0, a / b);
    if (div != 0 && div - fl > 0.5) fl += 1.0;
    *modulus = mod;
    return fl;
}

static double binary_f(ref_op op, double x, double y) {
    double m;
    switch (op) {
    case R_ARCTAN2: return atan2(x, y);
    case R_HYPOT: return hypot(x, y);
    case R_COPYSIGN: return copysign(x, y);
    case R_FMAX: return isnan(y) ? x : isnan(x) ? y : x >= y ? x : y;
    case R_FMIN: return isnan(y) ? x : isnan(x) ? y : x <= y ? x : y;
    case R_FLOOR_DIVIDE: return ref_np_divmod(x, y, &m);
    case R_REMAINDER: ref_np_divmod(x, y, &m); return m;
    case R_FMOD: return fmod(x, y);
    case R_LOGICAL_AND: return x != 0 && y != 0;
    case R_LOGICAL_OR: return x != 0 || y != 0;
    case R_LOGICAL_XOR: return (x != 0) != (y != 0);
    case R_HEAVISIDE: return isnan(x) ? x : x < 0 ? 0.0 : x > 0 ? 1.0 : y;
    case R_ADD: return x + y;
    case R_SUB: return x - y;
    case R_MUL: return x * y;
    case R_DIV: return x / y;
    case R_POW: return pow(x, y);
    case R_MAX: return isnan(x) || isnan(y) ? NAN : (x > y ? x : y);
    case R_MIN: return isnan(x) || isnan(y) ? NAN : (x < y ? x : y);
    default: {
        int unord = isnan(x) || isnan(y);
        return cmp_result(op, x < y ? -1 : x > y ? 1 : 0, unord);
    }
    }
}

static uint64_t ipow(uint64_t b, uint64_t e, int is_signed) {
    if (is_signed && (int64_t)e < 0) /* NumPy refuses; the library gives 0 but +-1 */
        return b == 1 ? 1 : (int64_t)b == -1 ? ((e & 1) ? b : 1) : 0;
    uint64_t r = 1;
    while (e) {
        if (e & 1) r *= b;
        b *= b;
        e >>= 1;
    }
    return r;
}

static uint64_t binary_u(ref_op op, uint64_t u, uint64_t v, nd_dtype ct) {
    int s = ref_is_signed(ct);
    int c = s ? ((int64_t)u < (int64_t)v ? -1 : (int64_t)u > (int64_t)v)
              : (u < v ? -1 : u > v);
    if (ct == ND_BOOL) {
        if (op == R_ADD || op == R_MAX || op == R_FMAX || op == R_BITWISE_OR) return u | v;
        if (op == R_MUL || op == R_MIN || op == R_FMIN || op == R_BITWISE_AND) return u & v;
        if (op == R_BITWISE_XOR) return u ^ v;
    }
    int64_t x = (int64_t)u, y = (int64_t)v;
    switch (op) {
    case R_FMAX: return c >= 0 ? u : v;
    case R_FMIN: return c <= 0 ? u : v;
    case R_BITWISE_AND: return u & v;
    case R_BITWISE_OR: return u | v;
    case R_BITWISE_XOR: return u ^ v;
    case R_LOGICAL_AND: return u != 0 && v != 0;
    case R_LOGICAL_OR: return u != 0 || v != 0;
    case R_LOGICAL_XOR: return (u != 0) != (v != 0);
    /* NumPy: x // 0, x % 0 and fmod(x, 0) are 0, MIN // -1 wraps to MIN */
    case R_FLOOR_DIVIDE:
        if (!s) return v ? u / v : 0;
        if (y == 0) return 0;
        if (y == -1) return 0 - u;
        return (uint64_t)(x / y - ((x % y != 0) && ((x < 0) != (y < 0))));
    case R_REMAINDER:
        if (!s) return v ? u % v : 0;
        if (y == 0 || y == -1) return 0;
        return (uint64_t)((x % y != 0) && ((x % y < 0) != (y < 0)) ? x % y + y : x % y);
    case R_FMOD:
        if (!s) return v ? u % v : 0;
        return y == 0 || y == -1 ? 0 : (uint64_t)(x % y);
    case R_ADD: return u + v;
    case R_SUB: return u - v;
    case R_MUL: return u * v;
    case R_POW: return ipow(u, v, s);
    case R_MAX: return c >= 0 ? u : v;
    case R_MIN: return c <= 0 ? u : v;
    default: return (uint64_t)cmp_result(op, c, 0);
    }
}

ref_arr *ref_binary(ref_op op, const ref_arr *a, const ref_arr *b, nd_dtype ct, nd_dtype rt) {
    int n;
    int64_t sh[ND_MAX_DIMS];
    if (!ref_broadcast_shapes(a->ndim, a->shape, b->ndim, b->shape, &n, sh)) return NULL;
    ref_arr *ac = ref_astype(a, ct), *bc = ref_astype(b, ct);
    ref_arr *o = ref_new(rt, n, sh);
    for (int64_t i = 0; i < o->size; i++) {
        int64_t ia = ref_bcast_index(ac, n, sh, i), ib = ref_bcast_index(bc, n, sh, i);
        if (ref_is_float(ct) || op == R_DIV) {
            double x = ref_getd(ac, ia), y = ref_getd(bc, ib);
            ref_setd(o, i, binary_f(op, x, y));
        } else {
            ref_setu(o, i, binary_u(op, ref_getu(ac, ia), ref_getu(bc, ib), ct));
        }
    }
    ref_free(ac);
    ref_free(bc);
    return o;
}

ref_arr *ref_where(const ref_arr *c, const ref_arr *a, const ref_arr *b, nd_dtype rt) {
    int n1, n;
    int64_t s1[ND_MAX_DIMS], sh[ND_MAX_DIMS];
    if (!ref_broadcast_shapes(a->ndim, a->shape, b->ndim, b->shape, &n1, s1)) return NULL;
    if (!ref_broadcast_shapes(c->ndim, c->shape, n1, s1, &n, sh)) return NULL;
    ref_arr *o = ref_new(rt, n, sh);
    for (int64_t i = 0; i < o->size; i++) {
        int take_a = ref_getd(c, ref_bcast_index(c, n, sh, i)) != 0;
        const ref_arr *src = take_a ? a : b;
        ref_cast_elem(o, i, src, ref_bcast_index(src, n, sh, i));
    }
    return o;
}

/* ------------------------------------------------------------- reductions */

const char *ref_red_name(ref_red r) {
    static const char *const n[RR_NUM] = {"sum", "prod", "mean",   "min", "max", "argmin",
                                          "argmax", "std", "var", "any", "all"};
    return (unsigned)r < RR_NUM ? n[r] : "?";
}

nd_dtype ref_red_dtype(ref_red r, nd_dtype in) {
    switch (r) {
    case RR_SUM: case RR_PROD:
        if (in == ND_BOOL || ref_is_signed(in)) return ND_INT64;
        if (ref_is_unsigned(in)) return ND_UINT64;
        return in;
    case RR_MEAN: case RR_STD: case RR_VAR: return ref_is_float(in) ? in : ND_FLOAT64;
    case RR_ARGMIN: case RR_ARGMAX: return ND_INT64;
    case RR_ANY: case RR_ALL: return ND_BOOL;
    default: return in;
    }
}

/* One output element: the n input elements at base + k*step. */
static void reduce_one(ref_red r, const ref_arr *a, int64_t base, int64_t step, int64_t n,
                       ref_arr *o, int64_t oi, double *scale) {
    int fl = ref_is_float(a->dt), sg = ref_is_signed(a->dt);
    double s = 0, sabs = 0, p = 1;
    uint64_t us = 0, up = 1;
    int64_t best = -1;
    for (int64_t k = 0; k < n; k++) {
        int64_t i = base + k * step;
        double x = ref_getd(a, i);
        uint64_t u = ref_getu(a, i);
        s += x;
        sabs += fabs(x);
        p *= x;
        us += u;
        up *= u;
        if (r == RR_MIN || r == RR_MAX || r == RR_ARGMIN || r == RR_ARGMAX) {
            if (best < 0) {
                best = i;
                continue;
            }
            double bx = ref_getd(a, best);
            uint64_t bu = ref_getu(a, best);
            if (fl && isnan(bx)) continue; /* the first NaN wins */
            if (fl && isnan(x)) {
                best = i;
                continue;
            }
            int less = fl ? x < bx : sg ? (int64_t)u < (int64_t)bu : u < bu;
            int more = fl ? x > bx : sg ? (int64_t)u > (int64_t)bu : u > bu;
            if ((r == RR_MIN || r == RR_ARGMIN) ? less : more) best = i;
        }
    }
    double mean = n ? s / (double)n : NAN, var = 0, sq = 0;
    if (r == RR_VAR || r == RR_STD) {
        for (int64_t k = 0; k < n; k++) {
            double x = ref_getd(a, base + k * step);
            var += (x - mean) * (x - mean);
            sq += x * x;
        }
        var = n ? var / (double)n : NAN;
        sq = n ? sq / (double)n : NAN;
    }
    double sc = 0;
    switch (r) {
    case RR_SUM:
        if (fl) ref_setd(o, oi, s);
        else ref_setu(o, oi, us);
        sc = sabs;
        break;
    case RR_PROD:
        if (fl) ref_setd(o, oi, p);
        else ref_setu(o, oi, up);
        sc = fabs(p) * (double)(n + 1);
        break;
    case RR_MEAN:
        ref_setd(o, oi, mean);
        sc = n ? sabs / (double)n : 0;
        break;
    case RR_VAR:
        ref_setd(o, oi, var);
        sc = sq + var;
        break;
    case RR_STD:
        ref_setd(o, oi, sqrt(var));
        sc = sqrt(sq) + sqrt(var);
        break;
    case RR_MIN: case RR_MAX:
        if (best >= 0) ref_cast_elem(o, oi, a, best);
        sc = best >= 0 ? fabs(ref_getd(a, best)) : 0;
        break;
    case RR_ARGMIN: case RR_ARGMAX:
        ref_setu(o, oi, best >= 0 ? (uint64_t)((best - base) / (step ? step : 1)) : 0);
        break;
    case RR_ANY: case RR_ALL: {
        int any = 0, all = 1;
        for (int64_t k = 0; k < n; k++) {
            double x = ref_getd(a, base + k * step);
            int nz = x != 0; /* NaN is true */
            any |= nz;
            all &= nz;
        }
        ref_setu(o, oi, (uint64_t)(r == RR_ANY ? any : all));
        break;
    }
    default: break;
    }
    if (scale) scale[oi] = sc;
}

ref_arr *ref_reduce(ref_red r, const ref_arr *a, int axis, double **scale) {
    int64_t outer = 1, n, inner = 1, osh[ND_MAX_DIMS] = {0};
    int on = 0;
    if (axis == ND_ALL_AXES) {
        n = a->size;
    } else {
        if (axis < 0) axis += a->ndim;
        for (int d = 0; d < a->ndim; d++) {
            if (d < axis) outer *= a->shape[d];
            if (d > axis) inner *= a->shape[d];
            if (d != axis) osh[on++] = a->shape[d];
        }
        n = a->shape[axis];
    }
    ref_arr *o = ref_new(ref_red_dtype(r, a->dt), on, osh);
    double *sc = scale ? calloc((size_t)(o->size ? o->size : 1), sizeof *sc) : NULL;
    for (int64_t x = 0; x < outer; x++)
        for (int64_t y = 0; y < inner; y++)
            reduce_one(r, a, x * n * inner + y, inner, n, o, x * inner + y, sc);
    if (scale) *scale = sc;
    return o;
}

/* ----------------------------------------------------------------- matmul */

ref_arr *ref_matmul(const ref_arr *a0, const ref_arr *b0, nd_dtype rt, double **scale) {
    ref_arr *a = ref_astype(a0, rt), *b = ref_astype(b0, rt);
    int a1 = a->ndim == 1, b1 = b->ndim == 1;
    int64_t m = a1 ? 1 : a->shape[a->ndim - 2], k = a->shape[a->ndim - 1];
    int64_t n = b1 ? 1 : b->shape[b->ndim - 1], kb = b1 ? b->shape[0] : b->shape[b->ndim - 2];
    if (k != kb) {
        ref_free(a);
        ref_free(b);
        return NULL;
    }
    /* batch shapes broadcast */
    int na = a1 ? 0 : a->ndim - 2, nb = b1 ? 0 : b->ndim - 2, nbat;
    int64_t bsh[ND_MAX_DIMS], osh[ND_MAX_DIMS];
    ref_broadcast_shapes(na, a->shape, nb, b->shape, &nbat, bsh);
    ref_arr ab = {.dt = rt, .ndim = na}, bb = {.dt = rt, .ndim = nb};
    for (int d = 0; d < na; d++) ab.shape[d] = a->shape[d];
    for (int d = 0; d < nb; d++) bb.shape[d] = b->shape[d];
    int on = 0;
    int64_t nbatch = 1;
    for (int d = 0; d < nbat; d++) {
        osh[on++] = bsh[d];
        nbatch *= bsh[d];
    }
    if (!a1) osh[on++] = m;
    if (!b1) osh[on++] = n;
    ref_arr *o = ref_new(rt, on, osh);
    double *sc = scale ? calloc((size_t)(o->size ? o->size : 1), sizeof *sc) : NULL;
    int fl = ref_is_float(rt);
    for (int64_t t = 0; t < nbatch; t++) {
        int64_t ta = ref_bcast_index(&ab, nbat, bsh, t), tb = ref_bcast_index(&bb, nbat, bsh, t);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double s = 0, sa = 0;
                uint64_t us = 0;
                for (int64_t q = 0; q < k; q++) {
                    int64_t ia = ta * m * k + i * k + q, ib = tb * k * n + q * n + j;
                    double x = ref_getd(a, ia), y = ref_getd(b, ib);
                    s += x * y;
                    sa += fabs(x * y);
                    us += ref_getu(a, ia) * ref_getu(b, ib);
                }
                int64_t oi = (t * m + i) * n + j;
                if (fl) ref_setd(o, oi, s);
                else ref_setu(o, oi, us);
                if (sc) sc[oi] = sa;
            }
    }
    if (scale) *scale = sc;
    ref_free(a);
    ref_free(b);
    return o;
}

void ref_unravel(int64_t f, int nd, const int64_t *shape, int64_t *idx) {
    for (int d = nd - 1; d >= 0; d--) {
        idx[d] = shape[d] ? f % shape[d] : 0;
        f = shape[d] ? f / shape[d] : 0;
    }
}

int64_t ref_ravel(const int64_t *idx, int nd, const int64_t *shape) {
    int64_t f = 0;
    for (int d = 0; d < nd; d++) f = f * shape[d] + idx[d];
    return f;
}
