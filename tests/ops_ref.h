/* The per-op facts and the reference of the cross-backend op test
 * (ops_ref.c), shared with test_ops.c. */
#ifndef NDT_OPS_REF_H
#define NDT_OPS_REF_H

#include "common.h"
#include "common/ops.h"

static inline int is_f(nd_dtype t) { return ref_is_float(t); }

/* Whether op's IR instruction takes operands of dtype t. */
int op_takes(nd_op op, nd_dtype t);
/* The result dtype of op for operands of dtype t (bool for comparisons). */
nd_dtype op_result(nd_op op, nd_dtype t);
/* Allowed distance from the correctly rounded result, in ulps of the
 * result dtype; 0 = bits. */
int ulp_bound(nd_op op, nd_dtype t);
/* Where not 0, ulp_bound counts ulps of max(|result|, ulp_floor(op))
 * instead (an absolute error near a result of 0), for special inputs too. */
double ulp_floor(nd_op op);
/* out[i] = op(in...)[i] for operands of dtype t. */
void ref_elem(nd_op op, nd_dtype t, ref_arr *const in[3], int64_t i, ref_arr *out);

int bits_of(nd_dtype t);
/* The parts of element i of a complex64/complex128 array, and setting them
 * (rounded to the parts' dtype). */
void cref_get(const ref_arr *a, int64_t i, double *re, double *im);
void cref_set(ref_arr *a, int64_t i, double re, double im);
/* Two's complement value of an integer element (bool: 0/1), and the
 * unsigned value of its width. */
int64_t sval(const ref_arr *a, int64_t i);
uint64_t uval(const ref_arr *a, int64_t i);

#endif
