/* NumPy Generator's distributions as transforms of nd's uniform and normal
 * draws, built from lazy elementwise ops: each is one random call (one
 * stream), fuses with whatever consumes it, and is computed in float32
 * (float64 for float64 results, cast at the end for float16/bfloat16).
 *
 * Most start from an open uniform U in (0, 1): the draw u = j * 2^-p
 * (p = 24 in float32, 53 in float64) becomes U = floor(u * 2^(p-1)) *
 * 2^(1-p) + 2^-p = (2 floor(j/2) + 1) * 2^-p, exactly (powers of two and a
 * sum that fits p bits), so every backend gets the same U. U is never 0 or
 * 1 and 1 - U is on the same grid, so logs of U and 1 - U are finite, and
 * E = -log(U) is a standard exponential. Values after the transcendental
 * ops differ between backends by the ops' own few-ulp error, like
 * nd_random_normal's. */
#include <math.h>

#include "frontend/random.h"

/* Expression helpers: each consumes its array arguments (NULL in: NULL
 * out, the first error kept). */
static nd_array *un(const char *fn, nd_op op, nd_array *a) {
    nd_array *r = a ? nd_fe_unary(fn, op, a) : NULL;
    nd_fe_release(a);
    return r;
}

static nd_array *bin(const char *fn, nd_op op, nd_array *a, nd_array *b) {
    nd_array *r = a && b ? nd_fe_binary(fn, op, a, b) : NULL;
    nd_fe_release(a);
    nd_fe_release(b);
    return r;
}

/* a op v, with v a weak (Python float) scalar: a's dtype stays. */
static nd_array *bins(const char *fn, nd_op op, nd_array *a, double v) {
    return bin(fn, op, a, a ? nd_fe_scalar(v) : NULL);
}

/* v op a */
static nd_array *sbin(const char *fn, nd_op op, double v, nd_array *a) {
    return bin(fn, op, a ? nd_fe_scalar(v) : NULL, a);
}

static nd_array *dup(nd_array *a) {
    if (a) a->refs++;
    return a;
}

/* The dtype a distribution is computed in. */
static nd_dtype compute_dtype(nd_dtype dtype) { return dtype == ND_FLOAT64 ? ND_FLOAT64 : ND_FLOAT32; }

/* The open uniform U (see the top). */
static nd_array *open_uniform(const char *fn, nd_dtype cd, int ndim, const int64_t *shape) {
    double half = cd == ND_FLOAT64 ? 0x1p52 : 0x1p23; /* 2^(p-1) */
    nd_array *u = nd_fe_random(fn, ND_RANDOM_UNIFORM01, cd, ndim, shape, 0.0, 1.0);
    nd_array *j = un(fn, ND_OP_FLOOR, bins(fn, ND_OP_MUL, u, half));
    return bins(fn, ND_OP_ADD, bins(fn, ND_OP_MUL, j, 1.0 / half), 0.5 / half);
}

/* A standard exponential: -log(U). */
static nd_array *std_exponential(const char *fn, nd_dtype cd, int ndim, const int64_t *shape) {
    return un(fn, ND_OP_NEG, un(fn, ND_OP_LOG, open_uniform(fn, cd, ndim, shape)));
}

/* r cast to dtype (when it is float16/bfloat16), tracked. */
static nd_array *finish(const char *fn, nd_array *r, nd_dtype dtype) {
    if (r && r->dtype != dtype) {
        nd_array *c = nd_fe_astype(fn, r, dtype);
        nd_fe_release(r);
        r = c;
    }
    return nd_runtime_track(r);
}

/* The common checks: runtime, a float dtype, a finite parameter `name`,
 * and (min_kind 0) >= 0 or (1) > 0 or (-1) no bound. */
static int check(const char *fn, nd_dtype dtype, const char *name, double v, int min_kind) {
    if (nd_runtime_ensure() != ND_OK || nd_fe_random_float_dtype(fn, dtype)) return -1;
    if (!name) return 0;
    if (!isfinite(v)) {
        nd_error_set(ND_ERR_ARG, "%s: %s = %g is not finite (use a finite %s)", fn, name, v, name);
        return -1;
    }
    if (min_kind == 0 && v < 0) {
        nd_error_set(ND_ERR_ARG, "%s: %s = %g is negative (use %s >= 0)", fn, name, v, name);
        return -1;
    }
    if (min_kind == 1 && !(v > 0)) {
        nd_error_set(ND_ERR_ARG, "%s: %s = %g is not positive (use %s > 0)", fn, name, v, name);
        return -1;
    }
    return 0;
}

/* check() for a (loc, scale) pair. */
static int check_loc_scale(const char *fn, nd_dtype dtype, double loc, double scale) {
    return check(fn, dtype, "loc", loc, -1) || check(fn, dtype, "scale", scale, 0);
}

nd_array *nd_random_standard_normal(nd_dtype dtype, int ndim, const int64_t *shape) {
    ND_API_GUARD();
    static const char fn[] = "nd_random_standard_normal";
    return nd_runtime_track(nd_fe_random(fn, ND_RANDOM_NORMAL, dtype, ndim, shape, 0.0, 1.0));
}

nd_array *nd_random_exponential(nd_dtype dtype, int ndim, const int64_t *shape, double scale) {
    ND_API_GUARD();
    static const char fn[] = "nd_random_exponential";
    if (check(fn, dtype, "scale", scale, 0)) return NULL;
    nd_dtype cd = compute_dtype(dtype);
    return finish(fn, bins(fn, ND_OP_MUL, std_exponential(fn, cd, ndim, shape), scale), dtype);
}

nd_array *nd_random_lognormal(nd_dtype dtype, int ndim, const int64_t *shape, double mean,
                              double sigma) {
    ND_API_GUARD();
    static const char fn[] = "nd_random_lognormal";
    if (check(fn, dtype, "mean", mean, -1) || check(fn, dtype, "sigma", sigma, 0)) return NULL;
    nd_dtype cd = compute_dtype(dtype);
    nd_array *z = nd_fe_random(fn, ND_RANDOM_NORMAL, cd, ndim, shape, mean, sigma);
    return finish(fn, un(fn, ND_OP_EXP, z), dtype);
}

nd_array *nd_random_laplace(nd_dtype dtype, int ndim, const int64_t *shape, double loc,
                            double scale) {
    ND_API_GUARD();
    static const char fn[] = "nd_random_laplace";
    if (check_loc_scale(fn, dtype, loc, scale)) return NULL;
    nd_dtype cd = compute_dtype(dtype);
    /* w = 2U - 1 in (-1, 1), exact; loc + scale * sign(w) * -log(1 - |w|) */
    nd_array *w = bins(fn, ND_OP_SUB, bins(fn, ND_OP_MUL, open_uniform(fn, cd, ndim, shape), 2.0), 1.0);
    nd_array *mag = un(fn, ND_OP_LOG1P, un(fn, ND_OP_NEG, un(fn, ND_OP_ABS, dup(w))));
    nd_array *e = bin(fn, ND_OP_COPYSIGN, mag, w);
    return finish(fn, sbin(fn, ND_OP_ADD, loc, bins(fn, ND_OP_MUL, e, scale)), dtype);
}

nd_array *nd_random_logistic(nd_dtype dtype, int ndim, const int64_t *shape, double loc,
                             double scale) {
    ND_API_GUARD();
    static const char fn[] = "nd_random_logistic";
    if (check_loc_scale(fn, dtype, loc, scale)) return NULL;
    nd_dtype cd = compute_dtype(dtype);
    /* loc + scale * log(U / (1 - U)) */
    nd_array *u = open_uniform(fn, cd, ndim, shape);
    nd_array *v = sbin(fn, ND_OP_SUB, 1.0, dup(u)); /* (arguments are unsequenced) */
    nd_array *odds = bin(fn, ND_OP_DIV, u, v);
    nd_array *l = un(fn, ND_OP_LOG, odds);
    return finish(fn, sbin(fn, ND_OP_ADD, loc, bins(fn, ND_OP_MUL, l, scale)), dtype);
}

nd_array *nd_random_gumbel(nd_dtype dtype, int ndim, const int64_t *shape, double loc,
                           double scale) {
    ND_API_GUARD();
    static const char fn[] = "nd_random_gumbel";
    if (check_loc_scale(fn, dtype, loc, scale)) return NULL;
    nd_dtype cd = compute_dtype(dtype);
    /* loc - scale * log(E) */
    nd_array *l = un(fn, ND_OP_LOG, std_exponential(fn, cd, ndim, shape));
    return finish(fn, sbin(fn, ND_OP_SUB, loc, bins(fn, ND_OP_MUL, l, scale)), dtype);
}

nd_array *nd_random_weibull(nd_dtype dtype, int ndim, const int64_t *shape, double a) {
    ND_API_GUARD();
    static const char fn[] = "nd_random_weibull";
    if (check(fn, dtype, "a", a, 0)) return NULL;
    nd_dtype cd = compute_dtype(dtype);
    nd_array *e = std_exponential(fn, cd, ndim, shape);
    /* E^(1/a); a = 0 gives zeros, as NumPy (the draw still takes its stream) */
    nd_array *r = a == 0 ? bins(fn, ND_OP_MUL, e, 0.0) : bins(fn, ND_OP_POW, e, 1.0 / a);
    return finish(fn, r, dtype);
}

nd_array *nd_random_rayleigh(nd_dtype dtype, int ndim, const int64_t *shape, double scale) {
    ND_API_GUARD();
    static const char fn[] = "nd_random_rayleigh";
    if (check(fn, dtype, "scale", scale, 0)) return NULL;
    nd_dtype cd = compute_dtype(dtype);
    /* scale * sqrt(2 E) */
    nd_array *r = un(fn, ND_OP_SQRT, bins(fn, ND_OP_MUL, std_exponential(fn, cd, ndim, shape), 2.0));
    return finish(fn, bins(fn, ND_OP_MUL, r, scale), dtype);
}

nd_array *nd_random_pareto(nd_dtype dtype, int ndim, const int64_t *shape, double a) {
    ND_API_GUARD();
    static const char fn[] = "nd_random_pareto";
    if (check(fn, dtype, "a", a, 1)) return NULL;
    nd_dtype cd = compute_dtype(dtype);
    /* expm1(E / a): Pareto II (Lomax) with x_m = 1, shifted to start at 0 */
    nd_array *r = un(fn, ND_OP_EXPM1, bins(fn, ND_OP_DIV, std_exponential(fn, cd, ndim, shape), a));
    return finish(fn, r, dtype);
}

nd_array *nd_random_power(nd_dtype dtype, int ndim, const int64_t *shape, double a) {
    ND_API_GUARD();
    static const char fn[] = "nd_random_power";
    if (check(fn, dtype, "a", a, 1)) return NULL;
    nd_dtype cd = compute_dtype(dtype);
    /* U^(1/a) (NumPy's (1 - exp(-E))^(1/a) with 1 - U for U) */
    return finish(fn, bins(fn, ND_OP_POW, open_uniform(fn, cd, ndim, shape), 1.0 / a), dtype);
}

nd_array *nd_random_triangular(nd_dtype dtype, int ndim, const int64_t *shape, double left,
                               double mode, double right) {
    ND_API_GUARD();
    static const char fn[] = "nd_random_triangular";
    if (check(fn, dtype, "left", left, -1) || check(fn, dtype, "mode", mode, -1) ||
        check(fn, dtype, "right", right, -1))
        return NULL;
    if (left > mode || mode > right || left == right) {
        nd_error_set(ND_ERR_ARG, "%s: left = %g, mode = %g, right = %g (use left <= mode <= right "
                     "and left < right)", fn, left, mode, right);
        return NULL;
    }
    nd_dtype cd = compute_dtype(dtype);
    /* NumPy's inverse CDF: U <= ratio ? left + sqrt(U * leftprod)
     *                                 : right - sqrt((1 - U) * rightprod) */
    double base = right - left, ratio = (mode - left) / base;
    double leftprod = (mode - left) * base, rightprod = (right - mode) * base;
    nd_array *u = open_uniform(fn, cd, ndim, shape);
    nd_array *lo = sbin(fn, ND_OP_ADD, left, un(fn, ND_OP_SQRT, bins(fn, ND_OP_MUL, dup(u), leftprod)));
    nd_array *hi = sbin(fn, ND_OP_SUB, right,
                        un(fn, ND_OP_SQRT, bins(fn, ND_OP_MUL, sbin(fn, ND_OP_SUB, 1.0, dup(u)), rightprod)));
    nd_array *c = bins(fn, ND_OP_LE, u, ratio);
    nd_array *r = NULL;
    if (c && lo && hi) {
        nd_array *in[3] = {c, lo, hi};
        nd_dtype consts[3] = {ND_BOOL, cd, cd};
        r = nd_fe_map(fn, ND_OP_WHERE, 3, in, consts, cd, cd);
    }
    nd_fe_release(c);
    nd_fe_release(lo);
    nd_fe_release(hi);
    return finish(fn, r, dtype);
}
