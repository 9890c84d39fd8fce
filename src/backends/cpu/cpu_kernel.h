/* A kernel prepared for interpretation: axes reordered and coalesced, every
 * instruction resolved to a loop, registers allocated by liveness. Built per
 * launch (cheap: linear in the kernel's size). */
#ifndef ND_BACKENDS_CPU_KERNEL_H
#define ND_BACKENDS_CPU_KERNEL_H

#include <stdatomic.h>

#include "backends/cpu/cpu_internal.h"

/* Work items cover this many elements (fixed, so partial results and their
 * combination order do not depend on the thread count). */
#define ND_CPU_WORK 32768

typedef struct {
    char *base; /* slot base pointer (NULL for INDEX maps) */
    int dtype;
    int esize;
    int inplace_ok; /* loads: may be read in place (no store writes its slot) */
    int64_t off;
    int64_t st[ND_MAX_DIMS];
} cpu_access;

/* PI_LOOP / PI_LOOP_END: kernel_ir.h's ND_IR_LOOP (ops[0] the first value,
 * range the count, aux its LOOP_END) and ND_IR_LOOP_END (ops[0] the value
 * carried on, aux its LOOP). */
enum { PI_FN, PI_LOAD, PI_PARAM, PI_INDEX, PI_RAND_U, PI_RAND_N, PI_RAND_I, PI_UFUNC, PI_GATHER, PI_LOOP, PI_LOOP_END };

/* The first bad index of a kernel's gathers (kernel_ir.h's ND_IR_GATHER):
 * the least prepared iteration point that met one, whatever the thread
 * count. Taken under a spin lock: only failing points get here. */
typedef struct {
    atomic_flag lock;
    int64_t point; /* INT64_MAX: none */
    int64_t value; /* the index as given (before wrapping) */
    int32_t gather, axis;
} cpu_gather_bad;

/* axis_gather: the gather number | the indexed axis << 16. */
void nd_cpu_gather_bad_note(cpu_gather_bad *b, int64_t point, int64_t value, int32_t axis_gather);

typedef struct {
    int kind;
    int dtype;       /* result dtype */
    int n_ops;
    int ops[ND_IR_GATHER_MAX_AXES]; /* SSA operands (3 at most but for PI_UFUNC and PI_GATHER) */
    _Static_assert(ND_IR_GATHER_MAX_AXES >= ND_UFUNC_MAX_ARGS, "ops holds a user loop's arguments too");
    int in_dtype[ND_UFUNC_MAX_ARGS]; /* dtype each operand is computed in */
    nd_cpu_fn in_cast[3]; /* operand cast into in_dtype, or NULL */
    nd_cpu_fn fn;
    nd_ufunc_tile_fn ufn; /* PI_UFUNC: the user loop's compiled tile function */
    int cdtype;      /* dtype fn produces */
    nd_cpu_fn out_cast; /* cdtype -> dtype, or NULL */
    int reg;         /* register of the result */
    int aux;         /* load / index number; PARAM: parameter number */
    uint64_t seed, stream, range; /* random draws; range: integers; PI_LOOP: the count */
    int64_t gstride[ND_IR_GATHER_MAX_AXES], gsize[ND_IR_GATHER_MAX_AXES]; /* PI_GATHER: the indexed
                                     axes (n_ops of them; aux: the base load) */
    int gwrap, gather;            /* PI_GATHER: negative indices wrap; gather number */
    nd_scalar_bits param;
} cpu_inst;

typedef struct {
    cpu_access at;
    int value;
    nd_cpu_fn cast; /* value dtype -> store dtype, or NULL */
} cpu_store;

typedef union {
    double f;
    int64_t i;
    uint64_t u;
} cpu_val;

typedef struct {
    cpu_val v;
    int64_t idx; /* ARGMIN/ARGMAX: linear index over the reduced axes, -1 = empty */
} cpu_acc;

typedef struct cpu_prep {
    int ndim;
    int64_t shape[ND_MAX_DIMS];
    int64_t total;
    int n_loads, n_indices, n_insts, n_stores;
    cpu_access *loads, *indices;
    cpu_inst *insts;
    cpu_store *stores;
    cpu_gather_bad *bad; /* where gathers report a bad index (run_kernel's) */
    int n_regs;      /* tile registers per worker (incl. 4 scratch) */
    int scratch_reg; /* first of 4 scratch registers */
    /* reduction */
    int has_reduce;
    int rkind, acc_dtype; /* acc_dtype: ND_FLOAT64, ND_INT64, ND_UINT64 or ND_BOOL */
    int rvalue;
    nd_cpu_fn to_acc; /* value dtype -> acc_dtype, or NULL */
    int sum_f32;      /* SUM of float32: summed in double without a cast pass */
    nd_cpu_fn acc_to_out;
    cpu_access rout; /* output map (strides 0 on reduced axes) */
    int nO, nR;      /* axes [0,nO) outer kept, [nO,nO+nR) reduced, rest inner kept */
    int64_t O, R, L;
    int64_t width, ncol, rows_per_tile, rows_per_item, nch, groups_per_item;
    int64_t n_items;
    cpu_acc *partials;
    size_t scratch_bytes; /* per worker */
    int stream_stores;    /* outputs far larger than the caches: non-temporal */
} cpu_prep;

/* Evaluates the body over the flat (row-major, prepared space) range
 * [f, f + len), len <= ND_CPU_TILE; stores are written. Returns the value
 * pointers (vals[j] for instruction j). `regs` is the worker's register file. */
void nd_cpu_eval_tile(const cpu_prep *p, char *regs, const void **vals, int64_t f, int64_t len);
void nd_cpu_fill_params(const cpu_prep *p, char *regs);
/* Contiguous store of `bytes` from src to dst, non-temporal when `stream`
 * (the outputs of cpu_prep.stream_stores kernels; the worker fences). */
void nd_cpu_store_contig(char *dst, const char *src, size_t bytes, int stream);

/* Reductions (cpu_reduce.c). */
nd_status nd_cpu_reduce_setup(cpu_prep *p);
void nd_cpu_reduce_item(const cpu_prep *p, char *regs, const void **vals, char *scratch,
                        int64_t item);
void nd_cpu_reduce_finish(const cpu_prep *p);
void nd_cpu_reduce_empty(const cpu_prep *p); /* reduced extent 0: identities */
size_t nd_cpu_reduce_scratch(const cpu_prep *p);

/* Register stride: a tile of the widest dtype plus 320 bytes, so registers
 * do not sit at multiples of 4 KiB from each other (4K aliasing stalls loads
 * behind unrelated stores). */
#define ND_CPU_REG_BYTES ((size_t)ND_CPU_TILE * 16 + 320)

#endif
