/* Checks the cuFFT load callbacks the CUDA backend generates
 * (fft_callback.c) where there is no GPU: builds by hand the kernels that
 * `fft(x * w)` (complex64 times float32), `fft(x * w * p + y)` over a
 * broadcast operand and a parameter (complex128), and `rfft(a * b + i)`
 * with an index value (float64, float32) plan as, generates each one's
 * callback and compiles it with NVRTC to LTO-IR for sm_90, as the backend
 * does before cufftXtSetJITCallback; and checks the source defines the
 * callback with cuFFT's signature. Build and run: fft_cb_check.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/cuda_internal.h"
#include "backends/cuda/fft_callback.h"
#include "common/lib_fft.h"
#include "common/profile.h"
#include "common/user_kernel.h"

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

int main(void) {
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
        compile(&k, ND_LIB_FFT_R2C, f64, f64 ? "rfft(a * b + i) float64" : "rfft(a * b + i) float32");
    }
    printf("%d checks, %d failures\n", checks, fails);
    return fails != 0;
}
