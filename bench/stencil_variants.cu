// stencil_variants.cu — hand-written CUDA sweeps of the heat stencil on a
// 16384^2 float32 grid (the suite's `stencil` workload), one kernel per
// way of mapping threads to points, timed side by side with a plain copy.
// It is how the march kernel of the code generator was chosen
// (src/backends/cuda/codegen_points.c, emit_elementwise_march): it has no
// nd in it, so it measures the kernels alone. Each kernel's output is
// checked bit for bit against the host before it is timed (best of 5 runs
// of 20 sweeps, ms per sweep).
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o stencil_variants bench/stencil_variants.cu
//   ./stencil_variants
//
// On an H100 (2026-11-22) a sweep of the 16384^2 grid took 0.83 ms marching
// rows through shared memory, 1.19 ms with 8 unrolled rows, and 0.75 ms for
// a plain copy of the grid (the record: git log -- bench/results/, file
// 2026-11-22-h100-session4.md).

#include <cstdio>
#include <cuda_runtime.h>
#define N 16384
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)
__global__ void k_naive(const float *u, float *v) {  // 1-d linear, 1 point/thread
  const unsigned C = N - 2;
  for (unsigned g = blockIdx.x * 256u + threadIdx.x; g < C * C; g += gridDim.x * 256u) {
    int i = g / C + 1, j = g % C + 1; const float *c = u + (size_t)i * N + j;
    v[(size_t)i * N + j] = 0.2f * ((((c[0] + c[-N]) + c[N]) + c[-1]) + c[1]);
  }
}
__global__ void k_2d(const float *u, float *v) {  // 2-d block 32x8
  int j = blockIdx.x * 32 + threadIdx.x + 1, i = blockIdx.y * 8 + threadIdx.y + 1;
  if (i < N - 1 && j < N - 1) { const float *c = u + (size_t)i * N + j;
    v[(size_t)i * N + j] = 0.2f * ((((c[0] + c[-N]) + c[N]) + c[-1]) + c[1]); }
}
template <int H, int B>
__global__ void k_march(const float *u, float *v) {  // thread = column, strip of H rows, loads of B rows first
  const unsigned C = N - 2;
  for (unsigned w = blockIdx.x * 256u + threadIdx.x; w < C * ((C + H - 1) / H); w += gridDim.x * 256u) {
    int rs = (w / C) * H, re = min(rs + H, (int)C), j = w % C + 1;
    const float *p = u + j;
    float m0 = p[(size_t)rs * N], m1 = p[(size_t)(rs + 1) * N];
    for (int ib = rs; ib < re; ib += B) {
      float S[B], W[B], E[B];
#pragma unroll
      for (int t = 0; t < B; t++) if (ib + t < re) { size_t r = (size_t)(ib + t + 1) * N; S[t] = p[r + N]; W[t] = p[r - 1]; E[t] = p[r + 1]; }
#pragma unroll
      for (int t = 0; t < B; t++) if (ib + t < re) {
        v[(size_t)(ib + t + 1) * N + j] = 0.2f * ((((m1 + m0) + S[t]) + W[t]) + E[t]); m0 = m1; m1 = S[t]; }
    }
  }
}
template <int H, int B>
__global__ void k_march_smem(const float *u, float *v) {  // block = 256 columns of one strip; west/east via smem
  __shared__ float sm[B][258];
  const int C = N - 2, Cp = (C + 255) / 256 * 256, nstrips = (C + H - 1) / H;
  for (int blk = blockIdx.x; blk < nstrips * (Cp / 256); blk += gridDim.x) {
    int strip = blk / (Cp / 256), c0 = (blk % (Cp / 256)) * 256, c = c0 + threadIdx.x;
    int rs = strip * H, re = min(rs + H, C); bool ok = c < C; int j = c + 1;
    const float *p = u + j;
    float m0 = 0, m1 = 0; if (ok) { m0 = p[(size_t)rs * N]; m1 = p[(size_t)(rs + 1) * N]; }
    for (int ib = rs; ib < re; ib += B) {
      float S[B], Wh[B];
#pragma unroll
      for (int t = 0; t < B; t++) if (ib + t < re) { size_t r = (size_t)(ib + t + 1) * N;
        if (ok) S[t] = p[r + N];
        if (threadIdx.x == 0) Wh[t] = p[r - 1]; else if (threadIdx.x == 255 || c == C - 1) Wh[t] = p[r + 1]; }
      float cen = m1; float mm0 = m0, mm1 = m1;
#pragma unroll
      for (int t = 0; t < B; t++) if (ib + t < re) { sm[t][threadIdx.x + 1] = mm1; if (threadIdx.x == 0) sm[t][0] = Wh[t]; if (threadIdx.x == 255 || c == C - 1) sm[t][threadIdx.x + 2] = Wh[t]; mm0 = mm1; if (ok) mm1 = S[t]; }
      __syncthreads();
#pragma unroll
      for (int t = 0; t < B; t++) if (ib + t < re) {
        if (ok) v[(size_t)(ib + t + 1) * N + j] = 0.2f * ((((m1 + m0) + S[t]) + sm[t][threadIdx.x]) + sm[t][threadIdx.x + 2]);
        m0 = m1; if (ok) m1 = S[t]; }
      __syncthreads();
      (void)cen; (void)mm0;
    }
  }
}
__global__ void k_copy(const float4 *a, float4 *b, size_t n) { for (size_t i = blockIdx.x * 256ull + threadIdx.x; i < n; i += gridDim.x * 256ull) b[i] = a[i]; }
static float ref_at(const float *h, int i, int j) { const float *c = h + (size_t)i * N + j; return 0.2f * ((((c[0] + c[-N]) + c[N]) + c[-1]) + c[1]); }
int main() {
  size_t bytes = (size_t)N * N * 4; float *a, *b, *h = (float *)malloc(bytes), *o = (float *)malloc(bytes);
  for (size_t i = 0; i < (size_t)N * N; i++) h[i] = (float)((i * 2654435761u) % 1000003) / 1000003.0f;
  CK(cudaMalloc(&a, bytes)); CK(cudaMalloc(&b, bytes)); CK(cudaMemcpy(a, h, bytes, cudaMemcpyHostToDevice));
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  const char *names[] = {"copy", "naive", "2d32x8", "march32x4", "march32x8", "march16x4", "march64x8",
                         "smem16x4", "smem32x2", "smem32x4", "smem32x8", "smem64x4", "smem64x8", "smem128x4"};
  for (int kv = 0; kv < 14; kv++) {
    auto launch = [&](float *x, float *y) {
      unsigned g = sms * 32;
      switch (kv) {
      case 0: k_copy<<<g, 256>>>((float4 *)x, (float4 *)y, (size_t)N * N / 4); break;
      case 1: k_naive<<<g, 256>>>(x, y); break;
      case 2: k_2d<<<dim3((N + 31) / 32, (N + 7) / 8), dim3(32, 8)>>>(x, y); break;
      case 3: k_march<32, 4><<<g, 256>>>(x, y); break;
      case 4: k_march<32, 8><<<g, 256>>>(x, y); break;
      case 5: k_march<16, 4><<<g, 256>>>(x, y); break;
      case 6: k_march<64, 8><<<g, 256>>>(x, y); break;
      case 7: k_march_smem<16, 4><<<g, 256>>>(x, y); break;
      case 8: k_march_smem<32, 2><<<g, 256>>>(x, y); break;
      case 9: k_march_smem<32, 4><<<g, 256>>>(x, y); break;
      case 10: k_march_smem<32, 8><<<g, 256>>>(x, y); break;
      case 11: k_march_smem<64, 4><<<g, 256>>>(x, y); break;
      case 12: k_march_smem<64, 8><<<g, 256>>>(x, y); break;
      case 13: k_march_smem<128, 4><<<g, 256>>>(x, y); break;
      }
    };
    CK(cudaMemset(b, 0xff, bytes)); launch(a, b); CK(cudaDeviceSynchronize());
    if (kv > 0) { CK(cudaMemcpy(o, b, bytes, cudaMemcpyDeviceToHost)); long bad = 0;
      for (int i = 1; i < N - 1; i += 7) for (int j = 1; j < N - 1; j++) { float r = ref_at(h, i, j); if (memcmp(&r, &o[(size_t)i * N + j], 4)) bad++; }
      for (int i = 1; i < N - 1; i++) for (int j : {1, 2, 255, 256, 257, N - 2}) { float r = ref_at(h, i, j); if (memcmp(&r, &o[(size_t)i * N + j], 4)) bad++; }
      if (bad) printf("%s: %ld wrong\n", names[kv], bad); }
    float best = 1e9;
    for (int rep = 0; rep < 5; rep++) { cudaEventRecord(e0); for (int it = 0; it < 20; it++) launch(it % 2 ? b : a, it % 2 ? a : b); cudaEventRecord(e1); cudaEventSynchronize(e1);
      float ms; cudaEventElapsedTime(&ms, e0, e1); if (ms < best) best = ms; CK(cudaMemcpy(a, h, bytes, cudaMemcpyHostToDevice)); }
    printf("%-10s %.3f ms/sweep  (%.0f GB/s read+write of the grid)\n", names[kv], best / 20, 2.0 * bytes / (best / 20 * 1e-3) * 1e-9);
  }
  return 0;
}
