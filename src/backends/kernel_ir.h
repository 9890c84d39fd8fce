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
    ND_IR_GATHER,     /* a = gather number g (nd_kernel.gathers); b, c, d =
                         the SSA int64 indices i_0, i_1, i_2 of its indexed
                         axes (g.n_axes of them; -1 past those), g.more[]
                         those of axes 3.. (nd_ir_gather_indices lists
                         them all); dtype = the
                         source's (its load's dtype): the element at load
                         g.load's address + sum_k w_k * g.stride[k], w_k =
                         i_k, or i_k + g.size[k] when i_k < 0 and g wraps.
                         When some w_k is outside [0, g.size[k]) nothing is
                         read: the value is 0 and the kernel files the bad
                         index (the first such k) in its fail record
                         (nd_ir_fail: CPU, the least such prepared iteration
                         point; CUDA, the first thread to meet one). The
                         kernel itself succeeds; whoever ran it reads the
                         record and fails what depends on the gather
                         (nd_kernel_gather_writes)                          */
    ND_IR_LOOP,       /* the start of a loop region: the instructions after
                         it, up to its ND_IR_LOOP_END, run `a` times (a =
                         an int64 ND_IR_PARAM, at least 1 at launch); its
                         value is the carried value: b (of dtype) in the
                         first round, the LOOP_END's b after each round.
                         d = the loop's number in the kernel (0, 1, ..: no
                         two loops are one instruction). Loops do not nest
                         or overlap                                          */
    ND_IR_LOOP_END,   /* a = its ND_IR_LOOP, b = the value carried into the
                         next round (of dtype, the LOOP's); its value is b
                         after the last round. No instruction after it
                         reads an instruction of the region (LOOP .. END),
                         nor does a store or the reduction: only the
                         LOOP_END's value leaves the loop (a backend may
                         scope the region's values to it)                    */
    ND_IR_NUM_OPCODES
} nd_ir_opcode;

/* Instruction flags. EXACT: round this float operation on its own (no
 * fused multiply-add with its neighbours), so that its bits agree across
 * backends; set on the random-number transforms. Other float operations may
 * be contracted by a backend (within float tolerance, not bit for bit).
 * ONE_HIGH_WORD, on a draw (RAND_*): the streams of all the kernel's draws
 * so flagged that name the same seed parameter have the same high 32 bits,
 * so the part of Philox's first round that depends on the stream's high
 * word and the seed is one value for all of them (the CUDA generator
 * computes the second round's product of it once: codegen_rng.c). The
 * scheduler sets it on every draw and keeps it true (flush_walk.h,
 * rng_root). */
enum { ND_IR_EXACT = 1, ND_IR_ONE_HIGH_WORD = 2 };

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
 * strides over the iteration axes, the indexed axes at 0); indexed axis k
 * adds stride[k] * w_k. The load is read only through gathers, so passes
 * that reason about the elements a load covers (spans, chunking,
 * partitioning) must treat every element of the slot as read:
 * nd_ir_load_gathered. No padding: builders compare gathers with memcmp. */
#define ND_IR_GATHER_MAX_AXES ND_MAX_DIMS
typedef struct {
    int32_t load;
    int32_t fn;     /* for the message: nd_lib_index_fn | ND_INDEX_* flags */
    int64_t axes;   /* for the message: the indexed axes, 4 bits each (lib_calls.h's v[2]) */
    int32_t n_axes; /* 1..ND_IR_GATHER_MAX_AXES: the instruction's b, c, d, then more[] */
    int32_t pad;    /* 0 */
    int64_t stride[ND_IR_GATHER_MAX_AXES]; /* elements between neighbours of indexed axis k */
    int64_t size[ND_IR_GATHER_MAX_AXES];   /* its length (> 0: an empty axis gathers nothing) */
    /* The SSA int64 indices of axes 3.. (an instruction has three value
     * operands; -1 past n_axes): SSA operands like b, c, d, which every
     * pass that renumbers or follows values must treat as such. */
    int32_t more[ND_IR_GATHER_MAX_AXES - 3];
    int32_t pad2;   /* 0 */
} nd_ir_gather;

/* Where a kernel that gathers files its first bad index (set = 1; zero
 * before the kernel runs). A backend's run_kernel finds it one past the
 * kernel's slots, slots[k->n_slots], in memory the kernel can write (NULL:
 * the backend keeps its own and returns ND_ERR_INDEX with the message).
 * Whoever reads it fails what depends on the gather (nd_kernel_gather_
 * writes) with nd_ir_fail_error's message, so a kernel that gathers may be
 * merged with other work and run in a whole plan or CUDA graph: only the
 * values computed from a bad index are lost (docs/internals.md). */
typedef struct {
    int32_t set;
    int32_t gather; /* gather number */
    int32_t axis;   /* k: which of its indexed axes */
    int32_t pad;
    int64_t index;  /* the index as given (before wrapping) */
} nd_ir_fail;

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

_Static_assert(sizeof(nd_ir_gather) % 8 == 0 && ND_IR_GATHER_MAX_AXES > 3, "nd_ir_gather has no padding");

/* The SSA indices of gather instruction `in` (one per indexed axis: b, c,
 * d, then its gather's more[]) into ix; returns their number. */
static inline int nd_ir_gather_indices(const nd_kernel *k, const nd_ir_inst *in, int32_t ix[ND_IR_GATHER_MAX_AXES]) {
    const nd_ir_gather *g = &k->gathers[in->a];
    int n = g->n_axes < 0 ? 0 : g->n_axes > ND_IR_GATHER_MAX_AXES ? ND_IR_GATHER_MAX_AXES : g->n_axes;
    for (int q = 0; q < n; q++) ix[q] = q == 0 ? in->b : q == 1 ? in->c : q == 2 ? in->d : g->more[q - 3];
    return n;
}

/* A kernel's slot accesses in one numbering: its loads, its stores, then
 * the reduction's output. (Non-const from a const kernel, as strchr: the
 * passes that rewrite a kernel's accesses walk them the same way.) */
static inline int32_t nd_kernel_n_accesses(const nd_kernel *k) {
    return k->n_loads + k->n_stores + (k->has_reduce ? 1 : 0);
}
static inline nd_ir_access *nd_kernel_access(const nd_kernel *k, int32_t j) {
    if (j < k->n_loads) return &k->loads[j];
    if (j < k->n_loads + k->n_stores) return &k->stores[j - k->n_loads].at;
    return (nd_ir_access *)&k->reduce.out;
}

/* The bytes [lo, hi] access a covers over the space (ndim, shape), every
 * extent at least 1: in bytes, because accesses of one slot may differ in
 * dtype (a component view of a complex buffer, graph/array.h). */
static inline void nd_access_byte_span(int ndim, const int64_t *shape, const nd_ir_access *a, int64_t *lo,
                                       int64_t *hi) {
    int64_t item = (int64_t)nd_dtype_size((nd_dtype)a->dtype);
    *lo = *hi = a->offset;
    for (int k = 0; k < ndim; k++) {
        int64_t e = a->strides[k] * (shape[k] - 1);
        if (e < 0)
            *lo += e;
        else
            *hi += e;
    }
    *lo *= item;
    *hi = *hi * item + item - 1;
}

/* Whether load l is the base of a gather (its slot is read anywhere). */
static inline int nd_ir_load_gathered(const nd_kernel *k, int32_t l) {
    for (int32_t g = 0; g < k->n_gathers; g++)
        if (k->gathers[g].load == l) return 1;
    return 0;
}

/* backends/kernel_loops.c. The SSA operands of instruction `in` that are
 * values (not parameters or table numbers), into ops; returns how many. */
int nd_ir_value_operands(const nd_kernel *k, const nd_ir_inst *in, int32_t ops[ND_IR_GATHER_MAX_AXES]);
/* Checks the kernel's loop regions (ND_IR_LOOP .. ND_IR_LOOP_END): each
 * LOOP closed by one LOOP_END after it, none nested or overlapping, the
 * count an int64 parameter, the carried values of the LOOP's dtype, and
 * nothing after a region (instruction, store, reduction) reading a value
 * inside it but its LOOP_END. Fills loop_end[j] (n_insts entries) with
 * the index of the LOOP_END whose region holds j (LOOP <= j <= LOOP_END),
 * else -1. Returns NULL when
 * sound, else what is wrong (*at: the instruction). */
const char *nd_kernel_check_loops(const nd_kernel *k, int32_t *loop_end, int32_t *at);

/* backends/kernel_fail.c. The error of a filed record (ND_ERR_INDEX, set
 * as this thread's error): the gathering function, the index and the axis
 * size, as the gather routine's. */
int nd_ir_fail_error(const nd_kernel *k, const nd_ir_fail *f);
/* Marks written[s] = 1 for every kernel slot s that a store or the
 * reduction writes with a value computed from gather g (written has
 * k->n_slots entries, left as they are elsewhere). Returns how many it
 * marked; -1 out of memory (then every written slot is marked). */
int nd_kernel_gather_writes(const nd_kernel *k, int32_t g, uint8_t *written);

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
