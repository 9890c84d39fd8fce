/* Whether two affine accesses of one kernel slot (backends/kernel_ir.h)
 * can touch the same memory: what the in-place store check of the kernel
 * builder asks (nd_kb_store_hazard). Accesses of one slot may differ in
 * dtype (a part of a complex buffer, graph/array.h), so spans are bytes. */
#ifndef ND_SCHEDULER_ACCESS_OVERLAP_H
#define ND_SCHEDULER_ACCESS_OVERLAP_H

#include "backends/kernel_ir.h"

/* nd_access_byte_span, the bytes an access covers: backends/kernel_ir.h. */
/* Whether at every index p touches only bytes of the element w touches
 * there: the same map, or p a part of w's complex elements. */
int nd_access_same_element(int ndim, const nd_ir_access *p, const nd_ir_access *w);
/* Whether two accesses of one dtype never name the same element, at any
 * pair of indices (their offsets differ by no combination of strides). */
int nd_access_never_meet(int ndim, const nd_ir_access *a, const nd_ir_access *b);

#endif
