/* Matmul: cuBLAS for float16/bfloat16/float32/float64/complex64/complex128
 * (cublasGemmEx and its strided-batched form, float32 accumulation for the
 * 16-bit types and complex64, float64 for float64 and complex128 (CGEMM and
 * ZGEMM; op T is the plain transpose, never the conjugate); TF32 tensor
 * cores only when matmul_tf32 > 0), and a small
 * fixed NVRTC kernel for everything cuBLAS cannot express: integer and bool
 * operands, empty inner dimension, and layouts that are neither row- nor
 * column-major (broadcast or negative strides).
 *
 * Row-major C = A @ B is computed without copies as the column-major
 * product C^T = B^T A^T; each operand's op flag (N or T) and leading
 * dimension come from its strides. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/codegen_prelude.h"
#include "common/alloc.h"
#include "backends/cuda/cuda_internal.h"
#include "common/mem_count.h"

/* ------------------------------------------------------- the fixed kernel */

/* Mirrors ndk_mm in the source below. */
typedef struct {
    int64_t m, n, k;
    int32_t bnd, pad;
    int64_t bshape[ND_MAX_DIMS], ab[ND_MAX_DIMS], bb[ND_MAX_DIMS], cb[ND_MAX_DIMS];
    int64_t ao, bo, co, ars, acs, brs, bcs, crs, ccs;
} mm_params;

static const char mm_source[] =
    "struct ndk_mm { long long m, n, k; int bnd, pad; long long bshape[8], ab[8], bb[8], cb[8];\n"
    "                long long ao, bo, co, ars, acs, brs, bcs, crs, ccs; };\n"
    "/* One thread per output element; integers accumulate in 64-bit and\n"
    "   wrap like NumPy, floats in float32 (float64 for float64). */\n"
    "#define NDK_MM(NAME, MT, ACC, LD, MAC, ST)                                          \\\n"
    "extern \"C\" __global__ void __launch_bounds__(256) NAME(const ndk_mm P, const MT *A, const MT *B, MT *C) { \\\n"
    "  long long nb = 1; for (int d = 0; d < P.bnd; d++) nb *= P.bshape[d];                \\\n"
    "  const long long all = nb * P.m * P.n;                                              \\\n"
    "  for (long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x; g < all;        \\\n"
    "       g += (long long)gridDim.x * blockDim.x) {                                     \\\n"
    "    long long j = g % P.n, t = g / P.n, i = t % P.m, b = t / P.m;                    \\\n"
    "    long long ao = P.ao, bo = P.bo, co = P.co;                                       \\\n"
    "    for (int d = P.bnd - 1; d >= 0; d--) {                                           \\\n"
    "      long long bi = b % P.bshape[d]; b /= P.bshape[d];                              \\\n"
    "      ao += bi * P.ab[d]; bo += bi * P.bb[d]; co += bi * P.cb[d];                    \\\n"
    "    }                                                                                \\\n"
    "    ACC acc = 0;                                                                     \\\n"
    "    for (long long p = 0; p < P.k; p++) {                                            \\\n"
    "      const ACC x = LD(A[ao + i * P.ars + p * P.acs]);                               \\\n"
    "      const ACC y = LD(B[bo + p * P.brs + j * P.bcs]);                               \\\n"
    "      acc = MAC;                                                                     \\\n"
    "    }                                                                                \\\n"
    "    C[co + i * P.crs + j * P.ccs] = ST(acc);                                         \\\n"
    "  }                                                                                  \\\n"
    "}\n"
    "#define NDK_ID(x) (x)\n"
    "#define NDK_S64(x) ((unsigned long long)(long long)(x))\n"
    "#define NDK_U64(x) ((unsigned long long)(x))\n"
    "#define NDK_BOOL(x) ((x) != 0)\n"
    "#define NDK_IMAC (acc + x * y)\n"
    "#define NDK_FMAC __fadd_rn(acc, __fmul_rn(x, y))\n"
    "#define NDK_DMAC __dadd_rn(acc, __dmul_rn(x, y))\n"
    "NDK_MM(nd_matmul_bool, unsigned char, bool, NDK_BOOL, (acc || (x && y)), (unsigned char))\n"
    "NDK_MM(nd_matmul_int8, signed char, unsigned long long, NDK_S64, NDK_IMAC, (signed char))\n"
    "NDK_MM(nd_matmul_int16, short, unsigned long long, NDK_S64, NDK_IMAC, (short))\n"
    "NDK_MM(nd_matmul_int32, int, unsigned long long, NDK_S64, NDK_IMAC, (int))\n"
    "NDK_MM(nd_matmul_int64, long long, unsigned long long, NDK_S64, NDK_IMAC, (long long))\n"
    "NDK_MM(nd_matmul_uint8, unsigned char, unsigned long long, NDK_U64, NDK_IMAC, (unsigned char))\n"
    "NDK_MM(nd_matmul_uint16, unsigned short, unsigned long long, NDK_U64, NDK_IMAC, (unsigned short))\n"
    "NDK_MM(nd_matmul_uint32, unsigned int, unsigned long long, NDK_U64, NDK_IMAC, (unsigned int))\n"
    "NDK_MM(nd_matmul_uint64, unsigned long long, unsigned long long, NDK_U64, NDK_IMAC, (unsigned long long))\n"
    "NDK_MM(nd_matmul_float16, unsigned short, float, ndk_h2f, NDK_FMAC, ndk_f2h)\n"
    "NDK_MM(nd_matmul_bfloat16, unsigned short, float, ndk_b2f, NDK_FMAC, ndk_f2b)\n"
    "NDK_MM(nd_matmul_float32, float, float, NDK_ID, NDK_FMAC, NDK_ID)\n"
    "NDK_MM(nd_matmul_float64, double, double, NDK_ID, NDK_DMAC, NDK_ID)\n"
    "/* complex: the textbook product of the parts, unfused like the real\n"
    "   kernels, parts stored interleaved as NumPy */\n"
    "#define NDK_MMC(NAME, PT, MUL, ADD, SUB)                                            \\\n"
    "struct NAME##_t { PT re, im; };                                                      \\\n"
    "extern \"C\" __global__ void __launch_bounds__(256) NAME(const ndk_mm P, const NAME##_t *A, const NAME##_t *B, NAME##_t *C) { \\\n"
    "  long long nb = 1; for (int d = 0; d < P.bnd; d++) nb *= P.bshape[d];                \\\n"
    "  const long long all = nb * P.m * P.n;                                              \\\n"
    "  for (long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x; g < all;        \\\n"
    "       g += (long long)gridDim.x * blockDim.x) {                                     \\\n"
    "    long long j = g % P.n, t = g / P.n, i = t % P.m, b = t / P.m;                    \\\n"
    "    long long ao = P.ao, bo = P.bo, co = P.co;                                       \\\n"
    "    for (int d = P.bnd - 1; d >= 0; d--) {                                           \\\n"
    "      long long bi = b % P.bshape[d]; b /= P.bshape[d];                              \\\n"
    "      ao += bi * P.ab[d]; bo += bi * P.bb[d]; co += bi * P.cb[d];                    \\\n"
    "    }                                                                                \\\n"
    "    PT re = 0, im = 0;                                                               \\\n"
    "    for (long long p = 0; p < P.k; p++) {                                            \\\n"
    "      const NAME##_t x = A[ao + i * P.ars + p * P.acs];                              \\\n"
    "      const NAME##_t y = B[bo + p * P.brs + j * P.bcs];                              \\\n"
    "      re = ADD(re, SUB(MUL(x.re, y.re), MUL(x.im, y.im)));                           \\\n"
    "      im = ADD(im, ADD(MUL(x.re, y.im), MUL(x.im, y.re)));                           \\\n"
    "    }                                                                                \\\n"
    "    NAME##_t r; r.re = re; r.im = im;                                                \\\n"
    "    C[co + i * P.crs + j * P.ccs] = r;                                               \\\n"
    "  }                                                                                  \\\n"
    "}\n"
    "NDK_MMC(nd_matmul_complex64, float, __fmul_rn, __fadd_rn, __fsub_rn)\n"
    "NDK_MMC(nd_matmul_complex128, double, __dmul_rn, __dadd_rn, __dsub_rn)\n";

static const char *const mm_names[ND_NUM_DTYPES] = {
    "nd_matmul_bool",   "nd_matmul_int8",   "nd_matmul_int16",   "nd_matmul_int32",    "nd_matmul_int64",
    "nd_matmul_uint8",  "nd_matmul_uint16", "nd_matmul_uint32",  "nd_matmul_uint64",   "nd_matmul_float16",
    "nd_matmul_bfloat16", "nd_matmul_float32", "nd_matmul_float64", "nd_matmul_complex64",
    "nd_matmul_complex128"};

static nd_status run_fixed(nd_cuda *cu, const nd_matmul_desc *mm, void *const *slots, int64_t nb, cudaStream_t stream) {
    if (!cu->imatmul_lib) {
        char *src = NULL;
        size_t n1 = strlen(nd_cuda_prelude), n2 = strlen(mm_source);
        src = nd_malloc(n1 + n2 + 1);
        if (!src) return nd_error_set(ND_ERR_OOM, "cuda: out of host memory building the matmul kernels");
        memcpy(src, nd_cuda_prelude, n1);
        memcpy(src + n1, mm_source, n2 + 1);
        nd_status s = nd_cuda_kcache_get_source(cu->cache, 0x6d61746d756cull, "nd_matmul_fixed", src, &cu->imatmul_lib);
        free(src);
        if (s) return s;
    }
    cudaKernel_t kern;
    const char *name = mm_names[mm->dtype];
    cudaError_t e = cudaLibraryGetKernel(&kern, cu->imatmul_lib, name);
    if (e != cudaSuccess) return nd_cuda_fail(e, "cudaLibraryGetKernel(matmul)");
    mm_params p;
    memset(&p, 0, sizeof p);
    p.m = mm->m;
    p.n = mm->n;
    p.k = mm->k;
    p.bnd = mm->batch_ndim;
    for (int d = 0; d < mm->batch_ndim; d++) {
        p.bshape[d] = mm->batch_shape[d];
        p.ab[d] = mm->a_batch[d];
        p.bb[d] = mm->b_batch[d];
        p.cb[d] = mm->c_batch[d];
    }
    p.ao = mm->a_offset;
    p.bo = mm->b_offset;
    p.co = mm->c_offset;
    p.ars = mm->a_rs;
    p.acs = mm->a_cs;
    p.brs = mm->b_rs;
    p.bcs = mm->b_cs;
    p.crs = mm->c_rs;
    p.ccs = mm->c_cs;
    void *a = slots[mm->a_slot], *b = slots[mm->b_slot], *c = slots[mm->c_slot];
    void *args[4] = {&p, &a, &b, &c};
    int64_t work = nb * mm->m * mm->n, g = (work + ND_CUDA_BLOCK - 1) / ND_CUDA_BLOCK;
    if (g > (int64_t)cu->sm_count * 32) g = (int64_t)cu->sm_count * 32;
    if (g < 1) g = 1;
    dim3 grid = {(unsigned)g, 1, 1}, block = {ND_CUDA_BLOCK, 1, 1};
    e = cudaLaunchKernel((const void *)kern, grid, block, args, 0, stream);
    if (e != cudaSuccess) return nd_cuda_fail(e, name);
    return ND_OK;
}

/* ---------------------------------------------------------------- cuBLAS */



static nd_status blas_fail(cublasStatus_t st, const char *what) {
    return nd_error_set(st == CUBLAS_STATUS_ALLOC_FAILED ? ND_ERR_OOM : ND_ERR_BACKEND, "cuda: %s failed: %s", what,
                        cublasGetStatusString(st));
}

/* Logical device d's cuBLAS handle, made at its first matmul (its GPU is
 * current then: a handle belongs to the device current at its creation)
 * and bound to `stream`, d's plan stream 0. */
static nd_status ensure_blas(nd_cuda *cu, int d, cudaStream_t stream, cublasHandle_t *out) {
    cublasHandle_t *h = d == 0 ? &cu->blas : &cu->ldev[d].blas;
    void **ws = d == 0 ? &cu->blas_workspace : &cu->ldev[d].blas_workspace;
    *out = *h;
    if (*h) return ND_OK;
    cublasStatus_t st = cublasCreate(h);
    if (st != CUBLAS_STATUS_SUCCESS) {
        *h = NULL;
        return blas_fail(st, "cublasCreate");
    }
    st = cublasSetStream(*h, stream);
    if (st == CUBLAS_STATUS_SUCCESS) st = cublasSetMathMode(*h, CUBLAS_DEFAULT_MATH);
    /* Our own workspace (set after the stream: setting a stream resets
     * it): cuBLAS then allocates nothing while a plan is being captured as
     * a CUDA Graph. 32 MiB is what Hopper's kernels ask for at most. */
    if (st == CUBLAS_STATUS_SUCCESS && !*ws) {
        if (cudaMalloc(ws, ND_CUDA_BLAS_WORKSPACE) != cudaSuccess) {
            (void)cudaGetLastError();
            *ws = NULL;
        } else {
            nd_mem_count_alloc(1, ND_CUDA_BLAS_WORKSPACE); /* nd_stats' bytes_in_use */
        }
    }
    if (st == CUBLAS_STATUS_SUCCESS && *ws) st = cublasSetWorkspace(*h, *ws, ND_CUDA_BLAS_WORKSPACE);
    if (st != CUBLAS_STATUS_SUCCESS) {
        cublasDestroy(*h);
        *h = NULL;
        return blas_fail(st, "cublasSetStream/cublasSetMathMode");
    }
    *out = *h;
    return ND_OK;
}

/* Column-major op and leading dimension for a logical rows x cols operand
 * with strides (sr, sc); 0 when cuBLAS cannot address it in place. */
static int op_for(int64_t rows, int64_t cols, int64_t sr, int64_t sc, cublasOperation_t *op, int64_t *ld) {
    int64_t need;
    if (sr == 1 || rows == 1) {
        *op = CUBLAS_OP_N;
        *ld = cols == 1 ? (rows > 1 ? rows : 1) : sc;
        need = rows > 1 ? rows : 1;
        if (*ld >= need && *ld <= 0x7fffffff) return 1;
    }
    if (sc == 1 || cols == 1) {
        *op = CUBLAS_OP_T;
        *ld = rows == 1 ? (cols > 1 ? cols : 1) : sr;
        need = cols > 1 ? cols : 1;
        if (*ld >= need && *ld <= 0x7fffffff) return 1;
    }
    return 0;
}

/* One stride for the whole (row-major) batch, if the operand has one. */
static int uniform_batch(const nd_matmul_desc *mm, const int64_t *st, int64_t *out) {
    int64_t inner = 0, span = 1;
    int found = 0;
    for (int d = mm->batch_ndim - 1; d >= 0; d--) {
        if (mm->batch_shape[d] == 1) continue;
        if (!found) {
            inner = st[d];
            found = 1;
        } else if (st[d] != inner * span) {
            return 0;
        }
        span *= mm->batch_shape[d];
    }
    *out = inner;
    return 1;
}

typedef struct {
    cublasOperation_t opx, opy;
    int64_t ldx, ldy, ldd, p, q;
    int x_is_a; /* X operand is A (column-major C) or B (row-major C) */
} gemm_shape;

static int plan_gemm(const nd_matmul_desc *mm, gemm_shape *g) {
    int64_t m = mm->m, n = mm->n, k = mm->k;
    if (m > 0x7fffffff || n > 0x7fffffff || k > 0x7fffffff) return 0;
    /* Row-major C: D = C^T (n x m) = B^T (n x k) * A^T (k x m). */
    if ((mm->c_cs == 1 || n == 1) && (m == 1 || mm->c_rs >= (n > 1 ? n : 1))) {
        g->ldd = m == 1 ? (n > 1 ? n : 1) : mm->c_rs;
        g->p = n;
        g->q = m;
        g->x_is_a = 0;
        if (g->ldd <= 0x7fffffff && op_for(n, k, mm->b_cs, mm->b_rs, &g->opx, &g->ldx) &&
            op_for(k, m, mm->a_cs, mm->a_rs, &g->opy, &g->ldy))
            return 1;
    }
    /* Column-major C: D = C (m x n) = A (m x k) * B (k x n). */
    if ((mm->c_rs == 1 || m == 1) && (n == 1 || mm->c_cs >= (m > 1 ? m : 1))) {
        g->ldd = n == 1 ? (m > 1 ? m : 1) : mm->c_cs;
        g->p = m;
        g->q = n;
        g->x_is_a = 1;
        if (g->ldd <= 0x7fffffff && op_for(m, k, mm->a_rs, mm->a_cs, &g->opx, &g->ldx) &&
            op_for(k, n, mm->b_rs, mm->b_cs, &g->opy, &g->ldy))
            return 1;
    }
    return 0;
}

nd_status nd_cuda_run_matmul(nd_backend *be, const nd_matmul_desc *mm, void *const *slots, int ldev,
                             cudaStream_t stream) {
    nd_cuda *cu = (nd_cuda *)be->impl;
    if (!nd_dtype_valid(mm->dtype) || mm->batch_ndim < 0 || mm->batch_ndim > ND_MAX_DIMS)
        return nd_error_set(ND_ERR_ARG, "cuda: matmul: invalid dtype or batch rank");
    int64_t nb = 1;
    for (int d = 0; d < mm->batch_ndim; d++) nb *= mm->batch_shape[d];
    if (nb == 0 || mm->m == 0 || mm->n == 0) return ND_OK;

    cudaDataType_t dt;
    cublasComputeType_t ct = CUBLAS_COMPUTE_32F;
    switch (mm->dtype) {
    case ND_FLOAT16: dt = CUDA_R_16F; break;
    case ND_BFLOAT16: dt = CUDA_R_16BF; break;
    case ND_FLOAT32:
        dt = CUDA_R_32F;
        if (cu->tf32) ct = CUBLAS_COMPUTE_32F_FAST_TF32;
        break;
    case ND_FLOAT64:
        dt = CUDA_R_64F;
        ct = CUBLAS_COMPUTE_64F;
        break;
    case ND_COMPLEX64:
        dt = CUDA_C_32F;
        if (cu->tf32) ct = CUBLAS_COMPUTE_32F_FAST_TF32;
        break;
    case ND_COMPLEX128:
        dt = CUDA_C_64F;
        ct = CUBLAS_COMPUTE_64F;
        break;
    default: return run_fixed(cu, mm, slots, nb, stream);
    }
    gemm_shape g;
    int planned = mm->k > 0 && plan_gemm(mm, &g);
    /* C += A @ B (the partition pass's ring steps) only where cuBLAS
     * addresses the operands in place, which that pass makes sure of. */
    if (mm->accumulate && !planned)
        return mm->k == 0 ? ND_OK
                          : nd_error_set(ND_ERR_BACKEND, "cuda: an accumulating matmul step cuBLAS cannot address "
                                                         "(internal error)");
    if (!planned) return run_fixed(cu, mm, slots, nb, stream);
    cublasHandle_t blas;
    nd_status s = ensure_blas(cu, ldev, stream, &blas);
    if (s) return s;

    const int es = nd_cuda_mem_size((nd_dtype)mm->dtype);
    const char *a = (const char *)slots[mm->a_slot] + mm->a_offset * es;
    const char *b = (const char *)slots[mm->b_slot] + mm->b_offset * es;
    char *c = (char *)slots[mm->c_slot] + mm->c_offset * es;
    const void *x = g.x_is_a ? (const void *)a : (const void *)b, *y = g.x_is_a ? (const void *)b : (const void *)a;
    const int64_t *xb = g.x_is_a ? mm->a_batch : mm->b_batch, *yb = g.x_is_a ? mm->b_batch : mm->a_batch;
    /* the scalars in the compute type's precision; a complex gemm reads
     * two parts (re, im), a real one the first */
    float alpha_f[2] = {1.0f, 0.0f}, beta_f[2] = {mm->accumulate ? 1.0f : 0.0f, 0.0f};
    double alpha_d[2] = {1.0, 0.0}, beta_d[2] = {mm->accumulate ? 1.0 : 0.0, 0.0};
    const void *alpha = ct == CUBLAS_COMPUTE_64F ? (const void *)alpha_d : (const void *)alpha_f;
    const void *beta = ct == CUBLAS_COMPUTE_64F ? (const void *)beta_d : (const void *)beta_f;
    int p = (int)g.p, q = (int)g.q, kk = (int)mm->k;

    int64_t sx, sy, sc;
    if (nb > 1 && nb <= 0x7fffffff && uniform_batch(mm, xb, &sx) && uniform_batch(mm, yb, &sy) &&
        uniform_batch(mm, mm->c_batch, &sc) && sc != 0) {
        cublasStatus_t st = cublasGemmStridedBatchedEx(blas, g.opx, g.opy, p, q, kk, alpha, x, dt, (int)g.ldx, sx,
                                                       y, dt, (int)g.ldy, sy, beta, c, dt, (int)g.ldd, sc, (int)nb,
                                                       ct, CUBLAS_GEMM_DEFAULT);
        return st == CUBLAS_STATUS_SUCCESS ? ND_OK : blas_fail(st, "cublasGemmStridedBatchedEx");
    }
    /* Irregular batch strides: one GEMM per batch entry. */
    for (int64_t bi = 0; bi < nb; bi++) {
        int64_t rem = bi, ox = 0, oy = 0, oc = 0;
        for (int d = mm->batch_ndim - 1; d >= 0; d--) {
            int64_t idx = rem % mm->batch_shape[d];
            rem /= mm->batch_shape[d];
            ox += idx * xb[d];
            oy += idx * yb[d];
            oc += idx * mm->c_batch[d];
        }
        cublasStatus_t st = cublasGemmEx(blas, g.opx, g.opy, p, q, kk, alpha, (const char *)x + ox * es, dt,
                                         (int)g.ldx, (const char *)y + oy * es, dt, (int)g.ldy, beta, c + oc * es, dt,
                                         (int)g.ldd, ct, CUBLAS_GEMM_DEFAULT);
        if (st != CUBLAS_STATUS_SUCCESS) return blas_fail(st, "cublasGemmEx");
    }
    return ND_OK;
}
