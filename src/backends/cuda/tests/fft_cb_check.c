/* Checks the cuFFT load callbacks the CUDA backend generates
 * (fft_callback.c) where there is no GPU: builds by hand the kernels that
 * `fft(x * w)` (complex64 times float32), `fft(x * w * p + y)` over a
 * broadcast operand and a parameter (complex128), and `rfft(a * b + i)`
 * with an index value (float64, float32) plan as, generates each one's
 * callback and compiles it with NVRTC to LTO-IR for sm_90, as the backend
 * does before cufftXtSetJITCallback; checks the source defines the
 * callback with cuFFT's signature; then runs the same source on the host
 * (emulate_harness.h: g++ after emulate_shim.h) at every offset cuFFT
 * would load, with the words laid out as the backend writes them
 * (nd_cuda_fft_cb_words), against the map computed here in double.
 * Build and run: fft_cb_check.sh. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/cuda_internal.h"
#include "backends/cuda/fft_callback.h"
#include "common/lib_fft.h"
#include "common/profile.h"
#include "common/user_kernel.h"
#include "emulate_harness.h"

/* What fft_callback.c's object needs from the rest of libnd here (its plan
 * checks link step_kinds.c): the toolkit's headers, and two functions the
 * check never reaches. */
const char *nd_cuda_include_option(void) { return "-I" ND_EMU_CUDA_INCLUDE; }
void nd_user_kernel_unref(nd_user_kernel *k) { (void)k; }
void nd_profile_add(nd_profile *p, nd_profile_kind kind, const char *name, double seconds, double bytes,
                    double flops, int local) {
    (void)p, (void)kind, (void)name, (void)seconds, (void)bytes, (void)flops, (void)local;
}

static int fails, checks;
#define CHECK(c, ...)                                  \
    do {                                               \
        checks++;                                      \
        if (!(c)) {                                    \
            fails++;                                   \
            printf("FAIL %s:%d: ", __FILE__, __LINE__); \
            printf(__VA_ARGS__);                       \
            printf("\n");                              \
        }                                              \
    } while (0)

static nd_ir_access acc(int slot, nd_dtype t, int ndim, const int64_t *st) {
    nd_ir_access a;
    memset(&a, 0, sizeof a);
    a.slot = slot;
    a.dtype = (uint8_t)t;
    for (int d = 0; d < ndim; d++) a.strides[d] = st[d];
    return a;
}

static nd_ir_inst inst(int op, nd_dtype t, int a, int b) {
    nd_ir_inst i;
    memset(&i, 0, sizeof i);
    i.op = (uint8_t)op;
    i.dtype = (uint8_t)t;
    i.a = a;
    i.b = b;
    i.c = -1;
    i.d = -1;
    return i;
}

static const char *workdir;

/* The callback's values at offsets 0..n-1 on the host: the generated
 * source after the shim, with the vector types cuFFT's signature names
 * and a loop calling it (out: 2 doubles an offset, imaginary 0 for R2C). */
typedef void (*emu_fn)(const void *words, long long n, double *out);
static emu_fn emulate(const char *src, int kind, int f64, const char *stem) {
    nd_strbuf t = {0};
    nd_strbuf_printf(&t, "struct float2 { float x, y; };\nstruct double2 { double x, y; };\n%s\n", src);
    nd_strbuf_printf(&t,
                     "extern \"C\" void emu_load(const void *words, long long n, double *out) {\n"
                     "  for (long long i = 0; i < n; i++) {\n"
                     "    auto v = " ND_FFT_CB_SYMBOL "((void *)words, (unsigned long long)i, 0, 0);\n"
                     "    %s\n  }\n}\n",
                     kind == ND_LIB_FFT_R2C ? "out[2 * i] = (double)v; out[2 * i + 1] = 0;"
                                            : "out[2 * i] = (double)v.x; out[2 * i + 1] = (double)v.y;");
    (void)f64;
    void *h = t.failed ? NULL : emu_build(t.buf, workdir, stem, "-I" ND_EMU_CUDA_INCLUDE);
    nd_strbuf_free(&t);
    return h ? (emu_fn)dlsym(h, "emu_load") : NULL;
}

/* Runs k's callback over its n points with slots/params and compares with
 * want (2 doubles a point) within tol relative to each element's size. */
static void check_values(const nd_kernel *k, int kind, int f64, void *const *slots, const nd_scalar_bits *params,
                         int64_t n, const double *want, double tol, const char *what, const char *stem) {
    char *src = nd_cuda_fft_cb_source(k, kind, f64);
    emu_fn fn = src ? emulate(src, kind, f64, stem) : NULL;
    free(src);
    CHECK(fn != NULL, "%s: the callback did not build on the host", what);
    if (!fn) return;
    uint64_t words[ND_FFT_CB_MAX_WORDS];
    int nw = nd_cuda_fft_cb_words(k, slots, params, words);
    CHECK(nw == k->n_slots + k->n_params, "%s: %d words", what, nw);
    double *got = malloc(sizeof(double) * 2 * (size_t)n);
    for (int64_t i = 0; i < 2 * n; i++) got[i] = NAN; /* poisoned */
    fn(words, n, got);
    int bad = 0;
    for (int64_t i = 0; i < n && bad < 5; i++)
        for (int c = 0; c < 2; c++) {
            double g = got[2 * i + c], w = want[2 * i + c];
            if (!(fabs(g - w) <= tol * (1 + fabs(w)))) {
                CHECK(0, "%s: offset %lld part %d is %.9g, want %.9g", what, (long long)i, c, g, w);
                bad++;
            }
        }
    if (!bad) printf("%s: %lld values on the host match\n", what, (long long)n);
    free(got);
}

static void compile(const nd_kernel *k, int kind, int f64, const char *what) {
    char *src = nd_cuda_fft_cb_source(k, kind, f64);
    CHECK(src != NULL, "%s: no source", what);
    if (!src) return;
    const char *ret = kind == ND_LIB_FFT_R2C ? (f64 ? "double " : "float ") : (f64 ? "double2 " : "float2 ");
    char sig[200];
    snprintf(sig, sizeof sig, "__device__ %s" ND_FFT_CB_SYMBOL "(void *dataIn, unsigned long long offset, void *callerInfo, void *sharedPointer)", ret);
    CHECK(strstr(src, sig) != NULL, "%s: the callback's signature is not cuFFT's (%s)", what, sig);
    void *ir = NULL;
    size_t len = 0;
    nd_status s = nd_cuda_fft_cb_ltoir(src, 90, &ir, &len);
    CHECK(s == ND_OK && ir && len > 0, "%s: %s", what, s == ND_OK ? "empty LTO-IR" : nd_last_error());
    if (s != ND_OK) printf("---- source of %s\n%s\n----\n", what, src);
    else printf("%s: %zu bytes of LTO-IR\n", what, len);
    if (getenv("FFT_CB_SHOW")) printf("%s\n", strstr(src, "static __device__ __forceinline__ void ndk_body"));
    free(ir);
    free(src);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s WORKDIR\n", argv[0]);
        return 2;
    }
    workdir = argv[1];
    if (nd_cuda_load_nvrtc() != ND_OK) {
        fprintf(stderr, "fft_cb_check: %s\n", nd_last_error());
        return 2;
    }
    if (!nd_cuda_api.p_nvrtcGetLTOIR) {
        fprintf(stderr, "fft_cb_check: this NVRTC has no nvrtcGetLTOIR\n");
        return 2;
    }
    /* fft(x * w): x complex64 (n), w float32 (n) -> temp complex64 (n) */
    {
        const int64_t one[1] = {1};
        nd_ir_access loads[2] = {acc(0, ND_COMPLEX64, 1, one), acc(1, ND_FLOAT32, 1, one)};
        nd_ir_inst ins[4] = {inst(ND_IR_LOAD, ND_COMPLEX64, 0, -1), inst(ND_IR_LOAD, ND_FLOAT32, 1, -1),
                             inst(ND_OP_CAST, ND_COMPLEX64, 1, -1), inst(ND_OP_MUL, ND_COMPLEX64, 0, 2)};
        nd_ir_store st = {acc(2, ND_COMPLEX64, 1, one), 3};
        nd_kernel k;
        memset(&k, 0, sizeof k);
        k.ndim = 1;
        k.shape[0] = 1 << 26;
        k.n_slots = 3;
        k.n_loads = 2;
        k.loads = loads;
        k.n_insts = 4;
        k.insts = ins;
        k.n_stores = 1;
        k.stores = &st;
        snprintf(k.name, sizeof k.name, "cast_mul");
        compile(&k, ND_LIB_FFT_C2C, 0, "fft(x * w) complex64");
        k.shape[0] = 1000;
        float *x = malloc(sizeof(float) * 2000), *w = malloc(sizeof(float) * 1000);
        double *want = malloc(sizeof(double) * 2000);
        for (int i = 0; i < 1000; i++) {
            x[2 * i] = (float)sin(i * 0.37), x[2 * i + 1] = (float)cos(i * 0.11), w[i] = (float)(0.5 + i / 999.0);
            want[2 * i] = (double)((float)(x[2 * i] * w[i]));
            want[2 * i + 1] = (double)((float)(x[2 * i + 1] * w[i]));
        }
        void *slots[3] = {x, w, NULL};
        check_values(&k, ND_LIB_FFT_C2C, 0, slots, NULL, 1000, want, 1e-6, "fft(x * w) complex64", "cb_c64");
        free(x), free(w), free(want);
    }
    /* fft(x * w * p + y), batched (64, 1024): w broadcast along axis 0, p a
     * float64 parameter, complex128 */
    {
        const int64_t rows[2] = {1024, 1}, bcast[2] = {0, 1};
        nd_ir_access loads[3] = {acc(0, ND_COMPLEX128, 2, rows), acc(1, ND_FLOAT64, 2, bcast),
                                 acc(2, ND_COMPLEX128, 2, rows)};
        nd_ir_inst ins[9] = {inst(ND_IR_LOAD, ND_COMPLEX128, 0, -1), inst(ND_IR_LOAD, ND_FLOAT64, 1, -1),
                             inst(ND_OP_CAST, ND_COMPLEX128, 1, -1), inst(ND_OP_MUL, ND_COMPLEX128, 0, 2),
                             inst(ND_IR_PARAM, ND_FLOAT64, 0, -1), inst(ND_OP_CAST, ND_COMPLEX128, 4, -1),
                             inst(ND_OP_MUL, ND_COMPLEX128, 3, 5), inst(ND_IR_LOAD, ND_COMPLEX128, 2, -1),
                             inst(ND_OP_ADD, ND_COMPLEX128, 6, 7)};
        nd_ir_store st = {acc(3, ND_COMPLEX128, 2, rows), 8};
        uint8_t pd[1] = {ND_FLOAT64};
        nd_kernel k;
        memset(&k, 0, sizeof k);
        k.ndim = 2;
        k.shape[0] = 64;
        k.shape[1] = 1024;
        k.n_slots = 4;
        k.n_params = 1;
        k.param_dtypes = pd;
        k.n_loads = 3;
        k.loads = loads;
        k.n_insts = 9;
        k.insts = ins;
        k.n_stores = 1;
        k.stores = &st;
        snprintf(k.name, sizeof k.name, "mul_mul_add");
        compile(&k, ND_LIB_FFT_C2C, 1, "fft(x * w * p + y) complex128, broadcast");
        const int64_t n = 64 * 1024;
        double *x = malloc(sizeof(double) * 2 * n), *y = malloc(sizeof(double) * 2 * n), *w = malloc(sizeof(double) * 1024);
        double *want = malloc(sizeof(double) * 2 * n);
        for (int64_t i = 0; i < 1024; i++) w[i] = cos((double)i * 0.01) - 0.25;
        nd_scalar_bits p[1];
        p[0].f = -1.75;
        for (int64_t i = 0; i < n; i++) {
            x[2 * i] = sin((double)i), x[2 * i + 1] = (double)(i % 13) - 6;
            y[2 * i] = (double)(i % 7), y[2 * i + 1] = -(double)(i % 5);
            double ww = w[i % 1024] * p[0].f;
            want[2 * i] = x[2 * i] * ww + y[2 * i];
            want[2 * i + 1] = x[2 * i + 1] * ww + y[2 * i + 1];
        }
        void *slots[4] = {x, w, y, NULL};
        check_values(&k, ND_LIB_FFT_C2C, 1, slots, p, n, want, 1e-13, "fft(x * w * p + y) complex128, broadcast",
                     "cb_c128");
        free(x), free(y), free(w), free(want);
    }
    /* rfft(a * b + i): a, b real, i the point's index (an arange) */
    for (int f64 = 0; f64 < 2; f64++) {
        nd_dtype t = f64 ? ND_FLOAT64 : ND_FLOAT32;
        const int64_t rows[2] = {1000, 1};
        nd_ir_access loads[2] = {acc(0, t, 2, rows), acc(1, t, 2, rows)};
        nd_ir_access idx = acc(0, ND_INT64, 2, (const int64_t[]){0, 1});
        nd_ir_inst ins[6] = {inst(ND_IR_LOAD, t, 0, -1), inst(ND_IR_LOAD, t, 1, -1), inst(ND_OP_MUL, t, 0, 1),
                             inst(ND_IR_INDEX, ND_INT64, 0, -1), inst(ND_OP_CAST, t, 3, -1), inst(ND_OP_ADD, t, 2, 4)};
        nd_ir_store st = {acc(2, t, 2, rows), 5};
        nd_kernel k;
        memset(&k, 0, sizeof k);
        k.ndim = 2;
        k.shape[0] = 3;
        k.shape[1] = 1000;
        k.n_slots = 3;
        k.n_loads = 2;
        k.loads = loads;
        k.n_indices = 1;
        k.indices = &idx;
        k.n_insts = 6;
        k.insts = ins;
        k.n_stores = 1;
        k.stores = &st;
        snprintf(k.name, sizeof k.name, "mul_add");
        const char *what = f64 ? "rfft(a * b + i) float64" : "rfft(a * b + i) float32";
        compile(&k, ND_LIB_FFT_R2C, f64, what);
        double *av = malloc(sizeof(double) * 3000), *bv = malloc(sizeof(double) * 3000);
        float *af = malloc(sizeof(float) * 3000), *bf = malloc(sizeof(float) * 3000);
        double *want = malloc(sizeof(double) * 6000);
        for (int i = 0; i < 3000; i++) {
            av[i] = af[i] = (float)sin(i * 1.3), bv[i] = bf[i] = (float)(i % 11) * 0.25f;
            double prod = f64 ? av[i] * bv[i] : (double)(af[i] * bf[i]);
            want[2 * i] = f64 ? prod + i % 1000 : (double)(float)((float)prod + (float)(i % 1000));
            want[2 * i + 1] = 0;
        }
        void *slots[3] = {f64 ? (void *)av : (void *)af, f64 ? (void *)bv : (void *)bf, NULL};
        check_values(&k, ND_LIB_FFT_R2C, f64, slots, NULL, 3000, want, f64 ? 1e-14 : 1e-6, what,
                     f64 ? "cb_r64" : "cb_r32");
        free(av), free(bv), free(af), free(bf), free(want);
    }
    printf("%d checks, %d failures\n", checks, fails);
    return fails != 0;
}
