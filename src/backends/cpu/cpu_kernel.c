/* The kernel-IR interpreter: prepares a kernel (axis order, coalescing,
 * register allocation, one loop per instruction), then evaluates it tile by
 * tile so that dispatch costs once per tile, not per element. Contiguous
 * loads are read in place; others are gathered into a tile register. When
 * the JIT (cpu_jit.h) has a compiled version of the prepared kernel, the
 * same work items run that instead. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/cpu_jit.h"
#include "common/alloc.h"
#include "backends/cpu/cpu_kernel.h"
#include "common/error.h"
#include "common/philox.h"
#include "common/lib_calls.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* ------------------------------------------------------------ preparation */

static int inst_dtype(const nd_kernel *k, int j) { return k->insts[j].dtype; }

static void build_access(cpu_access *dst, const nd_ir_access *src, void *const *slots,
                         const int *order, int n, int with_slot) {
    dst->base = with_slot ? (char *)slots[src->slot] : NULL;
    dst->dtype = src->dtype;
    dst->esize = (int)nd_cpu_dtype_size(src->dtype);
    dst->inplace_ok = 1;
    dst->off = src->offset;
    for (int d = 0; d < n; d++) dst->st[d] = order[d] >= 0 ? src->strides[order[d]] : 0;
    for (int d = n; d < ND_MAX_DIMS; d++) dst->st[d] = 0;
}

/* All accesses of p, for coalescing. */
static int collect_accesses(cpu_prep *p, cpu_access **list) {
    int m = 0;
    for (int i = 0; i < p->n_loads; i++) list[m++] = &p->loads[i];
    for (int i = 0; i < p->n_indices; i++) list[m++] = &p->indices[i];
    for (int i = 0; i < p->n_stores; i++) list[m++] = &p->stores[i].at;
    if (p->has_reduce) list[m++] = &p->rout;
    return m;
}

/* Merges axis d into d-1 when every access walks them as one axis. */
static void coalesce(cpu_prep *p, int *group) {
    cpu_access **acc = nd_malloc(sizeof *acc * (size_t)(p->n_loads + p->n_indices + p->n_stores + 1));
    if (!acc) return; /* coalescing is an optimisation */
    int m = collect_accesses(p, acc);
    int d = 1;
    while (d < p->ndim) {
        int ok = group[d] == group[d - 1];
        for (int a = 0; ok && a < m; a++)
            ok = acc[a]->st[d - 1] == acc[a]->st[d] * p->shape[d];
        if (!ok) {
            d++;
            continue;
        }
        p->shape[d - 1] *= p->shape[d];
        for (int a = 0; a < m; a++) {
            acc[a]->st[d - 1] = acc[a]->st[d];
            for (int e = d; e + 1 < p->ndim; e++) acc[a]->st[e] = acc[a]->st[e + 1];
            acc[a]->st[p->ndim - 1] = 0;
        }
        for (int e = d; e + 1 < p->ndim; e++) {
            p->shape[e] = p->shape[e + 1];
            group[e] = group[e + 1];
        }
        p->ndim--;
    }
    free(acc);
}

static nd_status bad_ir(const nd_kernel *k, int j, const char *why) {
    return nd_error_set(ND_ERR_BACKEND, "cpu backend: kernel '%s' instruction %d: %s", k->name, j,
                        why);
}

/* nd_kernel_check_loops, as this backend's error. */
static nd_status check_loops(const nd_kernel *k) {
    int32_t *loop_end = nd_malloc(sizeof(int32_t) * (size_t)k->n_insts), at;
    if (!loop_end) return nd_error_set(ND_ERR_OOM, "cpu backend: out of memory preparing '%s'", k->name);
    const char *why = nd_kernel_check_loops(k, loop_end, &at);
    free(loop_end);
    return why ? bad_ir(k, at, why) : ND_OK;
}

static nd_status prep_insts(cpu_prep *p, const nd_kernel *k, const nd_scalar_bits *params) {
    int loops_checked = 0;
    for (int j = 0; j < k->n_insts; j++) {
        const nd_ir_inst *in = &k->insts[j];
        cpu_inst *pi = &p->insts[j];
        int dt = in->dtype;
        if (!nd_dtype_valid(dt)) return bad_ir(k, j, "invalid dtype");
        pi->dtype = dt;
        pi->cdtype = dt;
        if (in->op == ND_IR_LOAD) {
            if (in->a < 0 || in->a >= k->n_loads) return bad_ir(k, j, "load index out of range");
            pi->kind = PI_LOAD;
            pi->aux = in->a;
            if (k->loads[in->a].dtype != dt) return bad_ir(k, j, "load dtype differs");
            continue;
        }
        if (in->op == ND_IR_PARAM) {
            if (in->a < 0 || in->a >= k->n_params) return bad_ir(k, j, "parameter out of range");
            pi->kind = PI_PARAM;
            pi->aux = in->a;
            pi->param = params[in->a];
            {
                int pt = k->param_dtypes ? k->param_dtypes[in->a] : dt;
                if (!nd_dtype_valid(pt)) return bad_ir(k, j, "invalid parameter dtype");
                pi->cdtype = nd_dtype_is_float((nd_dtype)pt) ? ND_FLOAT64
                             : nd_dtype_kind_of((nd_dtype)pt) == ND_KIND_UINT ? ND_UINT64
                                                                            : ND_INT64;
            }
            continue;
        }
        if (in->op == ND_IR_INDEX) {
            if (in->a < 0 || in->a >= k->n_indices) return bad_ir(k, j, "index map out of range");
            pi->kind = PI_INDEX;
            pi->aux = in->a;
            if (dt != ND_INT64) return bad_ir(k, j, "index must be int64");
            continue;
        }
        if (in->op == ND_IR_RAND_UNIFORM || in->op == ND_IR_RAND_NORMAL) {
            if (in->a < 0 || in->a >= j || inst_dtype(k, in->a) != ND_INT64)
                return bad_ir(k, j, "random draw needs an earlier int64 index");
            if (in->b < 0 || in->b >= k->n_params || in->c < 0 || in->c >= k->n_params)
                return bad_ir(k, j, "random seed/stream parameter out of range");
            pi->kind = in->op == ND_IR_RAND_UNIFORM ? PI_RAND_U : PI_RAND_N;
            pi->n_ops = 1;
            pi->ops[0] = in->a;
            pi->seed = params[in->b].u;
            pi->stream = params[in->c].u;
            /* drawn in float64 (float32 for the 16-bit floats), cast after */
            pi->cdtype = dt == ND_FLOAT64 ? ND_FLOAT64 : ND_FLOAT32;
            if (!nd_dtype_is_float((nd_dtype)dt) && dt != ND_FLOAT64) pi->cdtype = ND_FLOAT64;
            pi->out_cast = pi->cdtype != dt ? nd_cpu_cast_fn(pi->cdtype, dt) : NULL;
            continue;
        }
        if (in->op == ND_IR_RAND_INTEGER) {
            if (in->a < 0 || in->a >= j || inst_dtype(k, in->a) != ND_INT64)
                return bad_ir(k, j, "random draw needs an earlier int64 index");
            if (in->b < 0 || in->b >= k->n_params || in->c < 0 || in->c >= k->n_params ||
                in->d < 0 || in->d >= k->n_params)
                return bad_ir(k, j, "random seed/stream/range parameter out of range");
            if (dt != ND_UINT16 && dt != ND_UINT32 && dt != ND_UINT64)
                return bad_ir(k, j, "integer draw is not uint16/uint32/uint64");
            uint64_t ru = params[in->d].u;
            if (dt == ND_UINT16 ? !nd_philox_pairs((uint32_t)ru) || ru >> 32 != nd_philox_pair_threshold((uint32_t)ru)
                                : ru == 0 || (dt == ND_UINT32 && ru > (uint64_t)1 << 32))
                return bad_ir(k, j, "integer draw range out of range");
            pi->kind = PI_RAND_I;
            pi->n_ops = 1;
            pi->ops[0] = in->a;
            pi->seed = params[in->b].u;
            pi->stream = params[in->c].u;
            pi->range = params[in->d].u;
            pi->cdtype = dt;
            continue;
        }
        if (in->op == ND_IR_UFUNC) {
            const nd_ufunc_loop *l = nd_ufunc_loop_get(in->ufunc);
            if (!l) return bad_ir(k, j, "unknown user function");
            pi->ufn = nd_ufunc_loop_tile(in->ufunc);
            if (!pi->ufn)
                return nd_error_set(ND_ERR_UNSUPPORTED, "cpu backend: user function '%s' has no CPU "
                                    "code (it was defined while another backend ran; define it "
                                    "again on the cpu backend)", l->name);
            if (l->ret != dt) return bad_ir(k, j, "user function result dtype differs");
            const int32_t opnd[ND_UFUNC_MAX_ARGS] = {in->a, in->b, in->c, in->d};
            for (int q = 0; q < l->nargs; q++) {
                if (opnd[q] < 0 || opnd[q] >= j) return bad_ir(k, j, "operand is not an earlier value");
                if (inst_dtype(k, opnd[q]) != l->args[q]) return bad_ir(k, j, "user function operand dtype differs");
                pi->ops[q] = opnd[q];
                pi->in_dtype[q] = l->args[q];
            }
            pi->kind = PI_UFUNC;
            pi->n_ops = l->nargs;
            continue;
        }
        if (in->op == ND_IR_GATHER) {
            if (in->a < 0 || in->a >= k->n_gathers) return bad_ir(k, j, "gather out of range");
            const nd_ir_gather *g = &k->gathers[in->a];
            if (g->load < 0 || g->load >= k->n_loads || k->loads[g->load].dtype != dt)
                return bad_ir(k, j, "gather source load out of range or of another dtype");
            if (g->n_axes < 1 || g->n_axes > ND_IR_GATHER_MAX_AXES) return bad_ir(k, j, "gather axis count");
            int32_t ix[ND_IR_GATHER_MAX_AXES];
            nd_ir_gather_indices(k, in, ix);
            for (int q = 0; q < g->n_axes; q++) {
                if (ix[q] < 0 || ix[q] >= j || inst_dtype(k, ix[q]) != ND_INT64)
                    return bad_ir(k, j, "gather needs earlier int64 indices");
                pi->ops[q] = ix[q];
                pi->gstride[q] = g->stride[q];
                pi->gsize[q] = g->size[q];
            }
            pi->kind = PI_GATHER;
            pi->aux = g->load;
            pi->gather = in->a;
            pi->gwrap = !(g->fn & ND_INDEX_NO_WRAP);
            pi->n_ops = g->n_axes;
            continue;
        }
        if (in->op == ND_IR_LOOP || in->op == ND_IR_LOOP_END) {
            /* the regions' structure, once for the kernel at its first
             * loop instruction (a LOOP_END first is refused there) */
            if (!loops_checked) {
                nd_status st = check_loops(k);
                if (st != ND_OK) return st;
                loops_checked = 1;
            }
            pi->kind = in->op == ND_IR_LOOP ? PI_LOOP : PI_LOOP_END;
            pi->n_ops = 1;
            pi->ops[0] = in->b;
            if (in->op == ND_IR_LOOP) {
                const int64_t count = params[k->insts[in->a].a].i;
                if (count < 1) return bad_ir(k, j, "loop count below 1");
                pi->range = (uint64_t)count;
            } else {
                pi->aux = in->a;
                p->insts[in->a].aux = j;
            }
            continue;
        }
        if (in->op >= ND_NUM_ELEMENTWISE_OPS) return bad_ir(k, j, "unknown opcode");
        int op = in->op, ar = nd_op_arity((nd_op)op);
        int opnd[3] = {in->a, in->b, in->c};
        for (int q = 0; q < ar; q++)
            if (opnd[q] < 0 || opnd[q] >= j) return bad_ir(k, j, "operand is not an earlier value");
        pi->kind = PI_FN;
        pi->n_ops = ar;
        int want[3] = {dt, dt, dt};
        if (op == ND_OP_CAST) {
            pi->fn = nd_cpu_cast_fn(inst_dtype(k, in->a), dt);
            want[0] = inst_dtype(k, in->a);
        } else if (nd_op_computes_in_operands((nd_op)op)) {
            int ta = inst_dtype(k, in->a), tb = ar > 1 ? inst_dtype(k, in->b) : ta;
            int t = ta == tb ? ta : (int)nd_promote((nd_dtype)ta, (nd_dtype)tb);
            int cd = nd_cpu_compute_dtype(op, t);
            if (cd == ND_FLOAT16 || cd == ND_BFLOAT16) cd = ND_FLOAT32;
            want[0] = want[1] = cd;
            pi->fn = nd_cpu_op_fn(op, cd);
            pi->cdtype = nd_op_result_of((nd_op)op, cd);
        } else if (nd_op_kind_of((nd_op)op) == ND_OPK_LOGICAL) {
            want[0] = want[1] = ND_BOOL;
            pi->fn = nd_cpu_op_fn(op, ND_BOOL);
            pi->cdtype = ND_BOOL;
        } else if (op == ND_OP_WHERE) {
            want[0] = ND_BOOL;
            pi->fn = nd_cpu_op_fn(op, dt);
        } else {
            int cd = nd_cpu_compute_dtype(op, dt);
            want[0] = want[1] = want[2] = nd_op_operand_dtype((nd_op)op, cd);
            pi->fn = nd_cpu_op_fn(op, cd);
            pi->cdtype = cd;
        }
        if (!pi->fn) return bad_ir(k, j, "no loop for this op and dtype");
        for (int q = 0; q < ar; q++) {
            pi->ops[q] = opnd[q];
            int have = inst_dtype(k, opnd[q]);
            pi->in_dtype[q] = want[q];
            pi->in_cast[q] = have != want[q] ? nd_cpu_cast_fn(have, want[q]) : NULL;
        }
        pi->out_cast = pi->cdtype != dt ? nd_cpu_cast_fn(pi->cdtype, dt) : NULL;
    }
    return ND_OK;
}

/* Liveness-based register allocation: a value's register is free after its
 * last use; parameters keep theirs (filled once per worker). A result never
 * shares a register with its own operands. */
static nd_status alloc_regs(cpu_prep *p, const nd_kernel *k) {
    int n = k->n_insts;
    int *last = nd_malloc(sizeof(int) * (size_t)(2 * n + 1));
    if (!last) return nd_error_set(ND_ERR_OOM, "cpu backend: out of memory preparing '%s'", k->name);
    int *freel = last + n;
    int nfree = 0, nregs = 0;
    for (int j = 0; j < n; j++) last[j] = j;
    for (int j = 0; j < n; j++)
        for (int q = 0; q < p->insts[j].n_ops; q++) last[p->insts[j].ops[q]] = j;
    for (int s = 0; s < p->n_stores; s++) last[p->stores[s].value] = n;
    if (p->has_reduce) last[p->rvalue] = n;
    /* A loop region runs again from its start: the LOOP's register (the
     * carried value, written at the LOOP_END) and every value from before
     * the region that it reads stay until its LOOP_END. */
    for (int e = 0; e < n; e++) {
        if (p->insts[e].kind != PI_LOOP_END) continue;
        const int b = p->insts[e].aux;
        if (last[b] < e) last[b] = e;
        for (int j = b + 1; j <= e; j++)
            for (int q = 0; q < p->insts[j].n_ops; q++) {
                const int o = p->insts[j].ops[q];
                if (o < b && last[o] < e) last[o] = e;
            }
    }
    for (int j = 0; j < n; j++) {
        cpu_inst *pi = &p->insts[j];
        if (pi->kind == PI_PARAM) {
            pi->reg = nregs++;
            continue;
        }
        pi->reg = nfree ? freel[--nfree] : nregs++;
        for (int q = 0; q < pi->n_ops; q++) {
            int o = pi->ops[q], dup = 0;
            for (int r = 0; r < q; r++) dup |= pi->ops[r] == o;
            if (!dup && last[o] == j && p->insts[o].kind != PI_PARAM) freel[nfree++] = p->insts[o].reg;
        }
        if (last[j] == j) freel[nfree++] = pi->reg; /* dead value */
    }
    free(last);
    p->scratch_reg = nregs;
    p->n_regs = nregs + 4;
    return ND_OK;
}

void nd_cpu_fill_params(const cpu_prep *p, char *regs) {
    /* No tile is longer than the space: a kernel over 8 points fills 8
     * lanes, not ND_CPU_TILE (a 1000-step chain on tiny arrays has ~2000
     * parameters, and filling whole tiles was most of its run time). */
    size_t lanes = p->total > 0 && p->total < ND_CPU_TILE ? (size_t)p->total : ND_CPU_TILE;
    for (int j = 0; j < p->n_insts; j++) {
        const cpu_inst *pi = &p->insts[j];
        if (pi->kind != PI_PARAM) continue;
        char *r = regs + (size_t)pi->reg * ND_CPU_REG_BYTES;
        size_t es = nd_cpu_dtype_size(pi->dtype);
        /* cdtype is the parameter's transport kind: float64, int64 or uint64 */
        nd_cpu_cast_fn(pi->cdtype, pi->dtype)(r, &pi->param, NULL, NULL, 1);
        for (size_t have = es, all = es * lanes; have < all; have *= 2)
            memcpy(r + have, r, have * 2 <= all ? have : all - have); /* doubling fill */
    }
}

/* ------------------------------------------------------------- tile walk */

#define REG(p, regs, r) ((regs) + (size_t)(r) * ND_CPU_REG_BYTES)

static inline int64_t access_off(const cpu_access *a, const int64_t *idx, int n) {
    int64_t o = a->off;
    for (int d = 0; d < n; d++) o += a->st[d] * idx[d];
    return o;
}
static inline void unflatten(const cpu_prep *p, int64_t f, int64_t *idx) {
    for (int d = p->ndim - 1; d >= 0; d--) {
        idx[d] = f % p->shape[d];
        f /= p->shape[d];
    }
}
static inline void next_row(const cpu_prep *p, int64_t *idx) {
    int n = p->ndim;
    idx[n - 1] = 0;
    for (int d = n - 2; d >= 0; d--) {
        if (++idx[d] < p->shape[d]) break;
        idx[d] = 0;
    }
}

#define COPY_SEG(T)                                                              \
    do {                                                                         \
        T *d_ = (T *)dst;                                                        \
        const T *s_ = (const T *)src;                                            \
        if (s == 0) {                                                            \
            T v_ = s_[0];                                                        \
            for (int64_t i = 0; i < seg; i++) d_[i] = v_;                        \
        } else {                                                                 \
            for (int64_t i = 0; i < seg; i++) d_[i] = s_[i * s];                 \
        }                                                                        \
    } while (0)
#define SCATTER_SEG(T)                                                           \
    do {                                                                         \
        T *d_ = (T *)dst;                                                        \
        const T *s_ = (const T *)src;                                            \
        for (int64_t i = 0; i < seg; i++) d_[i * s] = s_[i];                     \
    } while (0)

/* complex128 elements move as one 16-byte unit */
typedef struct {
    uint64_t lo, hi;
} cpu_u128;

static void gather(const cpu_prep *p, const cpu_access *a, char *out, const int64_t *idx0,
                   int64_t len) {
    int n = p->ndim, es = a->esize;
    int64_t idx[ND_MAX_DIMS], s = a->st[n - 1];
    memcpy(idx, idx0, sizeof(int64_t) * (size_t)n);
    for (int64_t pos = 0; pos < len;) {
        int64_t seg = p->shape[n - 1] - idx[n - 1];
        if (seg > len - pos) seg = len - pos;
        const char *src = a->base + access_off(a, idx, n) * es;
        char *dst = out + pos * es;
        if (s == 1) memcpy(dst, src, (size_t)(seg * es));
        else if (es == 4) COPY_SEG(uint32_t);
        else if (es == 8) COPY_SEG(uint64_t);
        else if (es == 2) COPY_SEG(uint16_t);
        else if (es == 16) COPY_SEG(cpu_u128);
        else COPY_SEG(uint8_t);
        pos += seg;
        if (pos < len) next_row(p, idx);
    }
}

/* Contiguous store of a tile. Large outputs bypass the cache (non-temporal
 * stores): they will not be read back soon, and it saves the read-for-
 * ownership traffic, a sixth of a streaming kernel's bytes. */
void nd_cpu_store_contig(char *dst, const char *src, size_t bytes, int stream) {
#if defined(__SSE2__)
    if (stream && bytes >= 256) {
        size_t head = (16 - ((uintptr_t)dst & 15)) & 15;
        if (head) memcpy(dst, src, head);
        size_t i = head;
        for (; i + 64 <= bytes; i += 64) {
            __m128i a = _mm_loadu_si128((const __m128i *)(src + i));
            __m128i b = _mm_loadu_si128((const __m128i *)(src + i + 16));
            __m128i c = _mm_loadu_si128((const __m128i *)(src + i + 32));
            __m128i d = _mm_loadu_si128((const __m128i *)(src + i + 48));
            _mm_stream_si128((__m128i *)(dst + i), a);
            _mm_stream_si128((__m128i *)(dst + i + 16), b);
            _mm_stream_si128((__m128i *)(dst + i + 32), c);
            _mm_stream_si128((__m128i *)(dst + i + 48), d);
        }
        if (i < bytes) memcpy(dst + i, src + i, bytes - i);
        return;
    }
#else
    (void)stream;
#endif
    memcpy(dst, src, bytes);
}

static void scatter(const cpu_prep *p, const cpu_access *a, const char *in, const int64_t *idx0,
                    int64_t len) {
    int n = p->ndim, es = a->esize;
    int64_t idx[ND_MAX_DIMS], s = a->st[n - 1];
    memcpy(idx, idx0, sizeof(int64_t) * (size_t)n);
    for (int64_t pos = 0; pos < len;) {
        int64_t seg = p->shape[n - 1] - idx[n - 1];
        if (seg > len - pos) seg = len - pos;
        char *dst = a->base + access_off(a, idx, n) * es;
        const char *src = in + pos * es;
        if (s == 1) nd_cpu_store_contig(dst, src, (size_t)(seg * es), p->stream_stores);
        else if (s == 0) memcpy(dst, src + (seg - 1) * es, (size_t)es); /* last write wins */
        else if (es == 4) SCATTER_SEG(uint32_t);
        else if (es == 8) SCATTER_SEG(uint64_t);
        else if (es == 2) SCATTER_SEG(uint16_t);
        else if (es == 16) SCATTER_SEG(cpu_u128);
        else SCATTER_SEG(uint8_t);
        pos += seg;
        if (pos < len) next_row(p, idx);
    }
}

static void index_tile(const cpu_prep *p, const cpu_access *a, int64_t *out, const int64_t *idx0,
                       int64_t len) {
    int n = p->ndim;
    int64_t idx[ND_MAX_DIMS], s = a->st[n - 1];
    memcpy(idx, idx0, sizeof(int64_t) * (size_t)n);
    for (int64_t pos = 0; pos < len;) {
        int64_t seg = p->shape[n - 1] - idx[n - 1];
        if (seg > len - pos) seg = len - pos;
        int64_t b = access_off(a, idx, n);
        for (int64_t i = 0; i < seg; i++) out[pos + i] = b + i * s;
        pos += seg;
        if (pos < len) next_row(p, idx);
    }
}

void nd_cpu_gather_bad_note(cpu_gather_bad *b, int64_t point, int64_t value, int32_t axis_gather) {
    while (atomic_flag_test_and_set_explicit(&b->lock, memory_order_acquire)) {
    }
    if (point < b->point) {
        b->point = point;
        b->value = value;
        b->gather = axis_gather & 0xffff;
        b->axis = axis_gather >> 16;
    }
    atomic_flag_clear_explicit(&b->lock, memory_order_release);
}

/* Element i of a tile, several indexed axes: its offset from the base
 * load's in *o, or -1 - k when index k is outside its axis (*bad: that
 * index as given); else 0. */
static inline int gather_offset(const cpu_inst *pi, const int64_t *const *ix, int64_t i, int64_t *o, int64_t *bad) {
    int64_t sum = 0;
    for (int q = 0; q < pi->n_ops; q++) {
        int64_t v = ix[q][i], w = v < 0 && pi->gwrap ? v + pi->gsize[q] : v;
        if ((uint64_t)w >= (uint64_t)pi->gsize[q]) {
            *bad = v;
            return -1 - q;
        }
        sum += w * pi->gstride[q];
    }
    *o = sum;
    return 0;
}

#define GATHER_ELEMS(T)                                                                          \
    do {                                                                                         \
        T *o_ = (T *)out;                                                                        \
        const T *s_ = (const T *)a->base;                                                        \
        if (pi->n_ops == 1) {                                                                    \
            const int64_t *x_ = ix[0], size = pi->gsize[0], st = pi->gstride[0];                 \
            for (int64_t i = 0; i < len; i++) {                                                  \
                int64_t v = x_[i], w = v < 0 && pi->gwrap ? v + size : v;                        \
                if ((uint64_t)w < (uint64_t)size) {                                              \
                    o_[i] = s_[off[i] + w * st];                                                 \
                } else {                                                                         \
                    memset(&o_[i], 0, sizeof(T));                                                \
                    nd_cpu_gather_bad_note(p->bad, f + i, v, pi->gather);                        \
                }                                                                                \
            }                                                                                    \
            break;                                                                               \
        }                                                                                        \
        for (int64_t i = 0; i < len; i++) {                                                      \
            int64_t w = 0, v = 0;                                                                \
            int q = gather_offset(pi, ix, i, &w, &v);                                            \
            if (q == 0) {                                                                        \
                o_[i] = s_[off[i] + w];                                                          \
            } else {                                                                             \
                memset(&o_[i], 0, sizeof(T));                                                    \
                nd_cpu_gather_bad_note(p->bad, f + i, v, pi->gather | (-1 - q) << 16);           \
            }                                                                                    \
        }                                                                                        \
    } while (0)

/* A tile of ND_IR_GATHER: the base offsets of its load, then one element
 * each, never through an index outside its axis. */
static void gather_tile(const cpu_prep *p, const cpu_inst *pi, char *out, int64_t *off, const int64_t *const *ix,
                        const int64_t *idx0, int64_t f, int64_t len) {
    const cpu_access *a = &p->loads[pi->aux];
    index_tile(p, a, off, idx0, len);
    switch (a->esize) {
    case 1: GATHER_ELEMS(uint8_t); break;
    case 2: GATHER_ELEMS(uint16_t); break;
    case 4: GATHER_ELEMS(uint32_t); break;
    case 8: GATHER_ELEMS(uint64_t); break;
    default: GATHER_ELEMS(cpu_u128); break;
    }
}

void nd_cpu_eval_tile(const cpu_prep *p, char *regs, const void **vals, int64_t f, int64_t len) {
    int n = p->ndim;
    int64_t idx0[ND_MAX_DIMS];
    unflatten(p, f, idx0);
    int single = p->shape[n - 1] - idx0[n - 1] >= len;
    char *scr[4];
    for (int q = 0; q < 4; q++) scr[q] = REG(p, regs, p->scratch_reg + q);
    uint64_t round = 0; /* of the open loop region (they do not nest) */
    for (int j = 0; j < p->n_insts; j++) {
        const cpu_inst *pi = &p->insts[j];
        char *r = REG(p, regs, pi->reg);
        switch (pi->kind) {
        case PI_LOOP:
            memmove(r, vals[pi->ops[0]], (size_t)len * nd_cpu_dtype_size(pi->dtype));
            vals[j] = r;
            round = 0;
            break;
        case PI_LOOP_END: {
            const cpu_inst *b = &p->insts[pi->aux];
            const size_t bytes = (size_t)len * nd_cpu_dtype_size(pi->dtype);
            if (++round < b->range) {
                /* the next round starts after the LOOP with this value */
                memmove(REG(p, regs, b->reg), vals[pi->ops[0]], bytes);
                j = pi->aux;
                break;
            }
            memmove(r, vals[pi->ops[0]], bytes);
            vals[j] = r;
            break;
        }
        case PI_LOAD: {
            const cpu_access *a = &p->loads[pi->aux];
            if (single && a->st[n - 1] == 1 && a->inplace_ok) {
                vals[j] = a->base + access_off(a, idx0, n) * a->esize;
            } else {
                gather(p, a, r, idx0, len);
                vals[j] = r;
            }
            break;
        }
        case PI_PARAM:
            vals[j] = r;
            break;
        case PI_GATHER: {
            const int64_t *ix[ND_IR_GATHER_MAX_AXES] = {NULL};
            for (int q = 0; q < pi->n_ops; q++) ix[q] = (const int64_t *)vals[pi->ops[q]];
            gather_tile(p, pi, r, (int64_t *)scr[0], ix, idx0, f, len);
            vals[j] = r;
            break;
        }
        case PI_INDEX:
            index_tile(p, &p->indices[pi->aux], (int64_t *)r, idx0, len);
            vals[j] = r;
            break;
        case PI_RAND_U:
        case PI_RAND_N: {
            /* an index map walking one row with unit stride: consecutive */
            const cpu_inst *xi = &p->insts[pi->ops[0]];
            int consecutive = single && xi->kind == PI_INDEX && p->indices[xi->aux].st[n - 1] == 1;
            nd_cpu_rand_tile(pi->kind == PI_RAND_N, pi->cdtype == ND_FLOAT64, pi->seed, pi->stream,
                             (const int64_t *)vals[pi->ops[0]], consecutive,
                             pi->out_cast ? scr[3] : r, len, scr[0], scr[1], scr[2]);
            if (pi->out_cast) pi->out_cast(r, scr[3], NULL, NULL, len);
            vals[j] = r;
            break;
        }
        case PI_RAND_I: {
            const cpu_inst *xi = &p->insts[pi->ops[0]];
            int consecutive = single && xi->kind == PI_INDEX && p->indices[xi->aux].st[n - 1] == 1;
            if (pi->dtype == ND_UINT16)
                nd_cpu_rand_pair_tile(pi->range, pi->seed, pi->stream, (const int64_t *)vals[pi->ops[0]],
                                      consecutive, (uint16_t *)r, len, scr[0], scr[1]);
            else
                nd_cpu_rand_int_tile(pi->dtype == ND_UINT64, pi->range, pi->seed, pi->stream,
                                     (const int64_t *)vals[pi->ops[0]], consecutive, r, len, scr[0], scr[1]);
            vals[j] = r;
            break;
        }
        case PI_UFUNC: {
            const void *in[ND_UFUNC_MAX_ARGS] = {NULL, NULL, NULL, NULL};
            for (int q = 0; q < pi->n_ops; q++) in[q] = vals[pi->ops[q]];
            pi->ufn(len, r, in);
            vals[j] = r;
            break;
        }
        default: {
            const void *in[3] = {NULL, NULL, NULL};
            for (int q = 0; q < pi->n_ops; q++) {
                in[q] = vals[pi->ops[q]];
                if (pi->in_cast[q]) {
                    pi->in_cast[q](scr[q], in[q], NULL, NULL, len);
                    in[q] = scr[q];
                }
            }
            if (pi->out_cast) {
                pi->fn(scr[3], in[0], in[1], in[2], len);
                pi->out_cast(r, scr[3], NULL, NULL, len);
            } else {
                pi->fn(r, in[0], in[1], in[2], len);
            }
            vals[j] = r;
        }
        }
    }
    for (int s = 0; s < p->n_stores; s++) {
        const cpu_store *st = &p->stores[s];
        const char *v = (const char *)vals[st->value];
        if (st->cast) {
            st->cast(scr[3], v, NULL, NULL, len);
            v = scr[3];
        }
        if (v == st->at.base + access_off(&st->at, idx0, n) * st->at.esize && single &&
            st->at.st[n - 1] == 1)
            continue; /* stored value is the in-place load of the same elements */
        scatter(p, &st->at, v, idx0, len);
    }
}

/* ---------------------------------------------------------------- driver */

static void prep_free(cpu_prep *p) {
    free(p->loads);
    free(p->indices);
    free(p->insts);
    free(p->stores);
    free(p->partials);
}

/* An empty iteration space touches no memory, so its slots may be unbound. */
static int slot_ok(const nd_kernel *k, void *const *slots, int slot, int empty) {
    return slot >= 0 && slot < k->n_slots && (slots[slot] != NULL || empty);
}

/* Axis order: plain kernels keep theirs; reductions become
 * [outer kept | reduced | trailing kept] (reduced axes keep their relative
 * order, so the flattened reduced index is NumPy's ARGMIN index). */
static nd_status prepare(cpu_prep *p, const nd_kernel *k, void *const *slots,
                         const nd_scalar_bits *params, int *empty) {
    memset(p, 0, sizeof *p);
    if (k->ndim < 0 || k->ndim > ND_MAX_DIMS)
        return nd_error_set(ND_ERR_BACKEND, "cpu backend: kernel '%s' has ndim %d", k->name, k->ndim);
    int axes[ND_MAX_DIMS], n = 0;
    *empty = 0;
    for (int d = 0; d < k->ndim; d++) {
        if (k->shape[d] < 0)
            return nd_error_set(ND_ERR_BACKEND, "cpu backend: kernel '%s' has a negative extent", k->name);
        if (k->shape[d] == 0) *empty = 1;
        if (k->shape[d] != 1) axes[n++] = d;
    }
    int hr = k->has_reduce != 0;
    int order[ND_MAX_DIMS], group[ND_MAX_DIMS], m = 0;
    if (hr) {
        uint32_t ax = k->reduce.axes;
        int trailing = 0;
        while (trailing < n && !((ax >> axes[n - 1 - trailing]) & 1)) trailing++;
        for (int i = 0; i < n - trailing; i++)
            if (!((ax >> axes[i]) & 1)) order[m] = axes[i], group[m++] = 0;
        for (int i = 0; i < n; i++)
            if ((ax >> axes[i]) & 1) order[m] = axes[i], group[m++] = 1;
        for (int i = n - trailing; i < n; i++) order[m] = axes[i], group[m++] = 2;
    } else {
        for (int i = 0; i < n; i++) order[m] = axes[i], group[m++] = 0;
    }
    if (m == 0) { /* 0-d: one element */
        order[0] = -1;
        group[0] = hr ? 2 : 0;
        m = 1;
    }
    p->ndim = m;
    for (int d = 0; d < m; d++) p->shape[d] = order[d] >= 0 ? k->shape[order[d]] : 1;

    p->n_loads = k->n_loads;
    p->n_indices = k->n_indices;
    p->n_insts = k->n_insts;
    p->n_stores = k->n_stores;
    p->has_reduce = hr;
    p->loads = nd_calloc((size_t)k->n_loads + 1, sizeof *p->loads);
    p->indices = nd_calloc((size_t)k->n_indices + 1, sizeof *p->indices);
    p->insts = nd_calloc((size_t)k->n_insts + 1, sizeof *p->insts);
    p->stores = nd_calloc((size_t)k->n_stores + 1, sizeof *p->stores);
    if (!p->loads || !p->indices || !p->insts || !p->stores)
        return nd_error_set(ND_ERR_OOM, "cpu backend: out of memory preparing '%s'", k->name);
    for (int i = 0; i < k->n_loads; i++) {
        if (!slot_ok(k, slots, k->loads[i].slot, *empty) || !nd_dtype_valid(k->loads[i].dtype))
            return bad_ir(k, i, "load slot unbound or dtype invalid");
        build_access(&p->loads[i], &k->loads[i], slots, order, m, 1);
    }
    for (int i = 0; i < k->n_indices; i++)
        build_access(&p->indices[i], &k->indices[i], slots, order, m, 0);
    for (int i = 0; i < k->n_stores; i++) {
        const nd_ir_store *s = &k->stores[i];
        if (!slot_ok(k, slots, s->at.slot, *empty) || !nd_dtype_valid(s->at.dtype) || s->value < 0 ||
            s->value >= k->n_insts)
            return bad_ir(k, i, "store slot unbound, dtype invalid or value out of range");
        build_access(&p->stores[i].at, &s->at, slots, order, m, 1);
        p->stores[i].value = s->value;
        for (int l = 0; l < k->n_loads; l++)
            if (k->loads[l].slot == s->at.slot) p->loads[l].inplace_ok = 0;
    }
    if (hr) {
        const nd_ir_reduce *r = &k->reduce;
        if (!slot_ok(k, slots, r->out.slot, *empty) || !nd_dtype_valid(r->out.dtype) || r->value < 0 ||
            r->value >= k->n_insts || r->kind >= ND_NUM_REDUCE_KINDS)
            return bad_ir(k, r->value, "reduction output unbound or malformed");
        build_access(&p->rout, &r->out, slots, order, m, 1);
        p->rkind = r->kind;
        p->rvalue = r->value;
        for (int l = 0; l < k->n_loads; l++)
            if (k->loads[l].slot == r->out.slot) p->loads[l].inplace_ok = 0;
    }
    coalesce(p, group);
    p->nO = p->nR = 0;
    for (int d = 0; d < p->ndim; d++) {
        p->nO += group[d] == 0 && hr;
        p->nR += group[d] == 1;
    }
    p->total = 1;
    for (int d = 0; d < p->ndim; d++) p->total *= p->shape[d];

    nd_status st = prep_insts(p, k, params);
    if (st != ND_OK) return st;
    for (int i = 0; i < k->n_stores; i++) {
        int vdt = p->insts[p->stores[i].value].dtype, sdt = p->stores[i].at.dtype;
        p->stores[i].cast = vdt != sdt ? nd_cpu_cast_fn(vdt, sdt) : NULL;
    }
    if ((st = alloc_regs(p, k)) != ND_OK) return st;
    if (hr) {
        if ((st = nd_cpu_reduce_setup(p)) != ND_OK) return st;
    } else {
        p->n_items = *empty ? 0 : (p->total + ND_CPU_WORK - 1) / ND_CPU_WORK;
    }
    p->stream_stores = !hr && p->total * 8 >= ((int64_t)32 << 20);
    size_t vals = ((size_t)p->n_insts * sizeof(void *) + 63) & ~(size_t)63;
    p->scratch_bytes = (size_t)p->n_regs * ND_CPU_REG_BYTES + vals +
                       (hr ? nd_cpu_reduce_scratch(p) : 0);
    return ND_OK;
}

typedef struct {
    const cpu_prep *p;
    nd_cpu_state *st;
    atomic_llong next;
    const nd_cpu_jit_kernel *jit; /* run compiled, or NULL to interpret */
    void *const *slots;
    const uint64_t *params;
} run_ctx;

static void run_worker(void *arg, int w) {
    run_ctx *c = (run_ctx *)arg;
    const cpu_prep *p = c->p;
    char *regs = (char *)c->st->scratch[w];
    const void **vals = (const void **)(regs + (size_t)p->n_regs * ND_CPU_REG_BYTES);
    char *rscr = (char *)vals + (((size_t)p->n_insts * sizeof(void *) + 63) & ~(size_t)63);
    if (!c->jit) nd_cpu_fill_params(p, regs);
    for (;;) {
        int64_t it = (int64_t)atomic_fetch_add(&c->next, 1);
        if (it >= p->n_items) break;
        if (p->has_reduce) {
            nd_cpu_reduce_item(p, regs, vals, rscr, it);
            continue;
        }
        int64_t f0 = it * ND_CPU_WORK;
        int64_t f1 = f0 + ND_CPU_WORK < p->total ? f0 + ND_CPU_WORK : p->total;
        if (c->jit) {
            c->jit->fn(c->slots, c->params, c->jit->helpers, regs, f0, f1, p->shape);
            continue;
        }
        for (int64_t f = f0; f < f1; f += ND_CPU_TILE)
            nd_cpu_eval_tile(p, regs, vals, f, f1 - f < ND_CPU_TILE ? f1 - f : ND_CPU_TILE);
    }
#if defined(__SSE2__)
    if (p->stream_stores) _mm_sfence(); /* order the non-temporal stores before "done" */
#endif
}

static nd_status ensure_scratch(nd_cpu_state *st, int w, size_t bytes) {
    if (st->scratch_bytes[w] >= bytes) return ND_OK;
    bytes = (bytes + 4095) & ~(size_t)4095;
    void *m = aligned_alloc(64, bytes);
    if (!m) return nd_error_set(ND_ERR_OOM, "cpu backend: out of memory for %zu bytes of scratch", bytes);
    free(st->scratch[w]);
    st->scratch[w] = m;
    st->scratch_bytes[w] = bytes;
    return ND_OK;
}

nd_status nd_cpu_run_kernel(nd_cpu_state *st, const nd_kernel *k, void *const *slots,
                            const nd_scalar_bits *params) {
    if (!k) return nd_error_set(ND_ERR_BACKEND, "cpu backend: run_kernel got no kernel");
    cpu_prep p;
    int empty = 0;
    cpu_gather_bad bad = {ATOMIC_FLAG_INIT, INT64_MAX, 0, 0, 0};
    nd_status s = prepare(&p, k, slots, params, &empty);
    p.bad = &bad;
    if (s == ND_OK && empty && p.has_reduce) nd_cpu_reduce_empty(&p);
    if (s != ND_OK || p.n_items == 0) {
        prep_free(&p);
        return s;
    }
    nd_cpu_jit_kernel jk;
    int jit = nd_cpu_jit_find(st->jit, k, &p, slots, &jk);
    uint64_t cells[16], *cell = cells; /* parameter values for the compiled kernel */
    if (jit && p.n_insts > 16 && !(cell = nd_malloc(sizeof(uint64_t) * (size_t)p.n_insts))) jit = 0;
    if (jit) nd_cpu_jit_params(&p, cell); /* a kernel that gathers: the record's address last */
    size_t scratch = jit && jk.scratch_bytes > p.scratch_bytes ? jk.scratch_bytes : p.scratch_bytes;
    int nw = st->num_threads;
    if (p.total < ND_CPU_WORK || nw < 2) nw = 1;
    if (nw > p.n_items) nw = (int)p.n_items;
    for (int w = 0; w < nw && s == ND_OK; w++) s = ensure_scratch(st, w, scratch);
    if (s == ND_OK) {
        run_ctx c = {&p, st, 0, jit ? &jk : NULL, slots, cell};
        atomic_init(&c.next, 0);
        if (nw == 1) run_worker(&c, 0);
        else nd_cpu_pool_run(st->pool, nw, run_worker, &c);
        if (p.has_reduce) nd_cpu_reduce_finish(&p);
    }
    if (cell != cells) free(cell);
    prep_free(&p);
    if (s == ND_OK && bad.point != INT64_MAX) {
        /* Values computed from the bad index hold zeros there: the
         * record (kernel_ir.h's nd_ir_fail, one past the slots) says so to
         * whoever ran the kernel; without one the kernel fails. */
        nd_ir_fail f = {1, bad.gather, bad.axis, 0, bad.value};
        nd_ir_fail *rec = k->n_gathers ? (nd_ir_fail *)slots[k->n_slots] : NULL;
        if (rec) {
            if (!rec->set) *rec = f;
        } else {
            s = (nd_status)nd_ir_fail_error(k, &f);
        }
    }
    return s;
}
