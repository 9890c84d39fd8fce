/* DLPack 1.x both ways. An export is an nd_data access (interop.c) whose
 * end is the tensor's deleter; an import is an nd_wrap whose release is
 * the producer's deleter. Nothing is copied either way. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/interop.h"

/* nd dtype <-> DLPack (code, bits); lanes are always 1. */
static const struct {
    uint8_t code, bits;
} dl_types[ND_NUM_DTYPES] = {
    [ND_BOOL] = {kDLBool, 8},      [ND_INT8] = {kDLInt, 8},       [ND_INT16] = {kDLInt, 16},
    [ND_INT32] = {kDLInt, 32},     [ND_INT64] = {kDLInt, 64},     [ND_UINT8] = {kDLUInt, 8},
    [ND_UINT16] = {kDLUInt, 16},   [ND_UINT32] = {kDLUInt, 32},   [ND_UINT64] = {kDLUInt, 64},
    [ND_FLOAT16] = {kDLFloat, 16}, [ND_BFLOAT16] = {kDLBfloat, 16}, [ND_FLOAT32] = {kDLFloat, 32},
    [ND_FLOAT64] = {kDLFloat, 64}, [ND_COMPLEX64] = {kDLComplex, 64}, [ND_COMPLEX128] = {kDLComplex, 128},
};

/* ------------------------------------------------------------- export */

typedef struct {
    DLManagedTensorVersioned t; /* first: the tensor is the block */
    nd_array *a;
    int64_t shape[ND_MAX_DIMS], strides[ND_MAX_DIMS];
} export_block;

/* The consumer is done: end the access (unless nd_shutdown already ended
 * every access) and free the block. Any thread, so it takes the lock. */
static void export_deleter(DLManagedTensorVersioned *self) {
    ND_API_GUARD();
    if (!self) return;
    export_block *e = self->manager_ctx;
    if (nd_rt.initialised) nd_fe_data_end(NULL, e->a, e);
    free(e);
}

DLManagedTensorVersioned *nd_to_dlpack(nd_array *a, nd_memory where, nd_access mode) {
    ND_API_GUARD();
    static const char fn[] = "nd_to_dlpack";
    if (nd_fe_arg(fn, "a", a)) return NULL;
    export_block *e = nd_calloc(1, sizeof *e);
    if (!e) {
        nd_error_set(ND_ERR_OOM, "%s: out of host memory for the DLPack tensor", fn);
        return NULL;
    }
    void *p = nd_fe_data_begin(fn, a, where, mode, e);
    if (!p) {
        free(e);
        return NULL;
    }
    e->a = a;
    for (int k = 0; k < a->ndim; k++) {
        e->shape[k] = a->shape[k];
        e->strides[k] = a->strides[k];
    }
    DLManagedTensorVersioned *t = &e->t;
    t->version = (DLPackVersion){DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
    t->manager_ctx = e;
    t->deleter = export_deleter;
    t->flags = mode == ND_DATA_READ || a->readonly ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
    t->dl_tensor.data = p;
    t->dl_tensor.device = where.kind == ND_MEM_HOST ? (DLDevice){kDLCPU, 0} : (DLDevice){kDLCUDA, where.device};
    t->dl_tensor.ndim = a->ndim;
    t->dl_tensor.dtype = (DLDataType){dl_types[a->dtype].code, dl_types[a->dtype].bits, 1};
    t->dl_tensor.shape = e->shape;
    t->dl_tensor.strides = e->strides;
    t->dl_tensor.byte_offset = 0;
    return t;
}

/* ------------------------------------------------------------- import */

static void import_release(void *ctx) {
    DLManagedTensorVersioned *t = ctx;
    if (t->deleter) t->deleter(t);
}

static const char *dl_code_name(unsigned code) {
    static const char *names[] = {"int", "uint", "float", "opaque handle", "bfloat", "complex", "bool"};
    return code < sizeof names / sizeof names[0] ? names[code] : "float8/6/4 or unknown";
}

nd_array *nd_from_dlpack(DLManagedTensorVersioned *t) {
    ND_API_GUARD();
    static const char fn[] = "nd_from_dlpack";
    if (!t) {
        nd_error_set(ND_ERR_ARG, "%s: t is NULL (pass a DLManagedTensorVersioned from a producer's "
                     "__dlpack__ or to_dlpack)", fn);
        return NULL;
    }
    if (t->version.major != 1) {
        nd_error_set(ND_ERR_UNSUPPORTED, "%s: DLPack version %u.%u: nd reads major version 1 only (ask the "
                     "producer for max_version (1, x))", fn, t->version.major, t->version.minor);
        return NULL;
    }
    const DLTensor *d = &t->dl_tensor;
    nd_dtype dtype = ND_NUM_DTYPES;
    for (int k = 0; k < ND_NUM_DTYPES && d->dtype.lanes == 1; k++)
        if (dl_types[k].code == d->dtype.code && dl_types[k].bits == d->dtype.bits) dtype = (nd_dtype)k;
    if (dtype == ND_NUM_DTYPES) {
        nd_error_set(ND_ERR_DTYPE, "%s: DLPack dtype (code %u = %s, bits %u, lanes %u) has no nd dtype (nd holds "
                     "bool, int/uint 8-64, float 16/32/64, bfloat16 and complex 64/128 with lanes 1; convert it "
                     "first)",
                     fn, d->dtype.code, dl_code_name(d->dtype.code), d->dtype.bits, d->dtype.lanes);
        return NULL;
    }
    nd_memory where;
    if (d->device.device_type == kDLCPU || d->device.device_type == kDLCUDAHost) where = ND_HOST_MEMORY;
    else if (d->device.device_type == kDLCUDA) where = ND_CUDA_MEMORY(d->device.device_id);
    else {
        nd_error_set(ND_ERR_UNSUPPORTED, "%s: DLPack device type %d (id %d) is neither host memory (kDLCPU, "
                     "kDLCUDAHost) nor CUDA memory (kDLCUDA)", fn, (int)d->device.device_type,
                     (int)d->device.device_id);
        return NULL;
    }
    if (d->ndim < 0 || d->ndim > ND_MAX_DIMS || (d->ndim > 0 && !d->shape)) {
        nd_error_set(ND_ERR_SHAPE, "%s: ndim %d%s (nd takes 0..%d dimensions with a shape)", fn, (int)d->ndim,
                     d->ndim > 0 && !d->shape ? " with a NULL shape" : "", ND_MAX_DIMS);
        return NULL;
    }
    /* A producer may give no data for an empty tensor. */
    static _Alignas(16) unsigned char empty[16];
    int empty_tensor = 0;
    for (int k = 0; k < d->ndim; k++)
        if (d->shape[k] == 0) empty_tensor = 1;
    void *ptr = (char *)d->data + d->byte_offset;
    if (!d->data && empty_tensor) ptr = empty;
    int readonly = t->flags & DLPACK_FLAG_BITMASK_READ_ONLY ? ND_READONLY_IMPORTED : ND_WRITABLE;
    return nd_fe_wrap(fn, ptr, where, dtype, d->ndim, d->shape, d->strides, import_release, t, readonly);
}
