/* Kernel IR: one fused kernel, as every backend executes it.
 *
 * A kernel iterates over a space (ndim, shape). Every memory access is an
 * affine map of the iteration index: element = offset + sum_k strides[k]*i_k
 * (stride 0 broadcasts) into a buffer slot. The body is SSA: instruction j's
 * value is computed from earlier instructions. Stores write values to slots;
 * an optional reduction combines one value over `axes` and writes one element
 * per kept index. Shapes, strides and offsets are part of the kernel (and its
 * hash; a backend may key a kernel without its extents and pass them at
 * launch: nd_kernel_hash_shapeless); scalar values are parameters passed at
 * launch, never hashed.
 *
 * Backends must give the same answer for any tiling or thread count, and
 * random draws depend only on (seed, stream, logical index). */
#ifndef ND_BACKENDS_KERNEL_IR_H
#define ND_BACKENDS_KERNEL_IR_H

#include <stdint.h>

#include "common/dtype.h"
#include "common/ops.h"

/* Instruction opcodes: the elementwise ops (nd_op values 0..) followed by the
 * IR-only ones. */
typedef enum {
    ND_IR_LOAD = ND_NUM_ELEMENTWISE_OPS, /* a = load index; dtype = load dtype */
    ND_IR_PARAM,      /* a = parameter index; dtype = its dtype (converted
                         from the parameter's kind: f, i or u)               */
    ND_IR_INDEX,      /* a = affine index; dtype = ND_INT64:
                         offset + sum strides[k]*i_k                         */
    ND_IR_RAND_UNIFORM, /* a = SSA int64 logical index i, b = param (u)
                         seed, c = param (u) stream; value in [0,1) of
                         dtype (float32: (x0 >> 8) * 2^-24; float64:
                         ((x0 >> 5) * 2^26 + (x1 >> 6)) * 2^-53), where
                         x0, x1, .. are the draw's k words (k = 1 for
                         float32, 2 for float64): words (i % W)*k ..
                         of Philox4x32-10(key = (seed_lo, seed_hi),
                         counter = (c_lo, c_hi, stream_lo, stream_hi)),
                         c = i / W, W = 4/k (common/philox.h)              */
    ND_IR_RAND_NORMAL,  /* as above with k = 2 (float32) or 4 (float64)
                         words; standard normal by Box-Muller:
                         u1 = 1 - U(first half) in (0,1],
                         u2 = U(second half),
                         sqrt(-2 ln u1) * cos(2 pi u2), in dtype            */
    ND_IR_RAND_INTEGER, /* a, b, c as above, d = param (u) range r >= 1;
                         dtype ND_UINT32 (k = 1 word, r <= 2^32) or
                         ND_UINT64 (k = 2 words, high word first, r <
                         2^64): an unbiased integer in [0, r) by Lemire's
                         multiply-shift with rejection; a rejected draw
                         redraws from its own calls (common/philox.h).
                         dtype ND_UINT16: the pair form, two elements a
                         word (W = 8, element i reads word (i % 8) / 2 of
                         call i / 8), for a range with nd_philox_pairs(r);
                         there d = param (u) r | t << 32, t = 2^32 mod r^2
                         the pair's rejection threshold, computed once
                         when recorded                                      */
    ND_IR_UFUNC,      /* user loop `ufunc` (common/ufunc_loop.h) of the
                         operands a, b, c, d (its nargs of them; each already
                         of the loop's parameter dtype); dtype = its return  */
    ND_IR_GATHER,     /* a = gather number (nd_kernel.gathers), b = SSA int64
                         index i; dtype = the source's (its load's dtype):
                         the element at load g.load's address + w * g.stride,
                         w = i, or i + g.size when i < 0 and g wraps. A w
                         outside [0, g.size) is never read through: the
                         value is 0 and the kernel files the bad index (CPU:
                         the least such prepared iteration point; CUDA: the
                         first thread to meet one), which fails the
                         kernel's step with ND_ERR_INDEX after it ran       */
    ND_IR_NUM_OPCODES
} nd_ir_opcode;

/* Instruction flags. EXACT: round this float operation on its own (no
 * fused multiply-add with its neighbours), so that its bits agree across
 * backends; set on the random-number transforms. Other float operations may
 * be contracted by a backend (within float tolerance, not bit for bit). */
enum { ND_IR_EXACT = 1 };

typedef struct {
    uint8_t op;    /* nd_op or nd_ir_opcode */
    uint8_t dtype; /* result dtype */
    uint16_t flags; /* ND_IR_* flags */
    int32_t a, b, c; /* operands (SSA indices unless the opcode says else) */
    int32_t d;       /* ND_IR_RAND_INTEGER's range parameter, ND_IR_UFUNC's fourth
                        operand; else unused (0 or -1) */
    uint32_t ufunc;  /* ND_IR_UFUNC: the loop's registry id; else 0. The kernel
                        hash takes the loop's content hash instead of the id */
} nd_ir_inst;

/* An affine access into a slot (load or store), or a pure index (INDEX). */
typedef struct {
    int32_t slot;  /* kernel buffer slot (unused for INDEX maps) */
    uint8_t dtype; /* element dtype in memory */
    uint8_t pad[3];
    int64_t offset;
    int64_t strides[ND_MAX_DIMS];
} nd_ir_access;

typedef struct {
    nd_ir_access at;
    int32_t value; /* SSA value stored (already of at.dtype) */
} nd_ir_store;

/* The source of an ND_IR_GATHER: load `load` is its base (offset and
 * strides over the iteration axes, the indexed axis at 0); the indexed axis
 * adds stride * w. The load is read only through gathers, so passes that
 * reason about the elements a load covers (spans, chunking, partitioning)
 * must treat every element of the slot as read: nd_ir_load_gathered. */
typedef struct {
    int32_t load;
    int32_t fn;     /* for the message: nd_lib_index_fn | ND_INDEX_* flags */
    int64_t axes;   /* for the message: the indexed axis (lib_calls.h's v[2]) */
    int64_t stride; /* elements between neighbours of the indexed axis */
    int64_t size;   /* its length (> 0: an empty axis gathers nothing) */
} nd_ir_gather;

typedef struct {
    uint8_t kind;      /* nd_reduce_kind */
    uint8_t out_dtype; /* dtype written (ARGMIN/ARGMAX: ND_INT64) */
    uint16_t pad;
    uint32_t axes;     /* bit k: iteration axis k is reduced */
    int32_t value;     /* SSA value reduced (its dtype is the input dtype) */
    nd_ir_access out;  /* strides over iteration axes, 0 on reduced axes */
} nd_ir_reduce;

typedef struct nd_kernel {
    int32_t ndim;
    int64_t shape[ND_MAX_DIMS];
    int32_t n_slots; /* buffers bound at launch */
    int32_t n_params;
    uint8_t *param_dtypes; /* n_params; the IR dtype each parameter is used as */
    int32_t n_loads;
    nd_ir_access *loads;
    int32_t n_indices;
    nd_ir_access *indices;
    int32_t n_insts;
    nd_ir_inst *insts;
    int32_t n_stores;
    nd_ir_store *stores;
    int32_t n_gathers;
    nd_ir_gather *gathers;
    int32_t has_reduce;
    nd_ir_reduce reduce;
    uint64_t hash; /* structural: everything above except parameter values */
    char name[64]; /* readable, from the ops: "sin_cos_mul_add" */
} nd_kernel;

/* Whether load l is the base of a gather (its slot is read anywhere). */
static inline int nd_ir_load_gathered(const nd_kernel *k, int32_t l) {
    for (int32_t g = 0; g < k->n_gathers; g++)
        if (k->gathers[g].load == l) return 1;
    return 0;
}

/* The structural hash (nd_kernel.hash): everything but parameter values
 * (backends/kernel_hash.c). */
uint64_t nd_kernel_hash(const nd_kernel *k);
/* The same without the extents (ndim stays): what a backend's cache keys a
 * shape-generic kernel by, with the size class it compiled it for, so that
 * one compiled kernel serves every length (docs/internals.md). */
uint64_t nd_kernel_hash_shapeless(const nd_kernel *k);

/* Parameter values travel as nd_scalar_bits; the kind of a parameter's
 * value (f/i/u) is that of its param_dtypes entry: float dtypes use .f (a
 * double, converted to the parameter's float dtype by rounding), signed ints
 * and bool .i, unsigned .u. A backend may convert once per launch. */

#endif
