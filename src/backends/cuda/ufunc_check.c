/* User loops on the CUDA backend (backend.h's prepare_ufunc): the loop is
 * compiled once by NVRTC at definition, inside a one-line kernel, so that
 * a body that is not valid CUDA C++ is nd_ufunc_define's error with NVRTC's
 * whole message (the body's lines, under the function's name: #line). The
 * kernels that call it paste the same function (codegen.c). */
#include <nvrtc.h>
#include <stdio.h>
#include <string.h>

#include "backends/cuda/cuda_internal.h"
#include "common/alloc.h"
#include "common/error.h"
#include "common/fault.h"
#include "common/strbuf.h"

nd_status nd_cuda_check_ufunc(int arch, const char *fn, const nd_ufunc_loop *l) {
    if (nd_fault_hit(ND_FAULT_COMPILE))
        return nd_error_set(ND_ERR_COMPILE, "%s: '%s' could not be compiled (injected fault)", fn, l->name);
    nd_strbuf sb = {0};
    char nm[ND_UFUNC_FN_NAME];
    nd_ufunc_fn_name(nm, sizeof nm, l);
    nd_ufunc_emit_types(&sb);
    nd_ufunc_emit_fn(&sb, l, "static __device__ __forceinline__");
    nd_strbuf_printf(&sb, "#line 1 \"nd_ufunc_check\"\nextern \"C\" __global__ void ndu_check(%s *o",
                     nd_cuda_reg_type((nd_dtype)l->ret));
    for (int k = 0; k < l->nargs; k++) nd_strbuf_printf(&sb, ", const %s *a%d", nd_cuda_reg_type((nd_dtype)l->args[k]), k);
    nd_strbuf_printf(&sb, ") { o[0] = (%s)%s(", nd_cuda_reg_type((nd_dtype)l->ret), nm);
    for (int k = 0; k < l->nargs; k++) nd_strbuf_printf(&sb, "%sa%d[0]", k ? ", " : "", k);
    nd_strbuf_printf(&sb, "); }\n");
    if (sb.failed) return nd_error_set(ND_ERR_OOM, "%s: out of host memory compiling '%s'", fn, l->name);
    nvrtcProgram prog;
    nvrtcResult r = nvrtcCreateProgram(&prog, sb.buf, l->name, 0, NULL, NULL);
    if (r != NVRTC_SUCCESS) {
        nd_strbuf_free(&sb);
        return nd_error_set(ND_ERR_COMPILE, "%s: NVRTC could not start for '%s' (%s)", fn, l->name,
                            nvrtcGetErrorString(r));
    }
    char archopt[48];
    snprintf(archopt, sizeof archopt, "--gpu-architecture=sm_%d", arch);
    const char *opts[] = {archopt, "--std=c++17", "--device-as-default-execution-space"};
    r = nvrtcCompileProgram(prog, 3, opts);
    nd_status s = ND_OK;
    if (r != NVRTC_SUCCESS) {
        size_t n = 0;
        char log[3000] = "";
        char *full = NULL;
        if (nvrtcGetProgramLogSize(prog, &n) == NVRTC_SUCCESS && n > 0 && (full = nd_malloc(n + 1))) {
            if (nvrtcGetProgramLog(prog, full) != NVRTC_SUCCESS) full[0] = 0;
            full[n] = 0;
            snprintf(log, sizeof log, "%s", full);
            free(full);
        }
        size_t m = strlen(log);
        while (m && (log[m - 1] == '\n' || log[m - 1] == ' ')) log[--m] = 0;
        s = nd_error_set(ND_ERR_COMPILE, "%s: '%s' does not compile (NVRTC, sm_%d; lines are the "
                         "body's, line 1 its first):\n%s", fn, l->name, arch, log);
    }
    nvrtcDestroyProgram(&prog);
    nd_strbuf_free(&sb);
    return s;
}
