/* Overlap tests of affine accesses (access_overlap.h). */
#include "scheduler/access_overlap.h"

/* Whether every iteration of access p reads or writes only bytes of the
 * element access w touches at the same iteration: the same map, or p a
 * part of w's complex elements (offset 2 * w's + part, strides twice w's). */
int nd_access_same_element(int ndim, const nd_ir_access *p, const nd_ir_access *w) {
    int64_t scale = 1, part = 0;
    if (p->dtype != w->dtype) {
        if (!nd_dtype_is_complex((nd_dtype)w->dtype) || p->dtype != nd_dtype_part((nd_dtype)w->dtype))
            return 0;
        scale = 2;
        part = p->offset - 2 * w->offset;
        if (part != 0 && part != 1) return 0;
    } else if (p->offset != w->offset) {
        return 0;
    }
    for (int k = 0; k < ndim; k++)
        if (p->strides[k] != scale * w->strides[k]) return 0;
    return 1;
}

static int64_t gcd64(int64_t a, int64_t b) {
    a = a < 0 ? -a : a;
    b = b < 0 ? -b : b;
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Whether two accesses of one dtype can never name the same element: their
 * offsets differ by a number no combination of their strides reaches (the
 * real and imaginary parts of one complex array: every stride even, the
 * offsets one apart). */
int nd_access_never_meet(int ndim, const nd_ir_access *a, const nd_ir_access *b) {
    if (a->dtype != b->dtype) return 0;
    int64_t g = 0;
    for (int k = 0; k < ndim; k++) g = gcd64(gcd64(g, a->strides[k]), b->strides[k]);
    int64_t d = a->offset - b->offset;
    return g == 0 ? d != 0 : d % g != 0;
}
