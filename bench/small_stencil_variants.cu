// small_stencil_variants.cu — the suite's small stencil (1000^2 float64,
// 50 Jacobi sweeps, the grid resident in L2) as hand-written CUDA, one
// kernel per way of mapping threads to points, each run as nd runs it: 50
// kernels ping-ponging between two buffers, captured into one CUDA Graph
// and replayed. It has no nd in it: it measures what the device can do per
// sweep (kernel time and the gap between graph nodes), with and without
// programmatic dependent launch (PDL: the next sweep's blocks are launched
// while the last one drains, and wait in griddepcontrol.wait; "pdl+": each
// block also signals griddepcontrol.launch_dependents after its wait); "tbT":
// temporal blocking, T sweeps a launch (50 / T launches). Each
// variant's grid after 50 sweeps is compared bit for bit with a float64
// host reference (same order of additions).
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o small_stencil_variants bench/small_stencil_variants.cu
//   ./small_stencil_variants
//
// Prints per variant the median and best of 21 graph replays (cudaEvent),
// in us per 50 sweeps and per sweep, and the median host wall time of
// cudaGraphLaunch + cudaStreamSynchronize.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define N 1000
#define ITERS 50
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__constant__ int c_trigger; // set: each block also lets the next kernel launch right after its wait
__device__ __forceinline__ void wait_prior() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  if (c_trigger) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

__device__ __forceinline__ double point(const double *c) { return 0.2 * ((((c[0] + c[-N]) + c[N]) + c[-1]) + c[1]); }

// nd's kernel today: 1-d grid-stride over the interior, unravelled by div/mod.
__global__ void __launch_bounds__(256) k_linear(const double *u, double *v) {
  wait_prior();
  const unsigned C = N - 2;
  for (unsigned g = blockIdx.x * 256u + threadIdx.x; g < C * C; g += gridDim.x * 256u) {
    unsigned i = g / C + 1, j = g % C + 1;
    v[i * N + j] = point(u + i * N + j);
  }
}
// 2-d blocks BX x BY, one point per thread.
template <int BX, int BY>
__global__ void __launch_bounds__(BX * BY) k_2d(const double *u, double *v) {
  wait_prior();
  int j = blockIdx.x * BX + threadIdx.x + 1, i = blockIdx.y * BY + threadIdx.y + 1;
  if (i < N - 1 && j < N - 1) v[i * N + j] = point(u + i * N + j);
}
// 2-d blocks BX x BY, R rows per thread (rows BY apart), loads first.
template <int BX, int BY, int R>
__global__ void __launch_bounds__(BX * BY) k_2d_rows(const double *u, double *v) {
  wait_prior();
  int j = blockIdx.x * BX + threadIdx.x + 1, i0 = blockIdx.y * BY * R + threadIdx.y + 1;
  if (j >= N - 1) return;
  double r[R];
#pragma unroll
  for (int k = 0; k < R; k++) { int i = i0 + k * BY; if (i < N - 1) r[k] = point(u + i * N + j); }
#pragma unroll
  for (int k = 0; k < R; k++) { int i = i0 + k * BY; if (i < N - 1) v[i * N + j] = r[k]; }
}
// Row-strip march: a thread walks H rows of one column with a register
// window for north/centre/south (west/east loaded), like nd's march kernel
// without shared memory.
template <int H>
__global__ void __launch_bounds__(256) k_march(const double *u, double *v) {
  wait_prior();
  int j = blockIdx.x * 256 + threadIdx.x + 1, rs = blockIdx.y * H + 1, re = min(rs + H, N - 1);
  if (j >= N - 1) return;
  const double *p = u + j;
  double n0 = p[(rs - 1) * N], c0 = p[rs * N];
  for (int i = rs; i < re; i++) {
    double s0 = p[(i + 1) * N];
    v[i * N + j] = 0.2 * ((((c0 + n0) + s0) + p[i * N - 1]) + p[i * N + 1]);
    n0 = c0; c0 = s0;
  }
}

// Temporal blocking: T sweeps per launch. A block loads its BX x BY tile of
// the grid with a halo of T into shared memory, sweeps T - 1 times inside
// shared memory (the valid part shrinking by one each time; points on the
// grid's border keep their values), and the last sweep writes the tile.
// (A version walking the tile in BX x BY steps, fully unrolled, ran 5-25%
// slower than this one with its flat index and divisions.)
template <int BX, int BY, int T>
__global__ void __launch_bounds__(BX * BY) k_tb(const double *u, double *v) {
  constexpr int W = BX + 2 * T, H = BY + 2 * T;
  __shared__ double s[2][H][W];
  wait_prior();
  const int tid = threadIdx.y * BX + threadIdx.x;
  const int i0 = blockIdx.y * BY + 1 - T, j0 = blockIdx.x * BX + 1 - T;
  for (int c = tid; c < H * W; c += BX * BY) {
    int y = c / W, x = c % W, i = i0 + y, j = j0 + x;
    s[0][y][x] = i >= 0 && i < N && j >= 0 && j < N ? u[i * N + j] : 0.0;
  }
  __syncthreads();
#pragma unroll 1
  for (int t = 1; t < T; t++) {
    const int w = W - 2 * t, h = H - 2 * t;
    const double(*a)[W] = s[(t - 1) & 1];
    double(*b)[W] = s[t & 1];
    for (int c = tid; c < h * w; c += BX * BY) {
      int y = t + c / w, x = t + c % w, i = i0 + y, j = j0 + x;
      bool in = i >= 1 && i < N - 1 && j >= 1 && j < N - 1;
      b[y][x] = in ? 0.2 * ((((a[y][x] + a[y - 1][x]) + a[y + 1][x]) + a[y][x - 1]) + a[y][x + 1]) : a[y][x];
    }
    __syncthreads();
  }
  const double(*a)[W] = s[(T - 1) & 1];
  int y = T + threadIdx.y, x = T + threadIdx.x, i = i0 + y, j = j0 + x;
  if (i < N - 1 && j < N - 1)
    v[i * N + j] = 0.2 * ((((a[y][x] + a[y - 1][x]) + a[y + 1][x]) + a[y][x - 1]) + a[y][x + 1]);
}

__global__ void k_empty(const double *, double *) { wait_prior(); }
__global__ void __launch_bounds__(256) k_copy(const double *u, double *v) {
  wait_prior();
  const unsigned n2 = N * N / 2;
  for (unsigned g = blockIdx.x * 256u + threadIdx.x; g < n2; g += gridDim.x * 256u)
    ((double2 *)v)[g] = ((const double2 *)u)[g];
}

struct Variant { const char *name; const void *fn; dim3 grid, block; bool checked; int sweeps = 1; };

static void ref_sweeps(double *g, double *t) {
  memcpy(t, g, sizeof(double) * N * N);
  for (int it = 0; it < ITERS; it++) {
    for (int i = 1; i < N - 1; i++)
      for (int j = 1; j < N - 1; j++) {
        const double *c = g + i * N + j;
        t[i * N + j] = 0.2 * ((((c[0] + c[-N]) + c[N]) + c[-1]) + c[1]);
      }
    memcpy(g, t, sizeof(double) * N * N);
  }
}

int main() {
  int sms;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  size_t bytes = sizeof(double) * N * N;
  double *h = (double *)malloc(bytes), *ref = (double *)malloc(bytes), *tmp = (double *)malloc(bytes),
         *got = (double *)malloc(bytes);
  for (size_t i = 0; i < (size_t)N * N; i++) h[i] = (double)((i * 2654435761u) % 1000003) / 1000003.0;
  memcpy(ref, h, bytes);
  ref_sweeps(ref, tmp);
  double *a, *b;
  CK(cudaMalloc(&a, bytes)); CK(cudaMalloc(&b, bytes));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const unsigned C = N - 2;
  unsigned lin = std::min((C * C + 255) / 256, (unsigned)sms * 32);
  Variant vs[] = {
      {"empty kernel, 1 block", (const void *)k_empty, dim3(1), dim3(32), false},
      {"copy 8 MB, double2", (const void *)k_copy, dim3(std::min((N * N / 2 + 255) / 256, sms * 32)), dim3(256), false},
      {"linear 1-d (nd today)", (const void *)k_linear, dim3(lin), dim3(256), true},
      {"2-d 32x8", (const void *)k_2d<32, 8>, dim3((C + 31) / 32, (C + 7) / 8), dim3(32, 8), true},
      {"2-d 64x4", (const void *)k_2d<64, 4>, dim3((C + 63) / 64, (C + 3) / 4), dim3(64, 4), true},
      {"2-d 128x2", (const void *)k_2d<128, 2>, dim3((C + 127) / 128, (C + 1) / 2), dim3(128, 2), true},
      {"2-d 256x1", (const void *)k_2d<256, 1>, dim3((C + 255) / 256, C), dim3(256, 1), true},
      {"2-d 32x8 x2 rows", (const void *)k_2d_rows<32, 8, 2>, dim3((C + 31) / 32, (C + 15) / 16), dim3(32, 8), true},
      {"2-d 64x4 x2 rows", (const void *)k_2d_rows<64, 4, 2>, dim3((C + 63) / 64, (C + 7) / 8), dim3(64, 4), true},
      {"2-d 128x2 x4 rows", (const void *)k_2d_rows<128, 2, 4>, dim3((C + 127) / 128, (C + 7) / 8), dim3(128, 2), true},
      {"march 8 rows", (const void *)k_march<8>, dim3((C + 255) / 256, (C + 7) / 8), dim3(256), true},
      {"march 4 rows", (const void *)k_march<4>, dim3((C + 255) / 256, (C + 3) / 4), dim3(256), true},
      {"tb2 32x8", (const void *)k_tb<32, 8, 2>, dim3((C + 31) / 32, (C + 7) / 8), dim3(32, 8), true, 2},
      {"tb2 32x16", (const void *)k_tb<32, 16, 2>, dim3((C + 31) / 32, (C + 15) / 16), dim3(32, 16), true, 2},
      {"tb2 64x8", (const void *)k_tb<64, 8, 2>, dim3((C + 63) / 64, (C + 7) / 8), dim3(64, 8), true, 2},
      {"tb5 32x16", (const void *)k_tb<32, 16, 5>, dim3((C + 31) / 32, (C + 15) / 16), dim3(32, 16), true, 5},
      {"tb5 64x16", (const void *)k_tb<64, 16, 5>, dim3((C + 63) / 64, (C + 15) / 16), dim3(64, 16), true, 5},
      {"tb10 64x16", (const void *)k_tb<64, 16, 10>, dim3((C + 63) / 64, (C + 15) / 16), dim3(64, 16), true, 10},
  };
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0); cudaEventCreate(&e1);
  printf("small stencil %dx%d float64, %d sweeps per graph, %d SMs\n", N, N, ITERS, sms);
  for (int pdl = 0; pdl < 3; pdl++)
    for (size_t v = 0; v < sizeof vs / sizeof vs[0]; v++) {
      int trigger = pdl == 2;
      CK(cudaMemcpyToSymbol(c_trigger, &trigger, sizeof trigger));
      cudaGraph_t graph;
      CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
      const int launches = ITERS / vs[v].sweeps;
      for (int it = 0; it < launches; it++) {
        const double *src = it % 2 ? b : a;
        double *dst = it % 2 ? a : b;
        void *args[] = {(void *)&src, (void *)&dst};
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = vs[v].grid;
        cfg.blockDim = vs[v].block;
        cfg.stream = s;
        cudaLaunchAttribute attr;
        attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr.val.programmaticStreamSerializationAllowed = 1;
        cfg.attrs = &attr;
        cfg.numAttrs = pdl ? 1 : 0;
        CK(cudaLaunchKernelExC(&cfg, vs[v].fn, args));
      }
      CK(cudaStreamEndCapture(s, &graph));
      cudaGraphExec_t exec;
      CK(cudaGraphInstantiate(&exec, graph, 0));
      // Correctness: start from h in both buffers (the border fixed), one replay.
      // On s itself: a cudaMemcpy from pageable memory may return before its
      // DMA lands, and s (non-blocking) does not wait for the legacy stream.
      CK(cudaMemcpyAsync(a, h, bytes, cudaMemcpyHostToDevice, s));
      CK(cudaMemcpyAsync(b, h, bytes, cudaMemcpyHostToDevice, s));
      CK(cudaGraphLaunch(exec, s));
      CK(cudaStreamSynchronize(s));
      long bad = 0;
      if (vs[v].checked) {
        CK(cudaMemcpy(got, launches % 2 ? b : a, bytes, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < (size_t)N * N; i++) bad += memcmp(&got[i], &ref[i], 8) != 0;
      }
      double dev[21], host[21];
      for (int r = 0; r < 21; r++) {
        auto t0 = std::chrono::steady_clock::now();
        cudaEventRecord(e0, s);
        CK(cudaGraphLaunch(exec, s));
        cudaEventRecord(e1, s);
        CK(cudaStreamSynchronize(s));
        auto t1 = std::chrono::steady_clock::now();
        float ms;
        cudaEventElapsedTime(&ms, e0, e1);
        dev[r] = ms * 1e3;
        host[r] = std::chrono::duration<double, std::micro>(t1 - t0).count();
      }
      std::sort(dev, dev + 21);
      std::sort(host, host + 21);
      printf("%-4s %-24s device median %6.1f us (best %6.1f) = %5.2f us/sweep; host launch+sync median %6.1f us%s\n",
             pdl == 2 ? "pdl+" : pdl ? "pdl" : "", vs[v].name, dev[10], dev[0], dev[10] / ITERS, host[10],
             !vs[v].checked ? "" : bad ? "  WRONG" : "  (exact)");
      if (bad) printf("     %ld of %d points differ from the float64 reference\n", bad, N * N);
      cudaGraphExecDestroy(exec);
      cudaGraphDestroy(graph);
    }
  return 0;
}
