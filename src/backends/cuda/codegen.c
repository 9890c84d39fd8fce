/* Kernel IR -> CUDA C. One nd_kernel becomes one NVRTC translation unit:
 * the prelude (conversions, Philox), an args struct (slot pointers and
 * parameter bits as 8-byte words, passed by value), a __device__ body
 * function holding the SSA instructions, and the __global__ entry points
 * (scalar grid-stride loop, 16-byte vector variant, reduction passes).
 * Shapes, strides and offsets are literals so index math folds, except the
 * extent of a shape-generic kernel (nd_cuda_shape_class), an argument so
 * that a length that depends on data never recompiles; parameter values
 * are launch arguments so a changed scalar never recompiles. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/codegen_prelude.h"
#include "common/alloc.h"
#include "backends/cuda/cuda_internal.h"
#include "common/hash.h"
#include "common/lib_calls.h"
#include "common/philox.h"

/* snprintf for expression fragments. Buffers are sized far above the
 * longest fragment the bounded nesting below can produce. */
static void fmt(char *out, size_t cap, const char *f, ...) ND_PRINTF(3, 4);
static void fmt(char *out, size_t cap, const char *f, ...) {
    va_list ap;
    va_start(ap, f);
    vsnprintf(out, cap, f, ap);
    va_end(ap);
}

/* ------------------------------------------------------------------ dtypes */

static const char *const reg_types[ND_NUM_DTYPES] = {
    "bool", "signed char", "short", "int", "long long", "unsigned char", "unsigned short",
    "unsigned int", "unsigned long long", "float", "float", "float", "double", "C64_T", "C128_T"};
static const char *const mem_types[ND_NUM_DTYPES] = {
    "unsigned char", "signed char", "short", "int", "long long", "unsigned char",
    "unsigned short", "unsigned int", "unsigned long long", "unsigned short", "unsigned short",
    "float", "double", "C64_T", "C128_T"};
static const int mem_sizes[ND_NUM_DTYPES] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16};

const char *nd_cuda_reg_type(nd_dtype t) { return reg_types[t]; }
const char *nd_cuda_mem_type(nd_dtype t) { return mem_types[t]; }
int nd_cuda_mem_size(nd_dtype t) { return mem_sizes[t]; }

/* 'b' bool, 'i' signed, 'u' unsigned, 'f' computed in float, 'd' double. */
static char dclass(nd_dtype t) {
    switch (t) {
    case ND_BOOL: return 'b';
    case ND_INT8: case ND_INT16: case ND_INT32: case ND_INT64: return 'i';
    case ND_UINT8: case ND_UINT16: case ND_UINT32: case ND_UINT64: return 'u';
    case ND_FLOAT64: return 'd';
    default: return 'f';
    }
}
static int is_half(nd_dtype t) { return t == ND_FLOAT16 || t == ND_BFLOAT16; }

/* Wraps a float expression so the value is rounded to the storage precision
 * of a 16-bit float dtype (ops on float16/bfloat16 round every result). */
static void round_str(char *out, size_t cap, nd_dtype t, const char *x) {
    if (t == ND_FLOAT16) fmt(out, cap, "ndk_rh(%s)", x);
    else if (t == ND_BFLOAT16) fmt(out, cap, "ndk_rb(%s)", x);
    else fmt(out, cap, "%s", x);
}

/* Register value x of dtype `from` as dtype `to`, with cpu_scalar.h's
 * NDS_CAST semantics: floats to ints truncate through int64, everything to
 * float rounds once. */
static void cast_str(char *out, size_t cap, nd_dtype from, nd_dtype to, const char *x) {
    char from_c = dclass(from), to_c = dclass(to);
    if (from == to) {
        fmt(out, cap, "%s", x);
    } else if (nd_dtype_is_complex(from) || nd_dtype_is_complex(to)) {
        /* cpu_scalar.h's complex casts: (x, 0); the real part (bool: either
         * part nonzero); each part */
        char tmp[1100];
        nd_dtype pf = nd_dtype_part(from), pt = nd_dtype_part(to);
        if (!nd_dtype_is_complex(from)) {
            cast_str(tmp, sizeof tmp, from, pt, x);
            fmt(out, cap, "nds_mk_%s(%s, (%s)0)", to == ND_COMPLEX64 ? "C64" : "C128", tmp, reg_types[pt]);
        } else if (to == ND_BOOL) {
            fmt(out, cap, "((%s).re != 0 || (%s).im != 0)", x, x);
        } else if (!nd_dtype_is_complex(to)) {
            fmt(tmp, sizeof tmp, "(%s).re", x);
            cast_str(out, cap, pf, to, tmp);
        } else {
            fmt(out, cap, "nds_mk_%s((%s)(%s).re, (%s)(%s).im)", to == ND_COMPLEX64 ? "C64" : "C128",
                reg_types[pt], x, reg_types[pt], x);
        }
    }
    else if (to == ND_BOOL) fmt(out, cap, "((%s) != 0)", x);
    else if (to == ND_FLOAT64) fmt(out, cap, "((double)(%s))", x);
    else if (to_c == 'f') {
        char tmp[1024];
        /* to float16/bfloat16 from a wider value: through float rounded to
         * odd, so that the value rounds once (as the CPU's NDS_CAST) */
        if (from_c == 'f' || from_c == 'b') fmt(tmp, sizeof tmp, "((float)(%s))", x);
        else if (is_half(to)) fmt(tmp, sizeof tmp, "ndk_d2f_odd((double)(%s))", x);
        else fmt(tmp, sizeof tmp, "((float)(%s))", x); /* one rounding, also from int64 */
        round_str(out, cap, to, tmp);
    } else if (from_c == 'f' || from_c == 'd') {
        fmt(out, cap, "((%s)ndk_f2i((double)(%s)))", reg_types[to], x);
    } else {
        fmt(out, cap, "((%s)(%s))", reg_types[to], x);
    }
}

void nd_cuda_emit_cast(nd_strbuf *sb, nd_dtype from, nd_dtype to, const char *x) {
    char buf[1200];
    cast_str(buf, sizeof buf, from, to, x);
    nd_strbuf_printf(sb, "%s", buf);
}

/* Register value -> memory representation, and back. */
static void to_mem_str(char *out, size_t cap, nd_dtype t, const char *x) {
    if (t == ND_BOOL) fmt(out, cap, "((unsigned char)(%s))", x);
    else if (t == ND_FLOAT16) fmt(out, cap, "ndk_f2h(%s)", x);
    else if (t == ND_BFLOAT16) fmt(out, cap, "ndk_f2b(%s)", x);
    else fmt(out, cap, "%s", x);
}
static void from_mem_str(char *out, size_t cap, nd_dtype t, const char *x) {
    if (t == ND_BOOL) fmt(out, cap, "((%s) != 0)", x);
    else if (t == ND_FLOAT16) fmt(out, cap, "ndk_h2f(%s)", x);
    else if (t == ND_BFLOAT16) fmt(out, cap, "ndk_b2f(%s)", x);
    else fmt(out, cap, "%s", x);
}

/* ---------------------------------------------------------------- validation */

static nd_status bad(const nd_kernel *k, const char *what, int64_t j) {
    return nd_error_set(ND_ERR_ARG, "cuda codegen: kernel '%s': %s (at %" PRId64 ")", k->name, what, j);
}

static nd_status check_access(const nd_kernel *k, const nd_ir_access *a, int need_slot, int64_t j) {
    if (need_slot && (a->slot < 0 || a->slot >= k->n_slots)) return bad(k, "access slot out of range", j);
    if (need_slot && !nd_dtype_valid(a->dtype)) return bad(k, "access dtype invalid", j);
    return ND_OK;
}

static nd_status validate(const nd_kernel *k) {
    if (k->ndim < 0 || k->ndim > ND_MAX_DIMS) return bad(k, "ndim out of range", k->ndim);
    for (int d = 0; d < k->ndim; d++)
        if (k->shape[d] < 0) return bad(k, "negative extent", d);
    if (k->n_slots < 0 || k->n_params < 0 || k->n_loads < 0 || k->n_indices < 0 || k->n_insts < 0 ||
        k->n_stores < 0 || k->n_gathers < 0)
        return bad(k, "negative count", 0);
    for (int j = 0; j < k->n_params; j++)
        if (!nd_dtype_valid(k->param_dtypes[j])) return bad(k, "parameter dtype invalid", j);
    nd_status s;
    for (int j = 0; j < k->n_loads; j++)
        if ((s = check_access(k, &k->loads[j], 1, j))) return s;
    for (int j = 0; j < k->n_stores; j++) {
        if ((s = check_access(k, &k->stores[j].at, 1, j))) return s;
        if (k->stores[j].value < 0 || k->stores[j].value >= k->n_insts) return bad(k, "store value out of range", j);
    }
    for (int j = 0; j < k->n_insts; j++) {
        const nd_ir_inst *in = &k->insts[j];
        if (!nd_dtype_valid(in->dtype)) return bad(k, "instruction dtype invalid", j);
        int arity = 0;
        switch (in->op) {
        case ND_IR_LOAD:
            if (in->a < 0 || in->a >= k->n_loads) return bad(k, "LOAD index out of range", j);
            break;
        case ND_IR_PARAM:
            if (in->a < 0 || in->a >= k->n_params) return bad(k, "PARAM index out of range", j);
            break;
        case ND_IR_INDEX:
            if (in->a < 0 || in->a >= k->n_indices) return bad(k, "INDEX map out of range", j);
            break;
        case ND_IR_RAND_INTEGER:
            if (in->d < 0 || in->d >= k->n_params) return bad(k, "RAND range parameter out of range", j);
            if (in->dtype != ND_UINT16 && in->dtype != ND_UINT32 && in->dtype != ND_UINT64)
                return bad(k, "RAND_INTEGER dtype is not uint16, uint32 or uint64", j);
            /* fall through */
        case ND_IR_RAND_UNIFORM:
        case ND_IR_RAND_NORMAL:
            if (in->a < 0 || in->a >= j) return bad(k, "RAND index operand out of range", j);
            if (in->b < 0 || in->b >= k->n_params || in->c < 0 || in->c >= k->n_params)
                return bad(k, "RAND seed/stream parameter out of range", j);
            break;
        case ND_IR_GATHER: {
            if (in->a < 0 || in->a >= k->n_gathers) return bad(k, "GATHER out of range", j);
            const nd_ir_gather *g = &k->gathers[in->a];
            if (g->load < 0 || g->load >= k->n_loads || k->loads[g->load].dtype != in->dtype)
                return bad(k, "GATHER source load out of range or of another dtype", j);
            if (g->n_axes < 1 || g->n_axes > ND_IR_GATHER_MAX_AXES) return bad(k, "GATHER axis count", j);
            int32_t ix[ND_IR_GATHER_MAX_AXES];
            nd_ir_gather_indices(k, in, ix);
            for (int q = 0; q < g->n_axes; q++)
                if (ix[q] < 0 || ix[q] >= j || k->insts[ix[q]].dtype != ND_INT64)
                    return bad(k, "GATHER index is not an earlier int64 value", j);
            break;
        }
        case ND_IR_UFUNC: {
            const nd_ufunc_loop *l = nd_ufunc_loop_get(in->ufunc);
            if (!l) return bad(k, "unknown user function", j);
            if (l->ret != in->dtype) return bad(k, "user function result dtype differs", j);
            const int32_t u[ND_UFUNC_MAX_ARGS] = {in->a, in->b, in->c, in->d};
            for (int o = 0; o < l->nargs; o++)
                if (u[o] < 0 || u[o] >= j || k->insts[u[o]].dtype != l->args[o])
                    return bad(k, "user function operand is not an earlier value of its dtype", j);
            break;
        }
        case ND_IR_LOOP:
        case ND_IR_LOOP_END: {
            /* the regions' structure, once for the kernel */
            if (in->op == ND_IR_LOOP_END) break;
            int32_t *loop_end = nd_malloc(sizeof(int32_t) * (size_t)k->n_insts), at = j;
            const char *why = loop_end ? nd_kernel_check_loops(k, loop_end, &at) : "out of memory";
            free(loop_end);
            if (why) return bad(k, why, at);
            break;
        }
        default:
            if (in->op >= ND_NUM_ELEMENTWISE_OPS) return bad(k, "unknown opcode", j);
            arity = nd_op_arity((nd_op)in->op);
        }
        const int32_t ops[3] = {in->a, in->b, in->c};
        for (int o = 0; o < arity; o++)
            if (ops[o] < 0 || ops[o] >= j) return bad(k, "operand is not an earlier instruction", j);
    }
    if (k->has_reduce) {
        const nd_ir_reduce *r = &k->reduce;
        if (r->kind >= ND_NUM_REDUCE_KINDS) return bad(k, "unknown reduction kind", r->kind);
        if (!nd_dtype_valid(r->out_dtype)) return bad(k, "reduction dtype invalid", r->out_dtype);
        if (r->value < 0 || r->value >= k->n_insts) return bad(k, "reduced value out of range", r->value);
        if ((s = check_access(k, &r->out, 1, -1))) return s;
    }
    return ND_OK;
}

/* ------------------------------------------------------------------ geometry */

static int64_t ceil_div(int64_t a, int64_t b) { return b > 0 ? (a + b - 1) / b : 0; }

/* Largest |element index| an access reaches: decides 32- vs 64-bit math. */
int64_t nd_cuda_access_extent(const nd_ir_access *a, int ndim, const int64_t *shape) {
    double e = a->offset < 0 ? -(double)a->offset : (double)a->offset;
    for (int d = 0; d < ndim; d++) {
        double st = a->strides[d] < 0 ? -(double)a->strides[d] : (double)a->strides[d];
        if (shape[d] > 0) e += st * (double)(shape[d] - 1);
    }
    return e >= 9.0e18 ? INT64_MAX : (int64_t)e;
}

/* Largest index a kernel's space and its loads and stores reach. */
static int64_t space_reach(const nd_kernel *k, int64_t n) {
    int64_t big = n;
    for (int j = 0; j < k->n_loads; j++) {
        int64_t e = nd_cuda_access_extent(&k->loads[j], k->ndim, k->shape);
        if (e > big) big = e;
    }
    for (int g = 0; g < k->n_gathers; g++) {
        /* the base's reach plus the indexed axis' */
        const nd_ir_gather *ga = &k->gathers[g];
        int64_t e = nd_cuda_access_extent(&k->loads[ga->load], k->ndim, k->shape);
        double r = (double)e;
        for (int q = 0; q < ga->n_axes; q++)
            r += (ga->stride[q] < 0 ? -(double)ga->stride[q] : (double)ga->stride[q]) *
                 (double)(ga->size[q] > 0 ? ga->size[q] - 1 : 0);
        e = r >= 9.0e18 ? INT64_MAX : (int64_t)r;
        if (e > big) big = e;
    }
    for (int j = 0; j < k->n_stores; j++) {
        int64_t e = nd_cuda_access_extent(&k->stores[j].at, k->ndim, k->shape);
        if (e > big) big = e;
    }
    return big;
}

/* Which kernels are shape-generic. A 1-d elementwise kernel's extent is
 * only its loop bound, the vector variant's count and tail: as a launch
 * argument it costs a compare against a register (grid_exact gives each
 * thread one point), and what else the length decides (32- or 64-bit
 * index math) is its class, in the key. Random draws group points along
 * the axis, reductions split it and kernels of several axes divide by
 * their extents (literal divisors fold into multiply-shifts), so those
 * keep literal extents. ND_CUDA_GENERIC=0 gives every kernel literal
 * extents (to compare the two). */
int nd_cuda_shape_class(const nd_kernel *k) {
    if (k->ndim != 1 || k->has_reduce || k->n_stores == 0 || k->shape[0] < 0) return -1;
    for (int j = 0; j < k->n_insts; j++) {
        int op = k->insts[j].op;
        if (op == ND_IR_RAND_UNIFORM || op == ND_IR_RAND_NORMAL || op == ND_IR_RAND_INTEGER) return -1;
    }
    /* nd_init validated it (common/env.h: 0 or 1) */
    const char *env = getenv("ND_CUDA_GENERIC");
    if (env && strcmp(env, "0") == 0) return -1;
    return space_reach(k, k->shape[0]) >= (int64_t)INT32_MAX;
}

/* ND_CUDA_PERSIST=0 (nd_init validated it: 0 or 1): no persist kernels. */
static int persist_off(void) {
    const char *env = getenv("ND_CUDA_PERSIST");
    return env && strcmp(env, "0") == 0;
}

uint64_t nd_cuda_kernel_key(const nd_kernel *k) {
    int cls = nd_cuda_shape_class(k);
    /* a reduction that may be a persist kernel has another source with
     * ND_CUDA_PERSIST=0: another key (memory and disk) */
    if (cls < 0 && k->has_reduce && k->n_loads == 0 && k->n_gathers == 0 && persist_off())
        return nd_hash_u64(k->hash, 0x9e5157a11ull);
    if (cls < 0) return k->hash;
    return nd_hash_u64(nd_kernel_hash_shapeless(k), 0x9e0e41c0ull + (uint64_t)cls);
}

const nd_cuda_kinfo *nd_cuda_launch_info(const nd_cuda_kinfo *info, const nd_kernel *k, nd_cuda_kinfo *tmp,
                                         uint64_t *words) {
    if (!info->generic) return info;
    *tmp = *info;
    tmp->n = tmp->n_out = tmp->groups = tmp->items = k->shape[0];
    words[info->extent_word] = (uint64_t)k->shape[0];
    return tmp;
}

static void make_names(const nd_kernel *k, nd_cuda_kinfo *info) {
    char base[64];
    size_t n = 0;
    for (const char *p = k->name; *p && n < 56; p++) {
        char c = *p;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        base[n++] = ok ? c : '_';
    }
    base[n] = 0;
    if (!n) fmt(base, sizeof base, "kernel");
    /* a generic kernel's names are those of every length of its class */
    fmt(info->name, sizeof info->name, "nd_%s_%016" PRIx64, base, info->generic ? nd_cuda_kernel_key(k) : k->hash);
    fmt(info->name_vec, sizeof info->name_vec, "%s_v", info->name);
    fmt(info->name_pass2, sizeof info->name_pass2, "%s_p2", info->name);
}

/* Grouping of a reduction with random draws (see nd_cuda_kinfo.group): G
 * consecutive reduced points along the innermost reduced axis, when groups
 * cannot straddle two of its rows (it is the only reduced axis, or G
 * divides it); for COLS, rather G neighbouring outputs along the innermost
 * axis when that is kept and shares more. */
static void reduce_group(const nd_kernel *k, nd_cuda_kinfo *info, uint32_t axes) {
    /* As many points as one call serves and no more: a group of four
     * float64 uniforms (two calls a draw) took 40 registers instead of 32
     * and ran the generate + dot 3% slower on an H100. */
    int G = nd_cuda_rng_call_share(k), last = k->ndim - 1, r_in = -1, n_red_axes = 0;
    info->group = 1;
    if (G < 2) return;
    for (int d = 0; d < k->ndim; d++)
        if ((axes >> d & 1u) && k->shape[d] > 1) r_in = d, n_red_axes++;
    if (info->strategy == ND_CUDA_REDUCE_COLS && last >= 0 && !(axes >> last & 1u) &&
        k->shape[last] % G == 0 && nd_cuda_rng_shares(k, G, last)) {
        info->group = G;
        info->group_axis = last;
        info->group_kept = 1;
        return;
    }
    if (r_in >= 0 && (n_red_axes == 1 || k->shape[r_in] % G == 0) && nd_cuda_rng_shares(k, G, r_in)) {
        info->group = G;
        info->group_axis = r_in;
    }
}

int nd_cuda_vec_width(const nd_kernel *k) {
    /* Vector variant: a 1-d elementwise space whose accesses are
     * unit-stride (loads may also broadcast a single element). */
    if (k->has_reduce || k->ndim != 1 || k->n_stores == 0 || k->n_gathers != 0) return 0;
    int maxsize = 0;
    /* the vector variant moves elements of up to 8 bytes, two or more to
     * a 16-byte word: complex64 (a plain two-float struct in the word's
     * union) but not complex128 (one to a word: nothing gained).
     * complex64 * float32 ran 347 us scalar against PyTorch's 311 on 2^26
     * elements (bench/results/2026-11-29-h200-fft-window.md) */
    for (int j = 0; j < k->n_loads; j++) {
        const int64_t st = k->loads[j].strides[0];
        if (k->loads[j].dtype == ND_COMPLEX128 || (st != 0 && st != 1)) return 0;
        if (st == 1 && mem_sizes[k->loads[j].dtype] > maxsize) maxsize = mem_sizes[k->loads[j].dtype];
    }
    for (int j = 0; j < k->n_stores; j++) {
        if (k->stores[j].at.dtype == ND_COMPLEX128 || k->stores[j].at.strides[0] != 1) return 0;
        if (mem_sizes[k->stores[j].at.dtype] > maxsize) maxsize = mem_sizes[k->stores[j].at.dtype];
    }
    if (maxsize == 0) return 0;
    return 16 / maxsize > 8 ? 8 : 16 / maxsize;
}

int nd_cuda_vec_fills(int64_t n, int vec, int sm_count) {
    return vec > 0 && n / vec >= (int64_t)sm_count * ND_CUDA_BLOCK;
}

nd_status nd_cuda_kernel_info(const nd_kernel *k, nd_cuda_kinfo *info) {
    nd_status s = validate(k);
    if (s) return s;
    memset(info, 0, sizeof *info);
    info->group = 1;
    info->generic = nd_cuda_shape_class(k) >= 0;
    make_names(k, info);
    int64_t n = 1;
    for (int d = 0; d < k->ndim; d++) {
        if (k->shape[d] && n > INT64_MAX / k->shape[d])
            return nd_error_set(ND_ERR_UNSUPPORTED, "cuda codegen: kernel '%s': iteration space overflows int64", k->name);
        n *= k->shape[d];
    }
    info->n = n;
    int32_t seeds[ND_CUDA_MAX_SEEDS];
    info->n_seeds = nd_cuda_seed_params(k, seeds);
    info->key_word = nd_cuda_round_key_word(k);
    for (int i = 0; i < info->n_seeds; i++) info->seed_word[i] = k->n_slots + seeds[i];
    int32_t stream_params[ND_CUDA_MAX_STREAMS];
    info->n_streams = nd_cuda_stream_params(k, info->stream_seed, stream_params);
    info->round0_word = nd_cuda_round0_word(k);
    for (int i = 0; i < info->n_streams; i++) info->stream_word[i] = k->n_slots + stream_params[i];
    info->n_words = nd_cuda_rng_words_end(k);
    info->bad_word = -1;
    if (k->n_gathers) info->bad_word = info->n_words++; /* == nd_cuda_bad_word(k) */
    info->extent_word = -1;
    if (info->generic) info->extent_word = info->n_words++;
    info->splits_word = -1;
    if (info->n_words > ND_CUDA_MAX_WORDS)
        return nd_error_set(ND_ERR_UNSUPPORTED,
                            "cuda codegen: kernel '%s' has %d slots and %d parameters; at most %d fit in "
                            "the kernel arguments (lower the fusion size limit)",
                            k->name, k->n_slots, k->n_params, ND_CUDA_MAX_WORDS);
    int64_t big = space_reach(k, 0);
    if (!k->has_reduce) {
        info->strategy = ND_CUDA_ELEMWISE;
        info->n_out = n;
        info->n_red = 1;
        info->splits = 1;
        info->groups = n;
        /* (a generic kernel has its vector variant at any length; the
         * kernel cache leaves it out where no launch would take it:
         * nd_cuda_vec_fills, nd_cuda_kcache_get) */
        const int vec = nd_cuda_vec_width(k);
        if (vec > 0 && (n >= 16 || info->generic)) {
            info->vec = vec;
            info->vec_group = nd_cuda_rng_shares(k, info->vec, 0);
        }
        /* Light bodies over large spaces of rows are bound by memory: each
         * thread takes several rows' points and keeps their loads in flight
         * (emit_elementwise_unrolled). Heavy bodies would only gain
         * registers; small spaces would lose the threads that hide L2
         * latency (a 1000x1000 stencil sweep ran slower unrolled). */
        /* (not with gathers: the unrolled and marching loops stage every
         * load's element, where a gather's base is an offset) */
        int light = k->ndim >= 2 && k->n_loads > 0 && k->n_insts <= ND_CUDA_UNROLL_MAX_INSTS && k->n_gathers == 0;
        int light_rows = light && n >= ND_CUDA_UNROLL_MIN_POINTS;
        info->unroll = light_rows && k->shape[0] >= ND_CUDA_UNROLL ? ND_CUDA_UNROLL : 1;
        /* Loads that share rows and columns (a stencil): a block walks
         * down a strip, loading each element about once
         * (emit_elementwise_march). A space of a few hundred thousand
         * points, held in L2, gets short strips, so that there are still
         * blocks for every multiprocessor. */
        int march_rows = light_rows ? ND_CUDA_MARCH_ROWS : ND_CUDA_MARCH_ROWS_MID;
        if (light && n >= ND_CUDA_MARCH_MIN_POINTS && k->shape[0] >= 2 * march_rows && nd_cuda_march_shares(k)) {
            info->march = march_rows;
            info->unroll = 1;
        }
        /* Draws whose calls consecutive points of a row share: G points a
         * step, along the innermost axis. */
        int L = k->ndim - 1, G = ND_CUDA_RNG_GROUP;
        if (nd_cuda_rng_call_share(k) > G) G = nd_cuda_rng_call_share(k); /* the pair form: 8 */
        info->items = info->unroll > 1 ? ceil_div(k->shape[0], info->unroll) * (n / k->shape[0]) : n;
        if (info->march) /* whole blocks of columns per strip */
            info->items = ceil_div(k->shape[0], info->march) * ceil_div(n / k->shape[0], ND_CUDA_BLOCK) * ND_CUDA_BLOCK;
        if (L >= 0 && k->shape[L] >= G && nd_cuda_rng_shares(k, G, L)) {
            info->march = 0;
            info->unroll = 1;
            info->group = G;
            info->group_axis = L;
            info->items = n / k->shape[L] * ceil_div(k->shape[L], G);
        }
    } else {
        uint32_t axes = k->reduce.axes & (k->ndim >= 32 ? 0xffffffffu : ((1u << k->ndim) - 1u));
        int64_t n_out = 1, n_red = 1;
        for (int d = 0; d < k->ndim; d++) {
            if (axes >> d & 1u) n_red *= k->shape[d];
            else n_out *= k->shape[d];
        }
        info->n_out = n_out;
        info->n_red = n_red;
        int inner_reduced = k->ndim > 0 && (axes >> (k->ndim - 1) & 1u);
        int64_t splits;
        if (inner_reduced && n_red > 16) {
            info->strategy = ND_CUDA_REDUCE_ROWS;
            int tpr = 32;
            while (tpr < ND_CUDA_BLOCK && (int64_t)tpr * 8 < n_red) tpr *= 2;
            info->tpr = tpr;
            int64_t rpb = ND_CUDA_BLOCK / tpr;
            int64_t by_work = ceil_div(n_red, (int64_t)tpr * 16);
            /* Few outputs, so the reduced axis is split: into many small
             * blocks (a block per split), so that the last wave of blocks is
             * a small part of the work. The sum of 2^28 float32 on the H100:
             * 0.391-0.400 ms in 1024 splits, 0.375-0.380 ms in 16384
             * (interleaved A/B, 2026-11-22); Monte Carlo pi
             * and the generate + dot, bound by their Philox arithmetic,
             * stayed within their run-to-run spread. */
            /* The same holds for a middling number of long outputs (the
             * sum over axes (0, 2) of 512x1024x512: 1024 outputs of 2^18
             * points), which unsplit would be 1024 blocks of 1024 points a
             * lane: about one wave with one load in flight per lane. Where
             * a lane would fold more than 256 points, split up to
             * ND_CUDA_REDUCE_SPLITS blocks in all (never below 16 points a
             * lane, by_work): the geometry of the 2^28-point sum above,
             * 16384 blocks of 64 points a lane. Shorter rows (the matmul
             * chain's 8192 row sums of 8192) keep one block each. */
            int long_rows = n_red > (int64_t)256 * tpr && n_out < ND_CUDA_REDUCE_SPLITS * rpb;
            int few_outputs = n_out > 0 && (n_out < 1024 * rpb || long_rows);
            int64_t by_target = few_outputs ? ceil_div(ND_CUDA_REDUCE_SPLITS * rpb, n_out) : 1;
            splits = by_work < by_target ? by_work : by_target;
            if (splits > ND_CUDA_REDUCE_SPLITS) splits = ND_CUDA_REDUCE_SPLITS;
        } else {
            info->strategy = ND_CUDA_REDUCE_COLS;
            int64_t by_work = ceil_div(n_red, 32);
            int64_t by_target = n_out > 0 ? ceil_div(262144, n_out) : 1;
            splits = by_work < by_target ? by_work : by_target;
            if (splits > 4096) splits = 4096;
        }
        if (splits < 1) splits = 1;
        info->chunk = ceil_div(n_red, splits);
        reduce_group(k, info, axes);
        if (info->group > 1 && !info->group_kept) info->chunk = ceil_div(info->chunk, info->group) * info->group;
        info->splits = info->chunk > 0 ? ceil_div(n_red, info->chunk) : 1;
        /* Many partials per output: one thread folding them in turn is a
         * chain of dependent loads (27 us for 1024 partials on an H100). */
        info->pass2_tree = info->splits > 32;
        if (info->splits < 1) info->splits = 1;
        info->groups = n_out * info->splits;
        info->items = info->group_kept ? info->groups / info->group : info->groups;
        /* A full reduction of generated values (random draws, index
         * arithmetic: no loads) is bound by its arithmetic, and the split
         * geometry above pays per split what a split's work is measured
         * against: the generate + dot (2 x 1e8 float64 uniforms) in 16383
         * splits of 12 pairs a lane, where each thread's prologue and the
         * block's tree are ~100 instructions against 111 a pair
         * (bench/dot_variants.cu: nd's loop and the hand-written one are the
         * same 111 instructions; that kernel runs on SMs x 8 blocks,
         * grid-stride). So such a reduction takes the hand-written shape:
         * the host's grid (nd_cuda_persist_grid), each thread striding over
         * the groups, one partial per block. Its bits then depend on the
         * multiprocessor count (README: every run, and every device with as
         * many multiprocessors). Loads keep the splits: the memory-bound
         * sums were tuned with them (above). */
        if (info->strategy == ND_CUDA_REDUCE_ROWS && n_out == 1 && k->n_loads == 0 && k->n_gathers == 0 &&
            !persist_off()) {
            info->persist = 1;
            info->tpr = ND_CUDA_BLOCK;
            info->splits = 1;
            info->chunk = n_red;
            info->pass2_tree = 0;
            info->groups = info->items = 1;
            info->splits_word = info->n_words++;
            if (info->n_words > ND_CUDA_MAX_WORDS)
                return nd_error_set(ND_ERR_UNSUPPORTED, "cuda codegen: kernel '%s' needs %d argument words; at most %d fit",
                                    k->name, info->n_words, ND_CUDA_MAX_WORDS);
        }
        int64_t e = nd_cuda_access_extent(&k->reduce.out, k->ndim, k->shape);
        if (e > big) big = e;
        if (info->groups > big) big = info->groups;
    }
    if (n > big) big = n;
    info->wide = big >= (int64_t)INT32_MAX;
    return ND_OK;
}

unsigned nd_cuda_persist_grid(const nd_cuda_kinfo *info, int sm_count) {
    int64_t by_work = ceil_div(info->n_red, (int64_t)ND_CUDA_BLOCK * 16);
    int64_t g = (int64_t)(sm_count > 0 ? sm_count : 1) * ND_CUDA_PERSIST_BLOCKS;
    if (by_work < g) g = by_work;
    return g < 1 ? 1u : (unsigned)g;
}

/* --------------------------------------------------------------- emission */

const char *nd_cuda_prelude_text(void) { return nd_cuda_prelude; }

void nd_cuda_emit_prelude(nd_strbuf *sb) {
    nd_strbuf_printf(sb, "%s#define NDS_CUDA 1\n%s", nd_cuda_prelude, nd_element_fns_source);
}

/* Element-function suffix of a compute dtype (common/element_fns.h). */
static const char *const fn_sfx[ND_NUM_DTYPES] = {"BOOL", "I8",  "I16", "I32", "I64", "U8", "U16",
                                                  "U32",  "U64", "F16", "BF16", "F32", "F64",
                                                  "C64",  "C128"};

/* Expression for an elementwise op whose operands (a, b, c) are already in
 * its compute dtype t (nd_op_compute_dtype): the op's element function of
 * common/element_fns.h, pasted into every kernel, so the CUDA backend
 * computes what the CPU backend does. The result is of dtype t (bool for
 * comparisons and logical ops). EXACT float arithmetic rounds on its own
 * (__f*_rn) so that random draws match the CPU bit for bit; the element
 * functions' plain operators may contract into FMAs with a neighbour
 * (NVRTC's --fmad). */
static void op_expr(char *out, size_t cap, nd_op op, nd_dtype t, const char *a, const char *b,
                    const char *c, int exact) {
    const char *lab = nd_op_label(op), *sfx = fn_sfx[t];
    if (exact && (t == ND_FLOAT32 || t == ND_FLOAT64)) {
        const char *rn = t == ND_FLOAT64 ? "d" : "f";
        switch (op) {
        case ND_OP_ADD: fmt(out, cap, "__%sadd_rn(%s, %s)", rn, a, b); return;
        case ND_OP_SUB: fmt(out, cap, "__%ssub_rn(%s, %s)", rn, a, b); return;
        case ND_OP_MUL: fmt(out, cap, "__%smul_rn(%s, %s)", rn, a, b); return;
        case ND_OP_DIV: fmt(out, cap, "__%sdiv_rn(%s, %s)", rn, a, b); return;
        case ND_OP_SQUARE: fmt(out, cap, "__%smul_rn(%s, %s)", rn, a, a); return;
        default: break; /* the rest never contracts */
        }
    }
    switch (nd_op_kind_of(op)) {
    case ND_OPK_WHERE: fmt(out, cap, "((%s) ? (%s) : (%s))", a, b, c); return;
    case ND_OPK_CAST: fmt(out, cap, "(%s)", a); return; /* emit_inst casts */
    case ND_OPK_NUM:
    case ND_OPK_FLOAT:
    case ND_OPK_INT:
    case ND_OPK_CMP:
    case ND_OPK_LOGICAL:
    case ND_OPK_C2R:
    case ND_OPK_R2C:
        if (nd_op_arity(op) == 1) fmt(out, cap, "nds_%s_%s(%s)", lab, sfx, a);
        else fmt(out, cap, "nds_%s_%s(%s, %s)", lab, sfx, a, b);
        return;
    }
}

/* The body of a group of G points (G = 1: one point). Values that do not
 * depend on the point (parameters and what is computed from them only) are
 * computed once; every other value j of point e is v<j>_<e> (v<j> when G =
 * 1). Loads, indices and stores are named alike (l<j>_<e>, x<j>_<e>,
 * s<j>_<e>). */
typedef struct {
    const nd_kernel *k;
    int G, gax;
    uint8_t *uniform; /* per instruction: the same for every point */
} body_ctx;

void nd_cuda_point_name(char *out, size_t cap, const char *base, int j, int e, int G) {
    if (G == 1) fmt(out, cap, "%s%d", base, j);
    else fmt(out, cap, "%s%d_%d", base, j, e);
}

void nd_cuda_rv_name(char *out, size_t cap, int e, int G) {
    if (G == 1) fmt(out, cap, "rv");
    else fmt(out, cap, "rv_%d", e);
}

static void value_name(char *out, size_t cap, const body_ctx *c, int j, int e) {
    nd_cuda_point_name(out, cap, "v", j, c->uniform[j] ? 0 : e, c->uniform[j] ? 1 : c->G);
}

/* Operand j of an instruction at point e, as dtype `want`. */
static void operand(char *out, size_t cap, const body_ctx *c, int32_t j, int e, nd_dtype want) {
    char v[32];
    value_name(v, sizeof v, c, j, e);
    cast_str(out, cap, (nd_dtype)c->k->insts[j].dtype, want, v);
}

/* The pair form of integer draw j (common/philox.h: two points a word, r
 * and t in the range word): each distinct word of the group once, its two
 * digits by two multiply pairs, then ONE test of the group's low parts
 * (their minimum against t) guarding the rare redraws, as the one-word
 * form; a point takes the digit its parity (words[p][1]) names. Points of a
 * pair name the same word when the group's layout is known here (FIXED),
 * so their pair is computed once. */
static void emit_pair_draw(nd_strbuf *sb, const body_ctx *c, int j, char (*idx)[32],
                           char (*words)[4][ND_CUDA_WORD_EXPR], const char *r, const char *args) {
    int first[ND_CUDA_MAX_GROUP], n_pairs = 0, pair_of[ND_CUDA_MAX_GROUP];
    char v[32], lmin[ND_CUDA_MAX_GROUP * 24 + 64];
    for (int p = 0; p < c->G; p++) {
        pair_of[p] = -1;
        for (int u = 0; u < n_pairs && pair_of[p] < 0; u++)
            if (!strcmp(words[first[u]][0], words[p][0])) pair_of[p] = u;
        if (pair_of[p] < 0) {
            first[n_pairs] = p;
            pair_of[p] = n_pairs++;
        }
    }
    for (int p = 0; p < c->G; p++) {
        value_name(v, sizeof v, c, j, p);
        nd_strbuf_printf(sb, "  unsigned short %s;\n", v);
    }
    nd_strbuf_printf(sb, "  {\n    const unsigned r16 = (unsigned)%s, t16 = (unsigned)(%s >> 32);\n", r, r);
    lmin[0] = 0;
    for (int u = 0; u < n_pairs; u++) {
        const char *w = words[first[u]][0];
        nd_strbuf_printf(sb,
                         "    unsigned a%d_%d = __umulhi(%s, r16);\n"
                         "    const unsigned m%d_%d = %s * r16;\n"
                         "    unsigned b%d_%d = __umulhi(m%d_%d, r16);\n"
                         "    const unsigned l%d_%d = m%d_%d * r16;\n",
                         j, u, w, j, u, w, j, u, j, u, j, u, j, u);
        char term[sizeof lmin];
        if (u == 0) fmt(term, sizeof term, "l%d_0", j);
        else fmt(term, sizeof term, "ndk_minu(%s, l%d_%d)", lmin, j, u);
        fmt(lmin, sizeof lmin, "%s", term);
    }
    nd_strbuf_printf(sb, "    if (__builtin_expect(%s < t16, 0)) {\n", lmin);
    for (int u = 0; u < n_pairs; u++)
        nd_strbuf_printf(sb,
                         "      if (l%d_%d < t16) { const unsigned pv = ndk_pair_redraw(r16, t16, %s, "
                         "(unsigned long long)%s >> 1); a%d_%d = pv >> 16; b%d_%d = pv & 0xffffu; }\n",
                         j, u, args, idx[first[u]], j, u, j, u);
    nd_strbuf_printf(sb, "    }\n");
    for (int p = 0; p < c->G; p++) {
        value_name(v, sizeof v, c, j, p);
        const char *par = words[p][1];
        if (!strcmp(par, "0u") || !strcmp(par, "1u"))
            nd_strbuf_printf(sb, "    %s = (unsigned short)%c%d_%d;\n", v, par[0] == '0' ? 'a' : 'b', j, pair_of[p]);
        else
            nd_strbuf_printf(sb, "    %s = (unsigned short)(%s ? b%d_%d : a%d_%d);\n", v, par, j, pair_of[p], j,
                             pair_of[p]);
    }
    nd_strbuf_printf(sb, "  }\n");
}

/* Random draw j for every point of the group: the calls (codegen_rng.c),
 * then each point's transform of its words. */
static void emit_draw(nd_strbuf *sb, const body_ctx *c, int j) {
    const nd_kernel *k = c->k;
    const nd_ir_inst *in = &k->insts[j];
    nd_dtype t = (nd_dtype)in->dtype;
    char idx[ND_CUDA_MAX_GROUP][32], words[ND_CUDA_MAX_GROUP][4][ND_CUDA_WORD_EXPR], q[640], e[1200], v[32];
    for (int p = 0; p < c->G; p++) value_name(idx[p], sizeof idx[p], c, in->a, p);
    nd_cuda_emit_draw_words(sb, k, j, c->G, c->gax, idx, words);
    if (in->op == ND_IR_RAND_INTEGER) {
        /* Lemire's multiply-shift; a rejection redraws from the element's
         * own calls (ndk_int32_redraw/ndk_int64, common/philox.h's layout). */
        char r[48], args[200];
        fmt(r, sizeof r, "A.w[%d]", k->n_slots + in->d);
        fmt(args, sizeof args, "A.w[%d], A.w[%d]", k->n_slots + in->b, k->n_slots + in->c);
        if (t == ND_UINT16) {
            emit_pair_draw(sb, c, j, idx, words, r, args);
            return;
        }
        if (t == ND_UINT64) {
            for (int p = 0; p < c->G; p++) {
                value_name(v, sizeof v, c, j, p);
                nd_strbuf_printf(sb, "  const %s %s = ndk_int64(%s, %s, %s, %s, (unsigned long long)%s);\n",
                                 reg_types[t], v, words[p][0], words[p][1], r, args, idx[p]);
            }
            return;
        }
        /* 32-bit: every point's candidate and low word first, then ONE
         * test of the whole group's low words (their minimum against r)
         * guarding the rare redraws. A test and branch per point cost the
         * draw 1.37x a uniform float's on the H100; one per group 1.16x
         * (bench/results/2026-11-26-h100-breadth.md). r = 2^32 (r32 = 0, a
         * uniform branch) takes the words as they are. */
        char lmin[ND_CUDA_MAX_GROUP * 24 + 64];
        for (int p = 0; p < c->G; p++) {
            value_name(v, sizeof v, c, j, p);
            nd_strbuf_printf(sb, "  %s %s; unsigned %s_l;\n", reg_types[t], v, v);
        }
        nd_strbuf_printf(sb, "  {\n    const unsigned r32 = (unsigned)%s;\n    if (r32 == 0u) {\n", r);
        for (int p = 0; p < c->G; p++) {
            value_name(v, sizeof v, c, j, p);
            nd_strbuf_printf(sb, "      %s = %s;\n", v, words[p][0]);
        }
        nd_strbuf_printf(sb, "    } else {\n");
        lmin[0] = 0;
        for (int p = 0; p < c->G; p++) {
            value_name(v, sizeof v, c, j, p);
            nd_strbuf_printf(sb, "      %s = __umulhi(%s, r32); %s_l = %s * r32;\n", v, words[p][0], v, words[p][0]);
            char term[sizeof lmin];
            if (p == 0) fmt(term, sizeof term, "%s_l", v);
            else fmt(term, sizeof term, "ndk_minu(%s, %s_l)", lmin, v);
            fmt(lmin, sizeof lmin, "%s", term);
        }
        nd_strbuf_printf(sb, "      if (__builtin_expect(%s < r32, 0)) {\n", lmin);
        for (int p = 0; p < c->G; p++) {
            value_name(v, sizeof v, c, j, p);
            nd_strbuf_printf(sb,
                             "        if (%s_l < r32) %s = ndk_int32_redraw(%s_l, %s, r32, %s, (unsigned long long)%s);\n",
                             v, v, v, v, args, idx[p]);
        }
        nd_strbuf_printf(sb, "      }\n    }\n  }\n");
        return;
    }
    int normal = in->op == ND_IR_RAND_NORMAL, wide = t == ND_FLOAT64 || dclass(t) != 'f';
    for (int p = 0; p < c->G; p++) {
        char(*w)[ND_CUDA_WORD_EXPR] = words[p];
        if (wide) {
            if (normal) fmt(q, sizeof q, "ndk_normd(%s, %s, %s, %s)", w[0], w[1], w[2], w[3]);
            else fmt(q, sizeof q, "ndk_u01d(%s, %s)", w[0], w[1]);
            cast_str(e, sizeof e, ND_FLOAT64, t, q);
        } else {
            if (normal) fmt(q, sizeof q, "ndk_normf(%s, %s)", w[0], w[1]);
            else fmt(q, sizeof q, "ndk_u01f(%s)", w[0]);
            round_str(e, sizeof e, t, q);
        }
        value_name(v, sizeof v, c, j, p);
        nd_strbuf_printf(sb, "  const %s %s = %s;\n", reg_types[t], v, e);
    }
}

static void emit_inst(nd_strbuf *sb, const body_ctx *c, int j, int p) {
    const nd_kernel *k = c->k;
    const nd_ir_inst *in = &k->insts[j];
    int n_slots = k->n_slots;
    nd_dtype t = (nd_dtype)in->dtype;
    char e[2048], tmp[2048], a[1200], b[1200], cc[1200], v[32];
    switch (in->op) {
    case ND_IR_LOAD: {
        nd_dtype md = (nd_dtype)k->loads[in->a].dtype;
        char l[32];
        nd_cuda_point_name(l, sizeof l, "l", in->a, p, c->G);
        from_mem_str(tmp, sizeof tmp, md, l);
        cast_str(e, sizeof e, md, t, tmp);
        break;
    }
    case ND_IR_PARAM: {
        nd_dtype pd = (nd_dtype)k->param_dtypes[in->a];
        int w = n_slots + in->a;
        if (pd == ND_FLOAT32) {
            /* converted to float bits on the host at launch */
            fmt(tmp, sizeof tmp, "__int_as_float((int)(unsigned)A.w[%d])", w);
            cast_str(e, sizeof e, ND_FLOAT32, t, tmp);
        } else if (nd_dtype_is_float(pd)) {
            fmt(tmp, sizeof tmp, "__longlong_as_double((long long)A.w[%d])", w);
            cast_str(e, sizeof e, ND_FLOAT64, t, tmp);
        } else if (nd_dtype_kind_of(pd) == ND_KIND_UINT) {
            fmt(tmp, sizeof tmp, "A.w[%d]", w);
            cast_str(e, sizeof e, ND_UINT64, t, tmp);
        } else {
            fmt(tmp, sizeof tmp, "((long long)A.w[%d])", w);
            cast_str(e, sizeof e, ND_INT64, t, tmp);
        }
        break;
    }
    case ND_IR_INDEX: {
        char x[32];
        nd_cuda_point_name(x, sizeof x, "x", in->a, p, c->G);
        cast_str(e, sizeof e, ND_INT64, t, x);
        break;
    }
    case ND_IR_GATHER: {
        /* ndk_gather (nd_cuda_emit_gather): the source element at the
         * base offset l<load> plus each wrapped index times its stride */
        const nd_ir_gather *g = &k->gathers[in->a];
        nd_dtype md = (nd_dtype)k->loads[g->load].dtype;
        char l[32], ax[3][96];
        int32_t ix[ND_IR_GATHER_MAX_AXES];
        nd_ir_gather_indices(k, in, ix);
        nd_cuda_point_name(l, sizeof l, "l", g->load, p, c->G);
        if (g->n_axes > 3) {
            /* ndk_gatherk: K indices, sizes and strides as arrays */
            char is[400] = "", ns[400] = "", ss[400] = "";
            for (int q = 0; q < g->n_axes; q++) {
                value_name(v, sizeof v, c, ix[q], p);
                size_t li = strlen(is), ln = strlen(ns), ls = strlen(ss);
                fmt(is + li, sizeof is - li, "%s%s", q ? ", " : "", v);
                fmt(ns + ln, sizeof ns - ln, "%s%" PRId64 "LL", q ? ", " : "", g->size[q]);
                fmt(ss + ls, sizeof ss - ls, "%s%" PRId64 "LL", q ? ", " : "", g->stride[q]);
            }
            fmt(a, sizeof a, "ndk_gatherk<%s, %d>((const %s *)A.w[%d], %s, ndk_gix{{%s}}, ndk_gix{{%s}}, ndk_gix{{%s}}, "
                "%d, A.w[%d], %d)", mem_types[md], g->n_axes, mem_types[md], (int)k->loads[g->load].slot, l, is, ns,
                ss, !(g->fn & ND_INDEX_NO_WRAP), nd_cuda_bad_word(k), in->a);
            from_mem_str(tmp, sizeof tmp, md, a);
            cast_str(e, sizeof e, md, t, tmp);
            break;
        }
        for (int q = 0; q < 3; q++) {
            if (q < g->n_axes) {
                value_name(v, sizeof v, c, ix[q], p);
                fmt(ax[q], sizeof ax[q], "%s, %" PRId64 "LL, %" PRId64 "LL", v, g->size[q], g->stride[q]);
            } else {
                fmt(ax[q], sizeof ax[q], "0LL, 1LL, 0LL");
            }
        }
        fmt(a, sizeof a, "ndk_gather<%s, %d>((const %s *)A.w[%d], %s, %s, %s, %s, %d, A.w[%d], %d)", mem_types[md],
            g->n_axes, mem_types[md], (int)k->loads[g->load].slot, l, ax[0], ax[1], ax[2], !(g->fn & ND_INDEX_NO_WRAP),
            nd_cuda_bad_word(k), in->a);
        from_mem_str(tmp, sizeof tmp, md, a);
        cast_str(e, sizeof e, md, t, tmp);
        break;
    }
    case ND_IR_UFUNC: {
        /* the user's __device__ function (nd_cuda_emit_ufuncs); operands
         * are already of its parameter dtypes */
        const nd_ufunc_loop *l = nd_ufunc_loop_get(in->ufunc);
        const int32_t u[ND_UFUNC_MAX_ARGS] = {in->a, in->b, in->c, in->d};
        size_t n = 0;
        nd_ufunc_fn_name(tmp, sizeof tmp, l);
        n = strlen(tmp);
        for (int o = 0; o < l->nargs && n < sizeof tmp; o++) {
            value_name(v, sizeof v, c, u[o], p);
            n += (size_t)snprintf(tmp + n, sizeof tmp - n, "%s%s", o ? ", " : "(", v);
        }
        if (n < sizeof tmp) snprintf(tmp + n, sizeof tmp - n, ")");
        fmt(e, sizeof e, "((%s)%s)", reg_types[t], tmp);
        break;
    }
    default: {
        nd_op op = (nd_op)in->op;
        if (op == ND_OP_CAST) {
            value_name(v, sizeof v, c, in->a, p);
            cast_str(e, sizeof e, (nd_dtype)k->insts[in->a].dtype, t, v);
            break;
        }
        /* comparisons compute in their operands' common dtype, the rest in
         * their result's (common/ops.h) */
        nd_dtype cd = t;
        if (nd_op_computes_in_operands(op)) {
            nd_dtype da = (nd_dtype)k->insts[in->a].dtype;
            nd_dtype db = nd_op_arity(op) > 1 ? (nd_dtype)k->insts[in->b].dtype : da;
            cd = da == db ? da : nd_promote(da, db);
        }
        cd = (nd_dtype)nd_op_compute_dtype(op, cd);
        int arity = nd_op_arity(op);
        a[0] = b[0] = cc[0] = 0;
        if (op == ND_OP_WHERE) {
            operand(a, sizeof a, c, in->a, p, ND_BOOL);
            operand(b, sizeof b, c, in->b, p, t);
            operand(cc, sizeof cc, c, in->c, p, t);
        } else {
            nd_dtype od = (nd_dtype)nd_op_operand_dtype(op, cd);
            operand(a, sizeof a, c, in->a, p, od);
            if (arity > 1) operand(b, sizeof b, c, in->b, p, od);
        }
        op_expr(tmp, sizeof tmp, op, cd, a, b, cc, (in->flags & ND_IR_EXACT) != 0);
        nd_dtype rd = nd_op_computes_in_operands(op) ? (nd_dtype)nd_op_result_of(op, cd) : cd;
        /* a 16-bit float's register holds a representable value, which
         * negation, abs and where keep: no rounding needed */
        if (is_half(t) && (op == ND_OP_NEG || op == ND_OP_ABS)) fmt(e, sizeof e, "%s", tmp);
        else cast_str(e, sizeof e, rd, t, tmp);
        break;
    }
    }
    value_name(v, sizeof v, c, j, p);
    nd_strbuf_printf(sb, "  const %s %s = %s;\n", reg_types[t], v, e);
}

/* A loop region (kernel_ir.h's ND_IR_LOOP): the carried value of each
 * point is a variable the LOOP_END assigns; the region's instructions are
 * the do-block's, so their values are scoped to it (nothing after the
 * region reads them: nd_kernel_check_loops). */
static void emit_loop_open(nd_strbuf *sb, const body_ctx *c, int j) {
    const nd_ir_inst *in = &c->k->insts[j];
    char v[32], init[1200];
    for (int p = 0; p < c->G; p++) {
        value_name(v, sizeof v, c, j, p);
        operand(init, sizeof init, c, in->b, p, (nd_dtype)in->dtype);
        nd_strbuf_printf(sb, "  %s %s = %s;\n", reg_types[in->dtype], v, init);
    }
    nd_strbuf_printf(sb, "  long long it%d = 0;\n  do {\n", j);
}

static void emit_loop_close(nd_strbuf *sb, const body_ctx *c, int j) {
    const nd_ir_inst *in = &c->k->insts[j];
    const int b = in->a;
    char v[32], next[1200], count[32];
    for (int p = 0; p < c->G; p++) {
        value_name(v, sizeof v, c, b, p);
        operand(next, sizeof next, c, in->b, p, (nd_dtype)in->dtype);
        nd_strbuf_printf(sb, "  %s = %s;\n", v, next);
    }
    value_name(count, sizeof count, c, c->k->insts[b].a, 0);
    nd_strbuf_printf(sb, "  } while (++it%d < %s);\n", b, count);
    for (int p = 0; p < c->G; p++) {
        char from[32];
        value_name(from, sizeof from, c, b, p);
        value_name(v, sizeof v, c, j, p);
        nd_strbuf_printf(sb, "  const %s %s = %s;\n", reg_types[in->dtype], v, from);
    }
}

void nd_cuda_body_name(char *out, size_t cap, int G) {
    if (G == 1) fmt(out, cap, "ndk_body");
    else fmt(out, cap, "ndk_body_g%d", G);
}

void nd_cuda_emit_kernel_open(nd_strbuf *sb, const char *name) {
    nd_strbuf_printf(sb, "extern \"C\" __global__ void __launch_bounds__(%d) %s(const ndk_args A) {\n  ndk_after_prior();\n",
                     ND_CUDA_BLOCK, name);
}

void nd_cuda_emit_args_struct(nd_strbuf *sb, const nd_cuda_kinfo *info) {
    nd_strbuf_printf(sb, "struct ndk_args { unsigned long long w[%d]; };\n", info->n_words > 0 ? info->n_words : 1);
}

/* The body: loads arrive as memory values, indices as int64, stores leave
 * as memory values, the reduced value (if any) as its register type. The
 * same function serves the scalar, vector and reduction loops; a group
 * body (G > 1) evaluates G points along axis gax at once. */
void nd_cuda_emit_body_fn(nd_strbuf *sb, const nd_kernel *k, int G, int gax) {
    body_ctx c = {k, G, gax, nd_calloc((size_t)k->n_insts + 1, 1)};
    if (!c.uniform) {
        sb->failed = 1;
        return;
    }
    for (int j = 0; j < k->n_insts; j++) {
        const nd_ir_inst *in = &k->insts[j];
        int u = in->op == ND_IR_PARAM;
        if (in->op < ND_NUM_ELEMENTWISE_OPS) {
            int ar = nd_op_arity((nd_op)in->op), opnd[3] = {in->a, in->b, in->c};
            u = 1;
            for (int q = 0; q < ar; q++) u &= c.uniform[opnd[q]];
        }
        c.uniform[j] = (uint8_t)(G > 1 && u);
    }
    char nm[32], x[32];
    nd_cuda_body_name(nm, sizeof nm, G);
    nd_strbuf_printf(sb, "static __device__ __forceinline__ void %s(const ndk_args &A", nm);
    for (int p = 0; p < G; p++) {
        for (int j = 0; j < k->n_loads; j++) {
            nd_cuda_point_name(x, sizeof x, "l", j, p, G);
            nd_strbuf_printf(sb, ", const %s %s", nd_ir_load_gathered(k, j) ? "long long" : mem_types[k->loads[j].dtype],
                             x);
        }
        for (int j = 0; j < k->n_indices; j++) {
            nd_cuda_point_name(x, sizeof x, "x", j, p, G);
            nd_strbuf_printf(sb, ", const long long %s", x);
        }
        for (int j = 0; j < k->n_stores; j++) {
            nd_cuda_point_name(x, sizeof x, "s", j, p, G);
            nd_strbuf_printf(sb, ", %s &%s", mem_types[k->stores[j].at.dtype], x);
        }
        if (k->has_reduce) {
            nd_cuda_rv_name(x, sizeof x, p, G);
            nd_strbuf_printf(sb, ", %s &%s", reg_types[k->insts[nd_cuda_reduce_rv(k)].dtype], x);
        }
    }
    nd_strbuf_printf(sb, ") {\n");
    for (int j = 0; j < k->n_insts; j++) {
        int op = k->insts[j].op;
        if (op == ND_IR_RAND_UNIFORM || op == ND_IR_RAND_NORMAL || op == ND_IR_RAND_INTEGER)
            emit_draw(sb, &c, j);
        else if (op == ND_IR_LOOP)
            emit_loop_open(sb, &c, j);
        else if (op == ND_IR_LOOP_END)
            emit_loop_close(sb, &c, j);
        else
            for (int p = 0; p < (c.uniform[j] ? 1 : G); p++) emit_inst(sb, &c, j, p);
    }
    char v[32], cs[1200], m[1400];
    for (int p = 0; p < G; p++) {
        for (int j = 0; j < k->n_stores; j++) {
            const nd_ir_store *st = &k->stores[j];
            value_name(v, sizeof v, &c, st->value, p);
            cast_str(cs, sizeof cs, (nd_dtype)k->insts[st->value].dtype, (nd_dtype)st->at.dtype, v);
            to_mem_str(m, sizeof m, (nd_dtype)st->at.dtype, cs);
            nd_cuda_point_name(x, sizeof x, "s", j, p, G);
            nd_strbuf_printf(sb, "  %s = %s;\n", x, m);
        }
        if (k->has_reduce) {
            nd_cuda_rv_name(x, sizeof x, p, G);
            value_name(v, sizeof v, &c, nd_cuda_reduce_rv(k), p);
            nd_strbuf_printf(sb, "  %s = %s;\n", x, v);
        }
    }
    nd_strbuf_printf(sb, "}\n");
    free(c.uniform);
}

void nd_cuda_emit_ufuncs(nd_strbuf *sb, const nd_kernel *k) {
    int any = 0;
    for (int j = 0; j < k->n_insts; j++) {
        if (k->insts[j].op != ND_IR_UFUNC) continue;
        int seen = 0;
        for (int i = 0; i < j && !seen; i++)
            seen = k->insts[i].op == ND_IR_UFUNC && k->insts[i].ufunc == k->insts[j].ufunc;
        if (seen) continue;
        if (!any++) nd_ufunc_emit_types(sb);
        nd_ufunc_emit_fn(sb, nd_ufunc_loop_get(k->insts[j].ufunc), "static __device__ __forceinline__");
    }
    if (any) nd_strbuf_printf(sb, "#line 1 \"nd_kernel\"\n");
}

int nd_cuda_bad_word(const nd_kernel *k) { return nd_cuda_rng_words_end(k); }

void nd_cuda_emit_gather(nd_strbuf *sb, const nd_kernel *k) {
    if (!k->n_gathers) return;
    /* struct ndk_bad is kernel_ir.h's nd_ir_fail; the first thread to meet
     * a bad index fills it (the first bad axis of its point) */
    nd_strbuf_printf(sb,
                     "struct ndk_bad { int set; int gather; int axis; int pad; long long index; };\n"
                     "template <class T, int K> static __device__ __forceinline__ T ndk_gather(const T *p, long long base, "
                     "long long i0, long long n0, long long s0, long long i1, long long n1, long long s1, "
                     "long long i2, long long n2, long long s2, int wrap, unsigned long long rec, int g) {\n"
                     "  const long long w0 = wrap && i0 < 0 ? i0 + n0 : i0;\n"
                     "  const long long w1 = wrap && i1 < 0 ? i1 + n1 : i1;\n"
                     "  const long long w2 = wrap && i2 < 0 ? i2 + n2 : i2;\n"
                     "  const bool ok0 = (unsigned long long)w0 < (unsigned long long)n0;\n"
                     "  const bool ok1 = K < 2 || (unsigned long long)w1 < (unsigned long long)n1;\n"
                     "  const bool ok2 = K < 3 || (unsigned long long)w2 < (unsigned long long)n2;\n"
                     "  if (__builtin_expect(ok0 && ok1 && ok2, 1))\n"
                     "    return p[base + w0 * s0 + (K > 1 ? w1 * s1 : 0) + (K > 2 ? w2 * s2 : 0)];\n"
                     "  ndk_bad *b = (ndk_bad *)rec;\n"
                     "  if (atomicCAS(&b->set, 0, 1) == 0) {\n"
                     "    b->gather = g; b->axis = !ok0 ? 0 : !ok1 ? 1 : 2; b->index = !ok0 ? i0 : !ok1 ? i1 : i2;\n"
                     "  }\n"
                     "  return T();\n"
                     "}\n");
    int wide = 0;
    for (int32_t g = 0; g < k->n_gathers; g++) wide |= k->gathers[g].n_axes > 3;
    if (!wide) return;
    /* More than three indexed axes: the same as arrays (the first bad axis
     * is the one filed) */
    nd_strbuf_printf(sb,
                     "struct ndk_gix { long long v[%d]; };\n"
                     "template <class T, int K> static __device__ __forceinline__ T ndk_gatherk(const T *p, long long base, "
                     "const ndk_gix i, const ndk_gix n, const ndk_gix s, int wrap, unsigned long long rec, int g) {\n"
                     "  long long off = base;\n"
                     "  int bad = -1;\n"
                     "#pragma unroll\n"
                     "  for (int q = 0; q < K; q++) {\n"
                     "    const long long w = wrap && i.v[q] < 0 ? i.v[q] + n.v[q] : i.v[q];\n"
                     "    if (bad < 0 && (unsigned long long)w >= (unsigned long long)n.v[q]) bad = q;\n"
                     "    off += w * s.v[q];\n"
                     "  }\n"
                     "  if (__builtin_expect(bad < 0, 1)) return p[off];\n"
                     "  ndk_bad *b = (ndk_bad *)rec;\n"
                     "  if (atomicCAS(&b->set, 0, 1) == 0) {\n"
                     "    b->gather = g; b->axis = bad; b->index = i.v[bad];\n"
                     "  }\n"
                     "  return T();\n"
                     "}\n",
                     ND_IR_GATHER_MAX_AXES);
}

nd_status nd_cuda_codegen(const nd_kernel *k, const nd_cuda_kinfo *info, char **src_out) {
    nd_strbuf sb = {0};
    nd_cuda_emit_prelude(&sb);
    nd_cuda_emit_ufuncs(&sb, k);
    nd_cuda_emit_args_struct(&sb, info);
    nd_cuda_emit_gather(&sb, k);
    nd_cuda_emit_body_fn(&sb, k, 1, 0);
    if (info->group > 1) nd_cuda_emit_body_fn(&sb, k, info->group, info->group_axis);
    if (info->vec_group && info->vec != info->group) nd_cuda_emit_body_fn(&sb, k, info->vec, 0);
    if (k->has_reduce) nd_cuda_emit_reduce_kernels(&sb, k, info);
    else nd_cuda_emit_elementwise_kernels(&sb, k, info);
    if (sb.failed) {
        nd_strbuf_free(&sb);
        return nd_error_set(ND_ERR_OOM, "cuda codegen: out of host memory generating kernel '%s'", k->name);
    }
    *src_out = sb.buf;
    return ND_OK;
}
