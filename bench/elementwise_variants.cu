// elementwise_variants.cu — hand-written CUDA kernels for the suite's two
// streaming elementwise workloads, chain (2^27 float32: 2 loads, 1 store)
// and Black-Scholes (2^26 float32: 3 loads, 2 stores), and for the same
// access patterns with no arithmetic, each in several ways of mapping
// threads to 16-byte vectors, timed side by side with cudaMemcpy. It has
// no nd in it: it measures what a kernel of that shape can reach on the
// device, and which mapping the code generator
// (src/backends/cuda/codegen_points.c) should emit. Each variant's output is
// compared bit for bit with the first variant's (same arithmetic), and the
// first with a float64 host reference at sampled points.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o elementwise_variants bench/elementwise_variants.cu
//   ./elementwise_variants
//
// Prints per variant the best and the median of 7 timings of 10 launches
// (cudaEvent), in us per launch and as a ratio to the copy floor (bytes
// moved / cudaMemcpy device-to-device bandwidth measured in the same run).

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

// ------------------------------------------------------------ arithmetic

// The suite's chain: sin(a)*cos(b) + sqrt(abs(a*b))*exp(-a*a).
struct Chain {
  static constexpr int NIN = 2, NOUT = 1;
  __device__ static void f(const float *x, float *y) {
    float a = x[0], b = x[1];
    y[0] = sinf(a) * cosf(b) + sqrtf(fabsf(a * b)) * expf(-(a * a));
  }
  static void ref(const double *x, double *y) {
    y[0] = sin(x[0]) * cos(x[1]) + sqrt(fabs(x[0] * x[1])) * exp(-x[0] * x[0]);
  }
};

// The suite's Black-Scholes call and put (r = 0.02, v = 0.30), CND by the
// Abramowitz-Stegun polynomial, as bench/nd_suite_elementwise.c records it.
#define BS_A1 0.31938153f
#define BS_A2 -0.356563782f
#define BS_A3 1.781477937f
#define BS_A4 -1.821255978f
#define BS_A5 1.330274429f
__device__ __forceinline__ float cnd(float d) {
  float k = 1.0f / (1.0f + 0.2316419f * fabsf(d));
  float poly = k * (BS_A1 + k * (BS_A2 + k * (BS_A3 + k * (BS_A4 + k * BS_A5))));
  float w = 0.39894228040143267794f * expf(-0.5f * d * d) * poly;
  return d > 0.0f ? 1.0f - w : w;
}
static double cnd_ref(double d) {
  double k = 1.0 / (1.0 + 0.2316419 * fabs(d));
  double poly = k * (0.31938153 + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + k * 1.330274429))));
  double w = 0.39894228040143267794 * exp(-0.5 * d * d) * poly;
  return d > 0 ? 1.0 - w : w;
}
struct BlackScholes {
  static constexpr int NIN = 3, NOUT = 2;
  __device__ static void f(const float *x, float *y) {
    float S = x[0], X = x[1], T = x[2];
    float vst = 0.30f * sqrtf(T);
    float d1 = (logf(S / X) + (0.02f + 0.5f * 0.30f * 0.30f) * T) / vst;
    float d2 = d1 - vst;
    float c1 = cnd(d1), c2 = cnd(d2);
    float xd = X * expf(-0.02f * T);
    y[0] = S * c1 - xd * c2;
    y[1] = xd * (1.0f - c2) - S * (1.0f - c1);
  }
  static void ref(const double *x, double *y) {
    double S = x[0], X = x[1], T = x[2], vst = 0.30 * sqrt(T);
    double d1 = (log(S / X) + (0.02 + 0.5 * 0.30 * 0.30) * T) / vst, d2 = d1 - vst;
    double c1 = cnd_ref(d1), c2 = cnd_ref(d2), xd = X * exp(-0.02 * T);
    y[0] = S * c1 - xd * c2;
    y[1] = xd * (1.0 - c2) - S * (1.0 - c1);
  }
};

// The same loads and stores with next to no arithmetic (the access pattern alone).
template <int NI, int NO>
struct Move {
  static constexpr int NIN = NI, NOUT = NO;
  __device__ static void f(const float *x, float *y) {
    float s = x[0];
    for (int i = 1; i < NI; i++) s += x[i];
    for (int o = 0; o < NO; o++) y[o] = s + (float)o;
  }
  static void ref(const double *x, double *y) {
    double s = x[0];
    for (int i = 1; i < NI; i++) s += x[i];
    for (int o = 0; o < NO; o++) y[o] = s + o;
  }
};

// ------------------------------------------------------------ mappings

struct Args {
  const float4 *in[3];
  float4 *out[2];
  long long nv; // 16-byte vectors per array
};

template <class Op, bool CS>
__device__ __forceinline__ float4 ld(const float4 *p) { return CS ? __ldcs(p) : *p; }
template <class Op, bool CS>
__device__ __forceinline__ void st(float4 *p, float4 v) { if (CS) __stcs(p, v); else *p = v; }

template <class Op>
__device__ __forceinline__ void apply4(const float4 *x, float4 *y) {
  float xi[Op::NIN], yo[Op::NOUT];
  float res[Op::NOUT][4];
#pragma unroll
  for (int e = 0; e < 4; e++) {
#pragma unroll
    for (int i = 0; i < Op::NIN; i++) xi[i] = reinterpret_cast<const float *>(&x[i])[e];
    Op::f(xi, yo);
#pragma unroll
    for (int o = 0; o < Op::NOUT; o++) res[o][e] = yo[o];
  }
#pragma unroll
  for (int o = 0; o < Op::NOUT; o++) y[o] = make_float4(res[o][0], res[o][1], res[o][2], res[o][3]);
}

// Grid-stride loop, U vectors per thread per step (a grid stride apart),
// all U x NIN loads issued before any arithmetic. U = 1 is what nd emits.
template <class Op, int U, bool CS>
__global__ void __launch_bounds__(256) k_stride(Args A) {
  const long long stride = (long long)gridDim.x * 256;
  for (long long g = (long long)blockIdx.x * 256 + threadIdx.x; g < A.nv; g += stride * U) {
    float4 x[U][Op::NIN], y[U][Op::NOUT];
#pragma unroll
    for (int u = 0; u < U; u++)
      if (g + u * stride < A.nv)
#pragma unroll
        for (int i = 0; i < Op::NIN; i++) x[u][i] = ld<Op, CS>(A.in[i] + g + u * stride);
#pragma unroll
    for (int u = 0; u < U; u++)
      if (g + u * stride < A.nv) {
        apply4<Op>(x[u], y[u]);
#pragma unroll
        for (int o = 0; o < Op::NOUT; o++) st<Op, CS>(A.out[o] + g + u * stride, y[u][o]);
      }
  }
}

// One pass, no loop: a block takes 256 x U consecutive vectors (thread t
// takes t, t + 256, ...), loads first.
template <class Op, int U, bool CS>
__global__ void __launch_bounds__(256) k_once(Args A) {
  const long long base = (long long)blockIdx.x * 256 * U + threadIdx.x;
  float4 x[U][Op::NIN], y[U][Op::NOUT];
#pragma unroll
  for (int u = 0; u < U; u++)
    if (base + u * 256 < A.nv)
#pragma unroll
      for (int i = 0; i < Op::NIN; i++) x[u][i] = ld<Op, CS>(A.in[i] + base + u * 256);
#pragma unroll
  for (int u = 0; u < U; u++)
    if (base + u * 256 < A.nv) {
      apply4<Op>(x[u], y[u]);
#pragma unroll
      for (int o = 0; o < Op::NOUT; o++) st<Op, CS>(A.out[o] + base + u * 256, y[u][o]);
    }
}

// ------------------------------------------------------------ driver

static unsigned hash32(unsigned long long i) {
  unsigned long long z = i * 0x9E3779B97F4A7C15ull;
  z ^= z >> 31; z *= 0xBF58476D1CE4E5B9ull; z ^= z >> 29;
  return (unsigned)(z >> 32);
}
__global__ void k_fill(float *p, long long n, unsigned seed, float lo, float hi) {
  for (long long i = (long long)blockIdx.x * 256 + threadIdx.x; i < n; i += (long long)gridDim.x * 256) {
    unsigned long long z = ((unsigned long long)i + ((unsigned long long)seed << 40)) * 0x9E3779B97F4A7C15ull;
    z ^= z >> 31; z *= 0xBF58476D1CE4E5B9ull; z ^= z >> 29;
    p[i] = lo + (hi - lo) * ((unsigned)(z >> 40) * (1.0f / 16777216.0f));
  }
}

struct Variant { const char *name; void (*launch)(const Args &, int sms, int grid_per_sm); int grid_per_sm; };

template <class Op, int U, bool CS>
static void launch_stride(const Args &a, int sms, int per_sm) { k_stride<Op, U, CS><<<sms * per_sm, 256>>>(a); }
template <class Op, int U, bool CS>
static void launch_once(const Args &a, int, int) {
  long long blocks = (a.nv + 256LL * U - 1) / (256LL * U);
  k_once<Op, U, CS><<<(unsigned)blocks, 256>>>(a);
}

static double median(double *v, int n) { std::sort(v, v + n); return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]); }

template <class Op>
static void study(const char *title, long long n, const float lo[3], const float hi[3], double copy_gbs, int sms) {
  size_t bytes = (size_t)n * 4;
  Args A;
  A.nv = n / 4;
  float *in[3] = {0, 0, 0}, *out[2] = {0, 0};
  for (int i = 0; i < Op::NIN; i++) { CK(cudaMalloc(&in[i], bytes)); k_fill<<<sms * 32, 256>>>(in[i], n, 11 + i, lo[i], hi[i]); A.in[i] = (const float4 *)in[i]; }
  for (int o = 0; o < Op::NOUT; o++) { CK(cudaMalloc(&out[o], bytes)); A.out[o] = (float4 *)out[o]; }
  float *first[2] = {(float *)malloc(bytes), (float *)malloc(bytes)}, *got = (float *)malloc(bytes);
  CK(cudaDeviceSynchronize());
  double floor_us = (Op::NIN + Op::NOUT) * (double)bytes / (copy_gbs * 1e9) * 1e6;
  printf("\n%s: n = %lld, %d loads + %d stores, floor %.1f us\n", title, n, Op::NIN, Op::NOUT, floor_us);
  Variant vs[] = {
      {"stride U1 grid sm*32 (nd)", launch_stride<Op, 1, false>, 32},
      {"stride U1 grid sm*8", launch_stride<Op, 1, false>, 8},
      {"stride U1 grid sm*16", launch_stride<Op, 1, false>, 16},
      {"stride U2 grid sm*16", launch_stride<Op, 2, false>, 16},
      {"stride U2 grid sm*8", launch_stride<Op, 2, false>, 8},
      {"stride U4 grid sm*8", launch_stride<Op, 4, false>, 8},
      {"stride U4 grid sm*4", launch_stride<Op, 4, false>, 4},
      {"once U1", launch_once<Op, 1, false>, 0},
      {"once U2", launch_once<Op, 2, false>, 0},
      {"once U4", launch_once<Op, 4, false>, 0},
      {"stride U1 grid sm*32 cs", launch_stride<Op, 1, true>, 32},
      {"stride U2 grid sm*16 cs", launch_stride<Op, 2, true>, 16},
      {"once U2 cs", launch_once<Op, 2, true>, 0},
      {"once U4 cs", launch_once<Op, 4, true>, 0},
  };
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0); cudaEventCreate(&e1);
  for (size_t v = 0; v < sizeof vs / sizeof vs[0]; v++) {
    for (int o = 0; o < Op::NOUT; o++) CK(cudaMemset(out[o], 0xff, bytes)); // poison: NaN where unwritten
    vs[v].launch(A, sms, vs[v].grid_per_sm);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    long bad = 0;
    for (int o = 0; o < Op::NOUT; o++) {
      if (v == 0) { CK(cudaMemcpy(first[o], out[o], bytes, cudaMemcpyDeviceToHost)); continue; }
      CK(cudaMemcpy(got, out[o], bytes, cudaMemcpyDeviceToHost));
      for (long long i = 0; i < n; i++) bad += memcmp(&got[i], &first[o][i], 4) != 0;
    }
    if (v == 0) { // the reference check of the first variant, at sampled points
      float *hin[3];
      for (int i = 0; i < Op::NIN; i++) { hin[i] = (float *)malloc(bytes); CK(cudaMemcpy(hin[i], in[i], bytes, cudaMemcpyDeviceToHost)); }
      double num = 0, den = 0;
      for (int s = 0; s < 100000; s++) {
        long long k = hash32(s) % n;
        double x[3], y[2];
        for (int i = 0; i < Op::NIN; i++) x[i] = hin[i][k];
        Op::ref(x, y);
        for (int o = 0; o < Op::NOUT; o++) { double d = first[o][k] - y[o]; num += d * d; den += y[o] * y[o]; }
      }
      for (int i = 0; i < Op::NIN; i++) free(hin[i]);
      double err = sqrt(num / (den > 0 ? den : 1));
      printf("  reference check of the first variant: norm-relative error %.2e%s\n", err, err < 1e-5 ? "" : "  WRONG");
    }
    double t[7];
    for (int r = 0; r < 7; r++) {
      cudaEventRecord(e0);
      for (int it = 0; it < 10; it++) vs[v].launch(A, sms, vs[v].grid_per_sm);
      cudaEventRecord(e1);
      CK(cudaEventSynchronize(e1));
      float ms;
      cudaEventElapsedTime(&ms, e0, e1);
      t[r] = ms * 1e3 / 10;
    }
    double best = *std::min_element(t, t + 7), med = median(t, 7);
    printf("  %-28s best %7.1f us (%.3fx)  median %7.1f us (%.3fx)%s\n", vs[v].name, best, best / floor_us, med,
           med / floor_us, bad ? "  OUTPUT DIFFERS" : "");
    if (bad) printf("    %ld elements differ from the first variant\n", bad);
  }
  for (int i = 0; i < Op::NIN; i++) cudaFree(in[i]);
  for (int o = 0; o < Op::NOUT; o++) cudaFree(out[o]);
  free(first[0]); free(first[1]); free(got);
}

int main() {
  int sms;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  // Copy bandwidth: cudaMemcpy of 1 GiB device to device, read + write bytes.
  size_t cb = (size_t)1 << 30;
  void *ca, *cbuf;
  CK(cudaMalloc(&ca, cb)); CK(cudaMalloc(&cbuf, cb));
  CK(cudaMemset(ca, 1, cb));
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0); cudaEventCreate(&e1);
  double best = 1e30;
  for (int r = 0; r < 7; r++) {
    cudaEventRecord(e0);
    for (int it = 0; it < 5; it++) CK(cudaMemcpyAsync(cbuf, ca, cb, cudaMemcpyDeviceToDevice));
    cudaEventRecord(e1);
    CK(cudaEventSynchronize(e1));
    float ms;
    cudaEventElapsedTime(&ms, e0, e1);
    best = std::min(best, ms / 5.0);
  }
  cudaFree(ca); cudaFree(cbuf);
  double copy_gbs = 2.0 * cb / (best * 1e-3) * 1e-9;
  printf("%s, %d SMs: cudaMemcpy device to device %.0f GB/s (read + write)\n", prop.name, sms, copy_gbs);

  const float chain_lo[3] = {-2, -2, 0}, chain_hi[3] = {2, 2, 0};
  const float bs_lo[3] = {5, 1, 0.25f}, bs_hi[3] = {30, 100, 10};
  study<Move<2, 1>>("2 loads 1 store, no arithmetic", 1LL << 27, chain_lo, chain_hi, copy_gbs, sms);
  study<Chain>("chain", 1LL << 27, chain_lo, chain_hi, copy_gbs, sms);
  study<Move<3, 2>>("3 loads 2 stores, no arithmetic", 1LL << 26, bs_lo, bs_hi, copy_gbs, sms);
  study<BlackScholes>("Black-Scholes", 1LL << 26, bs_lo, bs_hi, copy_gbs, sms);
  return 0;
}
