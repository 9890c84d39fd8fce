// fft_callback_variants.cu — fft(x * w) of 2^26 complex64 (w float32)
// with the multiply in a kernel of its own (what nd does) and inside
// cuFFT as an LTO load callback in three ways of reaching the operands,
// timed beside the bare transform of a precomputed x * w. No nd in it.
//
// nd once fused the multiply as a load callback and cuFFT then took 4.02
// ms against 1.35 ms unfused (docs/internals.md, "cuFFT"). That callback
// read the operands' addresses from words behind dataIn. This program
// tells whether cuFFT is slow with any load callback on this transform or
// only with that way of passing the operands:
//   words   dataIn points at two words holding x's and w's addresses (nd's)
//   dataIn  dataIn is x itself, callerInfo w's address (cuFFT's own samples)
//   info    callerInfo points at a struct of both addresses, dataIn unused
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o fft_callback_variants bench/fft_callback_variants.cu -lcufft -lnvrtc
//   ./fft_callback_variants [log2 n]          (default 26)
//
// Prints per variant the median and best of 15 timed runs (cudaEvent, us)
// and the largest difference from the unfused result, relative to its
// largest magnitude (the product is the same expression everywhere, so
// only cuFFT's own order can differ).

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <cufft.h>
#include <cufftXt.h>
#include <nvrtc.h>
#include <vector>

#define CK(x)                                                                                       \
  do {                                                                                              \
    cudaError_t e_ = (x);                                                                           \
    if (e_ != cudaSuccess) {                                                                        \
      printf("%s: %s\n", #x, cudaGetErrorString(e_));                                               \
      exit(1);                                                                                      \
    }                                                                                               \
  } while (0)
#define CF(x)                                                                                       \
  do {                                                                                              \
    cufftResult r_ = (x);                                                                           \
    if (r_ != CUFFT_SUCCESS) {                                                                      \
      printf("%s: cufft status %d\n", #x, (int)r_);                                                 \
      return false;                                                                                 \
    }                                                                                               \
  } while (0)

// x * w with w promoted to complex, NumPy's textbook product (nd's).
#define PRODUCT                                                                                     \
  "__device__ __forceinline__ float2 prod(float2 z, float w) {\n"                                    \
  "  return make_float2(__fsub_rn(__fmul_rn(z.x, w), __fmul_rn(z.y, 0.0f)),\n"                        \
  "                     __fadd_rn(__fmul_rn(z.x, 0.0f), __fmul_rn(z.y, w)));\n"                       \
  "}\n"

__device__ __forceinline__ float2 prod(float2 z, float w) {
  return make_float2(__fsub_rn(__fmul_rn(z.x, w), __fmul_rn(z.y, 0.0f)),
                     __fadd_rn(__fmul_rn(z.x, 0.0f), __fmul_rn(z.y, w)));
}

__global__ void k_mul(const float2 *x, const float *w, float2 *y, long long n) {
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n; i += (long long)gridDim.x * 256) y[i] = prod(x[i], w[i]);
}

__global__ void k_init(float2 *x, float *w, long long n) {
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n; i += (long long)gridDim.x * 256) {
    unsigned h = (unsigned)i * 2654435761u;
    h ^= h >> 13;
    h *= 2246822519u;
    h ^= h >> 16;
    x[i] = make_float2((h & 0xffff) / 65536.0f - 0.5f, (h >> 16) / 65536.0f - 0.5f);
    w[i] = 0.5f - 0.5f * cospif(2.0f * (float)i / (float)n); // a Hann window
  }
}

static const char *kCallbacks =
    PRODUCT
    "struct ops { const float2 *x; const float *w; };\n"
    "__device__ float2 cb_words(void *in, unsigned long long i, void *info, void *sh) {\n"
    "  const ops *o = (const ops *)in;\n"
    "  float2 v = prod(o->x[i], o->w[i]);\n"
    "  return v;\n"
    "}\n"
    "__device__ float2 cb_datain(void *in, unsigned long long i, void *info, void *sh) {\n"
    "  float2 v = prod(((const float2 *)in)[i], ((const float *)info)[i]);\n"
    "  return v;\n"
    "}\n"
    "__device__ float2 cb_info(void *in, unsigned long long i, void *info, void *sh) {\n"
    "  const ops *o = (const ops *)info;\n"
    "  float2 v = prod(o->x[i], o->w[i]);\n"
    "  return v;\n"
    "}\n";

// The callbacks' LTO-IR, compiled once with NVRTC (-dlto), as nd did
// (cufftComplex is float2: no header needed). C++ linkage: cuFFT declares
// the callback by the name given, with that type, in its own C++ code.
static std::vector<char> lto_ir(int arch) {
  nvrtcProgram p;
  nvrtcCreateProgram(&p, kCallbacks, "callbacks.cu", 0, nullptr, nullptr);
  char archopt[64];
  snprintf(archopt, sizeof archopt, "--gpu-architecture=compute_%d", arch);
  const char *opts[] = {archopt, "--std=c++17", "--relocatable-device-code=true", "-dlto"};
  nvrtcResult r = nvrtcCompileProgram(p, 4, opts);
  if (r != NVRTC_SUCCESS) {
    size_t n;
    nvrtcGetProgramLogSize(p, &n);
    std::vector<char> log(n + 1);
    nvrtcGetProgramLog(p, log.data());
    printf("NVRTC: %s\n%s\n", nvrtcGetErrorString(r), log.data());
    exit(1);
  }
  size_t n;
  nvrtcGetLTOIRSize(p, &n);
  std::vector<char> ir(n);
  nvrtcGetLTOIR(p, ir.data());
  nvrtcDestroyProgram(&p);
  return ir;
}

struct Ops {
  const float2 *x;
  const float *w;
};

static float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char **argv) {
  const int lg = argc > 1 ? atoi(argv[1]) : 26;
  const long long n = 1ll << lg;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  float2 *x, *y, *out, *ref;
  float *w;
  Ops *words;
  CK(cudaMalloc(&x, 8 * n)); CK(cudaMalloc(&y, 8 * n)); CK(cudaMalloc(&out, 8 * n)); CK(cudaMalloc(&ref, 8 * n));
  CK(cudaMalloc(&w, 4 * n)); CK(cudaMalloc(&words, sizeof(Ops)));
  k_init<<<sms * 8, 256>>>(x, w, n);
  Ops hops = {x, w};
  CK(cudaMemcpy(words, &hops, sizeof hops, cudaMemcpyHostToDevice));
  Ops *info_dev;
  CK(cudaMalloc(&info_dev, sizeof(Ops)));
  CK(cudaMemcpy(info_dev, &hops, sizeof hops, cudaMemcpyHostToDevice));
  CK(cudaDeviceSynchronize());
  std::vector<char> ir = lto_ir(prop.major * 10 + prop.minor);
  printf("fft_callback_variants: %s, fft of 2^%d complex64, median of 15 (us); LTO-IR %zu bytes\n", prop.name, lg,
         ir.size());
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0); cudaEventCreate(&e1);
  size_t work_bytes = 0;
  auto timed = [&](auto body) {
    std::vector<float> t;
    for (int r = 0; r < 17; r++) {
      cudaEventRecord(e0);
      body();
      cudaEventRecord(e1);
      CK(cudaEventSynchronize(e1));
      float ms;
      cudaEventElapsedTime(&ms, e0, e1);
      if (r >= 2) t.push_back(ms * 1000);
    }
    CK(cudaGetLastError());
    return t;
  };
  std::vector<float2> h_ref(n), h_out(n);
  double ref_max = 0;
  auto report = [&](const char *name, const std::vector<float> &t, bool is_ref) {
    CK(cudaDeviceSynchronize());
    double d = 0;
    if (is_ref) {
      CK(cudaMemcpy(h_ref.data(), out, 8 * n, cudaMemcpyDeviceToHost));
      for (long long i = 0; i < n; i++) ref_max = std::max(ref_max, (double)std::hypot(h_ref[i].x, h_ref[i].y));
    } else {
      CK(cudaMemcpy(h_out.data(), out, 8 * n, cudaMemcpyDeviceToHost));
      for (long long i = 0; i < n; i++)
        d = std::max(d, (double)std::hypot(h_out[i].x - h_ref[i].x, h_out[i].y - h_ref[i].y));
    }
    printf("  %-36s median %8.1f  best %8.1f", name, median(t), *std::min_element(t.begin(), t.end()));
    if (is_ref) printf("  (the reference)\n");
    else printf("  max diff / max |X| %.2e%s\n", d / ref_max, d / ref_max > 1e-5 ? "  WRONG" : "");
  };
  // The unfused pair (nd today): the multiply, then the transform.
  cufftHandle plain;
  if (cufftPlan1d(&plain, (int)n, CUFFT_C2C, 1) != CUFFT_SUCCESS) { printf("cufftPlan1d failed\n"); return 1; }
  CK(cudaMemset(out, 0xff, 8 * n));
  auto t_pair = timed([&] {
    k_mul<<<sms * 16, 256>>>(x, w, y, n);
    cufftExecC2C(plain, (cufftComplex *)y, (cufftComplex *)out, CUFFT_FORWARD);
  });
  report("multiply kernel + fft (nd)", t_pair, true);
  auto t_bare = timed([&] { cufftExecC2C(plain, (cufftComplex *)y, (cufftComplex *)out, CUFFT_FORWARD); });
  report("fft of precomputed x*w (floor)", t_bare, false);
  // The load callbacks, each on a plan of its own.
  struct { const char *sym, *name; int mode; } cbs[] = {
      {"cb_words", "load callback, operands behind dataIn", 0},
      {"cb_datain", "load callback, dataIn = x, info = w", 1},
      {"cb_info", "load callback, operands behind info", 2},
  };
  for (auto &cb : cbs) {
    cufftHandle p;
    cufftCreate(&p);
    void *info = cb.mode == 1 ? (void *)w : cb.mode == 2 ? (void *)info_dev : nullptr;
    cufftResult r = cufftXtSetJITCallback(p, cb.sym, ir.data(), ir.size(), CUFFT_CB_LD_COMPLEX, &info);
    if (r == CUFFT_SUCCESS) r = cufftMakePlan1d(p, (int)n, CUFFT_C2C, 1, &work_bytes);
    if (r != CUFFT_SUCCESS) {
      printf("  %-36s plan failed: cufft status %d\n", cb.name, (int)r);
      cufftDestroy(p);
      continue;
    }
    cufftComplex *in = cb.mode == 0 ? (cufftComplex *)words : cb.mode == 1 ? (cufftComplex *)x : (cufftComplex *)y;
    CK(cudaMemset(out, 0xff, 8 * n));
    auto t = timed([&] { cufftExecC2C(p, in, (cufftComplex *)out, CUFFT_FORWARD); });
    report(cb.name, t, false);
    cufftDestroy(p);
  }
  cufftDestroy(plain);
  return 0;
}
