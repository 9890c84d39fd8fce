/* What the numpy.linalg frontend files (linalg_decomp.c, linalg_compose.c)
 * share: argument checks, packing for a routine, the routine-backed
 * functions with their errors named by the caller. */
#ifndef ND_FRONTEND_LINALG_INTERNAL_H
#define ND_FRONTEND_LINALG_INTERNAL_H

#include "common/lib_linalg.h"
#include "frontend/frontend.h"

/* The dtype linalg computes a in (float32, float64, complex64,
 * complex128; bool and integers float64), or ND_NUM_DTYPES with the error
 * set. */
nd_dtype nd_la_dtype(const char *fn, const nd_array *a);
/* The dtype two such dtypes compute in together (complex if either is,
 * double precision if either is). */
nd_dtype nd_la_common(nd_dtype a, nd_dtype b);
/* A 0-d 1j of the complex dtype of t's precision (tracked). */
nd_array *nd_la_imag_unit(nd_dtype t);
/* -1 with ND_ERR_SHAPE unless `name` has >= 2 dims (and square ones). */
int nd_la_matrices(const char *fn, const char *name, const nd_array *a, int square);
/* a as a packed array of dtype t: a itself with a reference more, or a
 * lazy copy. Release with nd_fe_release. */
nd_array *nd_la_packed(const char *fn, nd_array *a, nd_dtype t);
/* A view of x with its last two axes swapped (untracked). */
nd_array *nd_la_swap_last(nd_array *x);
/* nd_linalg_solve's body (untracked result). */
nd_array *nd_la_solve(const char *fn, nd_lib_la_fn who, nd_array *a, nd_array *b);
/* nd_linalg_svd's body (tracked results; u and vh unused without uv). */
nd_status nd_la_svd(const char *fn, nd_array *a, int full, int uv, nd_array **u, nd_array **s, nd_array **vh);

#endif
