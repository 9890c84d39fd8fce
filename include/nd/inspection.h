/*
 * nd/inspection.h — Reading an array's shape, dtype and strides; dumping the graph.
 * Part of nd.h: include <nd.h>, not this file.
 */
#ifndef ND_INSPECTION_H
#define ND_INSPECTION_H

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Also valid on a handle that outlived nd_shutdown; a freed handle gives
 * the NULL value and ND_ERR_ARG. */
ND_API int nd_ndim(const nd_array *a);                /* -1 for NULL */
ND_API const int64_t *nd_shape(const nd_array *a);    /* NULL for NULL */
ND_API int64_t nd_size(const nd_array *a);            /* -1 for NULL */
ND_API nd_dtype nd_dtype_of(const nd_array *a);       /* ND_NUM_DTYPES for NULL */
/* Strides in elements (NumPy's strides divided by the item size). */
ND_API const int64_t *nd_strides(const nd_array *a);

/* Writes the pending graph, as the scheduler would plan it, as Graphviz:
 * one node per API call (op, shape, dtype), fused kernels as clusters,
 * inserted copies in their own colour, a legend. Does not run anything. */
ND_API nd_status nd_graph_dump_dot(const char *path);

#ifdef __cplusplus
}
#endif
#endif /* ND_INSPECTION_H */
