// cmul_variants.cu — the multiply in front of fft(x * w) (x complex64, w
// float32, 2^26 elements: 8 + 4 bytes read and 8 written per element),
// hand-written in several thread mappings and timed side by side with
// cudaMemcpy, so that nd's code generator (src/backends/cuda/codegen.c,
// codegen_points.c) can take the mapping that reaches the floor. No nd in
// it. Every variant computes NumPy's textbook product with w promoted to
// complex (re = xr*w - xi*0, im = xr*0 + xi*w) and is compared bit for bit
// with the first; the first with the host at every element.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o cmul_variants bench/cmul_variants.cu
//   ./cmul_variants [log2 n]
//
// Prints per variant the median and best of 15 timed launches (cudaEvent)
// in us and as a ratio to the copy floor (bytes moved at the bandwidth of a
// device-to-device cudaMemcpy measured in the same run).

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CK(x)                                                                                       \
  do {                                                                                              \
    cudaError_t e_ = (x);                                                                           \
    if (e_ != cudaSuccess) {                                                                        \
      printf("%s: %s\n", #x, cudaGetErrorString(e_));                                               \
      exit(1);                                                                                      \
    }                                                                                               \
  } while (0)

struct C64 {
  float re, im;
};

__device__ __forceinline__ C64 mul(C64 z, float w) {
  C64 r;
  r.re = __fsub_rn(__fmul_rn(z.re, w), __fmul_rn(z.im, 0.0f));
  r.im = __fadd_rn(__fmul_rn(z.re, 0.0f), __fmul_rn(z.im, w));
  return r;
}

// nd before: one element a thread, the exact grid.
__global__ void __launch_bounds__(256) k_scalar(const C64 *x, const float *w, C64 *y, unsigned n) {
  unsigned i = blockIdx.x * 256u + threadIdx.x;
  if (i < n) y[i] = mul(x[i], w[i]);
}

// Elements 2g and 2g + 1: one 16-byte word of x and y, 8 bytes of w.
__device__ __forceinline__ void vec2_group(const C64 *x, const float *w, C64 *y, unsigned g) {
  union { uint4 v; C64 e[2]; } a, o;
  union { uint2 v; float e[2]; } b;
  a.v = *(const uint4 *)(x + 2 * g);
  b.v = *(const uint2 *)(w + 2 * g);
  o.e[0] = mul(a.e[0], b.e[0]);
  o.e[1] = mul(a.e[1], b.e[1]);
  *(uint4 *)(y + 2 * g) = o.v;
}

// nd now: two elements a thread, the exact grid.
__global__ void __launch_bounds__(256) k_vec2(const C64 *x, const float *w, C64 *y, unsigned n) {
  unsigned g = blockIdx.x * 256u + threadIdx.x;
  if (2 * g + 1 < n) vec2_group(x, w, y, g);
}

// Two such groups a thread, a block's width apart, loads first.
template <int U>
__global__ void __launch_bounds__(256) k_vec2_unroll(const C64 *x, const float *w, C64 *y, unsigned n) {
  unsigned base = blockIdx.x * 256u * U + threadIdx.x;
  union { uint4 v; C64 e[2]; } a[U], o[U];
  union { uint2 v; float e[2]; } b[U];
#pragma unroll
  for (int u = 0; u < U; u++) {
    unsigned g = base + u * 256u;
    if (2 * g + 1 < n) {
      a[u].v = __ldcs((const uint4 *)(x + 2 * g));
      b[u].v = __ldcs((const uint2 *)(w + 2 * g));
    }
  }
#pragma unroll
  for (int u = 0; u < U; u++) {
    unsigned g = base + u * 256u;
    o[u].e[0] = mul(a[u].e[0], b[u].e[0]);
    o[u].e[1] = mul(a[u].e[1], b[u].e[1]);
    if (2 * g + 1 < n) __stcs((uint4 *)(y + 2 * g), o[u].v);
  }
}

// Four elements a thread: two 16-byte words of x and y, one of w.
__global__ void __launch_bounds__(256) k_vec4(const C64 *x, const float *w, C64 *y, unsigned n) {
  unsigned g = blockIdx.x * 256u + threadIdx.x;
  if (4 * g + 3 < n) {
    union { uint4 v; C64 e[2]; } a0, a1, o0, o1;
    union { uint4 v; float e[4]; } b;
    a0.v = *(const uint4 *)(x + 4 * g);
    a1.v = *(const uint4 *)(x + 4 * g + 2);
    b.v = *(const uint4 *)(w + 4 * g);
    o0.e[0] = mul(a0.e[0], b.e[0]);
    o0.e[1] = mul(a0.e[1], b.e[1]);
    o1.e[0] = mul(a1.e[0], b.e[2]);
    o1.e[1] = mul(a1.e[1], b.e[3]);
    *(uint4 *)(y + 4 * g) = o0.v;
    *(uint4 *)(y + 4 * g + 2) = o1.v;
  }
}

// PyTorch's unrolled elementwise shape: 128 threads, 4 elements a thread a
// block's width apart, scalar loads, all loads before the arithmetic.
__global__ void __launch_bounds__(128) k_strided4(const C64 *x, const float *w, C64 *y, unsigned n) {
  unsigned base = blockIdx.x * 512u + threadIdx.x;
  C64 a[4];
  float b[4];
#pragma unroll
  for (int u = 0; u < 4; u++) {
    unsigned i = base + u * 128u;
    if (i < n) {
      a[u] = x[i];
      b[u] = w[i];
    }
  }
#pragma unroll
  for (int u = 0; u < 4; u++) {
    unsigned i = base + u * 128u;
    if (i < n) y[i] = mul(a[u], b[u]);
  }
}

// The vec2 body over a grid of SMs x 8 blocks, grid-stride.
__global__ void __launch_bounds__(256) k_vec2_stride(const C64 *x, const float *w, C64 *y, unsigned n) {
  for (unsigned g = blockIdx.x * 256u + threadIdx.x; 2 * g + 1 < n; g += gridDim.x * 256u) vec2_group(x, w, y, g);
}

static float time_ms(cudaEvent_t a, cudaEvent_t b) {
  float ms;
  CK(cudaEventElapsedTime(&ms, a, b));
  return ms;
}

int main(int argc, char **argv) {
  const int lg = argc > 1 ? atoi(argv[1]) : 26;
  const unsigned n = 1u << lg;
  const int R = 15;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  C64 *hx = (C64 *)malloc(sizeof(C64) * n), *hy = (C64 *)malloc(sizeof(C64) * n), *h0 = (C64 *)malloc(sizeof(C64) * n);
  float *hw = (float *)malloc(sizeof(float) * n);
  unsigned long long s = 12345;
  auto rnd = [&]() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(s >> 11) * 0x1p-53 * 2 - 1);
  };
  for (unsigned i = 0; i < n; i++) {
    hx[i].re = rnd();
    hx[i].im = rnd();
    hw[i] = 0.5f * (rnd() + 1);
  }
  C64 *x, *y;
  float *w;
  void *cpy;
  CK(cudaMalloc(&x, sizeof(C64) * n));
  CK(cudaMalloc(&y, sizeof(C64) * n));
  CK(cudaMalloc(&w, sizeof(float) * n));
  CK(cudaMalloc(&cpy, sizeof(C64) * n));
  CK(cudaMemcpy(x, hx, sizeof(C64) * n, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(w, hw, sizeof(float) * n, cudaMemcpyHostToDevice));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  // floor: a device-to-device copy of x (read + write)
  float ts[R];
  for (int r = 0; r < R + 2; r++) {
    CK(cudaEventRecord(e0));
    CK(cudaMemcpyAsync(cpy, x, sizeof(C64) * n, cudaMemcpyDeviceToDevice));
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    if (r >= 2) ts[r - 2] = time_ms(e0, e1);
  }
  std::sort(ts, ts + R);
  const double copy_gbs = 2.0 * sizeof(C64) * n / (ts[R / 2] * 1e-3) / 1e9;
  const double bytes = (double)n * (8 + 4 + 8);
  printf("cmul_variants: %s, %d SMs, n = 2^%d; copy %.1f GB/s (read + write); floor %.1f us\n", prop.name,
         prop.multiProcessorCount, lg, copy_gbs, bytes / copy_gbs / 1e3);
  struct V {
    const char *name;
    int kind;
  } vs[] = {{"scalar, 1 a thread (nd before)", 0}, {"vec2, exact grid (nd now)", 1}, {"vec2 x2 unrolled, streaming", 2},
            {"vec2 x4 unrolled, streaming", 3},    {"vec4, exact grid", 4},           {"strided4, 128 threads (PyTorch's shape)", 5},
            {"vec2, SMs x 8 grid-stride", 6}};
  int fails = 0;
  for (const V &v : vs) {
    CK(cudaMemset(y, 0xff, sizeof(C64) * n));
    for (int r = 0; r < R + 2; r++) {
      CK(cudaEventRecord(e0));
      switch (v.kind) {
      case 0: k_scalar<<<(n + 255) / 256, 256>>>(x, w, y, n); break;
      case 1: k_vec2<<<(n / 2 + 255) / 256, 256>>>(x, w, y, n); break;
      case 2: k_vec2_unroll<2><<<(n / 2 + 511) / 512, 256>>>(x, w, y, n); break;
      case 3: k_vec2_unroll<4><<<(n / 2 + 1023) / 1024, 256>>>(x, w, y, n); break;
      case 4: k_vec4<<<(n / 4 + 255) / 256, 256>>>(x, w, y, n); break;
      case 5: k_strided4<<<(n + 511) / 512, 128>>>(x, w, y, n); break;
      case 6: k_vec2_stride<<<prop.multiProcessorCount * 8, 256>>>(x, w, y, n); break;
      }
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      if (r >= 2) ts[r - 2] = time_ms(e0, e1);
    }
    CK(cudaGetLastError());
    std::sort(ts, ts + R);
    CK(cudaMemcpy(hy, y, sizeof(C64) * n, cudaMemcpyDeviceToHost));
    int bad = 0;
    if (v.kind == 0) {
      for (unsigned i = 0; i < n; i++) {
        float re = hx[i].re * hw[i] - hx[i].im * 0.0f, im = hx[i].re * 0.0f + hx[i].im * hw[i];
        bad += hy[i].re != re || hy[i].im != im;
      }
      memcpy(h0, hy, sizeof(C64) * n);
    } else {
      bad = memcmp(hy, h0, sizeof(C64) * n) != 0;
    }
    fails += bad != 0;
    printf("  %-42s median %7.1f us (best %7.1f)  %.3fx floor  %s\n", v.name, ts[R / 2] * 1e3, ts[0] * 1e3,
           ts[R / 2] * 1e-3 / (bytes / copy_gbs / 1e9), bad ? "WRONG" : "same bits");
  }
  printf("%d variant(s) wrong\n", fails);
  return fails != 0;
}
