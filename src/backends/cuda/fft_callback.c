/* The elementwise kernel feeding a cuFFT transform, as cuFFT's LTO load
 * callback (fft_callback.h).
 *
 * `fft(x * w)` plans as a kernel writing x * w into a temporary and the
 * FFT step reading it: one more pass over memory (a write and a read of
 * the whole input) than the transform needs. When the temporary is the
 * kernel's only output and the FFT its only reader, the kernel's body can
 * instead run inside cuFFT, where cuFFT loads each input element: the
 * callback gets the element's offset in the packed input, which is the
 * kernel's linear point index (the kernel stores its whole space
 * contiguously there), unravels it, does the kernel's loads and calls the
 * kernel's body function, all made by the kernel code generator.
 *
 * The operands' addresses change from run to run, but cuFFT fixes a
 * callback's caller_info when the callback is set, before the plan is
 * made. So the callback reads them from dataIn instead: the run writes the
 * kernel's argument words into its workspace with a one-thread kernel
 * (the words are kernel arguments, captured by value in a CUDA graph) and
 * passes that address to cufftExec as the input, which cuFFT only hands to
 * the load callback. Per step, so two steps sharing one cuFFT plan on two
 * streams never share the words. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/cuda_internal.h"
#include "backends/cuda/fft_callback.h"
#include "backends/step_kinds.h"
#include "common/alloc.h"
#include "common/error.h"
#include "common/lib_fft.h"

/* ---------------------------------------------------------------- choice */

static int contiguous(int ndim, const int64_t *shape, const int64_t *strides, int64_t offset) {
    if (offset != 0) return 0;
    int64_t want = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        if (shape[d] != 1 && strides[d] != want) return 0;
        want *= shape[d];
    }
    return 1;
}

static int writes_slot(const nd_plan *plan, const nd_step *st, int32_t slot) {
    for (int32_t j = 0, n = nd_step_n_accesses(st); j < n; j++) {
        nd_step_access a = nd_step_access_at(st, j, plan->memory);
        if (a.slot == slot && (a.mode & ND_ACCESS_WRITE)) return 1;
    }
    return 0;
}

/* Whether st writes slot's memory: the slot, or a temporary sharing its
 * storage (temporaries whose lifetimes do not overlap share one, and a
 * temporary the kernel reads last may hand its storage to a later one). */
static int writes_memory_of(const nd_plan *plan, const nd_step *st, int32_t slot) {
    const nd_plan_slot *ps = &plan->slots[slot];
    for (int32_t j = 0, n = nd_step_n_accesses(st); j < n; j++) {
        nd_step_access a = nd_step_access_at(st, j, plan->memory);
        if (!(a.mode & ND_ACCESS_WRITE) || a.slot < 0) continue;
        if (a.slot == slot) return 1;
        const nd_plan_slot *o = &plan->slots[a.slot];
        if (ps->role == ND_SLOT_TEMP && o->role == ND_SLOT_TEMP && o->storage == ps->storage) return 1;
    }
    return 0;
}

static int touches_slot(const nd_plan *plan, const nd_step *st, int32_t slot) {
    for (int32_t j = 0, n = nd_step_n_accesses(st); j < n; j++)
        if (nd_step_access_at(st, j, plan->memory).slot == slot) return 1;
    return 0;
}

int32_t nd_cuda_fft_cb_producer(const nd_plan *plan, int32_t f, const char **why) {
    const nd_step *fs = &plan->steps[f];
    *why = "not an FFT step";
    if (fs->kind != ND_STEP_USER || fs->user.lib != ND_LIB_FFT || fs->user.n_in != 1) return -1;
    int kind = (int)fs->user.lib_args.v[ND_LIB_FFT_KIND].i;
    *why = "a complex-to-real transform (its input is copied first)";
    if (kind != ND_LIB_FFT_C2C && kind != ND_LIB_FFT_R2C) return -1;
    *why = "a step over pieces of a split array";
    if (fs->part != ND_PART_NONE || fs->device) return -1;
    const nd_user_arg_desc *in = &fs->user.args[0];
    int32_t t = in->slot;
    *why = "its input is not a packed temporary";
    if (t < 0 || t >= plan->n_slots || plan->slots[t].role != ND_SLOT_TEMP ||
        !contiguous(in->ndim, in->shape, in->strides, in->offset))
        return -1;
    /* The one kernel writing t, before f; nothing else touches t. */
    int32_t k = -1;
    for (int32_t i = 0; i < plan->n_steps; i++) {
        if (i == f || !touches_slot(plan, &plan->steps[i], t)) continue;
        *why = "its input is also used by another step";
        if (k >= 0 || i > f || plan->steps[i].kind != ND_STEP_KERNEL || !writes_slot(plan, &plan->steps[i], t))
            return -1;
        k = i;
    }
    *why = "its input has no producing kernel in this plan";
    if (k < 0) return -1;
    const nd_step *ks = &plan->steps[k];
    const nd_kernel *kn = ks->kernel;
    *why = "its producing kernel is split or offset";
    if (ks->part != ND_PART_NONE || ks->device || ks->strip != ND_STRIP_WHOLE || ks->slot_byte_offset) return -1;
    *why = "its producing kernel reduces, gathers or has several outputs";
    if (kn->has_reduce || kn->n_gathers || kn->n_stores != 1) return -1;
    *why = "its producing kernel draws random numbers";
    for (int32_t j = 0; j < kn->n_insts; j++) {
        int op = kn->insts[j].op;
        if (op == ND_IR_RAND_UNIFORM || op == ND_IR_RAND_NORMAL || op == ND_IR_RAND_INTEGER) return -1;
    }
    *why = "its producing kernel has too many arguments for the callback";
    if (kn->n_slots + kn->n_params > ND_FFT_CB_MAX_WORDS) return -1;
    /* A long body inside cuFFT's kernels costs their registers and
     * occupancy on every pass it is inlined into; the pass over memory it
     * saves is a fixed gain. */
    *why = "its producing kernel's body is long";
    if (kn->n_insts > ND_FFT_CB_MAX_INSTS) return -1;
    const nd_ir_store *st = &kn->stores[0];
    int64_t space = 1;
    for (int d = 0; d < kn->ndim; d++) space *= kn->shape[d];
    int64_t n_in = 1;
    for (int d = 0; d < in->ndim; d++) n_in *= in->shape[d];
    *why = "its producing kernel does not write the input whole and in order";
    if (ks->slots[st->at.slot] != t || st->at.dtype != in->dtype || space != n_in ||
        !contiguous(kn->ndim, kn->shape, st->at.strides, st->at.offset))
        return -1;
    /* The kernel reads its operands when f runs: nothing may write them
     * from the kernel on (a later step that does was ordered after the
     * kernel, not after f). Nor may it read t. */
    for (int32_t j = 0; j < kn->n_slots; j++) {
        int32_t s = ks->slots[j];
        if (s == t) {
            *why = "its producing kernel reads its own output";
            if (ks->slot_access[j] & (ND_ACCESS_READ | ND_ACCESS_REGION)) return -1;
            continue;
        }
        for (int32_t i = k + 1; i < plan->n_steps; i++) {
            *why = "an operand of its producing kernel (or its memory) is written from the kernel on";
            if (writes_memory_of(plan, &plan->steps[i], s)) return -1;
        }
    }
    *why = NULL;
    return k;
}

/* ------------------------------------------------------------- callback */

char *nd_cuda_fft_cb_source(const nd_kernel *k, int kind, int f64) {
    nd_strbuf sb = {0};
    nd_cuda_emit_prelude(&sb);
    nd_cuda_emit_ufuncs(&sb, k);
    nd_strbuf_printf(&sb, "struct ndk_args { unsigned long long w[%d]; };\n",
                     k->n_slots + k->n_params > 0 ? k->n_slots + k->n_params : 1);
    nd_cuda_emit_body_fn(&sb, k, 1, 0);
    const char *ret = kind == ND_LIB_FFT_R2C ? (f64 ? "double" : "float") : (f64 ? "double2" : "float2");
    /* cuFFT's LTO load-callback signature, C++ linkage (cuFFT declares it
     * by this name and that type) */
    nd_strbuf_printf(&sb,
                     "__device__ %s " ND_FFT_CB_SYMBOL
                     "(void *dataIn, unsigned long long offset, void *callerInfo, void *sharedPointer) {\n"
                     "  const ndk_args &A = *(const ndk_args *)dataIn;\n",
                     ret);
    nd_cuda_emit_unravel(&sb, k, k->ndim >= 32 ? 0xffffffffu : (1u << k->ndim) - 1u, "offset", "long long", "  ");
    nd_cuda_emit_point_value(&sb, k, 1, "  ");
    if (kind == ND_LIB_FFT_R2C) nd_strbuf_printf(&sb, "  return s0;\n}\n");
    else nd_strbuf_printf(&sb, "  %s r; r.x = s0.re; r.y = s0.im;\n  return r;\n}\n", ret);
    if (sb.failed) {
        nd_strbuf_free(&sb);
        return NULL;
    }
    return sb.buf;
}

int nd_cuda_fft_cb_words(const nd_kernel *k, void *const *slots, const nd_scalar_bits *params, uint64_t *words) {
    for (int i = 0; i < k->n_slots; i++) words[i] = (uint64_t)(uintptr_t)slots[i];
    for (int j = 0; j < k->n_params; j++) {
        if (k->param_dtypes[j] == ND_FLOAT32) {
            /* float bits, as nd_cuda_issue_kernel passes them */
            float v = (float)params[j].f;
            uint32_t bits;
            memcpy(&bits, &v, sizeof bits);
            words[k->n_slots + j] = bits;
        } else {
            memcpy(&words[k->n_slots + j], &params[j], sizeof(uint64_t));
        }
    }
    return k->n_slots + k->n_params;
}

nd_status nd_cuda_fft_cb_ltoir(const char *src, int arch, void **ir, size_t *len) {
    *ir = NULL;
    *len = 0;
    if (!nd_cuda_api.p_nvrtcGetLTOIR || !nd_cuda_api.p_nvrtcGetLTOIRSize)
        return nd_error_set(ND_ERR_UNSUPPORTED, "cuda: this NVRTC has no LTO-IR output (nvrtcGetLTOIR)");
    nvrtcProgram prog;
    nvrtcResult r = nvrtcCreateProgram(&prog, src, "nd_fft_load.cu", 0, NULL, NULL);
    if (r != NVRTC_SUCCESS)
        return nd_error_set(ND_ERR_COMPILE, "cuda: nvrtcCreateProgram failed: %s", nvrtcGetErrorString(r));
    char archopt[48];
    snprintf(archopt, sizeof archopt, "--gpu-architecture=compute_%d", arch);
    const char *inc = nd_cuda_include_option();
    const char *opts[] = {archopt, "--std=c++17", "--relocatable-device-code=true", "-dlto",
                          "--device-as-default-execution-space", inc};
    r = nvrtcCompileProgram(prog, (int)(sizeof opts / sizeof opts[0]) - (inc[0] ? 0 : 1), opts);
    if (r != NVRTC_SUCCESS) {
        char first[400] = "";
        size_t n = 0;
        char *log = NULL;
        if (nvrtcGetProgramLogSize(prog, &n) == NVRTC_SUCCESS && n > 0 && (log = nd_malloc(n + 1))) {
            if (nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS) log[0] = 0;
            log[n] = 0;
            snprintf(first, sizeof first, "%s", log);
            char *nl = strchr(first, '\n');
            if (nl) *nl = 0;
        }
        free(log);
        nvrtcDestroyProgram(&prog);
        return nd_error_set(ND_ERR_COMPILE, "cuda: NVRTC could not compile the FFT load callback for compute_%d (%s): %s",
                            arch, nvrtcGetErrorString(r), first);
    }
    size_t n = 0;
    void *bin = NULL;
    r = nvrtcGetLTOIRSize(prog, &n);
    if (r == NVRTC_SUCCESS && !(bin = nd_malloc(n ? n : 1))) {
        nvrtcDestroyProgram(&prog);
        return nd_error_set(ND_ERR_OOM, "cuda: out of host memory for a %zu-byte LTO-IR", n);
    }
    if (r == NVRTC_SUCCESS) r = nvrtcGetLTOIR(prog, bin);
    nvrtcDestroyProgram(&prog);
    if (r != NVRTC_SUCCESS) {
        free(bin);
        return nd_error_set(ND_ERR_COMPILE, "cuda: nvrtcGetLTOIR failed: %s", nvrtcGetErrorString(r));
    }
    *ir = bin;
    *len = n;
    return ND_OK;
}
