// fft_split_variants.cu — fft(x * w) of 2^26 complex64 (w float32) with the
// multiply folded into the transform's first radix-R decimation-in-frequency
// stage, done by a kernel of this program, so that cuFFT is left with R
// transforms of N/R and no separate multiply pass; timed against the
// multiply kernel + cuFFT's 2^26 plan (what nd and PyTorch run). No nd in it.
//
// Why: a load callback makes cuFFT's 2^26 transform 3x slower
// (bench/fft_callback_variants.cu), so the multiply cannot ride inside
// cuFFT; a prepass that does cuFFT's first stage itself can carry it.
// With t = n + jM and q = Rm + k (M = N/R, n and m in [0, M), j and k in
// [0, R)):
//   X[Rm + k] = sum_n e^(-2 pi i nm/M) z_k[n],
//   z_k[n]    = e^(-2 pi i nk/N) sum_j x[n + jM] w[n + jM] e^(-2 pi i jk/R)
// The prepass computes z (one thread per n: R loads of x and w, an
// in-register radix-2 DIF over j with the -i turns free, R twiddles), and one
// cuFFT plan of size M with batch R transforms z_k, input element i of batch
// b at in[b*idist + i*istride], output at out[b*odist + i*ostride]. With
// odist = 1, ostride = R that is X in its own order. Layouts timed:
//   "in contig, out stride R"   z_k[n] at z[k*M + n];  X in order
//   "in contig, out contig"     X[Rm + k] at out[k*M + m] (what the strided
//                               output costs; checked through that map)
//   "in stride R, out stride R" z_k[n] at z[n*R + k] (the prepass writes
//                               R consecutive values a thread)
// Twiddles e^(-2 pi i p/N) take p = (n*k) mod N in 64-bit integers, then
//   sincospif  the quarter turn taken out exactly; the rest r < N/4 <= 2^24
//              is exact in float, so is r * 2^(1-lgN): only sincospif's
//              1 ulp rounds
//   double     sincospi of p * 2^(1-lgN) in double, rounded to float
//   split      k = kh*S + kl (S ~ sqrt R): sincospif twiddles of n*kh*S and
//              n*kl, multiplied (~2 ulp; 2 sqrt R calls a thread, not R)
// The prepass alone is timed with each; the pairs use the fastest.
//
// Build and run on the GPU (scripts/gpu/fft_split.sh does both):
//   nvcc -O3 -arch=sm_90 -std=c++17 -o fft_split_variants bench/fft_split_variants.cu -lcufft
//   ./fft_split_variants [log2 n]        (default 26; 8..26)
// The index math alone, on the host, with no GPU and no CUDA (the same
// prepass function, then cuFFT's documented advanced layout emulated in
// float64, against a float64 DFT of x*w for N = 2^12 and 2^14, every R,
// layout and twiddle; plus two wrong layouts that must be caught, and the
// GPU run's float64 spot DFT against the full one):
//   g++ -O2 -std=c++17 -x c++ -DFSV_HOST_ONLY -o /tmp/fsv_host bench/fft_split_variants.cu && /tmp/fsv_host
// (the GPU binary runs the same check with --host-check).
//
// The GPU run prints a markdown table: per variant the median and best of
// 25 timed runs (cudaEvent, ms, all on one stream, plans made before), the
// ratio to the multiply + cuFFT pair, the largest |X - X_ref| / max |X_ref|
// over all N outputs against the pair's result (checked on the device), and
// the same at 8 random outputs against a float64 direct DFT on the host.
// Either above 1e-4 prints FAIL and the exit status is 1.

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#ifdef FSV_HOST_ONLY
#define __host__
#define __device__
#define __forceinline__ inline
struct float2 {
  float x, y;
};
static inline float2 make_float2(float a, float b) { return float2{a, b}; }
#define UNROLL _Pragma("GCC unroll 64")
#else
#include <cuda_runtime.h>
#include <cufft.h>
#define UNROLL _Pragma("unroll")
#endif

typedef unsigned long long u64;
typedef std::complex<double> cd;
static const double kPi = 3.14159265358979323846;

// ---------------------------------------------------------------------------
// The prepass, shared by the kernels and the host check.

__host__ __device__ __forceinline__ float2 cadd(float2 a, float2 b) { return make_float2(a.x + b.x, a.y + b.y); }
__host__ __device__ __forceinline__ float2 csub(float2 a, float2 b) { return make_float2(a.x - b.x, a.y - b.y); }
__host__ __device__ __forceinline__ float2 cmul(float2 a, float2 b) {
  return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
__host__ __device__ __forceinline__ float2 mul_negi(float2 a) { return make_float2(a.y, -a.x); } // a * -i

__host__ __device__ constexpr int lg2i(int r) { return r <= 1 ? 0 : 1 + lg2i(r / 2); }
// bits <= 6. One expression, no loop and no recursion: the compiler folds
// a[bitrev(k)] to a constant index only then (a loop here was left rolled,
// and a[] was indexed at run time out of local memory).
__host__ __device__ constexpr int bitrev(int p, int bits) {
  return (((p & 1) << 5) | ((p & 2) << 3) | ((p & 4) << 1) | ((p & 8) >> 1) | ((p & 16) >> 3) | ((p & 32) >> 5)) >>
         (6 - bits);
}

enum { TW_SINCOSPIF = 0, TW_DOUBLE = 1, TW_SPLIT = 2 };
static const char *const kTwName[] = {"sincospif", "double", "split"};

// e^(-2 pi i p/N), N = 2^lgN, 2 <= lgN <= 26, p < N. The quarter turn is
// taken out exactly; the rest r < N/4 is exact in float and so is
// r * 2^(1-lgN) (a power of two), so the only rounding is sincospif's.
// scale is 2^(1-lgN), made once by the caller (ldexpf here is a dozen
// instructions a call).
__host__ __device__ __forceinline__ float2 twiddle_f(u64 p, int lgN, float scale) {
  const unsigned q = (unsigned)(p >> (lgN - 2)) & 3u;
  const u64 r = p & ((1ull << (lgN - 2)) - 1);
  const float a = (float)r * scale;
  float s, c;
#ifdef __CUDA_ARCH__
  sincospif(a, &s, &c);
#else
  s = (float)std::sin(kPi * (double)a);
  c = (float)std::cos(kPi * (double)a);
#endif
  const float2 v = make_float2(c, -s);
  return q == 0 ? v : q == 1 ? mul_negi(v) : q == 2 ? make_float2(-v.x, -v.y) : make_float2(-v.y, v.x);
}

// The same in double, rounded to float once.
__host__ __device__ __forceinline__ float2 twiddle_d(u64 p, float scale) {
  const double a = (double)p * scale;
  double s, c;
#ifdef __CUDA_ARCH__
  sincospi(a, &s, &c);
#else
  s = std::sin(kPi * a);
  c = std::cos(kPi * a);
#endif
  return make_float2((float)c, (float)-s);
}

// The R-point DFT's constants e^(-2 pi i t/R), t < R/2, rounded once from
// double. Passed by value: a kernel parameter lives in the constant bank,
// and with the DFT unrolled every index is a constant.
template <int R> struct Dft {
  float2 w[R > 2 ? R / 2 : 1];
};
template <int R> static Dft<R> make_dft() {
  Dft<R> c;
  for (int t = 0; t < (R > 2 ? R / 2 : 1); t++)
    c.w[t] = make_float2((float)std::cos(2 * kPi * t / R), (float)-std::sin(2 * kPi * t / R));
  return c;
}

// In-place radix-2 decimation in frequency over a[0..R): afterwards a[p] is
// b[bitrev(p)]. Turns by 1 and -i are exact (no multiply), so R = 2 and 4
// have no multiplies at all, as in cuFFT's own radix-4 butterflies. One
// stage a template instance, its R/2 butterflies one loop of constant
// count: nested loops whose bounds came from an outer loop's variable were
// left rolled for R >= 16, and a[] and the constants went to local memory.
template <int R, int H> struct DifStage {
  static __host__ __device__ __forceinline__ void run(float2 (&a)[R], const Dft<R> &c) {
    UNROLL
    for (int b = 0; b < R / 2; b++) {
      const int i = b % H, lo = (b / H) * 2 * H + i, hi = lo + H;
      const int t = i * (R / (2 * H)); // e^(-2 pi i i/(2H)) = e^(-2 pi i t/R)
      const float2 u = a[lo], v = a[hi];
      const float2 d = csub(u, v);
      a[lo] = cadd(u, v);
      a[hi] = t == 0 ? d : 4 * t == R ? mul_negi(d) : cmul(d, c.w[t]);
    }
    DifStage<R, H / 2>::run(a, c);
  }
};
template <int R> struct DifStage<R, 0> {
  static __host__ __device__ __forceinline__ void run(float2 (&)[R], const Dft<R> &) {}
};
template <int R> __host__ __device__ __forceinline__ void dft_dif(float2 (&a)[R], const Dft<R> &c) {
  DifStage<R, R / 2>::run(a, c);
}

// One n of the prepass: z_k[n] for k in [0, R), stored at z[k*M + n]
// (ZI false) or z[n*R + k] (ZI true).
template <int R, int TW, bool ZI>
__host__ __device__ __forceinline__ void prepass_point(const float2 *__restrict__ x, const float *__restrict__ w,
                                                       float2 *__restrict__ z, u64 n, u64 M, int lgN,
                                                       const Dft<R> &c) {
  static_assert(R >= 2 && R <= 64 && (R & (R - 1)) == 0, "R: a power of two up to 64 (bitrev)");
  constexpr int LR = lg2i(R);
  constexpr int S = 1 << (LR / 2); // split: k = kh*S + kl
  const float scale = ldexpf(1.0f, 1 - lgN);
  float2 a[R];
  UNROLL
  for (int j = 0; j < R; j++) {
    const float2 v = x[n + (u64)j * M];
    const float s = w[n + (u64)j * M];
    a[j] = make_float2(v.x * s, v.y * s);
  }
  dft_dif<R>(a, c);
  const u64 mask = (1ull << lgN) - 1;
  float2 hi[R / S], lo[S];
  if (TW == TW_SPLIT) {
    UNROLL
    for (int kh = 1; kh < R / S; kh++) hi[kh] = twiddle_f((n * (u64)(kh * S)) & mask, lgN, scale);
    UNROLL
    for (int kl = 1; kl < S; kl++) lo[kl] = twiddle_f((n * (u64)kl) & mask, lgN, scale);
  }
  float2 out[R];
  UNROLL
  for (int k = 0; k < R; k++) {
    float2 v = a[bitrev(k, LR)];
    if (k != 0) {
      const u64 p = (n * (u64)k) & mask;
      float2 t;
      if (TW == TW_SINCOSPIF) t = twiddle_f(p, lgN, scale);
      else if (TW == TW_DOUBLE) t = twiddle_d(p, scale);
      else {
        const int kh = k / S, kl = k % S;
        t = kh == 0 ? lo[kl] : kl == 0 ? hi[kh] : cmul(hi[kh], lo[kl]);
      }
      v = cmul(v, t);
    }
    out[k] = v;
  }
  if (!ZI) {
    UNROLL
    for (int k = 0; k < R; k++) z[(u64)k * M + n] = out[k];
  } else {
#ifdef __CUDA_ARCH__
    float4 *zz = reinterpret_cast<float4 *>(z + n * R); // 16-byte aligned: R even
    UNROLL
    for (int k = 0; k < R; k += 2) zz[k / 2] = make_float4(out[k].x, out[k].y, out[k + 1].x, out[k + 1].y);
#else
    for (int k = 0; k < R; k++) z[n * R + k] = out[k];
#endif
  }
}

// cuFFT's batched plan over z: batch b (= k), element i (= n on input, m on
// output) at in[b*idist + i*istride], out[b*odist + i*ostride].
struct Layout {
  long long istride, idist, ostride, odist;
  bool zi;
  const char *name;
};
static Layout make_layout(int R, long long M, bool zi, bool out_contig) {
  Layout L;
  L.zi = zi;
  L.istride = zi ? R : 1;
  L.idist = zi ? 1 : M;
  L.ostride = out_contig ? 1 : R;
  L.odist = out_contig ? M : 1;
  L.name = zi ? (out_contig ? "in stride R, out contig" : "in stride R, out stride R")
              : (out_contig ? "in contig, out contig" : "in contig, out stride R");
  return L;
}
// Where X[q], q = R*m + k, lies in the plan's output.
__host__ __device__ __forceinline__ u64 out_pos(u64 q, int lgR, long long ostride, long long odist) {
  return (q & ((1ull << lgR) - 1)) * (u64)odist + (q >> lgR) * (u64)ostride;
}

// The data: x uniform in [-0.5, 0.5)^2, w uniform in [0, 1), both exact
// multiples of a power of two, so the host rebuilds them bit for bit.
__host__ __device__ __forceinline__ unsigned mix(unsigned h) {
  h ^= h >> 16;
  h *= 0x7feb352du;
  h ^= h >> 15;
  h *= 0x846ca68bu;
  h ^= h >> 16;
  return h;
}
__host__ __device__ __forceinline__ void data_at(u64 i, float2 *x, float *w) {
  const unsigned a = mix((unsigned)i * 2u + 1u), b = mix((unsigned)i * 2u + 0x9e3779b9u);
  *x = make_float2((a & 0xffff) / 65536.0f - 0.5f, (a >> 16) / 65536.0f - 0.5f);
  *w = (b >> 8) * (1.0f / 16777216.0f);
}

// ---------------------------------------------------------------------------
// The host check.

// Forward FFT of v (size 2^k) in float64, iterative radix-2, twiddles from
// cos/sin of exact fractions: an independent route to the same numbers.
static void fft_d(std::vector<cd> &v) {
  const size_t n = v.size();
  for (size_t i = 1, j = 0; i < n; i++) {
    size_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(v[i], v[j]);
  }
  for (size_t len = 2; len <= n; len <<= 1)
    for (size_t i = 0; i < n; i += len)
      for (size_t t = 0; t < len / 2; t++) {
        const cd wt(std::cos(2 * kPi * t / len), -std::sin(2 * kPi * t / len));
        const cd u = v[i + t], d = v[i + t + len / 2] * wt;
        v[i + t] = u + d;
        v[i + t + len / 2] = u - d;
      }
}

// cuFFT's C2C forward plan with the advanced layout, as its documentation
// states it for rank 1: batch b's element i at in[b*idist + i*istride] and
// out[b*odist + i*ostride]. Every index is checked to lie in the buffers.
static bool emulate_plan_many(const float2 *in, std::vector<cd> &out, long long n, long long batch, const Layout &L,
                              long long total) {
  std::vector<cd> v(n);
  for (long long b = 0; b < batch; b++) {
    for (long long i = 0; i < n; i++) {
      const long long p = b * L.idist + i * L.istride;
      if (p < 0 || p >= total) return false;
      v[i] = cd(in[p].x, in[p].y);
    }
    fft_d(v);
    for (long long i = 0; i < n; i++) {
      const long long p = b * L.odist + i * L.ostride;
      if (p < 0 || p >= total) return false;
      out[p] = v[i];
    }
  }
  return true;
}

template <int R, int TW, bool ZI>
static void prepass_host(const float2 *x, const float *w, float2 *z, u64 M, int lgN) {
  const Dft<R> c = make_dft<R>();
  for (u64 n = 0; n < M; n++) prepass_point<R, TW, ZI>(x, w, z, n, M, lgN, c);
}

// max over q of |out[pos(q)] - X[q]| / max |X|; a NaN (an output never
// written) counts as an infinite error.
static double rel_err(const std::vector<cd> &out, const std::vector<cd> &X, int lgR, long long ostride,
                      long long odist) {
  double d = 0, mx = 0;
  for (size_t q = 0; q < X.size(); q++) {
    mx = std::max(mx, std::abs(X[q]));
    const double e = std::abs(out[out_pos(q, lgR, ostride, odist)] - X[q]);
    d = (e == e) ? std::max(d, e) : INFINITY;
  }
  return d / mx;
}

template <int R>
static int host_check_r(const std::vector<float2> &x, const std::vector<float> &w, const std::vector<cd> &X, int lgN) {
  const long long N = 1ll << lgN, M = N / R;
  const int LR = lg2i(R);
  int fails = 0;
  double worst = 0;
  std::vector<float2> z(N);
  std::vector<cd> out(N);
  for (int tw = 0; tw < 3; tw++)
    for (int zi = 0; zi < 2; zi++) {
      std::fill(z.begin(), z.end(), make_float2(NAN, NAN));
      typedef void (*fn)(const float2 *, const float *, float2 *, u64, int);
      static const fn table[3][2] = {{prepass_host<R, 0, false>, prepass_host<R, 0, true>},
                                     {prepass_host<R, 1, false>, prepass_host<R, 1, true>},
                                     {prepass_host<R, 2, false>, prepass_host<R, 2, true>}};
      table[tw][zi](x.data(), w.data(), z.data(), (u64)M, lgN);
      for (int oc = 0; oc < 2; oc++) {
        const Layout L = make_layout(R, M, zi, oc);
        std::fill(out.begin(), out.end(), cd(NAN, NAN));
        double e = emulate_plan_many(z.data(), out, M, R, L, N) ? rel_err(out, X, LR, L.ostride, L.odist) : INFINITY;
        worst = std::max(worst, e);
        if (!(e <= 1e-5)) {
          printf("  FAIL N=2^%d R=%d twiddle %s, %s: error %.2e\n", lgN, R, kTwName[tw], L.name, e);
          fails++;
        }
        // The check must catch a wrong map: read the contiguous output as if
        // it were in X's order, and feed the interleaved z to a plan that
        // reads it contiguously.
        if (oc == 1 && tw == 0 && !zi) {
          const double bad = rel_err(out, X, LR, R, 1);
          if (bad < 1e-2) {
            printf("  FAIL N=2^%d R=%d: a wrong output map went unnoticed (%.2e)\n", lgN, R, bad);
            fails++;
          }
        }
        if (oc == 0 && tw == 0 && zi) {
          Layout bad = make_layout(R, M, false, false);
          std::fill(out.begin(), out.end(), cd(NAN, NAN));
          emulate_plan_many(z.data(), out, M, R, bad, N);
          const double be = rel_err(out, X, LR, bad.ostride, bad.odist);
          if (be < 1e-2) {
            printf("  FAIL N=2^%d R=%d: a wrong input layout went unnoticed (%.2e)\n", lgN, R, be);
            fails++;
          }
        }
      }
    }
  printf("  N=2^%-2d R=%-2d  3 twiddles x 4 layouts: worst error %.2e%s\n", lgN, R, worst, fails ? "  FAIL" : "");
  return fails;
}

// 8 random output indices, and X there by a float64 direct DFT of x*w
// (O(N) each); the twiddle of (t*q) mod N a product of two table entries
// (error ~1e-16). The GPU run checks every variant at these; the host
// check checks this against its own DFT.
static std::vector<u64> spot_indices(int lgN) {
  std::vector<u64> q;
  u64 st = 0x2545f4914f6cdd1dull;
  for (int i = 0; i < 8; i++) {
    st = st * 6364136223846793005ull + 1442695040888963407ull;
    q.push_back((st >> 17) & ((1ull << lgN) - 1));
  }
  return q;
}
static std::vector<cd> spot_dft(int lgN, const std::vector<u64> &q) {
  const long long N = 1ll << lgN;
  const int hb = lgN / 2;
  std::vector<cd> th(1ll << (lgN - hb)), tl(1ll << hb), acc(q.size(), 0.0);
  for (size_t p = 0; p < th.size(); p++) th[p] = std::polar(1.0, -2 * kPi * (double)(p << hb) / (double)N);
  for (size_t p = 0; p < tl.size(); p++) tl[p] = std::polar(1.0, -2 * kPi * (double)p / (double)N);
  for (long long t = 0; t < N; t++) {
    float2 xv;
    float wv;
    data_at(t, &xv, &wv);
    const cd a((double)xv.x * wv, (double)xv.y * wv);
    for (size_t i = 0; i < q.size(); i++) {
      const u64 p = ((u64)t * q[i]) & (N - 1);
      acc[i] += a * (th[p >> hb] * tl[p & ((1ull << hb) - 1)]);
    }
  }
  return acc;
}

static int host_check() {
  printf("host check: the prepass + cuFFT's advanced layout emulated in float64, against a float64 DFT of x*w\n");
  int fails = 0;
  for (int lgN : {12, 14}) {
    const long long N = 1ll << lgN;
    std::vector<float2> x(N);
    std::vector<float> w(N);
    for (long long i = 0; i < N; i++) data_at(i, &x[i], &w[i]);
    // The direct DFT, twiddles from (t*q) mod N in integers.
    std::vector<cd> T(N), X(N);
    for (long long p = 0; p < N; p++) T[p] = cd(std::cos(2 * kPi * p / N), -std::sin(2 * kPi * p / N));
    for (long long q = 0; q < N; q++) {
      cd s = 0;
      for (long long t = 0; t < N; t++) s += cd((double)x[t].x * w[t], (double)x[t].y * w[t]) * T[(t * q) & (N - 1)];
      X[q] = s;
    }
    const std::vector<u64> q = spot_indices(lgN);
    const std::vector<cd> sx = spot_dft(lgN, q);
    double mx = 0, se = 0;
    for (long long i = 0; i < N; i++) mx = std::max(mx, std::abs(X[i]));
    for (size_t i = 0; i < q.size(); i++) se = std::max(se, std::abs(sx[i] - X[q[i]]));
    printf("  N=2^%-2d the GPU run's spot DFT against this DFT: %.2e%s\n", lgN, se / mx, se / mx <= 1e-12 ? "" : "  FAIL");
    if (!(se / mx <= 1e-12)) fails++;
    fails += host_check_r<2>(x, w, X, lgN);
    fails += host_check_r<4>(x, w, X, lgN);
    fails += host_check_r<8>(x, w, X, lgN);
    fails += host_check_r<16>(x, w, X, lgN);
    fails += host_check_r<32>(x, w, X, lgN);
    fails += host_check_r<64>(x, w, X, lgN);
  }
  printf(fails ? "host check: %d FAILED\n" : "host check: all passed\n", fails);
  return fails ? 1 : 0;
}

#ifdef FSV_HOST_ONLY
int main() { return host_check(); }
#else

// ---------------------------------------------------------------------------
// The GPU run.

#define CK(x)                                                                                       \
  do {                                                                                              \
    cudaError_t e_ = (x);                                                                           \
    if (e_ != cudaSuccess) {                                                                        \
      printf("%s: %s\n", #x, cudaGetErrorString(e_));                                               \
      exit(1);                                                                                      \
    }                                                                                               \
  } while (0)

// x * w with w promoted to complex, NumPy's textbook product (nd's kernel).
__device__ __forceinline__ float2 prod(float2 z, float w) {
  return make_float2(__fsub_rn(__fmul_rn(z.x, w), __fmul_rn(z.y, 0.0f)),
                     __fadd_rn(__fmul_rn(z.x, 0.0f), __fmul_rn(z.y, w)));
}
__global__ void k_mul(const float2 *__restrict__ x, const float *__restrict__ w, float2 *__restrict__ y, long long n) {
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n; i += (long long)gridDim.x * 256) y[i] = prod(x[i], w[i]);
}
__global__ void k_init(float2 *x, float *w, long long n) {
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n; i += (long long)gridDim.x * 256) data_at(i, &x[i], &w[i]);
}
template <int R, int TW, bool ZI>
__global__ void __launch_bounds__(256)
    k_prepass(const float2 *__restrict__ x, const float *__restrict__ w, float2 *__restrict__ z, u64 M, int lgN, Dft<R> c) {
  const u64 n = blockIdx.x * 256ull + threadIdx.x;
  if (n < M) prepass_point<R, TW, ZI>(x, w, z, n, M, lgN, c);
}

// max over q of |out[pos(q)] - ref[q]| (NaN counts as 3e38), and max |ref|,
// as float bits (non-negative floats order as unsigned integers).
__global__ void k_maxdiff(const float2 *out, const float2 *ref, long long n, int lgR, long long ostride, long long odist,
                          unsigned *res) {
  float d = 0, m = 0;
  for (long long q = blockIdx.x * 256ll + threadIdx.x; q < n; q += (long long)gridDim.x * 256) {
    const float2 o = out[out_pos(q, lgR, ostride, odist)], r = ref[q];
    float e = hypotf(o.x - r.x, o.y - r.y);
    if (!(e <= 3e38f)) e = 3e38f;
    d = fmaxf(d, e);
    m = fmaxf(m, hypotf(r.x, r.y));
  }
  for (int s = 16; s; s >>= 1) {
    d = fmaxf(d, __shfl_xor_sync(0xffffffffu, d, s));
    m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, s));
  }
  if ((threadIdx.x & 31) == 0) {
    atomicMax(res, __float_as_uint(d));
    atomicMax(res + 1, __float_as_uint(m));
  }
}

struct Row {
  char name[96];
  float med, best;
  double err, spot; // < 0: no output to check
  bool planfail;
};

template <int R>
static void launch_prepass(int tw, bool zi, const float2 *x, const float *w, float2 *z, u64 M, int lgN, const Dft<R> &c,
                           cudaStream_t s) {
  const unsigned blocks = (unsigned)((M + 255) / 256);
  if (tw == 0 && !zi) k_prepass<R, 0, false><<<blocks, 256, 0, s>>>(x, w, z, M, lgN, c);
  if (tw == 0 && zi) k_prepass<R, 0, true><<<blocks, 256, 0, s>>>(x, w, z, M, lgN, c);
  if (tw == 1 && !zi) k_prepass<R, 1, false><<<blocks, 256, 0, s>>>(x, w, z, M, lgN, c);
  if (tw == 1 && zi) k_prepass<R, 1, true><<<blocks, 256, 0, s>>>(x, w, z, M, lgN, c);
  if (tw == 2 && !zi) k_prepass<R, 2, false><<<blocks, 256, 0, s>>>(x, w, z, M, lgN, c);
  if (tw == 2 && zi) k_prepass<R, 2, true><<<blocks, 256, 0, s>>>(x, w, z, M, lgN, c);
}

struct Gpu {
  int lgN;
  long long N;
  int sms;
  cudaStream_t s;
  cudaEvent_t e0, e1;
  float2 *x, *y, *ref, *z, *zi, *out;
  float *w;
  unsigned *res;
  float ref_max;
  std::vector<u64> spots;
  std::vector<cd> spot_x; // float64 DFT at the spots
  std::vector<Row> rows;
  int fails = 0;

  template <class F> void time(Row &r, F body) {
    for (int i = 0; i < 3; i++) body();
    std::vector<float> t;
    for (int i = 0; i < 25; i++) {
      CK(cudaEventRecord(e0, s));
      body();
      CK(cudaEventRecord(e1, s));
      CK(cudaEventSynchronize(e1));
      float ms;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      t.push_back(ms);
    }
    CK(cudaGetLastError());
    std::sort(t.begin(), t.end());
    r.med = t[t.size() / 2];
    r.best = t[0];
    printf("  %-64s %.4f ms\n", r.name, r.med); // progress, should a later variant fault
    fflush(stdout);
  }
  // out against ref everywhere (on the device) and against the float64 DFT
  // at the spots, X[q] read at out[pos(q)].
  void check(Row &r, const float2 *o, int lgR, long long ostride, long long odist) {
    CK(cudaMemsetAsync(res, 0, 8, s));
    k_maxdiff<<<sms * 8, 256, 0, s>>>(o, ref, N, lgR, ostride, odist, res);
    unsigned h[2];
    CK(cudaMemcpyAsync(h, res, 8, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    float d;
    memcpy(&d, &h[0], 4);
    if (o == ref) memcpy(&ref_max, &h[1], 4);
    r.err = o == ref ? 0 : d / ref_max;
    double sp = 0;
    for (size_t i = 0; i < spots.size(); i++) {
      float2 v;
      CK(cudaMemcpy(&v, o + out_pos(spots[i], lgR, ostride, odist), 8, cudaMemcpyDeviceToHost));
      const double e = std::abs(cd(v.x, v.y) - spot_x[i]);
      sp = (e == e) ? std::max(sp, e) : INFINITY;
    }
    r.spot = sp / ref_max;
    if (!(r.err <= 1e-4) || !(r.spot <= 1e-4)) fails++;
  }
  // rows is reserved up front: a Row's reference stays good while it is timed.
  Row &row(const char *name) {
    rows.push_back(Row());
    Row &r = rows.back();
    snprintf(r.name, sizeof r.name, "%s", name);
    r.err = r.spot = -1;
    r.planfail = false;
    return r;
  }

  template <int R> void run_r() {
    const long long M = N / R;
    const int LR = lg2i(R);
    const Dft<R> c = make_dft<R>();
    CK(cudaMemsetAsync(z, 0xff, 8 * N, s));
    CK(cudaMemsetAsync(zi, 0xff, 8 * N, s));
    // The prepass alone, each twiddle; the fastest feeds the pairs.
    int best = 0;
    float best_ms = 1e30f;
    for (int tw = 0; tw < 3; tw++) {
      char nm[64];
      snprintf(nm, sizeof nm, "R=%d prepass, twiddle %s", R, kTwName[tw]);
      Row &r = row(nm);
      time(r, [&] { launch_prepass<R>(tw, false, x, w, z, (u64)M, lgN, c, s); });
      if (r.med < best_ms) best_ms = r.med, best = tw;
    }
    launch_prepass<R>(best, false, x, w, z, (u64)M, lgN, c, s);
    {
      char nm[64];
      snprintf(nm, sizeof nm, "R=%d prepass, z interleaved, twiddle %s", R, kTwName[best]);
      Row &r = row(nm);
      time(r, [&] { launch_prepass<R>(best, true, x, w, zi, (u64)M, lgN, c, s); });
    }
    // The three layouts: cuFFT alone on the prepass's z, then both.
    const Layout Ls[3] = {make_layout(R, M, false, false), make_layout(R, M, false, true), make_layout(R, M, true, false)};
    cufftHandle plans[3];
    bool ok[3];
    for (int l = 0; l < 3; l++) {
      int n[1] = {(int)M}, emb[1] = {(int)M};
      cufftResult e = cufftPlanMany(&plans[l], 1, n, emb, (int)Ls[l].istride, (int)Ls[l].idist, emb, (int)Ls[l].ostride,
                                    (int)Ls[l].odist, CUFFT_C2C, R);
      ok[l] = e == CUFFT_SUCCESS;
      if (ok[l]) ok[l] = cufftSetStream(plans[l], s) == CUFFT_SUCCESS;
      if (!ok[l]) printf("R=%d %s: cufftPlanMany failed, status %d\n", R, Ls[l].name, (int)e);
    }
    for (int pair = 0; pair < 2; pair++)
      for (int l = 0; l < 3; l++) {
        const Layout &L = Ls[l];
        char nm[96];
        snprintf(nm, sizeof nm, pair ? "R=%d prepass + cuFFT 2^%d x %d, %s" : "R=%d cuFFT 2^%d x %d alone, %s", R,
                 lgN - LR, R, L.name);
        Row &r = row(nm);
        if (!ok[l]) {
          r.planfail = true;
          fails++;
          continue;
        }
        float2 *zin = L.zi ? zi : z;
        CK(cudaMemsetAsync(out, 0xff, 8 * N, s));
        if (pair)
          time(r, [&] {
            launch_prepass<R>(best, L.zi, x, w, zin, (u64)M, lgN, c, s);
            cufftExecC2C(plans[l], (cufftComplex *)zin, (cufftComplex *)out, CUFFT_FORWARD);
          });
        else time(r, [&] { cufftExecC2C(plans[l], (cufftComplex *)zin, (cufftComplex *)out, CUFFT_FORWARD); });
        check(r, out, LR, L.ostride, L.odist);
      }
    for (int l = 0; l < 3; l++)
      if (ok[l]) cufftDestroy(plans[l]);
  }
};

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--host-check")) return host_check();
  Gpu g;
  g.lgN = argc > 1 ? atoi(argv[1]) : 26;
  if (g.lgN < 8 || g.lgN > 26) {
    printf("log2 n must be in [8, 26] (the float twiddle's argument is exact up to 2^26)\n");
    return 2;
  }
  const long long N = g.N = 1ll << g.lgN;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  g.sms = prop.multiProcessorCount;
  CK(cudaStreamCreateWithFlags(&g.s, cudaStreamNonBlocking));
  CK(cudaEventCreate(&g.e0));
  CK(cudaEventCreate(&g.e1));
  CK(cudaMalloc(&g.x, 8 * N)); CK(cudaMalloc(&g.y, 8 * N)); CK(cudaMalloc(&g.ref, 8 * N));
  CK(cudaMalloc(&g.z, 8 * N)); CK(cudaMalloc(&g.zi, 8 * N)); CK(cudaMalloc(&g.out, 8 * N));
  CK(cudaMalloc(&g.w, 4 * N)); CK(cudaMalloc(&g.res, 8));
  k_init<<<g.sms * 8, 256, 0, g.s>>>(g.x, g.w, N);
  CK(cudaStreamSynchronize(g.s));
  int cufft_ver = 0;
  cufftGetVersion(&cufft_ver);
  printf("fft_split_variants: %s, fft(x*w) of 2^%d complex64, cuFFT %d; median and best of 25 (ms)\n", prop.name,
         g.lgN, cufft_ver);

  g.spots = spot_indices(g.lgN);
  g.spot_x = spot_dft(g.lgN, g.spots);

  g.rows.reserve(256);
  char nm[96];
  snprintf(nm, sizeof nm, "device-to-device copy of 8 x 2^%d bytes", g.lgN);
  Row &copy = g.row(nm);
  g.time(copy, [&] { CK(cudaMemcpyAsync(g.y, g.x, 8 * N, cudaMemcpyDeviceToDevice, g.s)); });

  cufftHandle plain;
  if (cufftPlan1d(&plain, (int)N, CUFFT_C2C, 1) != CUFFT_SUCCESS || cufftSetStream(plain, g.s) != CUFFT_SUCCESS) {
    printf("cufftPlan1d(2^%d) failed\n", g.lgN);
    return 1;
  }
  const unsigned mul_blocks = g.sms * 16;
  CK(cudaMemsetAsync(g.ref, 0xff, 8 * N, g.s));
  snprintf(nm, sizeof nm, "multiply kernel + cuFFT 2^%d (nd, PyTorch; the reference)", g.lgN);
  Row &pair = g.row(nm);
  g.time(pair, [&] {
    k_mul<<<mul_blocks, 256, 0, g.s>>>(g.x, g.w, g.y, N);
    cufftExecC2C(plain, (cufftComplex *)g.y, (cufftComplex *)g.ref, CUFFT_FORWARD);
  });
  g.check(pair, g.ref, 0, 1, 1);
  Row &mul = g.row("multiply kernel alone");
  g.time(mul, [&] { k_mul<<<mul_blocks, 256, 0, g.s>>>(g.x, g.w, g.y, N); });
  snprintf(nm, sizeof nm, "cuFFT 2^%d alone (of x*w)", g.lgN);
  Row &bare = g.row(nm);
  CK(cudaMemsetAsync(g.out, 0xff, 8 * N, g.s));
  g.time(bare, [&] { cufftExecC2C(plain, (cufftComplex *)g.y, (cufftComplex *)g.out, CUFFT_FORWARD); });
  g.check(bare, g.out, 0, 1, 1);
  cufftDestroy(plain);

  g.run_r<2>();
  g.run_r<4>();
  g.run_r<8>();
  g.run_r<16>();
  g.run_r<32>();
  g.run_r<64>();

  const float base = g.rows[1].med;
  printf("\n| variant | median ms | best ms | x pair | max err / max abs X_ref | 8 spots vs float64 DFT |\n|---|---|---|---|---|---|\n");
  for (const Row &q : g.rows) {
    if (q.planfail) {
      printf("| %s | plan failed | | | | FAIL |\n", q.name);
      continue;
    }
    printf("| %s | %.4f | %.4f | %.3f |", q.name, q.med, q.best, q.med / base);
    if (q.err < 0) printf(" - | - |\n");
    else
      printf(" %.2e | %.2e |%s\n", q.err, q.spot, !(q.err <= 1e-4) || !(q.spot <= 1e-4) ? " FAIL" : "");
  }
  const Row *fastest = nullptr;
  for (const Row &q : g.rows)
    if (strstr(q.name, "prepass + cuFFT") && !strstr(q.name, "out contig") && !q.planfail &&
        (!fastest || q.med < fastest->med))
      fastest = &q; // "out contig" leaves X out of order: not an answer
  if (fastest) printf("\nfastest split: %s, %.4f ms = %.3f x the pair (%.4f ms)\n", fastest->name, fastest->med,
                      fastest->med / base, base);
  if (g.fails) printf("FAIL: %d variants off by more than 1e-4 or not planned\n", g.fails);
  return g.fails ? 1 : 0;
}
#endif
