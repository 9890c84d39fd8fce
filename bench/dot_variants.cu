// dot_variants.cu — how fast can the suite's generate + dot (two fresh
// float64 uniform vectors of 1e8 elements, Philox4x32-10, two elements a call
// and vector) go on this GPU, and what its float64 uniforms cost. No nd in
// it: hand-written kernels, each timed alone (cudaEvent, median of 21
// launches after 3 warm-ups). The dot kernels are also timed as a C program
// would get the dot: launch, copy the per-block partials to the host and fold
// them there (host clock, median of 21): "to host" is what compares with nd's
// wall time, which includes nd's recording, launch and the read of the result.
//
//   philox only        1e8 Philox calls (dot's count) and nothing else, two
//                      calls a thread in flight, words xor-folded: the floor
//                      the generator sets.
//   dot i2f            nd's uniforms: u = ((x0 >> 5) * 2^26 + (x1 >> 6))
//                      * 2^-53 with two integer-to-double conversions
//                      (I2F.F64) a uniform, four an element.
//   dot bits           the same value built from the bits: with
//                      K = (x0 >> 5) * 2^26 + (x1 >> 6) (53 bits), the
//                      double with exponent 2^-1 and K's low 52 bits as its
//                      fraction is 0.5 + (K mod 2^52) * 2^-53. When K's top
//                      bit (x0's bit 31) is set that is K * 2^-53; when it
//                      is clear, subtracting 0.5 is exact (Sterbenz) and
//                      gives K * 2^-53. Integer ops and one DADD, no
//                      conversion. Equal bit for bit: checked below on the
//                      host on 2^27 random word pairs and the edge words,
//                      and on the device through the per-block partial sums
//                      of both kernels.
//
// Each thread sums its products in a double in index order, a block folds
// its 256 sums in shared memory and writes one partial: the partials of the
// two dot kernels must be identical.
//
// On the H100 (2026-11-22-h100-dot-variants.txt): Philox alone 268 us, dot
// i2f 302 us, dot bits 334 us: the conversions are not what the dot pays
// for, and nd keeps them. What nd's generated kernel paid beyond 302 us was
// its shape: four points a group (40 registers) and
// 64-bit call counters.
//
// After those two fixes (2026-11-29, SASS for sm_90 from NVRTC and nvcc
// 13.0, no GPU): nd's loop was the hand-written one, 111 instructions a
// pair (two Philox calls, four I2F.F64, the products and adds) against
// 111, 32 registers against 30. What was left was the split: 16383 blocks
// of 12 pairs a lane, each thread paying ~58 instructions of prologue
// (split index, bounds) and ~45 of tree and partial per 12 x 111, ~7.7%,
// plus a second pass over 16383 partials. nd now gives full reductions of
// generated values the shape of "dot i2f": SMs x 8 blocks striding over
// the pairs (112 instructions a pair: the stride is read from gridDim;
// ~33 of prologue per ~185 pairs), one partial a block, a second pass of
// one block over 1056 partials. The last block of rows below times both
// of nd's shapes with their second pass on the device and the read of one
// double, as nd runs them.
//
// "the streams" times k_dot against the same kernel with its streams as
// kernel arguments (as nd passes them) and with the first round's stream
// half computed by the host (nd since codegen version 18, ndk_philox_r):
// nd's kernel had paid ~5% for the argument streams (H200, 2026-12-01:
// bench/results/2026-12-01-session22-dot.md); and the same with both
// calls taking the first stream's c3 ^ k1 word (nd since codegen version
// 19, ND_IR_ONE_HIGH_WORD), which gave back the rest.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o dot_variants bench/dot_variants.cu
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

static const unsigned long long N = 100000000ull; // elements a vector
static const unsigned M0 = 0xD2511F53u, M1 = 0xCD9E8D57u, W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;

struct Keys { unsigned k0[10], k1[10]; };

// Rounds FIRST .. 9 on counter c.
template <int FIRST>
__device__ __forceinline__ uint4 philox_rounds(const Keys &K, uint4 c) {
#pragma unroll
  for (int r = FIRST; r < 10; r++) {
    unsigned hi0 = __umulhi(M0, c.x), lo0 = M0 * c.x;
    unsigned hi1 = __umulhi(M1, c.z), lo1 = M1 * c.z;
    c = make_uint4(hi1 ^ c.y ^ K.k0[r], lo1, hi0 ^ c.w ^ K.k1[r], lo0);
  }
  return c;
}

__device__ __forceinline__ uint4 philox(const Keys &K, unsigned long long idx, unsigned long long stream) {
  return philox_rounds<0>(K, make_uint4((unsigned)idx, (unsigned)(idx >> 32), (unsigned)stream, (unsigned)(stream >> 32)));
}

__host__ __device__ __forceinline__ double u01d_i2f(unsigned x0, unsigned x1) {
#ifdef __CUDA_ARCH__
  return __dmul_rn(__dadd_rn(__dmul_rn((double)(x0 >> 5), 67108864.0), (double)(x1 >> 6)), 1.1102230246251565e-16);
#else
  return ((double)(x0 >> 5) * 67108864.0 + (double)(x1 >> 6)) * 1.1102230246251565e-16;
#endif
}

__host__ __device__ __forceinline__ unsigned long long bits_of(unsigned hi, unsigned lo) {
  return (unsigned long long)hi << 32 | lo;
}
__host__ __device__ __forceinline__ double u01d_bits(unsigned x0, unsigned x1) {
  unsigned lo = ((x0 << 21) & 0xFC000000u) | (x1 >> 6);
  unsigned hi = 0x3FE00000u | ((x0 >> 11) & 0xFFFFFu);
  unsigned bias_hi = (unsigned)((int)~x0 >> 31) & 0x3FE00000u; // 0.5 when x0's bit 31 is clear, else 0
#ifdef __CUDA_ARCH__
  return __dsub_rn(__hiloint2double((int)hi, (int)lo), __hiloint2double((int)bias_hi, 0));
#else
  double g, b;
  unsigned long long gb = bits_of(hi, lo), bb = bits_of(bias_hi, 0);
  memcpy(&g, &gb, 8);
  memcpy(&b, &bb, 8);
  return g - b;
#endif
}

__global__ void k_philox(const Keys K, unsigned long long calls, unsigned *out) {
  unsigned acc = 0;
  const unsigned long long stride = (unsigned long long)gridDim.x * 256 * 2;
  for (unsigned long long c = ((unsigned long long)blockIdx.x * 256 + threadIdx.x) * 2; c < calls; c += stride) {
    uint4 a = philox(K, c, 0), b = philox(K, c + 1, 0);
    acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w;
  }
  if (acc == 0x12345678u) out[0] = acc; // keeps the work; practically never written
}

// The block's 256 sums folded by the tree nd's reductions use (lane t
// takes lane t + s for s = 128 .. 1), thread 0 writing the result to *dst.
__device__ void block_fold(double acc, double *dst) {
  __shared__ double sh[256];
  sh[threadIdx.x] = acc;
  __syncthreads();
  for (int s = 128; s > 0; s >>= 1) {
    if ((int)threadIdx.x < s) sh[threadIdx.x] = __dadd_rn(sh[threadIdx.x], sh[threadIdx.x + s]);
    __syncthreads();
  }
  if (threadIdx.x == 0) *dst = sh[0];
}

template <bool BITS>
__global__ void k_dot(const Keys K, unsigned long long pairs, double *partials) {
  double acc = 0;
  const unsigned long long stride = (unsigned long long)gridDim.x * 256;
  for (unsigned long long p = (unsigned long long)blockIdx.x * 256 + threadIdx.x; p < pairs; p += stride) {
    uint4 a = philox(K, p, 0), b = philox(K, p, 1);
    double a0 = BITS ? u01d_bits(a.x, a.y) : u01d_i2f(a.x, a.y), a1 = BITS ? u01d_bits(a.z, a.w) : u01d_i2f(a.z, a.w);
    double b0 = BITS ? u01d_bits(b.x, b.y) : u01d_i2f(b.x, b.y), b1 = BITS ? u01d_bits(b.z, b.w) : u01d_i2f(b.z, b.w);
    acc = __dadd_rn(acc, __dmul_rn(a0, b0));
    acc = __dadd_rn(acc, __dmul_rn(a1, b1));
  }
  block_fold(acc, &partials[blockIdx.x]);
}

// nd's generated reduction as it was before the persistent grid: 16383
// splits of 3052 pairs (a block each), lane l of split s folding pairs
// s * 3052 + l, then 256 further, ... (12 a lane), 32-bit counters.
__global__ void k_dot_split(const Keys K, unsigned pairs, unsigned pps, double *partials) {
  double acc = 0;
  const unsigned p0 = blockIdx.x * pps, p1 = min(p0 + pps, pairs);
  for (unsigned p = p0 + threadIdx.x; p < p1; p += 256) {
    uint4 a = philox(K, p, 0), b = philox(K, p, 1);
    acc = __dadd_rn(acc, __dmul_rn(u01d_i2f(a.x, a.y), u01d_i2f(b.x, b.y)));
    acc = __dadd_rn(acc, __dmul_rn(u01d_i2f(a.z, a.w), u01d_i2f(b.z, b.w)));
  }
  block_fold(acc, &partials[blockIdx.x]);
}

// The streams as nd passes them: kernel arguments, not literals, and
// 32-bit call counters (nd's counters for fewer than 2^32 points). SHAPE 0:
// the stream words as they are, every call's first round multiplying them
// (nd up to codegen version 17); SHAPE 1: the first round's stream half
// from two words per stream the host computes, (umulhi(M1, c2) ^ k0) |
// (M1 * c2) << 32 and c3 ^ k1 (nd's ndk_philox_r since version 18). The
// literal streams of k_dot let the compiler fold that round, and more:
// streams 0 and 1 give both calls the same first-round x word, so their
// second rounds share work that runtime streams never can.
struct Round0 { unsigned long long w[2][2]; };
template <int SHAPE>
__global__ void k_dot_streams(const Keys K, const Round0 R, unsigned long long s0, unsigned long long s1,
                              unsigned pairs, double *partials) {
  double acc = 0;
  const unsigned stride = gridDim.x * 256;
  for (unsigned p = blockIdx.x * 256 + threadIdx.x; p < pairs; p += stride) {
    uint4 a, b;
    if (SHAPE == 0) {
      a = philox(K, p, s0);
      b = philox(K, p, s1);
    } else {
      const unsigned hi = __umulhi(M0, p), lo = M0 * p;
      // SHAPE 2: both calls take the first stream's c3 ^ k1 word, which
      // holds when the two streams have one high word and one seed: the
      // third counter word after round 0 is then one value for both calls
      // and the compiler shares its round-1 product.
      a = philox_rounds<1>(K, make_uint4((unsigned)R.w[0][0], (unsigned)(R.w[0][0] >> 32), hi ^ (unsigned)R.w[0][1], lo));
      b = philox_rounds<1>(K, make_uint4((unsigned)R.w[1][0], (unsigned)(R.w[1][0] >> 32),
                                         hi ^ (unsigned)R.w[SHAPE == 2 ? 0 : 1][1], lo));
    }
    acc = __dadd_rn(acc, __dmul_rn(u01d_i2f(a.x, a.y), u01d_i2f(b.x, b.y)));
    acc = __dadd_rn(acc, __dmul_rn(u01d_i2f(a.z, a.w), u01d_i2f(b.z, b.w)));
  }
  block_fold(acc, &partials[blockIdx.x]);
}

// nd's second pass: one block folds n partials (thread t: t, t + 256, ...)
// and writes the value, which the host then reads (8 bytes).
__global__ void k_fold(const double *partials, unsigned n, double *out) {
  double acc = 0;
  for (unsigned i = threadIdx.x; i < n; i += 256) acc = __dadd_rn(acc, partials[i]);
  block_fold(acc, out);
}

static unsigned long long rng_state = 0x9E3779B97F4A7C15ull;
static unsigned next_word(void) { // splitmix64's output, high half
  unsigned long long z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (unsigned)((z ^ (z >> 31)) >> 32);
}

static int same_double(double a, double b) { return memcmp(&a, &b, 8) == 0; }

int main() {
  // The bit-built uniform equals the converted one: edge words, then random pairs.
  const unsigned edges[] = {0u, 1u, 31u, 32u, 63u, 64u, 0x7FFu, 0x800u, 0x7FFFFFFFu, 0x80000000u, 0x80000001u,
                            0xFFFFFFC0u, 0xFFFFFFFFu, 0x7FFFFFE0u, 0x40000000u, 0x3FFFFFFFu};
  for (unsigned x0 : edges)
    for (unsigned x1 : edges)
      if (!same_double(u01d_i2f(x0, x1), u01d_bits(x0, x1))) {
        printf("bit-built uniform differs at %08x %08x\n", x0, x1);
        return 1;
      }
  for (unsigned long long i = 0; i < (1ull << 27); i++) {
    unsigned x0 = next_word(), x1 = next_word();
    if (!same_double(u01d_i2f(x0, x1), u01d_bits(x0, x1))) {
      printf("bit-built uniform differs at %08x %08x\n", x0, x1);
      return 1;
    }
  }
  printf("bit-built float64 uniform: equal to the converted one on 256 edge pairs and 2^27 random pairs\n");
  Keys K;
  unsigned k0 = 0x5eed0001u, k1 = 0x00c0ffeeu;
  for (int r = 0; r < 10; r++) { K.k0[r] = k0; K.k1[r] = k1; k0 += W0; k1 += W1; }
  unsigned *out;
  CK(cudaMalloc(&out, 4));
  const unsigned long long pairs = N / 2, calls = N;
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  for (const unsigned grid : {132u * 8u, 16384u}) {
    double *part[2], *host[2];
    for (int v = 0; v < 2; v++) {
      CK(cudaMalloc(&part[v], grid * sizeof(double)));
      CK(cudaMemset(part[v], 0xA5 + v, grid * sizeof(double))); // poison: an unwritten partial differs
      host[v] = (double *)malloc(grid * sizeof(double));
    }
    printf("grid %u blocks of 256\n", grid);
    struct { const char *name; const void *fn; int v; } vs[] = {
        {"philox only (1e8 calls)", (const void *)k_philox, -1},
        {"dot i2f (nd's)", (const void *)k_dot<false>, 0},
        {"dot bits", (const void *)k_dot<true>, 1},
    };
    for (auto &v : vs) {
      void *args_p[] = {(void *)&K, (void *)&calls, (void *)&out};
      void *args_d[] = {(void *)&K, (void *)&pairs, (void *)&part[v.v < 0 ? 0 : v.v]};
      float t[21];
      for (int r = -3; r < 21; r++) {
        CK(cudaEventRecord(e0));
        CK(cudaLaunchKernel(v.fn, dim3(grid), dim3(256), v.v < 0 ? args_p : args_d, 0, 0));
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        if (r >= 0) CK(cudaEventElapsedTime(&t[r], e0, e1));
      }
      std::sort(t, t + 21);
      char to_host[64] = "";
      if (v.v >= 0) {
        double w[21];
        for (int r = -3; r < 21; r++) {
          const auto t0 = std::chrono::steady_clock::now();
          CK(cudaLaunchKernel(v.fn, dim3(grid), dim3(256), args_d, 0, 0));
          CK(cudaMemcpy(host[v.v], part[v.v], grid * sizeof(double), cudaMemcpyDeviceToHost));
          double sum = 0;
          for (unsigned b = 0; b < grid; b++) sum += host[v.v][b];
          const auto t1 = std::chrono::steady_clock::now();
          if (sum != sum) printf("  NaN dot\n");
          if (r >= 0) w[r] = std::chrono::duration<double, std::micro>(t1 - t0).count();
        }
        std::sort(w, w + 21);
        snprintf(to_host, sizeof to_host, ", to host %7.1f us", w[10]);
      }
      printf("  %-28s median %7.1f us (best %7.1f)%s\n", v.name, t[10] * 1e3, t[0] * 1e3, to_host);
    }
    double dot[2] = {0, 0};
    for (int v = 0; v < 2; v++) {
      CK(cudaMemcpy(host[v], part[v], grid * sizeof(double), cudaMemcpyDeviceToHost));
      for (unsigned b = 0; b < grid; b++) dot[v] += host[v][b];
    }
    printf("  partials %s; dot / n = %.6f (expect 0.25)\n",
           memcmp(host[0], host[1], grid * sizeof(double)) == 0 ? "identical" : "DIFFER", dot[0] / (double)N);
    for (int v = 0; v < 2; v++) { CK(cudaFree(part[v])); free(host[v]); }
  }
  // The streams: literals (k_dot), kernel arguments, first round from the
  // host (1056 blocks, device time, median of 21; the same partials).
  {
    const unsigned grid = 132u * 8u;
    Round0 R;
    for (int i = 0; i < 2; i++) { // streams 0 and 1, as k_dot's literals
      const unsigned c2 = (unsigned)i, c3 = 0;
      const unsigned long long m = (unsigned long long)M1 * c2;
      R.w[i][0] = (unsigned long long)((unsigned)m) << 32 | ((unsigned)(m >> 32) ^ K.k0[0]);
      R.w[i][1] = c3 ^ K.k1[0];
    }
    const unsigned long long s0 = 0, s1 = 1;
    const unsigned pairs32 = (unsigned)pairs;
    double *part[4], *host[4];
    printf("the streams (1056 blocks)\n");
    for (int v = 0; v < 4; v++) {
      CK(cudaMalloc(&part[v], grid * sizeof(double)));
      CK(cudaMemset(part[v], 0xA5 + v, grid * sizeof(double)));
      host[v] = (double *)malloc(grid * sizeof(double));
      float t[21];
      for (int r = -3; r < 21; r++) {
        CK(cudaEventRecord(e0));
        if (v == 0) k_dot<false><<<grid, 256>>>(K, pairs, part[v]);
        else if (v == 1) k_dot_streams<0><<<grid, 256>>>(K, R, s0, s1, pairs32, part[v]);
        else if (v == 2) k_dot_streams<1><<<grid, 256>>>(K, R, s0, s1, pairs32, part[v]);
        else k_dot_streams<2><<<grid, 256>>>(K, R, s0, s1, pairs32, part[v]);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        if (r >= 0) CK(cudaEventElapsedTime(&t[r], e0, e1));
      }
      std::sort(t, t + 21);
      CK(cudaMemcpy(host[v], part[v], grid * sizeof(double), cudaMemcpyDeviceToHost));
      printf("  %-40s median %7.1f us (best %7.1f)\n",
             v == 0 ? "literal streams (k_dot)" : v == 1 ? "streams as arguments (nd to v17)"
             : v == 2 ? "round 0 from the host (nd v18)" : "round 0 from the host, one c3 ^ k1 word",
             t[10] * 1e3, t[0] * 1e3);
    }
    printf("  partials %s\n", !memcmp(host[0], host[1], grid * 8) && !memcmp(host[0], host[2], grid * 8) &&
                                 !memcmp(host[0], host[3], grid * 8) ? "identical" : "DIFFER");
    for (int v = 0; v < 4; v++) { CK(cudaFree(part[v])); free(host[v]); }
  }
  // nd's two shapes end to end as nd runs them: pass 1, the second pass on
  // the device, the value read to the host (host clock, median of 21).
  {
    const unsigned split = 16383, pps = 3052, grid = 132u * 8u;
    double *part, *val, got[2];
    CK(cudaMalloc(&part, split * sizeof(double)));
    CK(cudaMalloc(&val, sizeof(double)));
    printf("nd's shapes, pass 2 on the device, one double to the host\n");
    for (int shape = 0; shape < 2; shape++) {
      float t[21];
      double w[21];
      for (int r = -3; r < 21; r++) {
        CK(cudaEventRecord(e0));
        const auto t0 = std::chrono::steady_clock::now();
        if (shape == 0) {
          k_dot_split<<<split, 256>>>(K, (unsigned)pairs, pps, part);
          k_fold<<<1, 256>>>(part, split, val);
        } else {
          k_dot<false><<<grid, 256>>>(K, pairs, part);
          k_fold<<<1, 256>>>(part, grid, val);
        }
        CK(cudaEventRecord(e1));
        CK(cudaMemcpy(&got[shape], val, sizeof(double), cudaMemcpyDeviceToHost));
        const auto t1 = std::chrono::steady_clock::now();
        CK(cudaEventSynchronize(e1));
        if (r >= 0) {
          CK(cudaEventElapsedTime(&t[r], e0, e1));
          w[r] = std::chrono::duration<double, std::micro>(t1 - t0).count();
        }
      }
      std::sort(t, t + 21);
      std::sort(w, w + 21);
      printf("  %-44s device %7.1f us, to host %7.1f us\n",
             shape == 0 ? "16383 splits + pass 2 (nd before)" : "1056 blocks grid-stride + pass 2 (nd now)", t[10] * 1e3,
             w[10]);
    }
    printf("  dot / n = %.6f and %.6f (expect 0.25)\n", got[0] / (double)N, got[1] / (double)N);
    CK(cudaFree(part));
    CK(cudaFree(val));
  }
  return 0;
}
