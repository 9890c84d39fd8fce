/* User kernels (include/nd/kernels.h): the program's code as one step of
 * the lazy graph. A call with n outputs records n consecutive USER nodes
 * (graph/node.h): the first holds the inputs and the current version of
 * every in-place output (so the scheduler orders the call after their
 * writers and keeps those alive), each writes one output buffer, and the
 * planner turns the group into one ND_STEP_USER step (plan_build.c).
 * Recording is frontend/calls.c's, shared with nd's library routines. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/memory.h"
#include "common/strbuf.h"
#include "common/user_kernel.h"
#include "frontend/frontend.h"

static int check_kernel(const char *fn, const nd_user_kernel *k) {
    if (!k) {
        nd_error_null_input(fn, "k");
        return -1;
    }
    if (k->magic != ND_USER_KERNEL_MAGIC) {
        nd_error_set(ND_ERR_ARG, "%s: k (%p) is not a live user kernel (freed with nd_user_kernel_free, or "
                     "never made by nd_user_kernel_new)", fn, (const void *)k);
        return -1;
    }
    return 0;
}

/* Implementations are fixed once a call is recorded: a cached plan (and
 * its compiled CUDA function) would otherwise run the old one. */
static nd_status check_settable(const char *fn, const nd_user_kernel *k) {
    if (check_kernel(fn, k)) return nd_last_status();
    if (k->called)
        return nd_error_set(ND_ERR_STATE, "%s: user kernel '%s' has already been called; set its implementations "
                            "before the first nd_user_kernel_call (or make a new kernel)", fn, k->name);
    return ND_OK;
}

nd_user_kernel *nd_user_kernel_new(const char *name, int n_in, int n_out) {
    ND_API_GUARD();
    static const char fn[] = "nd_user_kernel_new";
    if (!name) {
        nd_error_null_input(fn, "name");
        return NULL;
    }
    size_t len = strlen(name);
    int ok = len >= 1 && len <= 63;
    for (size_t i = 0; ok && i < len; i++) ok = isalnum((unsigned char)name[i]) || name[i] == '_';
    if (!ok) {
        nd_error_set(ND_ERR_ARG, "%s: name \"%.80s\" is not 1-63 characters of letters, digits and '_' (it names "
                     "the kernel in errors, logs and CUDA source)", fn, name);
        return NULL;
    }
    if (n_in < 0 || n_out < 1 || n_in + n_out > ND_USER_KERNEL_MAX_ARGS) {
        nd_error_set(ND_ERR_ARG, "%s: kernel '%s' with %d inputs and %d outputs (use n_in >= 0, n_out >= 1 and "
                     "n_in + n_out <= %d)", fn, name, n_in, n_out, ND_USER_KERNEL_MAX_ARGS);
        return NULL;
    }
    nd_user_kernel *k = nd_calloc(1, sizeof *k);
    if (!k) {
        nd_error_set(ND_ERR_OOM, "%s: out of host memory", fn);
        return NULL;
    }
    k->magic = ND_USER_KERNEL_MAGIC;
    k->refs = 1;
    k->n_in = n_in;
    k->n_out = n_out;
    memcpy(k->name, name, len + 1);
    return k;
}

nd_status nd_user_kernel_set_cpu(nd_user_kernel *k, nd_kernel_cpu_fn cpu_fn, void *ctx) {
    ND_API_GUARD();
    static const char fn[] = "nd_user_kernel_set_cpu";
    nd_status st = check_settable(fn, k);
    if (st != ND_OK) return st;
    if (!cpu_fn) return nd_error_set(ND_ERR_ARG, "%s: fn is NULL (pass the kernel's CPU function)", fn);
    k->cpu_fn = cpu_fn;
    k->cpu_ctx = ctx;
    return ND_OK;
}

static nd_status set_launch(const char *fn, nd_user_kernel *k, const nd_kernel_launch *launch,
                            nd_kernel_launch_fn launch_fn, void *launch_ctx) {
    if (launch && launch_fn)
        return nd_error_set(ND_ERR_ARG, "%s: both launch and launch_fn are given (pass a fixed launch, a function "
                            "computing it, or neither for one thread per output element)", fn);
    k->has_launch = launch != NULL;
    if (launch) k->launch = *launch;
    k->launch_fn = launch_fn;
    k->launch_ctx = launch_ctx;
    return ND_OK;
}

/* What nd puts in front of the program's source: the argument struct (the
 * layout of include/nd/kernels.h's) and the dtype numbers; then a #line so
 * the compiler's messages count the program's own lines. */
static char *cuda_full_source(const nd_user_kernel *k, const char *src) {
    nd_strbuf sb = {0};
    nd_strbuf_printf(&sb, "typedef struct nd_kernel_arg {\n    void *data;\n    int dtype;\n    int ndim;\n"
                      "    long long size;\n    long long shape[8];\n    long long strides[8];\n} nd_kernel_arg;\n");
    for (int t = 0; t < ND_NUM_DTYPES; t++) {
        char up[32];
        const char *name = nd_dtype_name((nd_dtype)t);
        size_t i = 0;
        for (; name[i] && i + 1 < sizeof up; i++) up[i] = (char)toupper((unsigned char)name[i]);
        up[i] = 0;
        nd_strbuf_printf(&sb, "#define ND_%s %d\n", up, t);
    }
    nd_strbuf_printf(&sb, "#line 1 \"%s.cu\"\n%s\n", k->name, src);
    if (sb.failed) {
        nd_strbuf_free(&sb);
        return NULL;
    }
    return sb.buf;
}

nd_status nd_user_kernel_set_cuda_source(nd_user_kernel *k, const char *src, const char *entry,
                                         const nd_kernel_launch *launch, nd_kernel_launch_fn launch_fn,
                                         void *launch_ctx) {
    ND_API_GUARD();
    static const char fn[] = "nd_user_kernel_set_cuda_source";
    nd_status st = check_settable(fn, k);
    if (st != ND_OK) return st;
    if (!src) return nd_error_set(ND_ERR_ARG, "%s: src is NULL (pass the CUDA C++ source text)", fn);
    if (!entry || !*entry)
        return nd_error_set(ND_ERR_ARG, "%s: entry is %s (pass the name of the source's extern \"C\" __global__ "
                            "function)", fn, entry ? "empty" : "NULL");
    char *full = cuda_full_source(k, src), *e = nd_strdup(entry);
    if (!full || !e) {
        free(full);
        free(e);
        return nd_error_set(ND_ERR_OOM, "%s: out of host memory", fn);
    }
    st = set_launch(fn, k, launch, launch_fn, launch_ctx);
    if (st != ND_OK) {
        free(full);
        free(e);
        return st;
    }
    free(k->cuda_source);
    free(k->cuda_entry);
    k->cuda_source = full;
    k->cuda_entry = e;
    k->cuda_func = NULL;
    return ND_OK;
}

nd_status nd_user_kernel_set_cuda_function(nd_user_kernel *k, const void *func, const nd_kernel_launch *launch,
                                           nd_kernel_launch_fn launch_fn, void *launch_ctx) {
    ND_API_GUARD();
    static const char fn[] = "nd_user_kernel_set_cuda_function";
    nd_status st = check_settable(fn, k);
    if (st != ND_OK) return st;
    if (!func) return nd_error_set(ND_ERR_ARG, "%s: func is NULL (pass a __global__ function or a cudaKernel_t)", fn);
    st = set_launch(fn, k, launch, launch_fn, launch_ctx);
    if (st != ND_OK) return st;
    free(k->cuda_source);
    free(k->cuda_entry);
    k->cuda_source = k->cuda_entry = NULL;
    k->cuda_func = func;
    return ND_OK;
}

void nd_user_kernel_free(nd_user_kernel *k) {
    ND_API_GUARD();
    if (!k || k->magic != ND_USER_KERNEL_MAGIC) return;
    k->magic = 0; /* the handle is gone; pending calls and plans keep the rest */
    nd_user_kernel_unref(k);
}

/* ------------------------------------------------------------------ calls */

static nd_status check_output(const char *fn, const nd_user_kernel *k, int j, const nd_kernel_output *o,
                              nd_array *const *outs_seen) {
    char s1[200], s2[200];
    if (!o->array) {
        size_t nbytes;
        if (o->ndim < 0)
            return nd_error_set(ND_ERR_ARG, "%s: outputs[%d] of kernel '%s' has ndim %d and no array (ndim -1 means "
                                "\"the array's\"; a new output needs its dtype, ndim and shape)", fn, j, k->name,
                                o->ndim);
        char where[96]; /* the message names the output: "nd_user_kernel_call: outputs[1]: ..." */
        snprintf(where, sizeof where, "%s: outputs[%d]", fn, j);
        return nd_fe_check_shape(where, o->ndim, o->shape, o->dtype, &nbytes) ? nd_last_status() : ND_OK;
    }
    char name[32];
    snprintf(name, sizeof name, "outputs[%d].array", j);
    if (nd_fe_arg(fn, name, o->array)) return nd_last_status();
    const nd_array *a = o->array;
    if (a->weak || a->readonly)
        return nd_error_set(ND_ERR_ARG, "%s: %s is %s, which cannot be written in place (write into an array made "
                            "with nd_empty/nd_zeros/nd_copy, or leave array NULL for a new output)", fn, name,
                            a->weak || a->readonly == ND_READONLY_WEAK ? "a weak scalar (or a view of one)"
                            : a->readonly == ND_READONLY_IMAG_OF_REAL ? "nd_imag of a real array (read-only zeros)"
                            : a->readonly == ND_READONLY_IMPORTED     ? "a read-only DLPack import"
                                                                      : "a read-only broadcast view");
    for (int m = 0; m < j; m++)
        if (outs_seen[m] && outs_seen[m]->buf == a->buf)
            return nd_error_set(ND_ERR_ARG, "%s: outputs[%d] and outputs[%d] of kernel '%s' share one buffer (each "
                                "in-place output must be a different array)", fn, m, j, k->name);
    if (o->ndim < 0) return ND_OK;
    if (nd_fe_check_dtype(fn, o->dtype)) return nd_last_status();
    if (o->dtype != a->dtype)
        return nd_error_set(ND_ERR_DTYPE, "%s: %s has dtype %s but outputs[%d] declares %s (declare its own dtype, or "
                            "ndim -1 to take it from the array)", fn, name, nd_dtype_name(a->dtype), j,
                            nd_dtype_name(o->dtype));
    int same = o->ndim == a->ndim && (o->ndim == 0 || o->shape);
    for (int d = 0; same && d < a->ndim; d++) same = o->shape[d] == a->shape[d];
    if (!same)
        return nd_error_set(ND_ERR_SHAPE, "%s: %s has shape %s but outputs[%d] declares %s (declare its shape, or ndim "
                            "-1 to take it from the array)", fn, name, nd_format_shape(s1, sizeof s1, a->ndim, a->shape),
                            j, o->shape || o->ndim == 0 ? nd_format_shape(s2, sizeof s2, o->ndim, o->shape) : "NULL");
    return ND_OK;
}

static nd_status check_call(const char *fn, nd_user_kernel *k, int n_in, nd_array *const *inputs, int n_out,
                            const nd_kernel_output *outputs, nd_array **results) {
    if (check_kernel(fn, k)) return nd_last_status();
    if (n_in != k->n_in || n_out != k->n_out)
        return nd_error_set(ND_ERR_ARG, "%s: kernel '%s' was declared with %d inputs and %d outputs but is called with "
                            "%d and %d (pass what nd_user_kernel_new declared)", fn, k->name, k->n_in, k->n_out, n_in,
                            n_out);
    if (n_in > 0 && !inputs) return nd_error_set(ND_ERR_ARG, "%s: inputs is NULL but n_in is %d", fn, n_in);
    if (!outputs) return nd_error_set(ND_ERR_ARG, "%s: outputs is NULL (describe each of the %d outputs)", fn, n_out);
    char name[32];
    for (int i = 0; i < n_in; i++) {
        snprintf(name, sizeof name, "inputs[%d]", i);
        if (nd_fe_arg(fn, name, inputs[i])) return nd_last_status();
    }
    nd_array *seen[ND_USER_KERNEL_MAX_ARGS];
    int any_new = 0;
    for (int j = 0; j < n_out; j++) {
        nd_status st = check_output(fn, k, j, &outputs[j], seen);
        if (st != ND_OK) return st;
        seen[j] = outputs[j].array;
        any_new |= !outputs[j].array;
    }
    if (any_new && !results)
        return nd_error_set(ND_ERR_ARG, "%s: results is NULL but kernel '%s' makes new outputs (pass an array of %d "
                            "handles)", fn, k->name, n_out);
    int host = nd_runtime_memory() == ND_MEMORY_HOST;
    if (host ? !k->cpu_fn : !(k->cuda_source || k->cuda_func))
        return nd_error_set(ND_ERR_UNSUPPORTED, "%s: kernel '%s' has no implementation for the %s backend in use (give "
                            "it one with %s)", fn, k->name, host ? "CPU" : "CUDA",
                            host ? "nd_user_kernel_set_cpu" : "nd_user_kernel_set_cuda_source or _set_cuda_function");
    return ND_OK;
}

nd_status nd_user_kernel_call(nd_user_kernel *k, int n_in, nd_array *const *inputs, int n_out,
                              const nd_kernel_output *outputs, nd_array **results) {
    ND_API_GUARD();
    static const char fn[] = "nd_user_kernel_call";
    if (results && n_out > 0 && n_out <= ND_USER_KERNEL_MAX_ARGS)
        for (int j = 0; j < n_out; j++) results[j] = NULL;
    nd_status st = nd_runtime_ensure();
    if (st != ND_OK) return st;
    st = check_call(fn, k, n_in, inputs, n_out, outputs, results);
    if (st != ND_OK) return st;
    st = nd_fe_record_call(fn, k, ND_LIB_NONE, NULL, n_in, inputs, n_out, outputs, results, 1);
    if (st != ND_OK) return st;
    k->called = 1;
    return ND_OK;
}
