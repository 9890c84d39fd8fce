/* The CUDA C of the small batched solves (lib_small_solve.c says what the
 * kernel does and why): one template, instantiated per (n, dtype) for the
 * device, or for every n and dtype at once for the host check
 * (tests/small_solve_check.sh), which compiles it as C++ without a GPU.
 * No CUDA runtime here, so that check links this file alone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/lib_linalg.h"
#include "common/strbuf.h"

#define UNROLL_MAX_N 16 /* above: rolled loops, the matrix in local memory */

static const char body[] =
    "typedef unsigned long long ndk_u64;\n"
    "struct ndk_c64 { float re, im; };\n"
    "struct ndk_c128 { double re, im; };\n"
    "__device__ __forceinline__ float ndk_mag(float v) { return fabsf(v); }\n"
    "__device__ __forceinline__ double ndk_mag(double v) { return fabs(v); }\n"
    "__device__ __forceinline__ float ndk_mag(ndk_c64 v) { return fabsf(v.re) + fabsf(v.im); }\n"
    "__device__ __forceinline__ double ndk_mag(ndk_c128 v) { return fabs(v.re) + fabs(v.im); }\n"
    "__device__ __forceinline__ bool ndk_zero(float v) { return v == 0.0f; }\n"
    "__device__ __forceinline__ bool ndk_zero(double v) { return v == 0.0; }\n"
    "template <class C> __device__ __forceinline__ bool ndk_zero(C v) { return v.re == 0 && v.im == 0; }\n"
    "template <class T> __device__ __forceinline__ T ndk_fms(T a, T b, T c) { return a - b * c; }\n"
    "template <class T> __device__ __forceinline__ T ndk_mul(T a, T b) { return a * b; }\n"
    "template <class T> __device__ __forceinline__ T ndk_div(T a, T b) { return a / b; }\n"
    "template <class T> __device__ __forceinline__ T ndk_one(T) { return (T)1; }\n"
    "#define NDK_CPLX(C, R)                                                                  \\\n"
    "template <> __device__ __forceinline__ C ndk_mul<C>(C a, C b) {                         \\\n"
    "  C r; r.re = a.re * b.re - a.im * b.im; r.im = a.re * b.im + a.im * b.re; return r; } \\\n"
    "template <> __device__ __forceinline__ C ndk_fms<C>(C a, C b, C c) {                    \\\n"
    "  C p = ndk_mul<C>(b, c); a.re -= p.re; a.im -= p.im; return a; }                      \\\n"
    "/* Smith's division: no overflow of |b|^2 */                                          \\\n"
    "template <> __device__ __forceinline__ C ndk_div<C>(C a, C b) {                         \\\n"
    "  C r; R q, d;                                                                          \\\n"
    "  if ((b.re < 0 ? -b.re : b.re) >= (b.im < 0 ? -b.im : b.im)) {                         \\\n"
    "    q = b.im / b.re; d = b.re + b.im * q;                                               \\\n"
    "    r.re = (a.re + a.im * q) / d; r.im = (a.im - a.re * q) / d;                         \\\n"
    "  } else {                                                                              \\\n"
    "    q = b.re / b.im; d = b.re * q + b.im;                                               \\\n"
    "    r.re = (a.re * q + a.im) / d; r.im = (a.im * q - a.re) / d;                         \\\n"
    "  }                                                                                     \\\n"
    "  return r; }                                                                           \\\n"
    "template <> __device__ __forceinline__ C ndk_one<C>(C) { C r; r.re = 1; r.im = 0; return r; }\n"
    "NDK_CPLX(ndk_c64, float)\n"
    "NDK_CPLX(ndk_c128, double)\n"
    "/* System b: A (N x N, row-major) at A + b N^2, its m right-hand sides\n"
    "   (each N contiguous) at Bt + b m N, the solutions likewise at Xt. */\n"
    "template <int N, class T>\n"
    "__device__ __forceinline__ void ndk_small_solve(const T *__restrict__ A, const T *__restrict__ Bt,\n"
    "                                                T *__restrict__ Xt, long long batch, int m, ndk_u64 *bad) {\n"
    "  const long long b = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (b >= batch) return;\n"
    "  T a[N][N];\n"
    "  int perm[N];\n"
    "  const T *ap = A + b * (N * N);\n"
    "  NDK_UNROLL for (int i = 0; i < N; i++) {\n"
    "    NDK_UNROLL for (int j = 0; j < N; j++) { a[i][j] = ap[i * N + j]; }\n"
    "  }\n"
    "  NDK_UNROLL for (int k = 0; k < N; k++) {\n"
    "    int p = k;\n"
    "    auto best = ndk_mag(a[k][k]);\n"
    "    NDK_UNROLL for (int i = k + 1; i < N; i++) {\n"
    "      auto v = ndk_mag(a[i][k]);\n"
    "      if (v > best) { best = v; p = i; }\n"
    "    }\n"
    "    perm[k] = p;\n"
    "    /* the swap as selects over constant indices: the rows stay in registers */\n"
    "    NDK_UNROLL for (int i = k + 1; i < N; i++) {\n"
    "      if (i == p) {\n"
    "        NDK_UNROLL for (int j = 0; j < N; j++) { T t = a[k][j]; a[k][j] = a[i][j]; a[i][j] = t; }\n"
    "      }\n"
    "    }\n"
    "    if (ndk_zero(a[k][k])) {\n"
    "      atomicMin(bad, ((ndk_u64)b << 8) | (ndk_u64)(k + 1));\n"
    "      return;\n"
    "    }\n"
    "    const T inv = ndk_div(ndk_one(a[k][k]), a[k][k]);\n"
    "    NDK_UNROLL for (int i = k + 1; i < N; i++) {\n"
    "      const T f = ndk_mul(a[i][k], inv);\n"
    "      a[i][k] = f;\n"
    "      NDK_UNROLL for (int j = k + 1; j < N; j++) { a[i][j] = ndk_fms(a[i][j], f, a[k][j]); }\n"
    "    }\n"
    "  }\n"
    "  for (int r = 0; r < m; r++) {\n"
    "    const T *bp = Bt + (b * m + r) * N;\n"
    "    T *xp = Xt + (b * m + r) * N;\n"
    "    T x[N];\n"
    "    NDK_UNROLL for (int i = 0; i < N; i++) { x[i] = bp[i]; }\n"
    "    NDK_UNROLL for (int k = 0; k < N; k++) {\n"
    "      NDK_UNROLL for (int i = k + 1; i < N; i++) {\n"
    "        if (i == perm[k]) { T t = x[k]; x[k] = x[i]; x[i] = t; }\n"
    "      }\n"
    "    }\n"
    "    NDK_UNROLL for (int i = 1; i < N; i++) {\n"
    "      NDK_UNROLL for (int k = 0; k < i; k++) { x[i] = ndk_fms(x[i], a[i][k], x[k]); }\n"
    "    }\n"
    "    NDK_UNROLL for (int i = N - 1; i >= 0; i--) {\n"
    "      T acc = x[i];\n"
    "      NDK_UNROLL for (int k = i + 1; k < N; k++) { acc = ndk_fms(acc, a[i][k], x[k]); }\n"
    "      x[i] = ndk_div(acc, a[i][i]);\n"
    "    }\n"
    "    NDK_UNROLL for (int i = 0; i < N; i++) { xp[i] = x[i]; }\n"
    "  }\n"
    "}\n";

static const char *ctype(nd_dtype t) {
    switch (t) {
    case ND_FLOAT32: return "float";
    case ND_FLOAT64: return "double";
    case ND_COMPLEX64: return "ndk_c64";
    case ND_COMPLEX128: return "ndk_c128";
    default: return NULL;
    }
}

int nd_cuda_small_solve_name(char *buf, size_t cap, int n, nd_dtype t) {
    return snprintf(buf, cap, "nd_small_solve_%s_n%d", nd_dtype_name(t), n);
}

static void entry(nd_strbuf *sb, int n, nd_dtype t) {
    char name[64];
    const char *ct = ctype(t);
    nd_cuda_small_solve_name(name, sizeof name, n, t);
    nd_strbuf_printf(sb,
                     "extern \"C\" __global__ void __launch_bounds__(%d) %s(const %s *A, const %s *Bt, %s *Xt,\n"
                     "    long long batch, int m, ndk_u64 *bad) { ndk_small_solve<%d, %s>(A, Bt, Xt, batch, m, bad); }\n",
                     ND_CUDA_SMALL_SOLVE_BLOCK, name, ct, ct, ct, n, ct);
}

static char *finish(nd_strbuf *sb) {
    if (sb->failed) {
        nd_strbuf_free(sb);
        return NULL;
    }
    return sb->buf;
}

char *nd_cuda_small_solve_source(int n, nd_dtype t) {
    if (!ctype(t) || n < 1 || n > ND_CUDA_SMALL_SOLVE_MAX_N) return NULL;
    nd_strbuf sb = {0};
    nd_strbuf_printf(&sb, "#define NDK_UNROLL %s\n%s", n <= UNROLL_MAX_N ? "_Pragma(\"unroll\")" : "_Pragma(\"unroll 1\")",
                     body);
    entry(&sb, n, t);
    return finish(&sb);
}

char *nd_cuda_small_solve_host_source(void) {
    static const nd_dtype types[4] = {ND_FLOAT32, ND_FLOAT64, ND_COMPLEX64, ND_COMPLEX128};
    nd_strbuf sb = {0};
    nd_strbuf_printf(&sb, "#define NDK_UNROLL\n%s", body);
    for (int k = 0; k < 4; k++)
        for (int n = 1; n <= ND_CUDA_SMALL_SOLVE_MAX_N; n++) entry(&sb, n, types[k]);
    return finish(&sb);
}
