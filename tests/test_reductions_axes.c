/* Reductions over several axes (the _axes forms), keepdims, axis=(), ddof,
 * the NaN-ignoring reductions, count_nonzero, ptp and average, against a
 * float64 reference written here: for each output element the reduced
 * values are gathered in row-major order of the reduced axes and the
 * statistic is computed from them in double (integer sums and products in
 * wrapping uint64, integer extremes in integer order). Every dtype, axis
 * sets with negative and repeated-free permutations, views and transposes
 * as inputs, NaN/inf, empty and 0-d inputs, and the error messages. */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>

typedef enum {
    T_SUM, T_PROD, T_MEAN, T_MIN, T_MAX, T_STD, T_VAR, T_ANY, T_ALL, T_NANSUM, T_NANPROD,
    T_NANMEAN, T_NANMIN, T_NANMAX, T_NANSTD, T_NANVAR, T_COUNT_NONZERO, T_PTP,
    T_ARGMIN, T_ARGMAX, T_NANARGMIN, T_NANARGMAX, /* one axis only */
    T_NUM
} tk;

static const char *const tk_names[T_NUM] = {
    "sum", "prod", "mean", "min", "max", "std", "var", "any", "all", "nansum", "nanprod",
    "nanmean", "nanmin", "nanmax", "nanstd", "nanvar", "count_nonzero", "ptp",
    "argmin", "argmax", "nanargmin", "nanargmax"};

static int is_arg(tk k) { return k >= T_ARGMIN; }
static int is_nan_kind(tk k) { return (k >= T_NANSUM && k <= T_NANVAR) || k >= T_NANARGMIN; }
/* kinds without an identity: an empty extent is an error */
static int no_identity(tk k) {
    return k == T_MIN || k == T_MAX || k == T_NANMIN || k == T_NANMAX || k == T_PTP || is_arg(k);
}

/* NumPy's result dtype, written independently of the library. */
static nd_dtype result_dtype(tk k, nd_dtype t) {
    int fl = ref_is_float(t);
    switch (k) {
    case T_SUM: case T_PROD: case T_NANSUM: case T_NANPROD:
        if (fl) return t;
        return ref_is_unsigned(t) ? ND_UINT64 : ND_INT64;
    case T_MEAN: case T_STD: case T_VAR: case T_NANMEAN: case T_NANSTD: case T_NANVAR:
        return fl ? t : ND_FLOAT64;
    case T_ANY: case T_ALL: return ND_BOOL;
    case T_COUNT_NONZERO: case T_ARGMIN: case T_ARGMAX: case T_NANARGMIN: case T_NANARGMAX:
        return ND_INT64;
    default: return t;
    }
}

/* -------------------------------------------------------------- reference */

typedef struct {
    int n;
    double *v;    /* values as double */
    uint64_t *u;  /* integer bits (sign-extended) */
} slice;

/* b better than a for min (mn) or max, in t's order */
static int int_less(nd_dtype t, uint64_t a, uint64_t b) {
    return ref_is_unsigned(t) ? a < b : (int64_t)a < (int64_t)b;
}

static void var_of(const slice *s, int skip_nan, double ddof, double *var) {
    double sum = 0, n = 0;
    for (int i = 0; i < s->n; i++)
        if (!(skip_nan && isnan(s->v[i]))) sum += s->v[i], n++;
    double mu = sum / n, ss = 0;
    for (int i = 0; i < s->n; i++)
        if (!(skip_nan && isnan(s->v[i]))) ss += (s->v[i] - mu) * (s->v[i] - mu);
    double div = n - ddof > 0 ? n - ddof : 0;
    *var = ss / div;
}

/* Reduces one slice into element oi of o; *scale gets a bound on the
 * rounding error's size (sum of |terms|). */
static void ref_one(tk k, nd_dtype t, const slice *s, double ddof, ref_arr *o, int64_t oi,
                    double *scale) {
    int fl = ref_is_float(t);
    double acc = 0, sc = 0;
    uint64_t ua = 0;
    int64_t idx = -1;
    switch (k) {
    case T_SUM: case T_NANSUM:
    case T_PROD: case T_NANPROD: {
        int prod = k == T_PROD || k == T_NANPROD, skip = k == T_NANSUM || k == T_NANPROD;
        acc = prod ? 1 : 0;
        ua = prod ? 1 : 0;
        for (int i = 0; i < s->n; i++) {
            if (skip && isnan(s->v[i])) continue;
            acc = prod ? acc * s->v[i] : acc + s->v[i];
            ua = prod ? ua * s->u[i] : ua + s->u[i];
            sc += fabs(s->v[i]);
        }
        if (prod) sc = fabs(acc);
        if (fl) ref_setd(o, oi, acc);
        else ref_setu(o, oi, ua);
        break;
    }
    case T_MEAN: case T_NANMEAN: {
        double n = 0;
        for (int i = 0; i < s->n; i++) {
            if (k == T_NANMEAN && isnan(s->v[i])) continue;
            acc += s->v[i];
            sc += fabs(s->v[i]);
            n++;
        }
        ref_setd(o, oi, acc / n);
        sc = n > 0 ? sc / n : 0;
        break;
    }
    case T_STD: case T_VAR: case T_NANSTD: case T_NANVAR: {
        double v;
        var_of(s, k == T_NANSTD || k == T_NANVAR, ddof, &v);
        if (k == T_STD || k == T_NANSTD) v = sqrt(v);
        ref_setd(o, oi, v);
        sc = fabs(v);
        break;
    }
    case T_ANY: case T_ALL: {
        int any = 0, all = 1;
        for (int i = 0; i < s->n; i++) {
            int nz = fl ? s->v[i] != 0 : s->u[i] != 0; /* NaN != 0 */
            any |= nz;
            all &= nz;
        }
        ref_setu(o, oi, k == T_ANY ? any : all);
        break;
    }
    case T_COUNT_NONZERO: {
        uint64_t c = 0;
        for (int i = 0; i < s->n; i++) c += fl ? s->v[i] != 0 : s->u[i] != 0;
        ref_setu(o, oi, c);
        break;
    }
    case T_MIN: case T_MAX: case T_NANMIN: case T_NANMAX: case T_PTP: {
        /* float: NaN propagates (nan*: skipped, all-NaN gives NaN) */
        int skip = k == T_NANMIN || k == T_NANMAX;
        double lo = INFINITY, hi = -INFINITY;
        uint64_t ulo = s->u[0], uhi = s->u[0];
        int nan = 0, seen = 0;
        for (int i = 0; i < s->n; i++) {
            if (fl) {
                if (isnan(s->v[i])) {
                    nan = 1;
                    continue;
                }
                seen = 1;
                lo = s->v[i] < lo ? s->v[i] : lo;
                hi = s->v[i] > hi ? s->v[i] : hi;
            } else {
                if (int_less(t, s->u[i], ulo)) ulo = s->u[i];
                if (int_less(t, uhi, s->u[i])) uhi = s->u[i];
            }
        }
        int want_min = k == T_MIN || k == T_NANMIN;
        if (k == T_PTP) {
            if (fl) ref_setd(o, oi, nan ? NAN : hi - lo);
            else ref_setu(o, oi, uhi - ulo); /* wraps in t as NumPy */
        } else if (fl) {
            ref_setd(o, oi, ((nan && !skip) || !seen) ? NAN : want_min ? lo : hi);
        } else {
            ref_setu(o, oi, want_min ? ulo : uhi);
        }
        break;
    }
    case T_ARGMIN: case T_ARGMAX: case T_NANARGMIN: case T_NANARGMAX: {
        int mn = k == T_ARGMIN || k == T_NANARGMIN, nanarg = k >= T_NANARGMIN;
        int all_nan = 1;
        for (int i = 0; i < s->n; i++) {
            double x = s->v[i];
            if (fl && isnan(x)) {
                if (!nanarg) { idx = i; break; } /* the first NaN wins */
                x = mn ? INFINITY : -INFINITY;   /* NumPy's nanargmin rule */
            } else {
                all_nan = 0;
            }
            if (idx < 0) { idx = i; continue; }
            double b = fl && isnan(s->v[idx]) ? (mn ? INFINITY : -INFINITY) : s->v[idx];
            int better = fl ? (mn ? x < b : x > b)
                            : (mn ? int_less(t, s->u[i], s->u[idx]) : int_less(t, s->u[idx], s->u[i]));
            if (better) idx = i;
        }
        if (nanarg && fl && all_nan) idx = -1;
        ref_setu(o, oi, (uint64_t)idx);
        break;
    }
    case T_NUM: break;
    }
    if (scale) scale[oi] = sc;
}

/* The reference of kind k over mask of a. */
static ref_arr *red_ref(tk k, const ref_arr *a, uint32_t mask, int keepdims, double ddof,
                        double **scale) {
    int on = 0, nr = 0, red[ND_MAX_DIMS], kept[ND_MAX_DIMS];
    int64_t osh[ND_MAX_DIMS], st[ND_MAX_DIMS];
    for (int d = a->ndim - 1, s = 1; d >= 0; s *= (int)a->shape[d], d--) st[d] = s;
    for (int d = 0; d < a->ndim; d++) {
        if (mask >> d & 1u) red[nr++] = d;
        else kept[on] = d, osh[on++] = a->shape[d];
    }
    ref_arr *o;
    if (keepdims) {
        int64_t ksh[ND_MAX_DIMS];
        for (int d = 0; d < a->ndim; d++) ksh[d] = mask >> d & 1u ? 1 : a->shape[d];
        o = ref_new(result_dtype(k, a->dt), a->ndim, ksh);
    } else {
        o = ref_new(result_dtype(k, a->dt), on, osh);
    }
    int64_t n = 1;
    for (int i = 0; i < nr; i++) n *= a->shape[red[i]];
    slice s = {(int)n, calloc((size_t)n + 1, sizeof(double)), calloc((size_t)n + 1, 8)};
    double *sc = calloc((size_t)o->size + 1, sizeof *sc);
    for (int64_t oi = 0; oi < o->size; oi++) {
        int64_t base = 0, rem = oi;
        for (int i = on - 1; i >= 0; i--) {
            base += (rem % osh[i]) * st[kept[i]];
            rem /= osh[i];
        }
        for (int64_t q = 0; q < n; q++) {
            int64_t off = base, r = q;
            for (int i = nr - 1; i >= 0; i--) {
                off += (r % a->shape[red[i]]) * st[red[i]];
                r /= a->shape[red[i]];
            }
            s.v[q] = ref_getd(a, off);
            s.u[q] = ref_getu(a, off);
        }
        ref_one(k, a->dt, &s, ddof, o, oi, sc);
    }
    free(s.v);
    free(s.u);
    if (scale) *scale = sc;
    else free(sc);
    return o;
}

/* ---------------------------------------------------------------- library */

typedef nd_array *(*axes_fn)(nd_array *, int, const int *, bool);
typedef nd_array *(*one_fn)(nd_array *, int);

static axes_fn axes_fn_of(tk k) {
    switch (k) {
    case T_SUM: return nd_sum_axes;
    case T_PROD: return nd_prod_axes;
    case T_MEAN: return nd_mean_axes;
    case T_MIN: return nd_min_axes;
    case T_MAX: return nd_max_axes;
    case T_ANY: return nd_any_axes;
    case T_ALL: return nd_all_axes;
    case T_NANSUM: return nd_nansum_axes;
    case T_NANPROD: return nd_nanprod_axes;
    case T_NANMEAN: return nd_nanmean_axes;
    case T_NANMIN: return nd_nanmin_axes;
    case T_NANMAX: return nd_nanmax_axes;
    case T_COUNT_NONZERO: return nd_count_nonzero_axes;
    case T_PTP: return nd_ptp_axes;
    default: return NULL;
    }
}

static one_fn one_fn_of(tk k) {
    switch (k) {
    case T_SUM: return nd_sum;
    case T_PROD: return nd_prod;
    case T_MEAN: return nd_mean;
    case T_MIN: return nd_min;
    case T_MAX: return nd_max;
    case T_STD: return nd_std;
    case T_VAR: return nd_var;
    case T_ANY: return nd_any;
    case T_ALL: return nd_all;
    case T_NANSUM: return nd_nansum;
    case T_NANPROD: return nd_nanprod;
    case T_NANMEAN: return nd_nanmean;
    case T_NANMIN: return nd_nanmin;
    case T_NANMAX: return nd_nanmax;
    case T_NANSTD: return nd_nanstd;
    case T_NANVAR: return nd_nanvar;
    case T_COUNT_NONZERO: return nd_count_nonzero;
    case T_PTP: return nd_ptp;
    case T_ARGMIN: return nd_argmin;
    case T_ARGMAX: return nd_argmax;
    case T_NANARGMIN: return nd_nanargmin;
    case T_NANARGMAX: return nd_nanargmax;
    case T_NUM: break;
    }
    return NULL;
}

/* The _axes form (for arg kinds the _keepdims form with axes[0] or
 * ND_ALL_AXES). */
static nd_array *call_axes(tk k, nd_array *x, int naxes, const int *axes, int kd, double ddof) {
    switch (k) {
    case T_STD: return nd_std_axes(x, naxes, axes, ddof, kd);
    case T_VAR: return nd_var_axes(x, naxes, axes, ddof, kd);
    case T_NANSTD: return nd_nanstd_axes(x, naxes, axes, ddof, kd);
    case T_NANVAR: return nd_nanvar_axes(x, naxes, axes, ddof, kd);
    case T_ARGMIN: case T_ARGMAX: case T_NANARGMIN: case T_NANARGMAX: {
        int ax = naxes == ND_ALL_AXES ? ND_ALL_AXES : axes[0];
        if (k == T_ARGMIN) return nd_argmin_keepdims(x, ax, kd);
        if (k == T_ARGMAX) return nd_argmax_keepdims(x, ax, kd);
        if (k == T_NANARGMIN) return nd_nanargmin_keepdims(x, ax, kd);
        return nd_nanargmax_keepdims(x, ax, kd);
    }
    default: return axes_fn_of(k)(x, naxes, axes, kd);
    }
}

static uint32_t mask_of(int ndim, int naxes, const int *axes) {
    if (naxes == ND_ALL_AXES) return ndim ? (1u << ndim) - 1u : 0u;
    uint32_t m = 0;
    for (int i = 0; i < naxes; i++) m |= 1u << (axes[i] < 0 ? axes[i] + ndim : axes[i]);
    return m;
}

static double rtol_of(tk k, nd_dtype rt) {
    double r = ndt_rtol(rt);
    /* float16/bfloat16 var/std: the mean is rounded to the dtype first */
    if ((k == T_STD || k == T_VAR || k == T_NANSTD || k == T_NANVAR) && ref_is_float(rt) &&
        ref_itemsize(rt) == 2)
        r *= 4;
    return r;
}

static void check_axes(tk k, const ref_arr *ra, nd_array *x, int naxes, const int *axes, int kd,
                       double ddof, const char *how) {
    char ax[64] = "ALL";
    if (naxes != ND_ALL_AXES) {
        int p = snprintf(ax, sizeof ax, "(");
        for (int i = 0; i < naxes; i++) p += snprintf(ax + p, sizeof ax - (size_t)p, "%d,", axes[i]);
        snprintf(ax + p, sizeof ax - (size_t)p, ")");
    }
    nd_array *y = call_axes(k, x, naxes, axes, kd, ddof);
    double *scale = NULL;
    ref_arr *want = red_ref(k, ra, mask_of(ra->ndim, naxes, axes), kd, ddof, &scale);
    double rt = rtol_of(k, want->dt);
    ndt_check(y, want, rt, rt, scale, "%s(%s %dd %s, axes=%s, keepdims=%d, ddof=%g)",
              tk_names[k], ref_dtype_name(ra->dt), ra->ndim, how, ax, kd, ddof);
    nd_free(y);
    /* the one-axis form agrees with the _axes form */
    if (!kd && ddof == 0 && (naxes == 1 || naxes == ND_ALL_AXES)) {
        nd_array *z = one_fn_of(k)(x, naxes == 1 ? axes[0] : ND_ALL_AXES);
        ndt_check(z, want, rt, rt, scale, "%s(%s %dd %s, axis=%s) one-axis form", tk_names[k],
                  ref_dtype_name(ra->dt), ra->ndim, how, ax);
        nd_free(z);
    }
    ref_free(want);
    free(scale);
}

/* Inputs per kind: values the statistic is well conditioned on. */
static ref_arr *input_for(ndt_rng *r, tk k, nd_dtype t, int ndim, const int64_t *shape) {
    int fl = ref_is_float(t);
    ref_arr *a;
    if (k == T_PROD || k == T_NANPROD)
        a = fl ? ndt_rand(r, t, ndim, shape, 0.7, 1.4) : ndt_rand(r, t, ndim, shape, -3, 3);
    else if (k == T_MEAN || k == T_STD || k == T_VAR || k == T_NANMEAN || k == T_NANSTD ||
             k == T_NANVAR)
        a = fl ? ndt_rand(r, t, ndim, shape, -1, 3) : ndt_rand_small(r, t, ndim, shape);
    else if (k == T_ANY || k == T_ALL || k == T_COUNT_NONZERO) {
        a = fl ? ndt_rand(r, t, ndim, shape, -1, 1) : ndt_rand_bits(r, t, ndim, shape);
        for (int64_t i = 0; i < a->size; i += 3) ref_setd(a, i, 0);
    } else if (k == T_SUM || k == T_NANSUM)
        a = fl ? ndt_rand(r, t, ndim, shape, -1, 1) : ndt_rand_bits(r, t, ndim, shape);
    else { /* extremes: whole integer range, float ties */
        a = fl ? ndt_rand(r, t, ndim, shape, -50, 50) : ndt_rand_bits(r, t, ndim, shape);
        if (a->size > 4) ref_cast_elem(a, a->size - 1, a, 1);
    }
    /* the nan kinds see NaN in float inputs, one slice of (3,4,5) all NaN
     * along axis 2 */
    if (is_nan_kind(k) && fl) {
        for (int64_t i = 2; i < a->size; i += 7) ref_setd(a, i, NAN);
        if (ndim == 3 && shape[2] == 5)
            for (int j = 0; j < 5; j++) ref_setd(a, 5 + j, NAN);
    }
    return a;
}

static const int A0[] = {0}, A1[] = {-1}, A02[] = {0, 2}, A20[] = {2, 0}, A31[] = {-3, -1},
                 A012[] = {2, 0, 1}, AM2[] = {-2};

typedef struct {
    int n;
    const int *ax;
} axset;

static const axset sets3[] = {{0, NULL}, {1, A0}, {1, A1}, {1, AM2}, {2, A02}, {2, A20},
                              {2, A31}, {3, A012}, {ND_ALL_AXES, NULL}};
static const axset sets_arg[] = {{1, A0}, {1, A1}, {1, AM2}, {ND_ALL_AXES, NULL}};

/* few != 0: a short list of sets (a pair out of order, every axis and
 * none), so that every dtype is covered without compiling every shape on
 * CUDA (each shape is its own kernel there). */
static void sweep(tk k, const ref_arr *ra, nd_array *x, const char *how, int few) {
    static const axset few3[] = {{2, A20}, {ND_ALL_AXES, NULL}, {0, NULL}};
    static const axset few_arg[] = {{1, A1}, {ND_ALL_AXES, NULL}};
    const axset *sets = is_arg(k) ? (few ? few_arg : sets_arg) : (few ? few3 : sets3);
    int ns = is_arg(k) ? (few ? 2 : 4) : few ? 3 : (int)(sizeof sets3 / sizeof sets3[0]);
    for (int s = 0; s < ns; s++)
        for (int kd = 0; kd < 2; kd++) check_axes(k, ra, x, sets[s].n, sets[s].ax, kd, 0, how);
}

static void check_kind(tk k) {
    NDT_RNG(r);
    /* every dtype on the short list of axis sets; every set on float32,
     * int32 and bool */
    for (int i = 0; i < NDT_NUM_DTYPES; i++) {
        nd_dtype t = ndt_all_dtypes[i];
        if (k == T_PTP && t == ND_BOOL) continue;
        ref_arr *ra = input_for(&r, k, t, ND_SHAPE(3, 4, 5));
        nd_array *x = ndt_upload(ra);
        sweep(k, ra, x, "contiguous", !(t == ND_FLOAT32 || t == ND_INT32 || t == ND_BOOL));
        nd_free(x);
        ref_free(ra);
    }
    /* views: a transpose and a strided negative-step view, float and int */
    const nd_dtype nc[2] = {ND_FLOAT32, ND_INT16};
    for (int i = 0; i < 2; i++) {
        ref_arr *ra = input_for(&r, k, nc[i], ND_SHAPE(3, 4, 5));
        nd_array *x = ndt_upload(ra);
        const int perm[3] = {2, 0, 1};
        nd_array *t = nd_transpose(x, perm);
        ref_arr *rt = ref_transpose(ra, perm);
        sweep(k, rt, t, "transposed", i == 1);
        nd_array *v = nd_view(x, "::-1, 1:, ::2");
        ref_arr *rv = ref_strided(ra, 3, (int64_t[]){3, 3, 3}, (int64_t[]){-20, 5, 2}, 45);
        sweep(k, rv, v, "strided view", 1);
        nd_free(t); nd_free(v); nd_free(x);
        ref_free(ra); ref_free(rt); ref_free(rv);
    }
    /* 4-d, axes (1, 3) and (-1, 0, 2): the reduced axes interleave the kept */
    if (!is_arg(k)) {
        ref_arr *ra = input_for(&r, k, ND_FLOAT64, ND_SHAPE(2, 3, 4, 5));
        nd_array *x = ndt_upload(ra);
        const int a13[2] = {1, 3}, a102[3] = {-1, 0, 2};
        for (int kd = 0; kd < 2; kd++) {
            check_axes(k, ra, x, 2, a13, kd, 0, "4-d");
            check_axes(k, ra, x, 3, a102, kd, 0, "4-d");
        }
        nd_free(x);
        ref_free(ra);
    }
}

NDT_TEST(reductions_axes, sum) { check_kind(T_SUM); }
NDT_TEST(reductions_axes, prod) { check_kind(T_PROD); }
NDT_TEST(reductions_axes, mean) { check_kind(T_MEAN); }
NDT_TEST(reductions_axes, min) { check_kind(T_MIN); }
NDT_TEST(reductions_axes, max) { check_kind(T_MAX); }
NDT_TEST(reductions_axes, std) { check_kind(T_STD); }
NDT_TEST(reductions_axes, var) { check_kind(T_VAR); }
NDT_TEST(reductions_axes, any) { check_kind(T_ANY); }
NDT_TEST(reductions_axes, all) { check_kind(T_ALL); }
NDT_TEST(reductions_axes, nansum) { check_kind(T_NANSUM); }
NDT_TEST(reductions_axes, nanprod) { check_kind(T_NANPROD); }
NDT_TEST(reductions_axes, nanmean) { check_kind(T_NANMEAN); }
NDT_TEST(reductions_axes, nanmin) { check_kind(T_NANMIN); }
NDT_TEST(reductions_axes, nanmax) { check_kind(T_NANMAX); }
NDT_TEST(reductions_axes, nanstd) { check_kind(T_NANSTD); }
NDT_TEST(reductions_axes, nanvar) { check_kind(T_NANVAR); }
NDT_TEST(reductions_axes, count_nonzero) { check_kind(T_COUNT_NONZERO); }
NDT_TEST(reductions_axes, ptp) { check_kind(T_PTP); }
NDT_TEST(reductions_axes, argmin_keepdims) { check_kind(T_ARGMIN); }
NDT_TEST(reductions_axes, argmax_keepdims) { check_kind(T_ARGMAX); }
NDT_TEST(reductions_axes, nanargmin) { check_kind(T_NANARGMIN); }
NDT_TEST(reductions_axes, nanargmax) { check_kind(T_NANARGMAX); }

/* ------------------------------------------------ one kernel, many axes */

NDT_TEST(reductions_axes, several_axes_are_one_kernel) {
    NDT_RNG(r);
    ref_arr *ra = ndt_rand(&r, ND_FLOAT32, ND_SHAPE(6, 7, 8), -1, 1);
    nd_array *x = ndt_upload(ra);
    nd_sync();
    nd_stats before, after;
    nd_get_stats(&before);
    const int ax[2] = {0, 2};
    nd_array *xx = nd_mul(x, x);
    nd_array *y = nd_sum_axes(xx, 2, ax, false);
    cr_assert(y, "%s", nd_last_error());
    nd_free(xx); /* no handle left on the square: it need not be stored */
    double *scale = NULL;
    ref_arr *sq = ref_binary(R_MUL, ra, ra, ND_FLOAT32, ND_FLOAT32);
    ref_arr *want = red_ref(T_SUM, sq, 5u, 0, 0, &scale);
    ndt_check(y, want, 1e-5, 1e-6, scale, "sum(x*x, axes=(0,2))");
    nd_get_stats(&after);
    /* the square and the reduction over both axes: one kernel on the CPU;
     * on CUDA a second pass may combine per-block partials */
    cr_expect(NDT_KERNELS(after) - NDT_KERNELS(before) <= (ndt_backend_is_cuda() ? 2u : 1u),
              "sum over axes (0, 2) took %llu kernels",
              (unsigned long long)(NDT_KERNELS(after) - NDT_KERNELS(before)));
    nd_free(y);
    nd_free(x);
    ref_free(ra);
    ref_free(sq);
    ref_free(want);
    free(scale);
}

/* ---------------------------------------------------------- empty and 0-d */

NDT_TEST(reductions_axes, empty_inputs) {
    const int64_t shapes[2][2] = {{0, 3}, {3, 0}};
    const int a0[1] = {0}, a1[1] = {1}, a01[2] = {1, 0};
    const axset sets[4] = {{1, a0}, {1, a1}, {2, a01}, {ND_ALL_AXES, NULL}};
    for (int s = 0; s < 2; s++) {
        ref_arr *ra = ref_new(ND_FLOAT32, 2, shapes[s]);
        nd_array *x = ndt_upload(ra);
        for (int k = 0; k < T_NUM; k++) {
            for (int i = 0; i < 4; i++) {
                if (is_arg((tk)k) && sets[i].n == 2) continue;
                uint32_t m = mask_of(2, sets[i].n, sets[i].ax);
                int empty_extent = ((m & 1u) && shapes[s][0] == 0) || ((m & 2u) && shapes[s][1] == 0);
                if (no_identity((tk)k) && empty_extent) {
                    nd_array *y = call_axes((tk)k, x, sets[i].n, sets[i].ax, 0, 0);
                    cr_expect_null(y, "%s of an empty extent (shape %lldx%lld, set %d)",
                                   tk_names[k], (long long)shapes[s][0], (long long)shapes[s][1], i);
                    const char *msg = nd_last_error();
                    cr_expect(msg && strstr(msg, tk_names[k]) && strstr(msg, "empty"),
                              "message names %s and the empty extent: '%s'", tk_names[k], msg);
                    NDT_EXPECT_ERR(ND_ERR_SHAPE, tk_names[k]);
                    nd_free(y);
                    continue;
                }
                for (int kd = 0; kd < 2; kd++)
                    check_axes((tk)k, ra, x, sets[i].n, sets[i].ax, kd, 0, "empty");
            }
        }
        nd_free(x);
        ref_free(ra);
    }
}

NDT_TEST(reductions_axes, zero_d_inputs) {
    const double vals[3] = {2.5, 0.0, NAN};
    for (int v = 0; v < 3; v++)
        for (int ti = 0; ti < 3; ti++) {
            const nd_dtype ts[3] = {ND_FLOAT64, ND_INT32, ND_FLOAT16};
            nd_dtype t = ts[ti];
            if (isnan(vals[v]) && !ref_is_float(t)) continue;
            ref_arr *ra = ref_from_doubles(t, 0, NULL, &vals[v]);
            nd_array *x = ndt_upload(ra);
            for (int k = 0; k < T_NUM; k++) {
                check_axes((tk)k, ra, x, ND_ALL_AXES, NULL, 0, 0, "0-d");
                check_axes((tk)k, ra, x, ND_ALL_AXES, NULL, 1, 0, "0-d");
                if (!is_arg((tk)k)) check_axes((tk)k, ra, x, 0, NULL, 0, 0, "0-d, axis=()");
            }
            /* axis 0 names an axis a 0-d array does not have */
            cr_expect_null(nd_nansum(x, 0));
            NDT_EXPECT_ERR(ND_ERR_ARG, "nd_nansum");
            nd_free(x);
            ref_free(ra);
        }
    /* a weak scalar reduces as the 0-d array it stands for */
    nd_array *s = nd_scalar(3.0), *m = nd_nanmax_axes(s, ND_ALL_AXES, NULL, true);
    cr_assert(m, "%s", nd_last_error());
    cr_expect_eq(nd_ndim(m), 0);
    cr_expect_eq(nd_item(m), 3.0);
    nd_free(m);
    nd_free(s);
}

/* axis=() is no reduction: the values in the result dtype, same shape */
NDT_TEST(reductions_axes, empty_axes_tuple) {
    int8_t v[6] = {1, -2, 3, 0, 5, -6};
    nd_array *x = nd_from_host(v, ND_INT8, ND_SHAPE(2, 3));
    nd_array *s = nd_sum_axes(x, 0, NULL, false), *m = nd_mean_axes(x, 0, NULL, true);
    nd_array *c = nd_count_nonzero_axes(x, 0, (const int[]){0}, false);
    cr_assert(s && m && c, "%s", nd_last_error());
    cr_expect(nd_dtype_of(s) == ND_INT64 && nd_ndim(s) == 2 && nd_shape(s)[1] == 3);
    cr_expect(nd_dtype_of(m) == ND_FLOAT64 && nd_ndim(m) == 2);
    int64_t gs[6], gc[6];
    double gm[6];
    cr_assert_eq(nd_to_host(s, gs, sizeof gs), ND_OK, "%s", nd_last_error());
    cr_assert_eq(nd_to_host(m, gm, sizeof gm), ND_OK, "%s", nd_last_error());
    cr_assert_eq(nd_to_host(c, gc, sizeof gc), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 6; i++) {
        cr_expect_eq(gs[i], v[i]);
        cr_expect_eq(gm[i], (double)v[i]);
        cr_expect_eq(gc[i], v[i] != 0);
    }
    nd_free(s); nd_free(m); nd_free(c); nd_free(x);
}

/* ------------------------------------------------------------------ ddof */

NDT_TEST(reductions_axes, ddof) {
    NDT_RNG(r);
    const double ddofs[7] = {1, 2.5, 4, 5, 15, 16, -1};
    const nd_dtype ts[3] = {ND_FLOAT64, ND_INT32, ND_FLOAT32};
    const int a1[1] = {1}, a02[2] = {0, 2};
    const tk ks[4] = {T_VAR, T_STD, T_NANVAR, T_NANSTD};
    for (int ti = 0; ti < 3; ti++) {
        ref_arr *ra = input_for(&r, T_NANVAR, ts[ti], ND_SHAPE(3, 4, 5));
        nd_array *x = ndt_upload(ra);
        for (int d = 0; d < 7; d++)
            for (int k = 0; k < 4; k++) {
                check_axes(ks[k], ra, x, 1, a1, 0, ddofs[d], "ddof");
                check_axes(ks[k], ra, x, 2, a02, 1, ddofs[d], "ddof");
            }
        /* the one-axis _ddof forms */
        for (int d = 0; d < 7; d++) {
            nd_array *y[4] = {nd_var_ddof(x, -2, ddofs[d]), nd_std_ddof(x, -2, ddofs[d]),
                              nd_nanvar_ddof(x, -2, ddofs[d]), nd_nanstd_ddof(x, -2, ddofs[d])};
            for (int k = 0; k < 4; k++) {
                ref_arr *want = red_ref(ks[k], ra, 2u, 0, ddofs[d], NULL);
                double rt = rtol_of(ks[k], want->dt);
                ndt_check(y[k], want, rt, rt, NULL, "%s_ddof(%s, axis=-2, ddof=%g)",
                          tk_names[ks[k]], ref_dtype_name(ts[ti]), ddofs[d]);
                ref_free(want);
                nd_free(y[k]);
            }
        }
        nd_free(x);
        ref_free(ra);
    }
}

/* Values worked out by hand and checked against NumPy 2.4. */
static double item_of(nd_array *y) {
    cr_assert(y, "%s", nd_last_error());
    double v = nd_item(y);
    nd_free(y);
    return v;
}

NDT_TEST(reductions_axes, numpy_values) {
    double v1[2] = {NAN, INFINITY}, v2[2] = {NAN, -INFINITY}, v3[2] = {NAN, NAN},
           v4[3] = {1, NAN, -INFINITY}, v5[2] = {1, 2}, v6[2] = {1, 1}, v7[3] = {NAN, 1, 2},
           v8[2] = {INFINITY, -INFINITY}, v9[2] = {INFINITY, NAN};
    nd_array *a1 = nd_from_host(v1, ND_FLOAT64, ND_SHAPE(2)),
             *a2 = nd_from_host(v2, ND_FLOAT64, ND_SHAPE(2)),
             *a3 = nd_from_host(v3, ND_FLOAT64, ND_SHAPE(2)),
             *a4 = nd_from_host(v4, ND_FLOAT64, ND_SHAPE(3)),
             *a5 = nd_from_host(v5, ND_FLOAT64, ND_SHAPE(2)),
             *a6 = nd_from_host(v6, ND_FLOAT64, ND_SHAPE(2)),
             *a7 = nd_from_host(v7, ND_FLOAT64, ND_SHAPE(3)),
             *a8 = nd_from_host(v8, ND_FLOAT64, ND_SHAPE(2)),
             *a9 = nd_from_host(v9, ND_FLOAT64, ND_SHAPE(2));
    /* np.nanargmin([nan, inf]) == 0: NaN becomes +inf, the first wins */
    cr_expect_eq(item_of(nd_nanargmin(a1, 0)), 0.0);
    cr_expect_eq(item_of(nd_nanargmax(a2, 0)), 0.0);
    cr_expect_eq(item_of(nd_nanargmin(a3, 0)), -1.0, "all-NaN slice gives -1");
    cr_expect_eq(item_of(nd_nanargmax(a3, ND_ALL_AXES)), -1.0);
    cr_expect(isnan(item_of(nd_nanmin(a3, 0))), "nanmin of all-NaN is NaN");
    cr_expect_eq(item_of(nd_nanmax(a4, 0)), 1.0);
    cr_expect_eq(item_of(nd_nanmin(a4, 0)), -INFINITY);
    cr_expect_eq(item_of(nd_nanargmin(a4, 0)), 2.0);
    cr_expect(isnan(item_of(nd_nanmean(a3, 0))), "nanmean of all-NaN is NaN");
    cr_expect_eq(item_of(nd_nansum(a3, 0)), 0.0);
    cr_expect_eq(item_of(nd_nanprod(a3, 0)), 1.0);
    cr_expect_eq(item_of(nd_var_ddof(a5, 0, 2)), INFINITY, "np.var([1,2], ddof=2) is inf");
    cr_expect_eq(item_of(nd_var_ddof(a5, 0, 3)), INFINITY, "divisor max(N - ddof, 0)");
    cr_expect(isnan(item_of(nd_var_ddof(a6, 0, 2))), "np.var([1,1], ddof=2) is nan");
    cr_expect_eq(item_of(nd_std_ddof(a5, 0, 5)), INFINITY);
    cr_expect_eq(item_of(nd_var_ddof(a5, 0, 2.5)), INFINITY);
    cr_expect_eq(item_of(nd_nanvar_ddof(a7, 0, 1)), 0.5);
    cr_expect(isnan(item_of(nd_nanvar_ddof(a9, 0, 1))), "np.nanvar([inf, nan], ddof=1) is nan");
    cr_expect(isnan(item_of(nd_sum(a8, 0))), "inf + -inf");
    cr_expect_eq(item_of(nd_ptp(a8, 0)), INFINITY, "np.ptp([inf, -inf]) is inf");
    cr_expect_eq(item_of(nd_nanmin(a9, 0)), INFINITY);
    cr_expect_eq(item_of(nd_nanmean(a9, 0)), INFINITY);
    cr_expect_eq(item_of(nd_count_nonzero(a3, 0)), 2.0, "NaN is nonzero");
    int32_t iv[3] = {1, 2, 4};
    nd_array *ai = nd_from_host(iv, ND_INT32, ND_SHAPE(3));
    double vm1 = item_of(nd_var_ddof(ai, 0, -1));
    cr_expect(fabs(vm1 - 1.1666666666666665) < 1e-15, "np.var([1, 2, 4], ddof=-1): %.17g", vm1);
    int8_t i8[2] = {127, -128};
    nd_array *a8i = nd_from_host(i8, ND_INT8, ND_SHAPE(2));
    nd_array *p = nd_ptp(a8i, 0);
    cr_expect_eq(nd_dtype_of(p), ND_INT8);
    cr_expect_eq(item_of(p), -1.0, "np.ptp(int8 [127, -128]) wraps to -1");
    uint8_t u8[3] = {7, 255, 0};
    nd_array *a8u = nd_from_host(u8, ND_UINT8, ND_SHAPE(3));
    cr_expect_eq(item_of(nd_ptp(a8u, 0)), 255.0);
    double cz[4] = {0, NAN, 0.0, -0.0};
    nd_array *acz = nd_from_host(cz, ND_FLOAT64, ND_SHAPE(2, 2));
    nd_array *c0 = nd_count_nonzero(acz, 0);
    int64_t g[2] = {-7, -7};
    cr_assert_eq(nd_to_host(c0, g, sizeof g), ND_OK, "%s", nd_last_error());
    cr_expect(g[0] == 0 && g[1] == 1, "count_nonzero axis 0: %lld %lld", (long long)g[0],
              (long long)g[1]);
    cr_expect_eq(item_of(nd_count_nonzero(acz, ND_ALL_AXES)), 1.0);
    nd_free(c0);
    nd_free(a1); nd_free(a2); nd_free(a3); nd_free(a4); nd_free(a5); nd_free(a6); nd_free(a7);
    nd_free(a8); nd_free(a9); nd_free(ai); nd_free(a8i); nd_free(a8u); nd_free(acz);
}

NDT_TEST(reductions_axes, argmin_keepdims_shapes) {
    nd_array *x = nd_zeros(ND_FLOAT32, ND_SHAPE(3, 4, 5));
    nd_array *a = nd_argmin_keepdims(x, ND_ALL_AXES, true), *b = nd_argmax_keepdims(x, -2, true);
    nd_array *c = nd_nanargmax_keepdims(x, 2, false);
    cr_assert(a && b && c, "%s", nd_last_error());
    cr_expect(nd_ndim(a) == 3 && nd_shape(a)[0] == 1 && nd_shape(a)[1] == 1 && nd_shape(a)[2] == 1);
    cr_expect(nd_ndim(b) == 3 && nd_shape(b)[0] == 3 && nd_shape(b)[1] == 1 && nd_shape(b)[2] == 5);
    cr_expect(nd_ndim(c) == 2 && nd_shape(c)[0] == 3 && nd_shape(c)[1] == 4);
    nd_free(a); nd_free(b); nd_free(c); nd_free(x);
}

/* --------------------------------------------------------------- average */

/* sum(a*w)/sum(w) over mask in double; w of a's shape. */
static ref_arr *ref_average(const ref_arr *a, const ref_arr *w, uint32_t mask, int kd,
                            nd_dtype rt) {
    ref_arr *aw = ref_binary(R_MUL, a, w, ND_FLOAT64, ND_FLOAT64);
    ref_arr *wf = ref_astype(w, ND_FLOAT64);
    ref_arr *num = red_ref(T_SUM, aw, mask, kd, 0, NULL), *den = red_ref(T_SUM, wf, mask, kd, 0, NULL);
    ref_arr *q = ref_binary(R_DIV, num, den, ND_FLOAT64, rt);
    ref_free(aw); ref_free(wf); ref_free(num); ref_free(den);
    return q;
}

NDT_TEST(reductions_axes, average) {
    nd_scope_begin();
    NDT_RNG(r);
    /* 1-d weights along one axis, float32 */
    ref_arr *ra = ndt_rand(&r, ND_FLOAT32, ND_SHAPE(3, 5), -2, 2);
    ref_arr *rw = ndt_rand(&r, ND_FLOAT32, ND_SHAPE(5), 0.5, 2);
    nd_array *x = ndt_upload(ra), *w = ndt_upload(rw);
    ref_arr *wb = ref_broadcast_to(rw, 2, ra->shape);
    ref_arr *want = ref_average(ra, wb, 2u, 0, ND_FLOAT32);
    ndt_check(nd_average(x, 1, w), want, 1e-5, 1e-6, NULL, "average(f32, axis=1, 1-d weights)");
    ndt_check(nd_average(x, -1, w), want, 1e-5, 1e-6, NULL, "average(f32, axis=-1, 1-d weights)");
    ref_free(want);
    want = ref_average(ra, wb, 2u, 1, ND_FLOAT32);
    ndt_check(nd_average_axes(x, 1, (const int[]){1}, w, true), want, 1e-5, 1e-6, NULL,
              "average_axes(f32, (1,), keepdims)");
    ref_free(want);
    /* int32 a with float32 weights of a's shape -> float64, over everything */
    ref_arr *ri = ndt_rand_small(&r, ND_INT32, ND_SHAPE(3, 5));
    ref_arr *rw2 = ndt_rand(&r, ND_FLOAT32, ND_SHAPE(3, 5), 0, 3);
    nd_array *xi = ndt_upload(ri), *w2 = ndt_upload(rw2);
    want = ref_average(ri, rw2, 3u, 0, ND_FLOAT64);
    ndt_check(nd_average(xi, ND_ALL_AXES, w2), want, 1e-12, 1e-12, NULL, "average(i32, f32 w)");
    ref_free(want);
    /* int8 with int8 weights -> float64; several axes with keepdims on a
     * transposed input */
    ref_arr *r3 = ndt_rand_small(&r, ND_INT8, ND_SHAPE(2, 3, 4));
    ref_arr *rw3 = ndt_rand(&r, ND_INT8, ND_SHAPE(4, 3, 2), 1, 5);
    nd_array *x3 = ndt_upload(r3), *w3 = ndt_upload(rw3);
    nd_array *x3t = nd_transpose(x3, NULL);
    ref_arr *r3t = ref_transpose(r3, NULL);
    want = ref_average(r3t, rw3, 5u, 1, ND_FLOAT64);
    ndt_check(nd_average_axes(x3t, 2, (const int[]){-1, 0}, w3, true), want, 1e-12, 1e-12, NULL,
              "average_axes(i8 transposed, (-1, 0), keepdims)");
    ref_free(want);
    /* no weights is the mean */
    want = red_ref(T_MEAN, ra, 1u, 0, 0, NULL);
    ndt_check(nd_average(x, 0, NULL), want, 1e-5, 1e-6, NULL, "average(no weights)");
    ref_free(want);
    /* weights summing to zero: the division's value (NumPy raises) */
    double a0[2] = {1, 2}, wz[2] = {1, -1}, w00[2] = {0, 0};
    nd_array *xa = nd_from_host(a0, ND_FLOAT64, ND_SHAPE(2)),
             *wa = nd_from_host(wz, ND_FLOAT64, ND_SHAPE(2)),
             *wb0 = nd_from_host(w00, ND_FLOAT64, ND_SHAPE(2));
    cr_expect_eq(item_of(nd_average(xa, 0, wa)), -INFINITY, "(1 - 2) / 0");
    cr_expect(isnan(item_of(nd_average(xa, 0, wb0))), "0 / 0");
    /* weights that fit neither form */
    nd_array *bad = nd_zeros(ND_FLOAT32, ND_SHAPE(4));
    cr_expect_null(nd_average(x, 1, bad));
    const char *msg = nd_last_error();
    cr_expect(msg && strstr(msg, "(4,)") && strstr(msg, "(3,5)") && strstr(msg, "length 5"),
              "message names the shapes and the fix: '%s'", msg);
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_average");
    nd_array *w5 = nd_zeros(ND_FLOAT32, ND_SHAPE(5));
    cr_expect_null(nd_average(x, ND_ALL_AXES, w5), "1-d weights need one reduced axis");
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_average");
    cr_expect_null(nd_average_axes(x, 1, (const int[]){2}, w, false));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_average_axes");
    nd_free(bad); nd_free(w5); nd_free(xa); nd_free(wa); nd_free(wb0);
    nd_free(x); nd_free(w); nd_free(xi); nd_free(w2); nd_free(x3); nd_free(w3); nd_free(x3t);
    ref_free(ra); ref_free(rw); ref_free(wb); ref_free(ri); ref_free(rw2); ref_free(r3);
    ref_free(rw3); ref_free(r3t);
    nd_scope_end();
}

/* ---------------------------------------------------------------- errors */

static void expect_msg(nd_array *y, nd_status st, const char *fn, const char *part1,
                       const char *part2) {
    cr_expect_null(y, "%s should fail", fn);
    nd_free(y);
    const char *m = nd_last_error();
    cr_expect(m && strstr(m, part1) && (!part2 || strstr(m, part2)),
              "%s: message should contain '%s' and '%s': '%s'", fn, part1, part2 ? part2 : "",
              m ? m : "(null)");
    NDT_EXPECT_ERR(st, fn);
}

NDT_TEST(reductions_axes, errors) {
    nd_array *x = nd_ones(ND_FLOAT32, ND_SHAPE(3, 4, 5));
    expect_msg(nd_sum_axes(x, 2, (const int[]){0, -3}, false), ND_ERR_ARG, "nd_sum_axes",
               "axis -3 is repeated", "-3..2");
    expect_msg(nd_nanmean_axes(x, 2, (const int[]){2, 2}, true), ND_ERR_ARG, "nd_nanmean_axes",
               "repeated", NULL);
    expect_msg(nd_max_axes(x, 1, (const int[]){3}, false), ND_ERR_ARG, "nd_max_axes",
               "axis 3 is out of range", "(use -3..2)");
    expect_msg(nd_std_axes(x, 2, (const int[]){0, -4}, 1, false), ND_ERR_ARG, "nd_std_axes",
               "axis -4 is out of range", "(use -3..2)");
    expect_msg(nd_mean_axes(x, -2, (const int[]){0}, false), ND_ERR_ARG, "nd_mean_axes",
               "naxes -2", "ND_ALL_AXES");
    expect_msg(nd_prod_axes(x, 2, NULL, false), ND_ERR_ARG, "nd_prod_axes", "axes is NULL",
               NULL);
    expect_msg(nd_argmin_keepdims(x, 5, true), ND_ERR_ARG, "nd_argmin_keepdims",
               "axis 5 is out of range", NULL);
    expect_msg(nd_nanargmax(x, -4), ND_ERR_ARG, "nd_nanargmax", "axis -4", NULL);
    expect_msg(nd_var_ddof(x, 3, 1), ND_ERR_ARG, "nd_var_ddof", "axis 3", NULL);
    expect_msg(nd_count_nonzero(x, 7), ND_ERR_ARG, "nd_count_nonzero", "axis 7", NULL);
    nd_array *b = nd_ones(ND_BOOL, ND_SHAPE(3));
    expect_msg(nd_ptp(b, 0), ND_ERR_DTYPE, "nd_ptp", "bool", "nd_astype");
    expect_msg(nd_ptp_axes(b, ND_ALL_AXES, NULL, true), ND_ERR_DTYPE, "nd_ptp_axes", "bool",
               NULL);
    nd_array *e = nd_zeros(ND_FLOAT64, ND_SHAPE(2, 0));
    expect_msg(nd_nanmin(e, 1), ND_ERR_SHAPE, "nd_nanmin", "nanmin", "empty");
    expect_msg(nd_nanargmax_keepdims(e, ND_ALL_AXES, true), ND_ERR_SHAPE,
               "nd_nanargmax_keepdims", "nanargmax", NULL);
    expect_msg(nd_ptp(e, 1), ND_ERR_SHAPE, "nd_ptp", "ptp", NULL);
    /* NULL input: the op's own error (or an earlier one kept) */
    expect_msg(nd_nansum(NULL, 0), ND_ERR_ARG, "nd_nansum", "nd_nansum", NULL);
    expect_msg(nd_sum_axes(NULL, ND_ALL_AXES, NULL, false), ND_ERR_ARG, "nd_sum_axes",
               "nd_sum_axes", NULL);
    nd_free(b);
    nd_free(e);
    nd_free(x);
}
