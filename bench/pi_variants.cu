// pi_variants.cu — how fast can the suite's Monte Carlo pi (2^28 float32
// points, x and y from two Philox4x32-10 streams, four points a call) go on
// this GPU, and what bounds it. No nd in it: hand-written kernels, each
// timed alone (cudaEvent, median of 21 launches after 3 warm-ups). Each pi
// variant is also timed as a C program would get pi: clear the count, launch,
// copy the count to the host (host clock, median of 21): "to host" is what
// compares with nd's wall time, which includes nd's recording, launch and
// the read of the result.
//
//   philox only, ILP k   2^27 Philox calls and nothing else: k independent
//                        calls a thread in flight, words xor-folded.
//   pi <conv> <count>    the pi kernel as nd generates it: two calls give 4
//                        points, u = (x >> 8) * 2^-24, count x*x + y*y <= 1.
//                        conv: i2f = (float)(x >> 8) * 2^-24 (I2FP, nd's);
//                        bits = the same value built from the bits (0.5 +
//                        m * 2^-24 from the mantissa, minus 0.5 when the
//                        top bit is clear: exact, checked below on 2^24
//                        words). count: f64 = a double per thread (nd's
//                        astype + sum), int = an integer per thread.
//   ... 8 blocks         __launch_bounds__(256, 8): at most 32 registers,
//                        full occupancy.
//   ... dfma1 / dfma2    the high word of M1's (dfma1) or of both of a
//                        round's products from the FP64 pipe instead of
//                        IMAD.WIDE (4 cycles a warp on the FMA-heavy pipe):
//                        with c kept as the double 2^52 + c,
//                          fma_rd(2^52 + c, M * 2^-32, 2^20 * (2^32 - M))
//                        is exactly 2^52 + umulhi(c, M) (the low 32 bits of
//                        c * M fall below the ulp and round down), so the
//                        round's xor works on the low word and the result
//                        is again 2^52 + c: no repacking. lo = c * M stays
//                        an IMAD. Checked on the host on sampled words and
//                        on the device against IMAD's words. Slower on the
//                        H100 (2026-11-22-h100-pi-variants-dfma.txt): one
//                        IMAD.WIDE gives both halves, so the DFMA form
//                        issues more instructions a round than it saves.
//
// Every pi variant's count is compared with the first one's (the same
// draws must give the same count). Each thread adds its count atomically at
// the end: with the 16384-block grid (4M threads, as nd launches) those
// atomics dominate the pi rows, so the 1056-block grid (8 blocks a
// multiprocessor, grid-stride) is the one that compares the pi variants.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o pi_variants bench/pi_variants.cu
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cfenv>
#include <cmath>
#include <cstring>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

static const unsigned long long N_POINTS = 1ull << 28;
static const unsigned M0 = 0xD2511F53u, M1 = 0xCD9E8D57u, W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;

struct Keys { unsigned k0[10], k1[10]; };

// 2^52 + c as a double and back: c is its low word.
__device__ __forceinline__ double biased(unsigned c) { return __hiloint2double(0x43300000, (int)c); }
__device__ __forceinline__ unsigned low_word(double d) { return (unsigned)__double2loint(d); }
// 2^52 + umulhi(c, M) from 2^52 + c; M_SCALED = M * 2^-32, BIAS = 2^20 (2^32 - M).
__device__ __forceinline__ double dfma_hi(double c52, double m_scaled, double bias) { return __fma_rd(c52, m_scaled, bias); }
// The double's low word xor w: 2^52 + (c ^ w).
__device__ __forceinline__ double xor_low(double c52, unsigned w) {
  return __longlong_as_double(__double_as_longlong(c52) ^ (long long)w);
}

// HI: 0 both high words from IMAD.WIDE, 1 M1's from DFMA, 2 both from DFMA.
template <int HI = 0>
__device__ __forceinline__ uint4 philox(const Keys &K, unsigned long long idx, unsigned long long stream) {
  const double M0S = (double)M0 * 0x1p-32, M1S = (double)M1 * 0x1p-32;
  const double B0 = (4294967296.0 - (double)M0) * 0x1p20, B1 = (4294967296.0 - (double)M1) * 0x1p20;
  unsigned c0 = (unsigned)idx, c1 = (unsigned)(idx >> 32), c2 = (unsigned)stream, c3 = (unsigned)(stream >> 32);
  double d0 = biased(c0), d2 = biased(c2);
#pragma unroll
  for (int r = 0; r < 10; r++) {
    // Each product's halves are written next to each other, high first: so
    // ptxas makes them one IMAD.WIDE (as in nd's kernels); with the low
    // product written first it emitted IMAD.HI + IMAD.
    if (HI == 0) {
      unsigned hi0 = __umulhi(M0, c0), lo0 = M0 * c0;
      unsigned hi1 = __umulhi(M1, c2), lo1 = M1 * c2;
      c0 = hi1 ^ c1 ^ K.k0[r]; c1 = lo1; c2 = hi0 ^ c3 ^ K.k1[r]; c3 = lo0;
    } else if (HI == 1) {
      unsigned hi0 = __umulhi(M0, c0), lo0 = M0 * c0;
      unsigned lo1 = M1 * low_word(d2);
      d0 = xor_low(dfma_hi(d2, M1S, B1), c1 ^ K.k0[r]);
      c0 = low_word(d0);
      d2 = biased(hi0 ^ c3 ^ K.k1[r]);
      c1 = lo1; c3 = lo0;
    } else {
      unsigned lo0 = M0 * low_word(d0), lo1 = M1 * low_word(d2);
      double h0 = dfma_hi(d0, M0S, B0);
      d0 = xor_low(dfma_hi(d2, M1S, B1), c1 ^ K.k0[r]);
      d2 = xor_low(h0, c3 ^ K.k1[r]);
      c1 = lo1; c3 = lo0;
    }
  }
  if (HI >= 1) c2 = low_word(d2);
  if (HI == 2) c0 = low_word(d0);
  return make_uint4(c0, c1, c2, c3);
}

// Every word of calls [0, n) on streams 0 and 1, for comparing the variants.
template <int HI>
__global__ void k_words(const Keys K, unsigned long long n, uint4 *out) {
  for (unsigned long long c = (unsigned long long)blockIdx.x * 256 + threadIdx.x; c < n; c += (unsigned long long)gridDim.x * 256) {
    out[2 * c] = philox<HI>(K, c, 0);
    out[2 * c + 1] = philox<HI>(K, c * 0x9E3779B97F4A7C15ull, 0xFFFFFFFFull * (c & 7));
  }
}

template <int ILP, int MINB, int HI = 0>
__global__ void __launch_bounds__(256, MINB) k_philox(const Keys K, unsigned long long calls, unsigned *out) {
  unsigned acc = 0;
  const unsigned long long stride = (unsigned long long)gridDim.x * 256 * ILP;
  for (unsigned long long c = ((unsigned long long)blockIdx.x * 256 + threadIdx.x) * ILP; c < calls; c += stride) {
    uint4 q[ILP];
#pragma unroll
    for (int k = 0; k < ILP; k++) q[k] = philox<HI>(K, c + k, 0);
#pragma unroll
    for (int k = 0; k < ILP; k++) acc ^= q[k].x ^ q[k].y ^ q[k].z ^ q[k].w;
  }
  if (acc == 0x12345678u) out[0] = acc; // keeps the work; practically never written
}

__device__ __forceinline__ float u01_i2f(unsigned x) { return __fmul_rn((float)(x >> 8), 5.9604644775390625e-8f); }
__device__ __forceinline__ float u01_bits(unsigned x) {
  float g = __uint_as_float(0x3F000000u | ((x >> 8) & 0x7FFFFFu));
  float bias = __uint_as_float((unsigned)((int)~x >> 31) & 0x3F000000u);
  return __fsub_rn(g, bias);
}

template <bool BITS, bool F64, int MINB, int HI = 0>
__global__ void __launch_bounds__(256, MINB) k_pi(const Keys K, unsigned long long groups, unsigned long long *count,
                                                 double *countd) {
  unsigned n = 0;
  double d = 0;
  const unsigned long long stride = (unsigned long long)gridDim.x * 256;
  for (unsigned long long g = (unsigned long long)blockIdx.x * 256 + threadIdx.x; g < groups; g += stride) {
    uint4 a = philox<HI>(K, g, 0), b = philox<HI>(K, g, 1);
    unsigned xa[4] = {a.x, a.y, a.z, a.w}, yb[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
    for (int e = 0; e < 4; e++) {
      float x = BITS ? u01_bits(xa[e]) : u01_i2f(xa[e]);
      float y = BITS ? u01_bits(yb[e]) : u01_i2f(yb[e]);
      bool in = __fadd_rn(__fmul_rn(x, x), __fmul_rn(y, y)) <= 1.0f;
      if (F64) d += in ? 1.0 : 0.0;
      else n += in;
    }
  }
  if (F64) atomicAdd(countd, d);
  else atomicAdd(count, (unsigned long long)n);
}

struct Variant { const char *name; const void *fn; bool pi; };

int main() {
  // The bit-built uniform equals nd's (x >> 8) * 2^-24 on every word tried.
  for (unsigned long long w = 0; w < (1ull << 32); w += 251) {
    unsigned x = (unsigned)w;
    float a = (float)(x >> 8) * 5.9604644775390625e-8f;
    float g, bias;
    unsigned gb = 0x3F000000u | ((x >> 8) & 0x7FFFFFu), bb = (unsigned)((int)~x >> 31) & 0x3F000000u;
    memcpy(&g, &gb, 4);
    memcpy(&bias, &bb, 4);
    float b = g - bias;
    if (memcmp(&a, &b, 4) != 0) { printf("bit-built uniform differs at %08x: %.9g vs %.9g\n", x, a, b); return 1; }
  }
  printf("bit-built uniform: equal to (x >> 8) * 2^-24 on 17.1M words (every 251st)\n");
  // The DFMA high word on the host (fesetround for the directed rounding).
  fesetround(FE_DOWNWARD);
  for (int m = 0; m < 2; m++) {
    const unsigned M = m ? M1 : M0;
    volatile double ms = ldexp((double)M, -32), bias = ldexp(4294967296.0 - (double)M, 20);
    for (unsigned long long w = 0; w < (1ull << 32); w += 13) {
      unsigned a = (unsigned)w, hi = (unsigned)(((unsigned long long)a * M) >> 32);
      unsigned long long in = 0x4330000000000000ull | a, want = 0x4330000000000000ull | hi, got;
      double din, r;
      memcpy(&din, &in, 8);
      r = fma(din, ms, bias);
      memcpy(&got, &r, 8);
      if (got != want) { printf("DFMA high word wrong for M%d at %08x\n", m, a); return 1; }
    }
  }
  fesetround(FE_TONEAREST);
  printf("DFMA high word: 2^52 + umulhi(a, M) for both multipliers on every 13th word (host fma, rounding down)\n");
  Keys K;
  unsigned k0 = 0x5eed0001u, k1 = 0x00c0ffeeu;
  for (int r = 0; r < 10; r++) { K.k0[r] = k0; K.k1[r] = k1; k0 += W0; k1 += W1; }
  unsigned *out;
  unsigned long long *cnt;
  double *cntd;
  CK(cudaMalloc(&out, 4)); CK(cudaMalloc(&cnt, 8)); CK(cudaMalloc(&cntd, 8));
  const unsigned long long calls = N_POINTS / 4 * 2, groups = N_POINTS / 4;
  Variant vs[] = {
      {"philox only, ILP 1", (const void *)k_philox<1, 1>, false},
      {"philox only, ILP 2", (const void *)k_philox<2, 1>, false},
      {"philox only, ILP 4", (const void *)k_philox<4, 1>, false},
      {"philox only, ILP 2, 8 blocks", (const void *)k_philox<2, 8>, false},
      {"pi i2f f64 (nd)", (const void *)k_pi<false, true, 1>, true},
      {"pi i2f int", (const void *)k_pi<false, false, 1>, true},
      {"pi bits f64", (const void *)k_pi<true, true, 1>, true},
      {"pi bits int", (const void *)k_pi<true, false, 1>, true},
      {"pi i2f f64, 8 blocks", (const void *)k_pi<false, true, 8>, true},
      {"pi bits int, 8 blocks", (const void *)k_pi<true, false, 8>, true},
      {"philox only, ILP 1, dfma1", (const void *)k_philox<1, 1, 1>, false},
      {"philox only, ILP 1, dfma2", (const void *)k_philox<1, 1, 2>, false},
      {"philox only, ILP 2, dfma1", (const void *)k_philox<2, 1, 1>, false},
      {"philox only, ILP 2, dfma2", (const void *)k_philox<2, 1, 2>, false},
      {"philox only, ILP 4, dfma2", (const void *)k_philox<4, 1, 2>, false},
      {"pi i2f f64 (nd), dfma1", (const void *)k_pi<false, true, 1, 1>, true},
      {"pi i2f f64 (nd), dfma2", (const void *)k_pi<false, true, 1, 2>, true},
      {"pi i2f int, dfma1", (const void *)k_pi<false, false, 1, 1>, true},
      {"pi i2f int, dfma2", (const void *)k_pi<false, false, 1, 2>, true},
  };
  {
    const unsigned long long n = 1ull << 24;
    const size_t bytes = n * 2 * sizeof(uint4);
    uint4 *w[3];
    unsigned *h[3];
    for (int v = 0; v < 3; v++) {
      CK(cudaMalloc(&w[v], bytes));
      CK(cudaMemset(w[v], 0xA5 + v, bytes)); // poison, different for each: unwritten words differ
    }
    void *a0[] = {(void *)&K, (void *)&n, (void *)&w[0]}, *a1[] = {(void *)&K, (void *)&n, (void *)&w[1]},
         *a2[] = {(void *)&K, (void *)&n, (void *)&w[2]};
    CK(cudaLaunchKernel((const void *)k_words<0>, dim3(4096), dim3(256), a0, 0, 0));
    CK(cudaLaunchKernel((const void *)k_words<1>, dim3(4096), dim3(256), a1, 0, 0));
    CK(cudaLaunchKernel((const void *)k_words<2>, dim3(4096), dim3(256), a2, 0, 0));
    CK(cudaDeviceSynchronize());
    for (int v = 0; v < 3; v++) {
      h[v] = (unsigned *)malloc(bytes);
      CK(cudaMemcpy(h[v], w[v], bytes, cudaMemcpyDeviceToHost));
      CK(cudaFree(w[v]));
    }
    for (int v = 1; v < 3; v++)
      if (memcmp(h[0], h[v], bytes) != 0) { printf("dfma%d words DIFFER from IMAD's\n", v); return 1; }
    printf("dfma1, dfma2: the words of 2^25 calls equal IMAD's on the device\n");
    for (int v = 0; v < 3; v++) free(h[v]);
  }
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  unsigned long long ref = 0;
  for (const unsigned grid : {16384u, 132u * 8u}) {
    printf("grid %u blocks of 256\n", grid);
    for (const Variant &v : vs) {
      unsigned long long work = v.pi ? groups : calls;
      void *args_p[] = {(void *)&K, (void *)&work, (void *)&out};
      void *args_pi[] = {(void *)&K, (void *)&work, (void *)&cnt, (void *)&cntd};
      float t[21];
      unsigned long long got = 0;
      for (int r = -3; r < 21; r++) {
        CK(cudaMemset(cnt, 0, 8)); CK(cudaMemset(cntd, 0, 8));
        CK(cudaEventRecord(e0));
        CK(cudaLaunchKernel(v.fn, dim3(grid), dim3(256), v.pi ? args_pi : args_p, 0, 0));
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        if (r >= 0) CK(cudaEventElapsedTime(&t[r], e0, e1));
        if (v.pi && r == 0) {
          double d;
          CK(cudaMemcpy(&got, cnt, 8, cudaMemcpyDeviceToHost));
          CK(cudaMemcpy(&d, cntd, 8, cudaMemcpyDeviceToHost));
          if (d > 0) got = (unsigned long long)d;
        }
      }
      std::sort(t, t + 21);
      if (v.pi && !ref) ref = got;
      char to_host[64] = "";
      if (v.pi) {
        const bool f64 = strstr(v.name, "f64") != nullptr;
        double w[21];
        for (int r = -3; r < 21; r++) {
          const auto t0 = std::chrono::steady_clock::now();
          unsigned long long c = 0;
          double d = 0;
          CK(cudaMemsetAsync(f64 ? (void *)cntd : (void *)cnt, 0, 8));
          CK(cudaLaunchKernel(v.fn, dim3(grid), dim3(256), args_pi, 0, 0));
          if (f64) CK(cudaMemcpy(&d, cntd, 8, cudaMemcpyDeviceToHost));
          else CK(cudaMemcpy(&c, cnt, 8, cudaMemcpyDeviceToHost));
          const auto t1 = std::chrono::steady_clock::now();
          if (r >= 0) w[r] = std::chrono::duration<double, std::micro>(t1 - t0).count();
        }
        std::sort(w, w + 21);
        snprintf(to_host, sizeof to_host, ", to host %7.1f us", w[10]);
      }
      printf("  %-30s median %7.1f us (best %7.1f)%s%s\n", v.name, t[10] * 1e3, t[0] * 1e3, to_host,
             !v.pi ? "" : got == ref ? "  count same" : "  COUNT DIFFERS");
      if (v.pi && got != ref) printf("    %llu vs %llu\n", got, ref);
    }
  }
  printf("pi estimate from the counts: %.7f\n", 4.0 * (double)ref / (double)N_POINTS);
  return 0;
}
