/* Inspection: plain field reads, valid on any handle (no runtime needed). */
#include "frontend/frontend.h"

int nd_ndim(const nd_array *a) { return a ? a->ndim : -1; }
const int64_t *nd_shape(const nd_array *a) { return a ? a->shape : NULL; }
int64_t nd_size(const nd_array *a) { return a ? nd_shape_size(a->ndim, a->shape) : -1; }
nd_dtype nd_dtype_of(const nd_array *a) { return a ? a->dtype : ND_NUM_DTYPES; }
const int64_t *nd_strides(const nd_array *a) { return a ? a->strides : NULL; }
