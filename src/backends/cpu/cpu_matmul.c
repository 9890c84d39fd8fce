/* Matmul: OpenBLAS for float32/float64/complex64/complex128 (sgemm, dgemm,
 * cgemm, zgemm; operands passed in place when their layout is row-major or
 * transposed, packed otherwise; complex transposes are plain, never
 * conjugating: nd_vdot conjugates in the frontend), float16/bfloat16 via
 * float32 sgemm, integers and bool by a blocked loop in wrapping 64-bit
 * arithmetic (bool: a nonzero count of products is the OR of ANDs).
 * `accumulate` adds the product to C (BLAS beta 1; packed operands read C
 * first). */
#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/cpu_internal.h"
#include "common/alloc.h"
#include "common/error.h"

typedef struct {
    const char *base;
    int dtype, es;
    int64_t off, rs, cs, rows, cols;
} operand;

/* Copies an operand into a dense row-major rows x cols array of dtype dt. */
static void pack(const operand *o, void *dst, int dt) {
    nd_cpu_fn cast = nd_cpu_cast_fn(o->dtype, dt);
    size_t des = nd_cpu_dtype_size(dt);
    for (int64_t r = 0; r < o->rows; r++) {
        const char *row = o->base + (o->off + r * o->rs) * o->es;
        char *d = (char *)dst + (size_t)(r * o->cols) * des;
        if (o->cs == 1) {
            cast(d, row, NULL, NULL, o->cols);
            continue;
        }
        for (int64_t c = 0; c < o->cols; c++) cast(d + (size_t)c * des, row + c * o->cs * o->es, NULL, NULL, 1);
    }
}

/* Writes a dense row-major rows x cols array of dtype dt into the operand. */
static void unpack(const operand *o, const void *src, int dt) {
    nd_cpu_fn cast = nd_cpu_cast_fn(dt, o->dtype);
    size_t ses = nd_cpu_dtype_size(dt);
    for (int64_t r = 0; r < o->rows; r++) {
        char *row = (char *)o->base + (o->off + r * o->rs) * o->es;
        const char *s = (const char *)src + (size_t)(r * o->cols) * ses;
        for (int64_t c = 0; c < o->cols; c++) cast(row + c * o->cs * o->es, s + (size_t)c * ses, NULL, NULL, 1);
    }
}

/* BLAS view of an operand: 0 = row-major (ld = row stride), 1 = transposed
 * (ld = column stride), -1 = must be packed. */
static int blas_layout(const operand *o, int64_t *ld) {
    int64_t need_r = o->cols > 1 ? o->cols : 1, need_c = o->rows > 1 ? o->rows : 1;
    if ((o->cs == 1 || o->cols == 1) && (o->rows == 1 || o->rs >= need_r)) {
        *ld = o->rows == 1 ? need_r : o->rs;
        if (*ld < need_r) *ld = need_r;
        return 0;
    }
    if ((o->rs == 1 || o->rows == 1) && (o->cols == 1 || o->cs >= need_c)) {
        *ld = o->cols == 1 ? need_c : o->cs;
        if (*ld < need_c) *ld = need_c;
        return 1;
    }
    return -1;
}

/* One batch entry of float32/float64/complex64/complex128 through BLAS. */
static nd_status gemm_float(const operand *A, const operand *B, const operand *C, int dt, int64_t m,
                            int64_t n, int64_t k, int acc) {
    size_t es = nd_cpu_dtype_size(dt);
    void *ta = NULL, *tb = NULL, *tc = NULL;
    const void *pa, *pb;
    void *pc;
    int64_t lda, ldb, ldc = n;
    int la = dt == A->dtype ? blas_layout(A, &lda) : -1;
    int lb = dt == B->dtype ? blas_layout(B, &ldb) : -1;
    int direct_c = dt == C->dtype && (C->cs == 1 || n == 1) && (m == 1 || C->rs >= n) && C->rs >= 0;
    if (la < 0) {
        ta = nd_malloc(es * (size_t)(m * k));
        if (ta) pack(A, ta, dt);
        la = 0;
        lda = k;
        pa = ta;
    } else {
        pa = A->base + A->off * A->es;
    }
    if (lb < 0) {
        tb = nd_malloc(es * (size_t)(k * n));
        if (tb) pack(B, tb, dt);
        lb = 0;
        ldb = n;
        pb = tb;
    } else {
        pb = B->base + B->off * B->es;
    }
    if (direct_c) {
        pc = (char *)C->base + C->off * C->es;
        ldc = m == 1 ? n : C->rs;
        if (ldc < n) ldc = n;
    } else {
        pc = tc = nd_malloc(es * (size_t)(m * n));
        if (tc && acc) pack(C, tc, dt); /* C += A @ B reads C */
    }
    if ((la == 0 && !pa) || (lb == 0 && !pb) || !pc) {
        free(ta), free(tb), free(tc);
        return nd_error_set(ND_ERR_OOM, "cpu backend: out of memory packing a %lldx%lldx%lld matmul",
                            (long long)m, (long long)n, (long long)k);
    }
    enum CBLAS_TRANSPOSE tra = la ? CblasTrans : CblasNoTrans, trb = lb ? CblasTrans : CblasNoTrans;
    static const float one_c[2] = {1.0f, 0.0f}, zero_c[2] = {0.0f, 0.0f};
    static const double one_z[2] = {1.0, 0.0}, zero_z[2] = {0.0, 0.0};
    if (dt == ND_COMPLEX64)
        cblas_cgemm(CblasRowMajor, tra, trb, (blasint)m, (blasint)n, (blasint)k, one_c, pa, (blasint)lda, pb,
                    (blasint)ldb, acc ? one_c : zero_c, pc, (blasint)ldc);
    else if (dt == ND_COMPLEX128)
        cblas_zgemm(CblasRowMajor, tra, trb, (blasint)m, (blasint)n, (blasint)k, one_z, pa, (blasint)lda, pb,
                    (blasint)ldb, acc ? one_z : zero_z, pc, (blasint)ldc);
    else if (dt == ND_FLOAT32)
        cblas_sgemm(CblasRowMajor, tra, trb, (blasint)m, (blasint)n, (blasint)k, 1.0f, (const float *)pa,
                    (blasint)lda, (const float *)pb, (blasint)ldb, acc ? 1.0f : 0.0f, (float *)pc, (blasint)ldc);
    else
        cblas_dgemm(CblasRowMajor, tra, trb, (blasint)m, (blasint)n, (blasint)k, 1.0, (const double *)pa,
                    (blasint)lda, (const double *)pb, (blasint)ldb, acc ? 1.0 : 0.0, (double *)pc, (blasint)ldc);
    if (tc) unpack(C, tc, dt);
    free(ta), free(tb), free(tc);
    return ND_OK;
}

static nd_status gemm_int(const operand *A, const operand *B, const operand *C, int64_t m, int64_t n,
                          int64_t k, int acc) {
    uint64_t *a = nd_malloc(sizeof(uint64_t) * (size_t)(m * k + k * n + m * n) + 8);
    if (!a) return nd_error_set(ND_ERR_OOM, "cpu backend: out of memory for an integer matmul");
    uint64_t *b = a + m * k, *c = b + k * n;
    int wide = nd_dtype_kind_of((nd_dtype)A->dtype) == ND_KIND_UINT ? ND_UINT64 : ND_INT64;
    pack(A, a, wide);
    pack(B, b, wide);
    if (acc)
        pack(C, c, wide);
    else
        memset(c, 0, sizeof(uint64_t) * (size_t)(m * n));
    const int64_t BK = 128;
    for (int64_t p0 = 0; p0 < k; p0 += BK) {
        int64_t p1 = p0 + BK < k ? p0 + BK : k;
        for (int64_t i = 0; i < m; i++) {
            uint64_t *ci = c + i * n;
            for (int64_t p = p0; p < p1; p++) {
                uint64_t av = a[i * k + p];
                const uint64_t *bp = b + p * n;
                for (int64_t j = 0; j < n; j++) ci[j] += av * bp[j];
            }
        }
    }
    unpack(C, c, ND_UINT64);
    free(a);
    return ND_OK;
}

nd_status nd_cpu_run_matmul(nd_cpu_state *st, const nd_matmul_desc *mm, void *const *slots) {
    (void)st;
    int dt = mm->dtype;
    if (!nd_dtype_valid(dt) || mm->m < 0 || mm->n < 0 || mm->k < 0 || mm->batch_ndim < 0 ||
        mm->batch_ndim > ND_MAX_DIMS)
        return nd_error_set(ND_ERR_BACKEND, "cpu backend: malformed matmul step");
    int64_t m = mm->m, n = mm->n, k = mm->k, nb = 1;
    for (int d = 0; d < mm->batch_ndim; d++) nb *= mm->batch_shape[d];
    if (m == 0 || n == 0 || nb == 0) return ND_OK;
    if (!slots[mm->c_slot] || (mm->k > 0 && (!slots[mm->a_slot] || !slots[mm->b_slot])))
        return nd_error_set(ND_ERR_BACKEND, "cpu backend: matmul operand slot unbound");
    int es = (int)nd_cpu_dtype_size(dt);
    operand A = {(const char *)slots[mm->a_slot], dt, es, 0, mm->a_rs, mm->a_cs, m, k};
    operand B = {(const char *)slots[mm->b_slot], dt, es, 0, mm->b_rs, mm->b_cs, k, n};
    operand C = {(const char *)slots[mm->c_slot], dt, es, 0, mm->c_rs, mm->c_cs, m, n};
    /* float16/bfloat16: compute dtype float32, operands converted by pack */
    int cdt = dt == ND_FLOAT16 || dt == ND_BFLOAT16 ? ND_FLOAT32 : dt;
    int64_t bidx[ND_MAX_DIMS] = {0};
    nd_status s = ND_OK;
    void *zeros = NULL;
    for (int64_t b = 0; b < nb && s == ND_OK; b++) {
        A.off = mm->a_offset, B.off = mm->b_offset, C.off = mm->c_offset;
        for (int d = 0; d < mm->batch_ndim; d++) {
            A.off += mm->a_batch[d] * bidx[d];
            B.off += mm->b_batch[d] * bidx[d];
            C.off += mm->c_batch[d] * bidx[d];
        }
        if (k == 0 && mm->accumulate) {
            /* C += nothing */
        } else if (k == 0) {
            if (!zeros) zeros = nd_calloc((size_t)(m * n), sizeof(uint64_t));
            if (!zeros) return nd_error_set(ND_ERR_OOM, "cpu backend: out of memory for a matmul");
            unpack(&C, zeros, ND_UINT64);
        } else if (cdt == ND_FLOAT32 || cdt == ND_FLOAT64 || cdt == ND_COMPLEX64 || cdt == ND_COMPLEX128) {
            s = gemm_float(&A, &B, &C, cdt, m, n, k, mm->accumulate);
        } else {
            s = gemm_int(&A, &B, &C, m, n, k, mm->accumulate);
        }
        for (int d = mm->batch_ndim - 1; d >= 0; d--) {
            if (++bidx[d] < mm->batch_shape[d]) break;
            bidx[d] = 0;
        }
    }
    free(zeros);
    return s;
}
