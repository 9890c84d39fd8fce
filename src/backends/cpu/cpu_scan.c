/* ND_LIB_CUMULATE on the CPU: inclusive scans (sum, product and their NaN-
 * skipping forms) along the last axis of the input view into the output
 * view, both of one dtype (the frontend casts first, as NumPy's accumulate
 * computes in the result dtype).
 *
 * Each row is cut into blocks of SCAN_BLOCK elements, a size fixed here and
 * not by the thread count, so the result is the same bits for any number
 * of workers. A row of one block is scanned in order from its first
 * element, exactly as NumPy's accumulate. A longer row takes two passes
 * over the pool: every block but the last reduces to its total (in order),
 * each row's carries are the running combination of its totals, then every
 * block is scanned in order and each element combined with the block's
 * carry (carry + local scan: the running value stays as small as a short
 * row's, so a long float32 sum rounds far less than NumPy's single running
 * sum, whose increments vanish once it is large). Integers give NumPy's
 * bits either way (wrapping arithmetic is associative).
 * float16 and bfloat16 round to their format after every step, as NumPy's
 * float16 loop does (a float16 sum stalls once the increments fall below
 * half its spacing); that rounding is not associative, so their rows are
 * always scanned in one pass, in order. Complex values combine by NumPy's
 * complex loops (the textbook product). */
#include <math.h>

#include "backends/cpu/cpu_internal.h"
#include "common/alloc.h"
#include "common/error.h"

#define SCAN_BLOCK ((int64_t)1 << 16)

typedef struct {
    const nd_kernel_arg *in, *out;
    int prod, skip_nan;
    int64_t n, nb; /* elements and blocks per row */
    void *carry;   /* rows * nb totals, then carries (compute type) */
} scan_job;

/* STORE(LOAD(x)) is exact; ROUND rounds a computed value to the format. */
#define NO_ROUND(v) (v)
#define F16_ROUND(v) nd_half_to_float(nd_float_to_half(v))
#define BF16_ROUND(v) nd_bf16_to_float(nd_float_to_bf16(v))

/* The arithmetic of a compute type K: real types use C's operators; the
 * complex ones NumPy's loops (element_fns.h: the textbook product, a NaN
 * in either part is a NaN, as np.isnan). */
#define REAL_ADD(a, b) ((a) + (b))
#define REAL_MUL(a, b) ((a) * (b))
#define REAL_NAN(v) ((v) != (v))
#define REAL_ONE(C) ((C)1)
#define REAL_ZERO(C) ((C)0)
#define CPLX_ADD(S, a, b) nds_add_##S(a, b)
#define CPLX_MUL(S, a, b) nds_mul_##S(a, b)
#define CPLX_NAN(S, v) (nds_pnan_##S((v).re) || nds_pnan_##S((v).im))
#define C64_ADD(a, b) CPLX_ADD(C64, a, b)
#define C64_MUL(a, b) CPLX_MUL(C64, a, b)
#define C64_NAN(v) CPLX_NAN(C64, v)
#define C64_ONE(C) nds_mk_C64(1.0f, 0.0f)
#define C64_ZERO(C) nds_mk_C64(0.0f, 0.0f)
#define C128_ADD(a, b) CPLX_ADD(C128, a, b)
#define C128_MUL(a, b) CPLX_MUL(C128, a, b)
#define C128_NAN(v) CPLX_NAN(C128, v)
#define C128_ONE(C) nds_mk_C128(1.0, 0.0)
#define C128_ZERO(C) nds_mk_C128(0.0, 0.0)

/* SUF: name suffix; T: storage; C: compute type; LOAD/ROUND: storage to C
 * and C rounded to the format; IS_FLOAT: NaN can be skipped; K: the
 * arithmetic (K##_ADD, K##_MUL, K##_NAN, K##_ONE, K##_ZERO above). */
#define SCAN_TYPE(SUF, T, C, LOAD, STORE, ROUND, IS_FLOAT, K)                                               \
    static C scan_load_##SUF(const scan_job *j, const T *x) {                                                \
        C v = LOAD(*x);                                                                                       \
        if (IS_FLOAT && j->skip_nan && K##_NAN(v)) v = j->prod ? K##_ONE(C) : K##_ZERO(C);                    \
        return v;                                                                                             \
    }                                                                                                         \
    static C scan_op_##SUF(const scan_job *j, C a, C b) {                                                     \
        return j->prod ? ROUND(K##_MUL(a, b)) : ROUND(K##_ADD(a, b));                                        \
    }                                                                                                         \
    /* Elements [i0, i1) of row r: reduce into *total, or scan into the output starting from *carry (NULL:  \
     * from the first element, as NumPy). */                                                                 \
    static void scan_block_##SUF(const scan_job *j, int64_t r, int64_t i0, int64_t i1, const C *carry,       \
                                 C *total) {                                                                 \
        const nd_kernel_arg *in = j->in, *out = j->out;                                                       \
        int64_t is = in->ndim ? in->strides[in->ndim - 1] : 0, os = out->ndim ? out->strides[out->ndim - 1] : 0; \
        const T *x = (const T *)in->data + nd_cpu_row_offset(in, r);                                          \
        T *y = (T *)out->data + nd_cpu_row_offset(out, r);                                                    \
        C acc = scan_load_##SUF(j, x + i0 * is);                                                              \
        if (total) {                                                                                          \
            for (int64_t i = i0 + 1; i < i1; i++) acc = scan_op_##SUF(j, acc, scan_load_##SUF(j, x + i * is));  \
            *total = acc;                                                                                     \
            return;                                                                                           \
        }                                                                                                     \
        if (!carry) {                                                                                         \
            y[i0 * os] = STORE(acc);                                                                          \
            for (int64_t i = i0 + 1; i < i1; i++) {                                                           \
                acc = scan_op_##SUF(j, acc, scan_load_##SUF(j, x + i * is));                                  \
                y[i * os] = STORE(acc);                                                                       \
            }                                                                                                 \
            return;                                                                                           \
        }                                                                                                     \
        /* The block's own scan, then the carry: the running value stays as small as the block's, so it   \
         * rounds as finely as a short row's. */                                                              \
        const C c = *carry;                                                                                   \
        y[i0 * os] = STORE(scan_op_##SUF(j, c, acc));                                                         \
        for (int64_t i = i0 + 1; i < i1; i++) {                                                               \
            acc = scan_op_##SUF(j, acc, scan_load_##SUF(j, x + i * is));                                      \
            y[i * os] = STORE(scan_op_##SUF(j, c, acc));                                                      \
        }                                                                                                     \
    }                                                                                                         \
    static void scan_rows_##SUF(void *varg, int64_t begin, int64_t end) {                                     \
        const scan_job *j = varg;                                                                             \
        for (int64_t r = begin; r < end; r++) scan_block_##SUF(j, r, 0, j->n, NULL, NULL);                    \
    }                                                                                                         \
    /* Unit u = block u % nb of row u / nb. */                                                                \
    static void scan_totals_##SUF(void *varg, int64_t begin, int64_t end) {                                   \
        const scan_job *j = varg;                                                                             \
        for (int64_t u = begin; u < end; u++) {                                                               \
            int64_t b = u % j->nb;                                                                            \
            if (b == j->nb - 1) continue; /* the last total is never needed */                                \
            scan_block_##SUF(j, u / j->nb, b * SCAN_BLOCK, (b + 1) * SCAN_BLOCK, NULL, (C *)j->carry + u);    \
        }                                                                                                     \
    }                                                                                                         \
    static void scan_carries_##SUF(const scan_job *j, int64_t rows) {                                         \
        C *c = j->carry;                                                                                      \
        for (int64_t r = 0; r < rows; r++) {                                                                  \
            C *row = c + r * j->nb, acc = row[0];                                                             \
            for (int64_t b = 1; b < j->nb; b++) {                                                             \
                C t = row[b];                                                                                 \
                row[b] = acc;                                                                                 \
                acc = scan_op_##SUF(j, acc, t);                                                               \
            }                                                                                                 \
        }                                                                                                     \
    }                                                                                                         \
    static void scan_blocks_##SUF(void *varg, int64_t begin, int64_t end) {                                   \
        const scan_job *j = varg;                                                                             \
        for (int64_t u = begin; u < end; u++) {                                                               \
            int64_t b = u % j->nb, i1 = (b + 1) * SCAN_BLOCK;                                                 \
            scan_block_##SUF(j, u / j->nb, b * SCAN_BLOCK, i1 < j->n ? i1 : j->n, b ? (C *)j->carry + u : NULL, \
                             NULL);                                                                           \
        }                                                                                                     \
    }                                                                                                         \
    static nd_status scan_##SUF(nd_cpu_state *st, scan_job *j, int64_t rows, int blocked) {                    \
        if (!blocked || j->nb < 2) {                                                                          \
            nd_cpu_parallel_for(st, rows, SCAN_BLOCK / (j->n ? j->n : 1) + 1, scan_rows_##SUF, j);            \
            return ND_OK;                                                                                     \
        }                                                                                                     \
        j->carry = nd_malloc((size_t)(rows * j->nb) * sizeof(C));                                             \
        if (!j->carry) return nd_error_set(ND_ERR_OOM, "cpu backend: out of memory for the carries of a scan"); \
        nd_cpu_parallel_for(st, rows * j->nb, 1, scan_totals_##SUF, j);                                       \
        scan_carries_##SUF(j, rows);                                                                          \
        nd_cpu_parallel_for(st, rows * j->nb, 1, scan_blocks_##SUF, j);                                       \
        free(j->carry);                                                                                    \
        return ND_OK;                                                                                         \
    }

/* Integers scan as uint64 bits: two's complement wrapping, no UB. */
#define ID(v) (v)
SCAN_TYPE(f64, double, double, ID, ID, NO_ROUND, 1, REAL)
SCAN_TYPE(f32, float, float, ID, ID, NO_ROUND, 1, REAL)
SCAN_TYPE(u64, uint64_t, uint64_t, ID, ID, NO_ROUND, 0, REAL)
SCAN_TYPE(f16, uint16_t, float, nd_half_to_float, nd_float_to_half, F16_ROUND, 1, REAL)
SCAN_TYPE(bf16, uint16_t, float, nd_bf16_to_float, nd_float_to_bf16, BF16_ROUND, 1, REAL)
/* Complex: the products of cumprod (the frontend scans a complex sum's
 * parts apart, but the routine takes sums too). The blocked form's carry
 * times the block's running product rounds differently from NumPy's one
 * running product, as for real products. */
SCAN_TYPE(c64, C64_T, C64_T, ID, ID, NO_ROUND, 1, C64)
SCAN_TYPE(c128, C128_T, C128_T, ID, ID, NO_ROUND, 1, C128)

nd_status nd_cpu_lib_cumulate(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args) {
    const nd_kernel_arg *in = &args[0], *out = &args[1];
    int op = (int)u->lib_args.v[0].i;
    int64_t n = in->ndim ? in->shape[in->ndim - 1] : 1, rows = n ? in->size / n : 0;
    scan_job j = {in, out, op == ND_SCAN_PROD || op == ND_SCAN_NANPROD, op == ND_SCAN_NANSUM || op == ND_SCAN_NANPROD,
                  n, (n + SCAN_BLOCK - 1) / SCAN_BLOCK, NULL};
    if (out->dtype != in->dtype) goto unsupported;
    if (rows == 0) return ND_OK;
    switch (in->dtype) {
    case ND_FLOAT64: return scan_f64(st, &j, rows, 1);
    case ND_FLOAT32: return scan_f32(st, &j, rows, 1);
    case ND_INT64:
    case ND_UINT64: return scan_u64(st, &j, rows, 1);
    case ND_FLOAT16: return scan_f16(st, &j, rows, 0);
    case ND_BFLOAT16: return scan_bf16(st, &j, rows, 0);
    case ND_COMPLEX64: return scan_c64(st, &j, rows, 1);
    case ND_COMPLEX128: return scan_c128(st, &j, rows, 1);
    }
unsupported:
    return nd_error_set(ND_ERR_UNSUPPORTED, "cpu backend: cumulate of %s into %s", nd_dtype_name((nd_dtype)in->dtype),
                        nd_dtype_name((nd_dtype)out->dtype));
}
