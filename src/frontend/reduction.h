/* Reductions inside the frontend: a set of reduced axes is a bitmask (bit k:
 * axis k of the input), as the graph's REDUCE node and the kernel IR carry
 * it, so one node reduces every axis of the set in one kernel. Results are
 * untracked (frontend.h's convention); errors name fn. */
#ifndef ND_FRONTEND_REDUCTION_H
#define ND_FRONTEND_REDUCTION_H

#include "frontend/frontend.h"

/* The mask of one axis argument (negative counts from the end, or
 * ND_ALL_AXES); -1 with ND_ERR_ARG when out of range. */
int nd_fe_axis_mask(const char *fn, int ndim, int axis, uint32_t *mask);
/* The mask of an axes tuple (reductions.h's _axes convention: naxes ==
 * ND_ALL_AXES is every axis, 0 none); -1 with ND_ERR_ARG on an axis out of
 * range or repeated, or a bad naxes/axes pair. */
int nd_fe_axes_mask(const char *fn, int ndim, int naxes, const int *axes, uint32_t *mask);
/* The number of elements each output combines. */
int64_t nd_fe_reduced_count(const nd_array *a, uint32_t mask);

/* One REDUCE node of kind over the axes of mask (mask 0: no reduction, the
 * values in the result dtype). Empty extents of kinds without an identity
 * are ND_ERR_SHAPE naming `what` ("min", "nanargmax", ...; NULL: the
 * kind's label). */
nd_array *nd_fe_reduce_mask(const char *fn, nd_reduce_kind kind, nd_array *a, uint32_t mask,
                            int keepdims, const char *what);
/* sum(x) / divisor over mask, in NumPy's mean accumulator (float16 sums in
 * float32, bool/ints in float64) and rounded to x's float dtype; divisor is
 * a number (weak scalar) or an array broadcasting against the sum. */
nd_array *nd_fe_sum_div(const char *fn, nd_array *x, uint32_t mask, int keepdims,
                        nd_array *divisor);
nd_array *nd_fe_mean_mask(const char *fn, nd_array *a, uint32_t mask, int keepdims);
/* var (sqrt_ = 0) or std (1) with NumPy's ddof. */
nd_array *nd_fe_var_mask(const char *fn, nd_array *a, uint32_t mask, double ddof, int keepdims,
                         int sqrt_);
/* reduction_complex.c: min, max, argmin or argmax (kind) of a complex
 * array in NumPy's lexicographic order over mask; skip_nan 0: a value
 * with a NaN part wins (the first), 1: np.nanmin .. np.nanargmax (an
 * all-NaN slice: its first value, or index -1). Composed of real
 * reductions, exact. */
nd_array *nd_fe_complex_extreme(const char *fn, nd_reduce_kind kind, nd_array *a, uint32_t mask,
                                int keepdims, int skip_nan, const char *what);
/* prod of a complex array over mask (mask != 0): a tree of elementwise
 * complex products (the reduction kernels accumulate real values only). */
nd_array *nd_fe_complex_prod(const char *fn, nd_array *a, uint32_t mask, int keepdims);
/* |x|^2 elementwise: x*x, or re*re + im*im of a complex x (a real result). */
nd_array *nd_fe_abs2(const char *fn, nd_array *x);
/* where(cond, a, b) in the dtype of a and b (cond bool). */
nd_array *nd_fe_where(const char *fn, nd_array *cond, nd_array *a, nd_array *b);


/* The reducers behind the public functions: a's reduction over mask, ddof
 * read by var/std only. */
typedef nd_array *(*nd_fe_reducer)(const char *fn, nd_array *a, uint32_t mask, int keepdims,
                                   double ddof);
nd_array *nd_fe_sum_r(const char *, nd_array *, uint32_t, int, double);
nd_array *nd_fe_prod_r(const char *, nd_array *, uint32_t, int, double);
nd_array *nd_fe_min_r(const char *, nd_array *, uint32_t, int, double);
nd_array *nd_fe_max_r(const char *, nd_array *, uint32_t, int, double);
nd_array *nd_fe_argmin_r(const char *, nd_array *, uint32_t, int, double);
nd_array *nd_fe_argmax_r(const char *, nd_array *, uint32_t, int, double);
nd_array *nd_fe_any_r(const char *, nd_array *, uint32_t, int, double);
nd_array *nd_fe_all_r(const char *, nd_array *, uint32_t, int, double);
nd_array *nd_fe_mean_r(const char *, nd_array *, uint32_t, int, double);
nd_array *nd_fe_var_r(const char *, nd_array *, uint32_t, int, double);
nd_array *nd_fe_std_r(const char *, nd_array *, uint32_t, int, double);
/* reduction_nan.c */
nd_array *nd_fe_nansum_r(const char *, nd_array *, uint32_t, int, double);
nd_array *nd_fe_nanprod_r(const char *, nd_array *, uint32_t, int, double);
nd_array *nd_fe_nanmin_r(const char *, nd_array *, uint32_t, int, double);
nd_array *nd_fe_nanmax_r(const char *, nd_array *, uint32_t, int, double);
nd_array *nd_fe_nanargmin_r(const char *, nd_array *, uint32_t, int, double);
nd_array *nd_fe_nanargmax_r(const char *, nd_array *, uint32_t, int, double);
nd_array *nd_fe_nanmean_r(const char *, nd_array *, uint32_t, int, double);
nd_array *nd_fe_nanvar_r(const char *, nd_array *, uint32_t, int, double);
nd_array *nd_fe_nanstd_r(const char *, nd_array *, uint32_t, int, double);
nd_array *nd_fe_count_nonzero_r(const char *, nd_array *, uint32_t, int, double);
nd_array *nd_fe_ptp_r(const char *, nd_array *, uint32_t, int, double);
/* np.average over mask; weights NULL is the mean. */
nd_array *nd_fe_average(const char *fn, nd_array *a, uint32_t mask, nd_array *weights,
                        int keepdims);

#endif
