// chol_pack_variants.cu — the pass nd runs before cuSOLVER's potrf in
// nd_linalg_cholesky (src/backends/cuda/lib_cholesky.c, chol_source.c),
// hand-written in several shapes and timed beside a device copy and beside
// potrf itself, lower and upper, so that the pack can take the shape that
// reaches the floor. No nd in it.
//
// nd's pack (lower potrf on column-major C) writes C[r][c] = A[c][r] for
// r <= c (A's lower triangle transposed into C's upper one, row-major) and
// zeros below C's diagonal: reads half of A, writes all of C. An upper
// potrf would instead take A's lower triangle where it is (C[r][c] =
// A[r][c] for r >= c, zeros above): no transpose. Whether that pays
// depends on potrf upper's time against lower's, printed here too.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o chol_pack_variants bench/chol_pack_variants.cu -lcusolver
//   ./chol_pack_variants [n]          (default 8192)
//
// Prints per variant the median and best of 15 timed launches (cudaEvent)
// in us, the bytes it must move (half of A read, all of C written) and the
// ratio to a device-to-device cudaMemcpy of those bytes. Every transposing
// variant is compared bit for bit with the first (nd's), and nd's with the
// host at sampled rows; the straight copy against the host likewise.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <vector>

#define CK(x)                                                                                       \
  do {                                                                                              \
    cudaError_t e_ = (x);                                                                           \
    if (e_ != cudaSuccess) {                                                                        \
      printf("%s: %s\n", #x, cudaGetErrorString(e_));                                               \
      exit(1);                                                                                      \
    }                                                                                               \
  } while (0)
#define CS(x)                                                                                       \
  do {                                                                                              \
    cusolverStatus_t s_ = (x);                                                                      \
    if (s_ != CUSOLVER_STATUS_SUCCESS) {                                                            \
      printf("%s: status %d\n", #x, (int)s_);                                                       \
      exit(1);                                                                                      \
    }                                                                                               \
  } while (0)

// nd's kernel as chol_source.c has it (NDK_GROUP 8, TD 32, TR 8, batch 1,
// no status words).
constexpr int TD = 32, TR = 8, GROUP = 8;
__device__ __forceinline__ int pair_of(int n, int *ti, int *tj) {
  const int g2 = GROUP * GROUP;
  long long k = blockIdx.x / g2;
  int r = (int)(blockIdx.x % g2);
  long long i = (long long)((sqrt(8.0 * (double)k + 1.0) - 1.0) * 0.5);
  while ((i + 1) * (i + 2) / 2 <= k) i++;
  while (i * (i + 1) / 2 > k) i--;
  *ti = (int)i * GROUP + r / GROUP;
  *tj = (int)(k - i * (i + 1) / 2) * GROUP + r % GROUP;
  return *ti < (n + TD - 1) / TD && *tj <= *ti;
}
static unsigned nd_blocks(int n) {
  long long t = (n + TD - 1) / TD, g = (t + GROUP - 1) / GROUP;
  return (unsigned)(g * (g + 1) / 2 * GROUP * GROUP);
}

template <class T> __global__ void __launch_bounds__(TD * TR) k_nd(const T *a, T *c, int n) {
  __shared__ T tile[TD][TD + 1];
  int ti, tj;
  if (!pair_of(n, &ti, &tj)) return;
  const int x = threadIdx.x;
  const int col = tj * TD + x;
  for (int y = threadIdx.y; y < TD; y += TR) {
    const int row = ti * TD + y;
    if (row < n && col < n && row >= col) {
      const long long at = (long long)row * n + col;
      tile[y][x] = a[at];
      if (row > col) c[at] = T();
    }
  }
  __syncthreads();
  const int c2 = ti * TD + x;
  for (int y = threadIdx.y; y < TD; y += TR) {
    const int r2 = tj * TD + y;
    if (r2 < n && c2 < n && c2 >= r2) c[(long long)r2 * n + c2] = tile[x][y];
  }
}

// nd's kernel exactly as chol_source.c has it: the batch along grid y,
// block 0 zeroing the status words, zeros a run-time flag.
template <class T> __global__ void __launch_bounds__(TD * TR)
k_nd_full(const T *a, T *c, int n, long long batch, int *info, long long ninfo, int zeros) {
  __shared__ T tile[TD][TD + 1];
  if (blockIdx.x == 0)
    for (long long i = (long long)blockIdx.y * (TD * TR) + threadIdx.y * TD + threadIdx.x; i < ninfo;
         i += (long long)gridDim.y * (TD * TR))
      info[i] = 0;
  int ti, tj;
  if (!pair_of(n, &ti, &tj)) return;
  const int x = threadIdx.x;
  const long long nn = (long long)n * n;
  const T zero = T();
  for (long long b = blockIdx.y; b < batch; b += gridDim.y) {
    const T *am = a + b * nn;
    T *cm = c + b * nn;
    const int col = tj * TD + x;
    for (int y = threadIdx.y; y < TD; y += TR) {
      const int row = ti * TD + y;
      if (row < n && col < n && row >= col) {
        const long long at = (long long)row * n + col;
        tile[y][x] = am[at];
        if (zeros && row > col) cm[at] = zero;
      }
    }
    __syncthreads();
    const int c2 = ti * TD + x;
    for (int y = threadIdx.y; y < TD; y += TR) {
      const int r2 = tj * TD + y;
      if (r2 < n && c2 < n && c2 >= r2) cm[(long long)r2 * n + c2] = tile[x][y];
    }
    __syncthreads();
  }
}

// The same tiles, but a block walks PER tile pairs (fewer, longer blocks:
// the pair search and the block start paid once per PER tiles).
template <class T, int PER> __global__ void __launch_bounds__(TD * TR) k_nd_multi(const T *a, T *c, int n, int pairs) {
  __shared__ T tile[TD][TD + 1];
  const int x = threadIdx.x;
  for (int p = blockIdx.x * PER; p < min(pairs, (int)(blockIdx.x + 1) * PER); p++) {
    // pair p: row tile i, column tile j <= i, numbered i (i + 1) / 2 + j
    int i = (int)((sqrt(8.0 * (double)p + 1.0) - 1.0) * 0.5);
    while ((long long)(i + 1) * (i + 2) / 2 <= p) i++;
    while ((long long)i * (i + 1) / 2 > p) i--;
    const int ti = i, tj = p - i * (i + 1) / 2;
    const int col = tj * TD + x;
    for (int y = threadIdx.y; y < TD; y += TR) {
      const int row = ti * TD + y;
      if (row < n && col < n && row >= col) {
        const long long at = (long long)row * n + col;
        tile[y][x] = a[at];
        if (row > col) c[at] = T();
      }
    }
    __syncthreads();
    const int c2 = ti * TD + x;
    for (int y = threadIdx.y; y < TD; y += TR) {
      const int r2 = tj * TD + y;
      if (r2 < n && c2 < n && c2 >= r2) c[(long long)r2 * n + c2] = tile[x][y];
    }
    __syncthreads();
  }
}

// Tiles of 64 x 64 (256 threads as 64 x 4, 16 rows each): a block moves
// four times the data per pair search and barrier.
template <class T> __global__ void __launch_bounds__(256) k_t64(const T *a, T *c, int n) {
  __shared__ T tile[64][65];
  const long long p = blockIdx.x;
  int i = (int)((sqrt(8.0 * (double)p + 1.0) - 1.0) * 0.5);
  while ((long long)(i + 1) * (i + 2) / 2 <= p) i++;
  while ((long long)i * (i + 1) / 2 > p) i--;
  const int ti = i, tj = (int)(p - (long long)i * (i + 1) / 2);
  const int x = threadIdx.x;
  const int col = tj * 64 + x;
#pragma unroll 4
  for (int y = threadIdx.y; y < 64; y += 4) {
    const int row = ti * 64 + y;
    if (row < n && col < n && row >= col) {
      const long long at = (long long)row * n + col;
      tile[y][x] = a[at];
      if (row > col) c[at] = T();
    }
  }
  __syncthreads();
  const int c2 = ti * 64 + x;
#pragma unroll 4
  for (int y = threadIdx.y; y < 64; y += 4) {
    const int r2 = tj * 64 + y;
    if (r2 < n && c2 < n && c2 >= r2) c[(long long)r2 * n + c2] = tile[x][y];
  }
}

// What an upper potrf's pack would be: C[r][c] = A[r][c] for r >= c, 0
// above; 16 bytes a thread, a grid striding over C (n a multiple of
// 16 / sizeof(T) here), reading A only where the value is kept.
template <class T> __global__ void __launch_bounds__(256) k_straight(const T *a, T *c, int n) {
  constexpr int V = 16 / sizeof(T);
  const long long words = (long long)n * n / V;
  for (long long w = blockIdx.x * 256ll + threadIdx.x; w < words; w += (long long)gridDim.x * 256) {
    const long long e = w * V;
    const int row = (int)(e / n), col0 = (int)(e % n);
    union { uint4 v; T t[V]; } o;
    if (col0 + V - 1 <= row) o.v = *(const uint4 *)(a + e);
    else if (col0 > row) o.v = make_uint4(0, 0, 0, 0);
    else {
      o.v = *(const uint4 *)(a + e);
      for (int k = 0; k < V; k++)
        if (col0 + k > row) o.t[k] = T();
    }
    *(uint4 *)(c + e) = o.v;
  }
}

template <class T> __global__ void k_fill(T *a, int n) {
  long long nn = (long long)n * n;
  for (long long e = blockIdx.x * 256ll + threadIdx.x; e < nn; e += (long long)gridDim.x * 256) {
    int r = (int)(e / n), cc = (int)(e % n);
    unsigned h = (unsigned)(r < cc ? r * 2654435761u + cc : cc * 2654435761u + r) * 2246822519u;
    h ^= h >> 15;
    T v = (T)((h % 2001u) / 1000.0 - 1.0) * (T)0.001;
    a[e] = r == cc ? (T)n * (T)0.01 + (T)1 : v; // symmetric, diagonally dominant
  }
}

template <class T> __global__ void k_diff(const T *x, const T *y, long long nn, unsigned long long *bad) {
  for (long long e = blockIdx.x * 256ll + threadIdx.x; e < nn; e += (long long)gridDim.x * 256)
    if (sizeof(T) == 8 ? __double_as_longlong((double)x[e]) != __double_as_longlong((double)y[e])
                       : __float_as_int((float)x[e]) != __float_as_int((float)y[e]))
      atomicAdd(bad, 1ull);
}

static float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class T> static void run(const char *tname, int n, int sms, cusolverDnHandle_t h) {
  const long long nn = (long long)n * n;
  const size_t bytes = sizeof(T) * nn;
  T *a, *c, *ref;
  unsigned long long *bad;
  CK(cudaMalloc(&a, bytes)); CK(cudaMalloc(&c, bytes)); CK(cudaMalloc(&ref, bytes));
  CK(cudaMalloc(&bad, sizeof *bad));
  k_fill<T><<<sms * 8, 256>>>(a, n);
  CK(cudaDeviceSynchronize());
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0); cudaEventCreate(&e1);
  auto timed = [&](auto launch) {
    std::vector<float> t;
    for (int r = 0; r < 17; r++) {
      cudaEventRecord(e0);
      launch();
      cudaEventRecord(e1);
      CK(cudaEventSynchronize(e1));
      float ms;
      cudaEventElapsedTime(&ms, e0, e1);
      if (r >= 2) t.push_back(ms * 1000);
    }
    CK(cudaGetLastError());
    return t;
  };
  // The pack's bytes: half of A read (the triangle and diagonal), all of C written.
  const double moved = (double)sizeof(T) * ((double)nn / 2 + n / 2.0 + nn);
  auto floor_t = timed([&] { cudaMemcpyAsync(ref, a, bytes, cudaMemcpyDeviceToDevice); });
  const double copy_bw = 2.0 * bytes / (median(floor_t) * 1e-6); // read + write
  const double floor_us = moved / copy_bw * 1e6;
  printf("%s n=%d: copy of A %.1f us (%.0f GB/s read + write); the pack's %.0f MB at that rate: %.1f us\n", tname, n,
         median(floor_t), copy_bw / 1e9, moved / 1e6, floor_us);
  auto report = [&](const char *name, std::vector<float> t, const T *check) {
    unsigned long long nbad = 0;
    if (check) {
      CK(cudaMemset(bad, 0, sizeof *bad));
      k_diff<T><<<sms * 8, 256>>>(c, check, nn, bad);
      CK(cudaMemcpy(&nbad, bad, sizeof nbad, cudaMemcpyDeviceToHost));
    }
    printf("  %-34s median %8.1f us  best %8.1f us  %5.2fx the floor  %s\n", name, median(t),
           *std::min_element(t.begin(), t.end()), median(t) / floor_us,
           check ? (nbad ? "DIFFERS" : "same bits as nd's") : "");
  };
  // nd's first: the reference for the transposing variants.
  CK(cudaMemset(c, 0xff, bytes));
  auto t_nd = timed([&] { k_nd<T><<<nd_blocks(n), dim3(TD, TR)>>>(a, c, n); });
  CK(cudaMemcpy(ref, c, bytes, cudaMemcpyDeviceToDevice));
  std::vector<T> ha(nn), hc(nn);  // A and nd's pack on the host: the pack checked at 64 rows
  CK(cudaMemcpy(ha.data(), a, bytes, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hc.data(), ref, bytes, cudaMemcpyDeviceToHost));
  long long wrong = 0;
  for (int s = 0; s < 64; s++) {
    const int r = (int)((s * 2654435761u) % (unsigned)n);
    for (int cc = 0; cc < n; cc++) {
      const T want = r <= cc ? ha[(long long)cc * n + r] : T();
      wrong += memcmp(&want, &hc[(long long)r * n + cc], sizeof(T)) != 0;
    }
  }
  printf("  nd's pack against the host, 64 rows: %s\n", wrong ? "WRONG" : "ok");
  report("nd (32x32 tiles, groups of 8)", t_nd, nullptr);
  CK(cudaMemset(c, 0xff, bytes));
  int *info0;
  CK(cudaMalloc(&info0, sizeof(int)));
  auto t_full = timed([&] { k_nd_full<T><<<dim3(nd_blocks(n), 1), dim3(TD, TR)>>>(a, c, n, 1, info0, 1, 1); });
  report("nd's exact kernel (batch loop, info)", t_full, ref);
  {  // the same into memory from a stream-ordered pool, as nd allocates C
    cudaMemPool_t pool;
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    CK(cudaMemPoolCreate(&pool, &props));
    T *pc;
    CK(cudaMallocFromPoolAsync((void **)&pc, bytes, pool, 0));
    CK(cudaMemsetAsync(pc, 0xff, bytes, 0));
    auto t_pool = timed([&] { k_nd_full<T><<<dim3(nd_blocks(n), 1), dim3(TD, TR)>>>(a, pc, n, 1, info0, 1, 1); });
    CK(cudaMemcpy(c, pc, bytes, cudaMemcpyDeviceToDevice));
    report("nd's exact kernel, C from a pool", t_pool, ref);
    CK(cudaFreeAsync(pc, 0));
    CK(cudaDeviceSynchronize());
    CK(cudaMemPoolDestroy(pool));
  }
  CK(cudaFree(info0));
  CK(cudaMemset(c, 0xff, bytes));
  const int pairs = ((n + TD - 1) / TD) * ((n + TD - 1) / TD + 1) / 2;
  auto t_m2 = timed([&] { k_nd_multi<T, 2><<<(pairs + 1) / 2, dim3(TD, TR)>>>(a, c, n, pairs); });
  report("32x32 tiles, 2 pairs a block", t_m2, ref);
  CK(cudaMemset(c, 0xff, bytes));
  auto t_m8 = timed([&] { k_nd_multi<T, 8><<<(pairs + 7) / 8, dim3(TD, TR)>>>(a, c, n, pairs); });
  report("32x32 tiles, 8 pairs a block", t_m8, ref);
  CK(cudaMemset(c, 0xff, bytes));
  const int p64 = ((n + 63) / 64) * ((n + 63) / 64 + 1) / 2;
  auto t_64 = timed([&] { k_t64<T><<<p64, dim3(64, 4)>>>(a, c, n); });
  report("64x64 tiles, 256 threads", t_64, ref);
  CK(cudaMemset(c, 0xff, bytes));
  auto t_st = timed([&] { k_straight<T><<<sms * 16, 256>>>(a, c, n); });
  report("straight (for potrf upper)", t_st, nullptr);
  // potrf lower on nd's pack, upper on the straight one: device time of
  // potrf alone (the matrix restored by a copy outside the events).
  cudaDataType dt = sizeof(T) == 8 ? CUDA_R_64F : CUDA_R_32F;
  cusolverDnParams_t params;
  CS(cusolverDnCreateParams(&params));
  int *info;
  CK(cudaMalloc(&info, sizeof(int)));
  for (int up = 0; up < 2; up++) {
    cublasFillMode_t fill = up ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
    size_t dbytes = 0, hbytes = 0;
    CS(cusolverDnXpotrf_bufferSize(h, params, fill, (int64_t)n, dt, c, (int64_t)n, dt, &dbytes, &hbytes));
    void *dwork, *hwork = malloc(hbytes ? hbytes : 1);
    CK(cudaMalloc(&dwork, dbytes ? dbytes : 1));
    std::vector<float> t;
    for (int r = 0; r < 9; r++) {
      if (up) k_straight<T><<<sms * 16, 256>>>(a, c, n);
      else k_nd<T><<<nd_blocks(n), dim3(TD, TR)>>>(a, c, n);
      cudaEventRecord(e0);
      CS(cusolverDnXpotrf(h, params, fill, (int64_t)n, dt, c, (int64_t)n, dt, dwork, dbytes, hwork, hbytes, info));
      cudaEventRecord(e1);
      CK(cudaEventSynchronize(e1));
      float ms;
      cudaEventElapsedTime(&ms, e0, e1);
      if (r >= 2) t.push_back(ms * 1000);
    }
    int hinfo = -1;
    CK(cudaMemcpy(&hinfo, info, sizeof hinfo, cudaMemcpyDeviceToHost));
    if (!up) CK(cudaMemcpy(ref, c, bytes, cudaMemcpyDeviceToDevice));
    else {  // upper's factor read row-major against lower's read column-major, 64 rows
      std::vector<T> hl(nn);
      CK(cudaMemcpy(hl.data(), ref, bytes, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(hc.data(), c, bytes, cudaMemcpyDeviceToHost));
      double maxd = 0;
      for (int s = 0; s < 64; s++) {
        const int r = (int)((s * 2654435761u) % (unsigned)n);
        for (int cc = 0; cc <= r; cc++)
          maxd = std::max(maxd, std::fabs((double)hl[(long long)cc * n + r] - (double)hc[(long long)r * n + cc]));
      }
      printf("  L from potrf upper (row-major) against lower (column-major), 64 rows: max |diff| %.3g\n", maxd);
    }
    printf("  potrf %-5s  median %8.1f us  best %8.1f us  info %d\n", up ? "upper" : "lower", median(t),
           *std::min_element(t.begin(), t.end()), hinfo);
    CK(cudaFree(dwork));
    free(hwork);
  }
  CK(cudaFree(info));
  cusolverDnDestroyParams(params);
  CK(cudaFree(a)); CK(cudaFree(c)); CK(cudaFree(ref)); CK(cudaFree(bad));
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 8192;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  cusolverDnHandle_t h;
  CS(cusolverDnCreate(&h));
  printf("chol_pack_variants: %s, %d SMs, median of 15 (potrf: of 7)\n", prop.name, prop.multiProcessorCount);
  run<double>("float64", n, prop.multiProcessorCount, h);
  run<float>("float32", n, prop.multiProcessorCount, h);
  cusolverDnDestroy(h);
  return 0;
}
