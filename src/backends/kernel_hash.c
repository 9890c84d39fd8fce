/* The structural hash of a kernel (kernel_ir.h), and the same hash without
 * its extents: the key of a shape-generic kernel, whose extents are launch
 * arguments (docs/internals.md, "Shape-generic kernels"). One function
 * hashes both, so that a field added to the IR cannot join one and miss
 * the other. */
#include "backends/kernel_ir.h"
#include "common/hash.h"
#include "common/ufunc_loop.h"

static uint64_t hash_access(uint64_t h, const nd_ir_access *a, int ndim) {
    h = nd_hash_u64(h, (uint64_t)(uint32_t)a->slot << 8 | a->dtype);
    h = nd_hash_u64(h, (uint64_t)a->offset);
    for (int k = 0; k < ndim; k++) h = nd_hash_u64(h, (uint64_t)a->strides[k]);
    return h;
}

static uint64_t kernel_hash(const nd_kernel *k, int with_shape) {
    uint64_t h = nd_hash_u64(ND_HASH_SEED, (uint64_t)k->ndim << 32 | (uint32_t)k->n_slots);
    if (with_shape)
        for (int j = 0; j < k->ndim; j++) h = nd_hash_u64(h, (uint64_t)k->shape[j]);
    else
        h = nd_hash_u64(h, 0x5ea9e1e55ull); /* never equal to a hash with extents */
    for (int i = 0; i < k->n_params; i++) h = nd_hash_u64(h, k->param_dtypes[i] + 0x100u);
    for (int i = 0; i < k->n_loads; i++) h = hash_access(h, &k->loads[i], k->ndim);
    for (int i = 0; i < k->n_indices; i++) h = hash_access(h, &k->indices[i], k->ndim);
    for (int i = 0; i < k->n_insts; i++) {
        nd_ir_inst in = k->insts[i];
        if (in.op == ND_IR_UFUNC) {
            /* the loop's content, not its id: another process (the CUDA
             * backend's disk cache) numbers its loops differently */
            const nd_ufunc_loop *l = nd_ufunc_loop_get(in.ufunc);
            h = nd_hash_u64(h, l ? l->hash : 0);
            in.ufunc = 0;
        }
        h = nd_hash_bytes(h, &in, sizeof in);
    }
    for (int i = 0; i < k->n_stores; i++) {
        h = hash_access(h, &k->stores[i].at, k->ndim);
        h = nd_hash_u64(h, (uint64_t)k->stores[i].value);
    }
    for (int i = 0; i < k->n_gathers; i++) {
        /* the size and stride are constants of the code, in both hashes */
        const nd_ir_gather *g = &k->gathers[i];
        h = nd_hash_u64(h, (uint64_t)(uint32_t)g->load << 32 | (uint32_t)g->fn);
        h = nd_hash_u64(h, (uint64_t)g->axes);
        h = nd_hash_u64(h, (uint64_t)g->n_axes);
        for (int a = 0; a < g->n_axes && a < ND_IR_GATHER_MAX_AXES; a++) {
            h = nd_hash_u64(h, (uint64_t)g->stride[a]);
            h = nd_hash_u64(h, (uint64_t)g->size[a]);
            if (a >= 3) h = nd_hash_u64(h, (uint64_t)(uint32_t)g->more[a - 3]); /* an SSA operand */
        }
    }
    if (k->has_reduce) {
        h = nd_hash_u64(h, (uint64_t)k->reduce.kind << 40 | (uint64_t)k->reduce.out_dtype << 32 |
                               k->reduce.axes);
        h = nd_hash_u64(h, (uint64_t)k->reduce.value);
        h = hash_access(h, &k->reduce.out, k->ndim);
    }
    return h;
}

uint64_t nd_kernel_hash(const nd_kernel *k) { return kernel_hash(k, 1); }

uint64_t nd_kernel_hash_shapeless(const nd_kernel *k) { return kernel_hash(k, 0); }
