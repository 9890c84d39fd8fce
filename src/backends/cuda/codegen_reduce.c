/* Reduction kernels. Determinism comes from structure, not atomics: the
 * grid, the split of each output's reduced points into partials, each
 * thread's visiting order and the block's tree (emit_tree_fold) are all
 * fixed by the kernel's shape, and a second pass combines the partials of
 * an output in index order. So a reduction gives the same bits on every
 * run and every device of one architecture; a full reduction of generated
 * values (emit_persist) runs on the device's grid instead, so on every run
 * and every device with as many multiprocessors.
 *
 * Accumulators: float16/bfloat16/float32 sums and products accumulate in
 * float32 (rounded once per combine), float64 in float64, signed ints and
 * bool in int64, unsigned ints in uint64 (wrapping). MIN/MAX propagate NaN;
 * ARGMIN/ARGMAX keep {value, first row-major index over the reduced axes},
 * a combine that does not depend on the order of its operands.
 *
 * A thread folds its points into a thread accumulator (ndk_tacc), turned
 * into an ndk_acc (ndk_tacc_fin) for the tree and the partials. Usually the
 * two are the same. A sum of bools cast to a number (a Monte Carlo count:
 * sum(astype(x*x + y*y <= 1, float64))) counts in a 32-bit integer instead:
 * one integer add a point, not a dependent chain of float64 adds
 * (bench/pi_variants.cu: 599 -> 439 us for pi's kernel on the H100) or an
 * int64 add pair. Same bits: a float sum of zeros and ones is exact below
 * 2^24 (float32 accumulators) or 2^53, and a thread's count is at most its
 * chunk of points, which must stay below that (counts_bools). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "backends/cuda/cuda_internal.h"

int nd_cuda_reduce_rv(const nd_kernel *k) {
    const nd_ir_inst *v = &k->insts[k->reduce.value];
    if (k->reduce.kind == ND_REDUCE_SUM && v->op == ND_OP_CAST && k->insts[v->a].dtype == ND_BOOL) return v->a;
    return k->reduce.value;
}

/* Per-kind switches below name every kind (common/ops.h ND_REDUCE_KINDS)
 * without a default, so a new kind fails to build (-Wswitch) here. */
static nd_dtype acc_dtype(const nd_kernel *k) {
    nd_dtype vd = (nd_dtype)k->insts[k->reduce.value].dtype;
    switch ((nd_reduce_kind)k->reduce.kind) {
    case ND_REDUCE_SUM:
    case ND_REDUCE_PROD:
        if (vd == ND_FLOAT64) return ND_FLOAT64;
        if (nd_dtype_is_float(vd)) return ND_FLOAT32;
        return nd_dtype_kind_of(vd) == ND_KIND_UINT ? ND_UINT64 : ND_INT64;
    case ND_REDUCE_ANY:
    case ND_REDUCE_ALL: return ND_BOOL;
    case ND_REDUCE_MIN:
    case ND_REDUCE_MAX:
    case ND_REDUCE_ARGMIN:
    case ND_REDUCE_ARGMAX: return vd;
    }
    return vd; /* not reached: nd_cuda_check_kernel refuses unknown kinds */
}

/* Whether threads count bools (see the top), each folding at most `chunk`
 * points. */
static int counts_bools(const nd_kernel *k, int64_t chunk) {
    if (nd_cuda_reduce_rv(k) == k->reduce.value) return 0;
    int64_t exact = acc_dtype(k) == ND_FLOAT32 ? (int64_t)1 << 24 : (int64_t)UINT32_MAX;
    return chunk <= exact;
}

/* The smallest/largest value of an integer dtype, as a C literal. */
static const char *int_limit(nd_dtype t, int max) {
    switch (t) {
    case ND_INT8: return max ? "127" : "(-128)";
    case ND_INT16: return max ? "32767" : "(-32768)";
    case ND_INT32: return max ? "2147483647" : "(-2147483647 - 1)";
    case ND_INT64: return max ? "9223372036854775807LL" : "(-9223372036854775807LL - 1)";
    case ND_UINT8: return max ? "255" : "0";
    case ND_UINT16: return max ? "65535" : "0";
    case ND_UINT32: return max ? "4294967295u" : "0u";
    case ND_UINT64: return max ? "18446744073709551615ull" : "0ull";
    default: return max ? "true" : "false";
    }
}

static void emit_acc_fns(nd_strbuf *sb, const nd_kernel *k, int count) {
    nd_dtype vd = (nd_dtype)k->insts[nd_cuda_reduce_rv(k)].dtype, ad = acc_dtype(k);
    const char *AT = nd_cuda_reg_type(ad);
    int fl = nd_dtype_is_float(ad), dbl = ad == ND_FLOAT64;
    nd_reduce_kind kind = (nd_reduce_kind)k->reduce.kind;
    nd_strbuf_printf(sb, "struct __align__(16) ndk_acc { %s v; long long i; };\n", AT);

    const char *init = "0";
    switch (nd_reduce_init_of(kind)) {
    case ND_RINIT_ZERO:
    case ND_RINIT_NO_INDEX: init = "0"; break;
    case ND_RINIT_ONE: init = "1"; break;
    case ND_RINIT_HIGHEST: init = fl ? (dbl ? "NDK_DINF" : "NDK_INF") : int_limit(ad, 1); break;
    case ND_RINIT_LOWEST: init = fl ? (dbl ? "(-NDK_DINF)" : "(-NDK_INF)") : int_limit(ad, 0); break;
    case ND_RINIT_TRUE: init = "true"; break;
    case ND_RINIT_FALSE: init = "false"; break;
    }
    int is_arg = nd_reduce_is_arg(kind);
    nd_strbuf_printf(sb,
                      "static __device__ __forceinline__ ndk_acc ndk_acc_init() { ndk_acc a; a.v = (%s)%s; a.i = %s; return a; }\n",
                      AT, init, is_arg ? "-1" : "0");
    nd_strbuf_printf(sb, "static __device__ __forceinline__ ndk_acc ndk_acc_one(%s x, long long ri) { ndk_acc a; a.v = ",
                      nd_cuda_reg_type(vd));
    nd_cuda_emit_cast(sb, vd, ad, "x");
    nd_strbuf_printf(sb, "; a.i = ri; return a; }\n");

    nd_strbuf_printf(sb, "static __device__ __forceinline__ ndk_acc ndk_acc_comb(ndk_acc a, const ndk_acc b) {\n");
    const char *rn = dbl ? "d" : "f";
    switch (kind) { /* every kind, no default (see acc_dtype) */
    case ND_REDUCE_SUM:
    case ND_REDUCE_PROD: {
        const char *nm = kind == ND_REDUCE_SUM ? "add" : "mul";
        if (fl) nd_strbuf_printf(sb, "  a.v = __%s%s_rn(a.v, b.v);\n", rn, nm);
        else
            nd_strbuf_printf(sb, "  a.v = (%s)((unsigned long long)a.v %s (unsigned long long)b.v);\n", AT,
                              kind == ND_REDUCE_SUM ? "+" : "*");
        break;
    }
    case ND_REDUCE_MIN:
    case ND_REDUCE_MAX: {
        int mx = kind == ND_REDUCE_MAX;
        /* The elementwise op's own NaN-propagating function (common/element_fns.h,
         * pasted into every kernel): one definition of maximum/minimum. */
        if (fl) nd_strbuf_printf(sb, "  a.v = nds_%s_%s(a.v, b.v);\n", nd_reduce_combine_label(kind), dbl ? "F64" : "F32");
        else if (ad == ND_BOOL) nd_strbuf_printf(sb, "  a.v = a.v %s b.v;\n", mx ? "||" : "&&");
        else nd_strbuf_printf(sb, "  a.v = (b.v %s a.v) ? b.v : a.v;\n", mx ? ">" : "<");
        break;
    }
    case ND_REDUCE_ANY: nd_strbuf_printf(sb, "  a.v = a.v || b.v;\n"); break;
    case ND_REDUCE_ALL: nd_strbuf_printf(sb, "  a.v = a.v && b.v;\n"); break;
    case ND_REDUCE_ARGMIN:
    case ND_REDUCE_ARGMAX: {
        /* First NaN wins, then the better value, ties to the lower index. */
        const char *better = kind == ND_REDUCE_ARGMAX ? ">" : "<";
        nd_strbuf_printf(sb,
                          "  if (a.i < 0) return b;\n"
                          "  if (b.i < 0) return a;\n"
                          "  const bool an = a.v != a.v, bn = b.v != b.v;\n"
                          "  if (an || bn) { if (an && bn) return a.i <= b.i ? a : b; return an ? a : b; }\n"
                          "  if (a.v %s b.v) return a;\n"
                          "  if (b.v %s a.v) return b;\n"
                          "  return a.i <= b.i ? a : b;\n",
                          better, better);
        break;
    }
    }
    nd_strbuf_printf(sb, "  return a;\n}\n");
    /* The accumulator of the lane `st` further on in the warp (the warp's
     * last step of a tree, emit_tree_fold). __shfl_down_sync has no
     * overloads below 32 bits: those values travel as int. */
    int narrow = ad == ND_BOOL || ad == ND_INT8 || ad == ND_INT16 || ad == ND_UINT8 || ad == ND_UINT16;
    nd_strbuf_printf(sb,
                      "static __device__ __forceinline__ ndk_acc ndk_acc_down(const ndk_acc a, unsigned st) {\n"
                      "  ndk_acc b;\n  b.v = (%s)__shfl_down_sync(0xffffffffu, %sa.v, st);\n"
                      "  b.i = %s;\n  return b;\n}\n",
                      AT, narrow ? "(int)" : "", is_arg ? "__shfl_down_sync(0xffffffffu, a.i, st)" : "a.i");

    const char *VT = nd_cuda_reg_type(vd);
    if (count)
        nd_strbuf_printf(sb,
                          "typedef unsigned ndk_tacc;\n"
                          "static __device__ __forceinline__ ndk_tacc ndk_tacc_init() { return 0u; }\n"
                          "static __device__ __forceinline__ ndk_tacc ndk_tacc_add(ndk_tacc t, %s x, long long) { return t + (unsigned)x; }\n"
                          "static __device__ __forceinline__ ndk_acc ndk_tacc_fin(ndk_tacc t) { ndk_acc a = ndk_acc_init(); a.v = (%s)t; return a; }\n",
                          VT, AT);
    else
        nd_strbuf_printf(sb,
                          "typedef ndk_acc ndk_tacc;\n"
                          "static __device__ __forceinline__ ndk_tacc ndk_tacc_init() { return ndk_acc_init(); }\n"
                          "static __device__ __forceinline__ ndk_tacc ndk_tacc_add(ndk_tacc t, %s x, long long ri) { return ndk_acc_comb(t, ndk_acc_one(x, ri)); }\n"
                          "static __device__ __forceinline__ ndk_acc ndk_tacc_fin(ndk_tacc t) { return t; }\n",
                          VT);
}

/* The fixed tree that folds each group of `width` consecutive threads
 * (a power of two, at least a warp, groups aligned to warps; `lane` the
 * thread's place in its group) into `a_` of the group's lane 0: lane t
 * takes lane t + st's value for st = width/2, ..., 1. The steps across
 * warps go through shared memory (sh) with a barrier each; the last five
 * stay in the group's first warp as shuffles, in the same order (so the
 * same bits) without five more barriers. In hand-edited copies of pi's
 * and the dot's kernels (16384 blocks each) on an H100 that saved 2-10 us
 * (measured 2026-11-22). Every thread of the block
 * must reach it; a_ is meaningful only in lane 0 after. */
static void emit_tree_fold(nd_strbuf *sb, int width, const char *lane, const char *indent) {
    if (width > 32)
        nd_strbuf_printf(sb,
                          "%ssh[threadIdx.x] = a_;\n%s__syncthreads();\n"
                          "%sfor (unsigned st = %du; st >= 32u; st >>= 1) {\n"
                          "%s  if (%s < st) sh[threadIdx.x] = ndk_acc_comb(sh[threadIdx.x], sh[threadIdx.x + st]);\n"
                          "%s  __syncthreads();\n%s}\n"
                          "%sa_ = sh[threadIdx.x];\n",
                          indent, indent, indent, width / 2, indent, lane, indent, indent, indent);
    nd_strbuf_printf(sb,
                      "%sif (%s < 32u)\n"
                      "%s  for (unsigned st = 16u; st > 0; st >>= 1) a_ = ndk_acc_comb(a_, ndk_acc_down(a_, st));\n",
                      indent, lane, indent);
}

/* Writes accumulator `acc` to the reduction output (kept indices in scope),
 * `step` outputs further along axis `ax` (a group of outputs). */
static void emit_write_at(nd_strbuf *sb, const nd_kernel *k, int wide, const char *acc, const char *indent,
                          int ax, int step) {
    const nd_ir_reduce *r = &k->reduce;
    nd_dtype od = (nd_dtype)r->out_dtype;
    int is_arg = nd_reduce_is_arg((nd_reduce_kind)r->kind);
    char src[64];
    snprintf(src, sizeof src, "%s.%s", acc, is_arg ? "i" : "v");
    nd_strbuf_printf(sb, "%s{ const %s o_ = ", indent, nd_cuda_reg_type(od));
    nd_cuda_emit_cast(sb, is_arg ? ND_INT64 : acc_dtype(k), od, src);
    nd_strbuf_printf(sb, ";\n%s  ((%s *)A.w[%d])[", indent, nd_cuda_mem_type(od), (int)r->out.slot);
    nd_cuda_emit_addr(sb, &r->out, k->ndim, wide);
    if (step && r->out.strides[ax])
        nd_strbuf_printf(sb, " + (%" PRId64 "%s)", r->out.strides[ax] * step, wide ? "LL" : "");
    if (od == ND_BOOL) nd_strbuf_printf(sb, "] = (unsigned char)o_; }\n");
    else if (od == ND_FLOAT16) nd_strbuf_printf(sb, "] = ndk_f2h(o_); }\n");
    else if (od == ND_BFLOAT16) nd_strbuf_printf(sb, "] = ndk_f2b(o_); }\n");
    else nd_strbuf_printf(sb, "] = o_; }\n");
}

static void emit_write(nd_strbuf *sb, const nd_kernel *k, int wide, const char *acc, const char *indent) {
    emit_write_at(sb, k, wide, acc, indent, 0, 0);
}

/* One reduced point, or a group of G consecutive ones (q .. q+G-1 along
 * axis gax), folded into `acc` in order. */
static void emit_fold(nd_strbuf *sb, const nd_kernel *k, int wide, uint32_t red, const char *at, int G, int gax,
                      const char *indent) {
    nd_cuda_emit_unravel(sb, k, red, "q", at, indent);
    nd_cuda_emit_point(sb, k, wide, indent, G, gax);
    if (G == 1) nd_strbuf_printf(sb, "%sacc = ndk_tacc_add(acc, rv, (long long)q);\n", indent);
    for (int e = 0; G > 1 && e < G; e++)
        nd_strbuf_printf(sb, "%sacc = ndk_tacc_add(acc, rv_%d, (long long)q + %d);\n", indent, e, e);
}

/* COLS with a group of G neighbouring outputs per thread (group_kept):
 * accumulators acc_0 .. acc_{G-1}, one per output. */
static void emit_cols_kept(nd_strbuf *sb, const nd_kernel *k, const nd_cuda_kinfo *info, uint32_t red,
                           uint32_t kept, int64_t n_out, int64_t CH, int pw) {
    const char *lt = info->wide ? "unsigned long long" : "unsigned int";
    const char *at = info->wide ? "long long" : "int";
    int G = info->group, L = info->group_axis;
    int64_t NG = n_out / G;
    nd_cuda_emit_kernel_open(sb, info->name);
    nd_strbuf_printf(sb,
                      "  for (%s gid = (%s)blockIdx.x * %du + threadIdx.x; gid < %" PRId64 "ull; gid += (%s)gridDim.x * %du) {\n"
                      "    const %s o = gid %% %" PRId64 "u * %d, sp = gid / %" PRId64 "u;\n",
                      lt, lt, ND_CUDA_BLOCK, info->items, lt, ND_CUDA_BLOCK, lt, NG, G, NG);
    nd_cuda_emit_unravel(sb, k, kept, "o", at, "    ");
    for (int e = 0; e < G; e++) nd_strbuf_printf(sb, "    ndk_tacc acc_%d = ndk_tacc_init();\n", e);
    nd_strbuf_printf(sb,
                      "    %s r1 = sp * %" PRId64 "u + %" PRId64 "u;\n"
                      "    if (r1 > %" PRId64 "u) r1 = %" PRId64 "u;\n"
                      "    for (%s q = sp * %" PRId64 "u; q < r1; q++) {\n",
                      lt, CH, CH, info->n_red, info->n_red, lt, CH);
    nd_cuda_emit_unravel(sb, k, red, "q", at, "      ");
    nd_cuda_emit_point(sb, k, info->wide, "      ", G, L);
    for (int e = 0; e < G; e++)
        nd_strbuf_printf(sb, "      acc_%d = ndk_tacc_add(acc_%d, rv_%d, (long long)q);\n", e, e, e);
    nd_strbuf_printf(sb, "    }\n");
    char acc[16];
    for (int e = 0; e < G; e++) {
        snprintf(acc, sizeof acc, "fin_%d", e);
        nd_strbuf_printf(sb, "    const ndk_acc fin_%d = ndk_tacc_fin(acc_%d);\n", e, e);
        if (info->splits == 1) emit_write_at(sb, k, info->wide, acc, "    ", L, e);
        else nd_strbuf_printf(sb, "    ((ndk_acc *)A.w[%d])[sp * %" PRId64 "u + o + %d] = fin_%d;\n", pw, n_out, e, e);
    }
    nd_strbuf_printf(sb, "  }\n}\n");
}

/* A persist kernel (nd_cuda_kinfo.persist): block b's thread t folds the
 * groups of G points b * 256 + t, then gridDim.x * 256 further, ... in
 * order (the points past the last whole group, one each, by the grid's
 * first threads), the block's tree gives one partial per block, and pass 2
 * folds the gridDim.x partials (argument word splits_word) with one block:
 * partials t, t + 256, ... a thread, then the same tree. A grid of one
 * block writes the output itself. */
static void emit_persist(nd_strbuf *sb, const nd_kernel *k, const nd_cuda_kinfo *info, uint32_t red, uint32_t kept,
                         int pw) {
    const char *lt = info->wide ? "unsigned long long" : "unsigned int";
    const char *at = info->wide ? "long long" : "int";
    int G = info->group;
    int64_t NR = info->n_red, tail = NR % G;
    nd_cuda_emit_kernel_open(sb, info->name);
    nd_strbuf_printf(sb,
                      "  __shared__ ndk_acc sh[%d];\n"
                      "  const unsigned lane = threadIdx.x;\n"
                      "  const %s g_ = (%s)blockIdx.x * %du + threadIdx.x;\n"
                      "  ndk_tacc acc = ndk_tacc_init();\n"
                      "  %s q = g_ * %du;\n"
                      "  for (; q + %du <= %" PRId64 "u; q += (%s)gridDim.x * %du) {\n",
                      ND_CUDA_BLOCK, lt, lt, ND_CUDA_BLOCK, lt, G, G, NR, lt, ND_CUDA_BLOCK * G);
    emit_fold(sb, k, info->wide, red, at, G, info->group_axis, "    ");
    nd_strbuf_printf(sb, "  }\n");
    if (tail) {
        nd_strbuf_printf(sb, "  q = %" PRId64 "u + g_;\n  if (q < %" PRId64 "u) {\n", NR - tail, NR);
        emit_fold(sb, k, info->wide, red, at, 1, 0, "    ");
        nd_strbuf_printf(sb, "  }\n");
    }
    nd_strbuf_printf(sb, "  ndk_acc a_ = ndk_tacc_fin(acc);\n");
    emit_tree_fold(sb, ND_CUDA_BLOCK, "lane", "  ");
    nd_strbuf_printf(sb, "  if (lane == 0) {\n    if (gridDim.x == 1u) {\n      const %s o = 0;\n", lt);
    nd_cuda_emit_unravel(sb, k, kept, "o", at, "      ");
    emit_write(sb, k, info->wide, "a_", "      ");
    nd_strbuf_printf(sb, "    } else ((ndk_acc *)A.w[%d])[blockIdx.x] = a_;\n  }\n}\n", pw);

    nd_cuda_emit_kernel_open(sb, info->name_pass2);
    nd_strbuf_printf(sb,
                      "  __shared__ ndk_acc sh[%d];\n"
                      "  const ndk_acc *P = (const ndk_acc *)A.w[%d];\n"
                      "  const unsigned S = (unsigned)A.w[%d];\n"
                      "  ndk_acc a_ = ndk_acc_init();\n"
                      "#pragma unroll 4\n"
                      "  for (unsigned sp = threadIdx.x; sp < S; sp += %du) a_ = ndk_acc_comb(a_, P[sp]);\n",
                      ND_CUDA_BLOCK, pw, info->splits_word, ND_CUDA_BLOCK);
    emit_tree_fold(sb, ND_CUDA_BLOCK, "threadIdx.x", "  ");
    nd_strbuf_printf(sb, "  if (threadIdx.x == 0) {\n    const %s o = 0;\n", lt);
    nd_cuda_emit_unravel(sb, k, kept, "o", at, "    ");
    emit_write(sb, k, info->wide, "a_", "    ");
    nd_strbuf_printf(sb, "  }\n}\n");
}

void nd_cuda_emit_reduce_kernels(nd_strbuf *sb, const nd_kernel *k, const nd_cuda_kinfo *info) {
    /* the most points one thread folds (counts_bools): a chunk's, or a
     * persist kernel's on a grid of one block */
    int64_t per_thread = info->persist ? (info->n_red + ND_CUDA_BLOCK - 1) / ND_CUDA_BLOCK + 2 * info->group
                                       : info->chunk > 0 ? info->chunk : 1;
    emit_acc_fns(sb, k, counts_bools(k, per_thread));
    const char *lt = info->wide ? "unsigned long long" : "unsigned int";
    const char *at = info->wide ? "long long" : "int";
    uint32_t all = k->ndim >= 32 ? 0xffffffffu : (1u << k->ndim) - 1u;
    uint32_t red = k->reduce.axes & all, kept = all & ~red;
    /* Literals below are never zero, so no division by zero is compiled
     * even for empty spaces (whose kernels are never launched). */
    int64_t n_out = info->n_out > 0 ? info->n_out : 1;
    int64_t S = info->splits, CH = info->chunk > 0 ? info->chunk : 1, groups = n_out * S;
    int pw = k->n_slots + k->n_params; /* word holding the partials pointer */
    int G = info->group;

    if (info->persist) {
        emit_persist(sb, k, info, red, kept, pw);
        return;
    }
    if (info->strategy == ND_CUDA_REDUCE_ROWS) {
        int tpr = info->tpr, rpb = ND_CUDA_BLOCK / info->tpr;
        nd_cuda_emit_kernel_open(sb, info->name);
        if (tpr > 32) nd_strbuf_printf(sb, "  __shared__ ndk_acc sh[%d];\n", ND_CUDA_BLOCK);
        nd_strbuf_printf(sb,
                          "  const %s gi = (%s)blockIdx.x * %du + threadIdx.x / %du;\n"
                          "  const unsigned lane = threadIdx.x %% %du;\n"
                          "  const %s o = gi / %" PRId64 "u, sp = gi %% %" PRId64 "u;\n",
                          lt, lt, rpb, tpr, tpr, lt, S, S);
        nd_cuda_emit_unravel(sb, k, kept, "o", at, "  ");
        nd_strbuf_printf(sb,
                          "  ndk_tacc acc = ndk_tacc_init();\n"
                          "  if (gi < %" PRId64 "ull) {\n"
                          "    %s r1 = sp * %" PRId64 "u + %" PRId64 "u;\n"
                          "    if (r1 > %" PRId64 "u) r1 = %" PRId64 "u;\n",
                          groups, lt, CH, CH, info->n_red, info->n_red);
        if (G == 1) {
            nd_strbuf_printf(sb, "    for (%s q = sp * %" PRId64 "u + lane; q < r1; q += %du) {\n", lt, CH, tpr);
        } else {
            /* lanes take G consecutive points a step (CH is a multiple of
             * G); a last partial group, point by point */
            nd_strbuf_printf(sb, "    %s q = sp * %" PRId64 "u + lane * %du;\n    for (; q + %du <= r1; q += %du) {\n", lt,
                              CH, G, G, tpr * G);
        }
        emit_fold(sb, k, info->wide, red, at, G, info->group_axis, "      ");
        nd_strbuf_printf(sb, "    }\n");
        if (G > 1 && info->n_red % G) {
            nd_strbuf_printf(sb, "    q = r1 - (r1 - sp * %" PRId64 "u) %% %du + lane;\n    if (q < r1) {\n", CH, G);
            emit_fold(sb, k, info->wide, red, at, 1, 0, "      ");
            nd_strbuf_printf(sb, "    }\n");
        }
        nd_strbuf_printf(sb, "  }\n  ndk_acc a_ = ndk_tacc_fin(acc);\n");
        emit_tree_fold(sb, tpr, "lane", "  ");
        nd_strbuf_printf(sb, "  if (lane == 0 && gi < %" PRId64 "ull) {\n", groups);
        if (S == 1) emit_write(sb, k, info->wide, "a_", "    ");
        else nd_strbuf_printf(sb, "    ((ndk_acc *)A.w[%d])[gi] = a_;\n", pw);
        nd_strbuf_printf(sb, "  }\n}\n");
    } else if (info->group_kept) {
        emit_cols_kept(sb, k, info, red, kept, n_out, CH, pw);
    } else {
        nd_cuda_emit_kernel_open(sb, info->name);
        nd_strbuf_printf(sb,
                          "  for (%s gid = (%s)blockIdx.x * %du + threadIdx.x; gid < %" PRId64 "ull; gid += (%s)gridDim.x * %du) {\n"
                          "    const %s o = gid %% %" PRId64 "u, sp = gid / %" PRId64 "u;\n",
                          lt, lt, ND_CUDA_BLOCK, groups, lt, ND_CUDA_BLOCK, lt, n_out,
                          n_out);
        nd_cuda_emit_unravel(sb, k, kept, "o", at, "    ");
        nd_strbuf_printf(sb,
                          "    ndk_tacc acc = ndk_tacc_init();\n"
                          "    %s r1 = sp * %" PRId64 "u + %" PRId64 "u;\n"
                          "    if (r1 > %" PRId64 "u) r1 = %" PRId64 "u;\n",
                          lt, CH, CH, info->n_red, info->n_red);
        if (G == 1) {
            nd_strbuf_printf(sb, "    for (%s q = sp * %" PRId64 "u; q < r1; q++) {\n", lt, CH);
            emit_fold(sb, k, info->wide, red, at, 1, 0, "      ");
            nd_strbuf_printf(sb, "    }\n");
        } else {
            /* G consecutive points a step (CH is a multiple of G), a last
             * partial group point by point */
            nd_strbuf_printf(sb, "    %s q = sp * %" PRId64 "u;\n    for (; q + %du <= r1; q += %du) {\n", lt, CH, G, G);
            emit_fold(sb, k, info->wide, red, at, G, info->group_axis, "      ");
            nd_strbuf_printf(sb, "    }\n");
            if (info->n_red % G) {
                nd_strbuf_printf(sb, "    for (; q < r1; q++) {\n");
                emit_fold(sb, k, info->wide, red, at, 1, 0, "      ");
                nd_strbuf_printf(sb, "    }\n");
            }
        }
        nd_strbuf_printf(sb, "    const ndk_acc fin = ndk_tacc_fin(acc);\n");
        if (S == 1) emit_write(sb, k, info->wide, "fin", "    ");
        else nd_strbuf_printf(sb, "    ((ndk_acc *)A.w[%d])[sp * %" PRId64 "u + o] = fin;\n", pw, n_out);
        nd_strbuf_printf(sb, "  }\n}\n");
    }
    if (S == 1) return;

    int rows = info->strategy == ND_CUDA_REDUCE_ROWS;
    int64_t out_stride = rows ? S : 1, split_stride = rows ? 1 : n_out;
    if (info->pass2_tree) {
        /* Pass 2, many partials: one block per output; thread t folds
         * partials t, t + BLOCK, ... in order (8 loads in flight), then a
         * fixed tree. The order depends only on the shape, so the bits are
         * the same every run. */
        nd_cuda_emit_kernel_open(sb, info->name_pass2);
        nd_strbuf_printf(sb,
                          "  __shared__ ndk_acc sh[%d];\n"
                          "  const ndk_acc *P = (const ndk_acc *)A.w[%d];\n"
                          "  for (%s o = blockIdx.x; o < %" PRId64 "ull; o += gridDim.x) {\n"
                          "    ndk_acc acc = ndk_acc_init();\n"
                          "#pragma unroll 8\n"
                          "    for (%s sp = threadIdx.x; sp < %" PRId64 "u; sp += %du)\n"
                          "      acc = ndk_acc_comb(acc, P[o * %" PRId64 "u + sp * %" PRId64 "u]);\n"
                          "    ndk_acc a_ = acc;\n",
                          ND_CUDA_BLOCK, pw, lt, info->n_out, lt, S,
                          ND_CUDA_BLOCK, out_stride, split_stride);
        emit_tree_fold(sb, ND_CUDA_BLOCK, "threadIdx.x", "    ");
        nd_strbuf_printf(sb, "    if (threadIdx.x == 0) {\n");
        nd_cuda_emit_unravel(sb, k, kept, "o", at, "      ");
        emit_write(sb, k, info->wide, "a_", "      ");
        nd_strbuf_printf(sb, "    }\n    __syncthreads();\n  }\n}\n");
        return;
    }
    /* Pass 2, few partials: one thread per output folds them in split order. */
    nd_cuda_emit_kernel_open(sb, info->name_pass2);
    nd_strbuf_printf(sb,
                      "  const ndk_acc *P = (const ndk_acc *)A.w[%d];\n"
                      "  for (%s o = (%s)blockIdx.x * %du + threadIdx.x; o < %" PRId64 "ull; o += (%s)gridDim.x * %du) {\n"
                      "    ndk_acc acc = P[o * %" PRId64 "u];\n"
                      "    for (%s sp = 1; sp < %" PRId64 "u; sp++) acc = ndk_acc_comb(acc, P[o * %" PRId64 "u + sp * %" PRId64 "u]);\n",
                      pw, lt, lt, ND_CUDA_BLOCK, info->n_out, lt, ND_CUDA_BLOCK,
                      out_stride, lt, S, out_stride, split_stride);
    nd_cuda_emit_unravel(sb, k, kept, "o", at, "    ");
    emit_write(sb, k, info->wide, "acc", "    ");
    nd_strbuf_printf(sb, "  }\n}\n");
}
