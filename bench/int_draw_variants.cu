// int_draw_variants.cu — what an unbiased 32-bit integer draw costs next to
// a uniform float draw, when both are summed where they are drawn (2^28
// draws, Philox4x32-10 from cuRAND, one word per element, round keys
// precomputed as nd's kernels do). It has no nd in it: each variant is the
// same grid-stride kernel with a different per-word transform, to find
// where nd's integers_sum time goes and what the floor is.
//   V0  uniform float32, float accumulation (the uniform_sum kernel's work)
//   V1  Lemire with a test and out-of-line redraw per element (nd before)
//   V2  V1 as one 64-bit multiply with the low bound as addend
//   V3  V2 without the offset, unsigned accumulation (offset folded)
//   V4  V1 accumulating in int32 (wrong in general: a cost probe only)
//   V5  the word itself, no multiply (the floor of the integer sum)
//   V6  the high multiply alone, no rejection test (biased: a cost probe;
//       the floor of any multiply-shift draw)
//   V7  one test per Philox call (OR of the four), redraws out of line
//   V8  V7 with the minimum of the four low words
//   V9  V1 with the redraw inlined
//   V10 V8 as nd's code generator now emits it (per-element cold calls)
//   V11 V10 as one 64-bit multiply with the low bound as addend
//   V14 the pair form as nd's code generator now emits it for ranges
//       r <= 2^16 that reject little (common/philox.h): two elements from
//       each word (the base-r digits of Lemire's draw in [0, r^2), two
//       multiply pairs), eight a Philox call, one test of the four low
//       parts' minimum against t = 2^32 mod r^2 (a kernel argument, as nd
//       passes it), redraws out of line per pair (V12 and V13 were a scratch
//       step, not kept: bench/results/2026-11-26-h100-int-draw-variants.txt)
//
//   nvcc -O3 -arch=sm_90 -o int_draw_variants bench/int_draw_variants.cu
//   ./int_draw_variants
//
// Prints the median of 17 runs (cudaEvent) per variant for three grid
// sizes, and the ratio to V0. The sums themselves are not checked (V4 and
// V6 are wrong on purpose); nd's own tests check nd's draws.
#include <curand_philox4x32_x.h>
#include <cstdio>
#include <vector>
#include <algorithm>
struct Keys { unsigned long long w[10]; };
__device__ __forceinline__ uint4 philox_k(const Keys &K, unsigned long long idx, unsigned long long stream) {
  uint4 c = make_uint4((unsigned)idx, (unsigned)(idx >> 32), (unsigned)stream, (unsigned)(stream >> 32));
#pragma unroll
  for (int r = 0; r < 10; r++) { unsigned long long k = K.w[r]; c = _philox4x32round(c, make_uint2((unsigned)k, (unsigned)(k >> 32))); }
  return c;
}
__device__ __noinline__ unsigned redraw32(unsigned lo, unsigned hi, unsigned r32, unsigned long long seed, unsigned long long stream, unsigned long long i) {
  const unsigned t = (0u - r32) % r32;
  for (unsigned a = 1; lo < t; a++) {
    uint4 q = curand_Philox4x32_10(make_uint4((unsigned)i, (unsigned)(i>>32), (unsigned)stream, (unsigned)((stream + ((unsigned long long)a<<48))>>32)), make_uint2((unsigned)seed,(unsigned)(seed>>32)));
    lo = q.x * r32; hi = __umulhi(q.x, r32);
  }
  return hi;
}
__device__ __noinline__ unsigned long long redraw32w(unsigned long long m, unsigned r32, unsigned off, unsigned long long seed, unsigned long long stream, unsigned long long i) {
  const unsigned t = (0u - r32) % r32;
  for (unsigned a = 1; (unsigned)m < t; a++) {
    uint4 q = curand_Philox4x32_10(make_uint4((unsigned)i, (unsigned)(i>>32), (unsigned)stream, (unsigned)((stream + ((unsigned long long)a<<48))>>32)), make_uint2((unsigned)seed,(unsigned)(seed>>32)));
    m = (unsigned long long)q.x * r32 + ((unsigned long long)off << 32);
  }
  return m;
}
template <int V> struct Acc { typedef long long T; };
template <> struct Acc<0> { typedef float T; };
template <> struct Acc<4> { typedef int T; };
template <int V>
__device__ __forceinline__ void one(typename Acc<V>::T &acc, unsigned x, unsigned r, int lo, unsigned long long seed, unsigned long long stream, unsigned long long i) {
  if (V == 0) acc += __fmul_rn((float)(x >> 8), 5.9604644775390625e-8f);
  else if (V == 1 || V == 4) { unsigned l = x * r, h = __umulhi(x, r); unsigned c = l < r ? redraw32(l, h, r, seed, stream, i) : h; acc += (int)(c + (unsigned)lo); }
  else if (V == 2) { unsigned long long m = (unsigned long long)x * r + ((unsigned long long)(unsigned)lo << 32); if ((unsigned)m < r) m = redraw32w(m, r, (unsigned)lo, seed, stream, i); acc += (int)(unsigned)(m >> 32); }
  else if (V == 3) { unsigned long long m = (unsigned long long)x * r; if ((unsigned)m < r) m = redraw32w(m, r, 0, seed, stream, i); acc += (unsigned)(m >> 32); }
  else if (V == 5) { acc += (int)x; }
  else if (V == 9) { unsigned l = x * r, h = __umulhi(x, r); if (l < r) { const unsigned t = (0u - r) % r; for (unsigned a = 1; l < t; a++) { uint4 q = curand_Philox4x32_10(make_uint4((unsigned)i, (unsigned)(i>>32), (unsigned)stream, (unsigned)((stream + ((unsigned long long)a<<48))>>32)), make_uint2((unsigned)seed,(unsigned)(seed>>32))); l = q.x * r; h = __umulhi(q.x, r);} } acc += (int)(h + (unsigned)lo); }
  else if (V == 6) { unsigned h = __umulhi(x, r); acc += (int)(h + (unsigned)lo); }
}
__device__ __noinline__ uint4 redraw4(uint4 c, uint4 l, unsigned r, unsigned long long seed, unsigned long long stream, unsigned long long i0) {
  if (l.x < r) c.x = redraw32(l.x, c.x, r, seed, stream, i0);
  if (l.y < r) c.y = redraw32(l.y, c.y, r, seed, stream, i0 + 1);
  if (l.z < r) c.z = redraw32(l.z, c.z, r, seed, stream, i0 + 2);
  if (l.w < r) c.w = redraw32(l.w, c.w, r, seed, stream, i0 + 3);
  return c;
}
template <int V>
__device__ __forceinline__ void four(typename Acc<V>::T &acc, uint4 q, unsigned r, int lo, unsigned long long seed, unsigned long long stream, unsigned long long i) {
  unsigned x[4] = {q.x, q.y, q.z, q.w}, l[4], c[4];
#pragma unroll
  for (int k = 0; k < 4; k++) { l[k] = x[k] * r; c[k] = __umulhi(x[k], r); }
  bool any = V == 7 ? ((l[0] < r) | (l[1] < r) | (l[2] < r) | (l[3] < r)) : (min(min(l[0], l[1]), min(l[2], l[3])) < r);
  if (__builtin_expect(any, 0)) { uint4 cc = redraw4(make_uint4(c[0], c[1], c[2], c[3]), make_uint4(l[0], l[1], l[2], l[3]), r, seed, stream, i); c[0] = cc.x; c[1] = cc.y; c[2] = cc.z; c[3] = cc.w; }
#pragma unroll
  for (int k = 0; k < 4; k++) acc += (int)(c[k] + (unsigned)lo);
}
template <int V>
__device__ __forceinline__ void fourb(typename Acc<V>::T &acc, uint4 q, unsigned r, int lo, unsigned long long seed, unsigned long long stream, unsigned long long i) {
  unsigned x[4] = {q.x, q.y, q.z, q.w}, l[4], c[4];
#pragma unroll
  for (int k = 0; k < 4; k++) {
    if (V == 10) { l[k] = x[k] * r; c[k] = __umulhi(x[k], r) + (unsigned)lo; }
    else { unsigned long long m = (unsigned long long)x[k] * r + ((unsigned long long)(unsigned)lo << 32); l[k] = (unsigned)m; c[k] = (unsigned)(m >> 32); }
  }
  if (__builtin_expect(min(min(l[0], l[1]), min(l[2], l[3])) < r, 0)) {
#pragma unroll
    for (int k = 0; k < 4; k++) if (l[k] < r) c[k] = redraw32(l[k], c[k] - (unsigned)lo, r, seed, stream, i + k) + (unsigned)lo;
  }
#pragma unroll
  for (int k = 0; k < 4; k++) acc += (int)c[k];
}
__device__ __noinline__ unsigned pair_redraw(unsigned r, unsigned t, unsigned long long seed, unsigned long long stream, unsigned long long p) {
  for (unsigned a = 1;; a++) {
    const unsigned y = curand_Philox4x32_10(make_uint4((unsigned)p, (unsigned)(p>>32), (unsigned)stream, (unsigned)((stream + ((unsigned long long)a<<48))>>32)), make_uint2((unsigned)seed,(unsigned)(seed>>32))).x, m = y * r;
    if (m * r >= t) return __umulhi(y, r) << 16 | __umulhi(m, r);
  }
}
template <class T>
__device__ __forceinline__ void pairs(T &acc, uint4 q, unsigned r, unsigned t, int lo, unsigned long long seed, unsigned long long stream, unsigned long long p0) {
  unsigned x[4] = {q.x, q.y, q.z, q.w}, a[4], b[4], l[4];
#pragma unroll
  for (int k = 0; k < 4; k++) { a[k] = __umulhi(x[k], r); const unsigned m = x[k] * r; b[k] = __umulhi(m, r); l[k] = m * r; }
  if (__builtin_expect(min(min(l[0], l[1]), min(l[2], l[3])) < t, 0)) {
#pragma unroll
    for (int k = 0; k < 4; k++) if (l[k] < t) { const unsigned pv = pair_redraw(r, t, seed, stream, p0 + k); a[k] = pv >> 16; b[k] = pv & 0xffffu; }
  }
#pragma unroll
  for (int k = 0; k < 4; k++) { acc += (int)((unsigned short)a[k] + (unsigned)lo); acc += (int)((unsigned short)b[k] + (unsigned)lo); }
}
template <int V>
__global__ void __launch_bounds__(256) kern(unsigned long long n, Keys K, unsigned long long seed, unsigned long long stream, unsigned r, int lo, unsigned long long *out) {
  typedef typename Acc<V>::T T;
  T acc = 0;
  unsigned long long calls = n / (V == 14 ? 8 : 4), nthreads = (unsigned long long)gridDim.x * blockDim.x;
  const unsigned t = (unsigned)((1ull << 32) % ((unsigned long long)r * r)); /* nd: a kernel argument */
  for (unsigned long long c = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; c < calls; c += nthreads) {
    uint4 q = philox_k(K, c, stream);
    if (V == 14) { pairs(acc, q, r, t, lo, seed, stream, 4*c); continue; }
    if (V == 10 || V == 11) { fourb<V>(acc, q, r, lo, seed, stream, 4*c); continue; }
    if (V == 7 || V == 8) { four<V>(acc, q, r, lo, seed, stream, 4*c); continue; }
    one<V>(acc, q.x, r, lo, seed, stream, 4*c); one<V>(acc, q.y, r, lo, seed, stream, 4*c+1);
    one<V>(acc, q.z, r, lo, seed, stream, 4*c+2); one<V>(acc, q.w, r, lo, seed, stream, 4*c+3);
  }
  double d = (double)acc;
  for (int o = 16; o; o >>= 1) d += __shfl_down_sync(~0u, d, o);
  if ((threadIdx.x & 31) == 0) atomicAdd((double *)out, d);
}
template <int V> float timeit(unsigned long long n, int blocks, unsigned long long *out) {
  Keys K; for (int i = 0; i < 10; i++) K.w[i] = 0x9E3779B97F4A7C15ull * (i + 1);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> ts;
  for (int rep = 0; rep < 17; rep++) {
    cudaEventRecord(a);
    kern<V><<<blocks, 256>>>(n, K, 123, 0, 2001u, -1000, out);
    cudaEventRecord(b); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b); ts.push_back(ms);
  }
  std::sort(ts.begin(), ts.end()); return ts[ts.size() / 2];
}
int main() {
  unsigned long long n = 1ull << 28, *out; cudaMalloc(&out, 8);
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const char *names[] = {"uniform f32 acc", "int current (mul+umulhi, +lo, i64 acc)", "int IMAD.WIDE with lo addend, i64 acc", "int IMAD.WIDE no offset, u64 acc (offset folded)", "int current, i32 acc (invalid, cost probe)", "no Lemire, i64 acc (floor)", "umulhi only, no rejection (biased probe)", "combined check per call (OR)", "combined check per call (min)", "inline redraw", "min check, per-element cold calls", "min check, IMAD.WIDE + lo addend", "", "", "pair form: 2 a word, 8 a call (nd now)"};
  for (int bm = 4; bm <= 16; bm *= 2) {
    int blocks = sms * bm;
    float t[15] = {timeit<0>(n, blocks, out), timeit<1>(n, blocks, out), timeit<2>(n, blocks, out), timeit<3>(n, blocks, out), timeit<4>(n, blocks, out), timeit<5>(n, blocks, out), timeit<6>(n, blocks, out), timeit<7>(n, blocks, out), timeit<8>(n, blocks, out), timeit<9>(n, blocks, out), timeit<10>(n, blocks, out), timeit<11>(n, blocks, out), 0, 0, timeit<14>(n, blocks, out)};
    for (int v = 0; v < 15; v++) if (v != 12 && v != 13) printf("blocks=%d  V%d %-48s %.4f ms  (%.3fx uniform)\n", blocks, v, names[v], t[v], t[v] / t[0]);
  }
  printf("%s\n", cudaGetErrorString(cudaGetLastError()));
}
