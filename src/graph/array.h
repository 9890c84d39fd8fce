/* nd_array: a reference-counted view (dtype, shape, strides, offset) of a
 * buffer. Weak scalars (nd_scalar/nd_scalar_int) carry their value so type
 * promotion (NEP 50) and constant fusion can use it without a buffer read. */
#ifndef ND_GRAPH_ARRAY_H
#define ND_GRAPH_ARRAY_H

#include "common/dtype.h"
#include "graph/buffer.h"

typedef enum { ND_STRONG = 0, ND_WEAK_FLOAT, ND_WEAK_INT } nd_weakness;

/* Why an array refuses writes (views inherit it from their base). */
typedef enum {
    ND_WRITABLE = 0,
    ND_READONLY_BROADCAST, /* nd_broadcast_to: elements may alias */
    ND_READONLY_WEAK       /* a weak scalar or a view of one: ops read its value
                              from the handle, so a write to its buffer would
                              make nd_to_host disagree with every op */
} nd_readonly;

struct nd_array {
    int64_t refs;
    nd_buffer *buf;
    nd_dtype dtype;
    uint8_t ndim;
    uint8_t weak;     /* nd_weakness */
    uint8_t readonly; /* nd_readonly */
    int32_t scope_slot; /* position in the runtime's scope list, -1 if none */
    int64_t offset;   /* elements from the buffer start */
    int64_t shape[ND_MAX_DIMS];
    int64_t strides[ND_MAX_DIMS]; /* in elements; 0 on broadcast axes */
    nd_scalar_bits weak_value;    /* for weak scalars: f or i per `weak` */
};

/* A view of `buf` (takes a buffer reference and a handle). refs = 1. */
nd_array *nd_array_new_view(nd_buffer *buf, nd_dtype dtype, int ndim, const int64_t *shape,
                            const int64_t *strides, int64_t offset);
/* A contiguous row-major view of all of `buf`. */
nd_array *nd_array_new_contiguous(nd_buffer *buf, nd_dtype dtype, int ndim, const int64_t *shape);
/* Releases handle + buffer reference and the struct (called when refs = 0). */
void nd_array_destroy(nd_array *a);

int64_t nd_shape_size(int ndim, const int64_t *shape);
void nd_contiguous_strides(int ndim, const int64_t *shape, int64_t *strides);
int nd_array_is_contiguous(const nd_array *a);

#endif
