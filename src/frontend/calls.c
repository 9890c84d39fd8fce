/* Recording a call: a user kernel's (user_kernels.c) or one of nd's library
 * routines' (common/lib_calls.h, through nd_fe_lib_call). A call with n
 * outputs records n consecutive USER nodes (graph/node.h): the first holds
 * the inputs and the current version of every in-place output (so the
 * scheduler orders the call after their writers and keeps those alive),
 * each writes one output buffer, and the planner turns the group into one
 * ND_STEP_USER step (plan_build.c). */
#include <string.h>

#include "common/alloc.h"
#include "common/user_kernel.h"
#include "frontend/frontend.h"

/* One USER node writing output j (the first also takes the inputs). */
static nd_node *record_output(const char *fn, nd_user_kernel *k, nd_lib_call lib, const nd_lib_args *args, int j,
                              nd_array *const *in, int n_in, int n_out, const nd_kernel_output *outputs,
                              nd_buffer *buf, const nd_array *view) {
    int n_inputs = 0;
    if (j == 0) {
        n_inputs = n_in;
        for (int m = 0; m < n_out; m++) n_inputs += outputs[m].array != NULL;
    }
    nd_node *n = nd_graph_add_node(&nd_rt.graph, ND_NODE_USER, n_inputs, 0);
    if (!n) return NULL;
    n->dtype = n->cdtype = (uint8_t)view->dtype;
    n->ndim = (uint8_t)view->ndim;
    n->label = fn;
    n->op = (uint8_t)lib;
    if (args) memcpy(n->params, args->v, sizeof args->v);
    n->u.user.offset = view->offset;
    for (int d = 0; d < view->ndim; d++) {
        n->shape[d] = view->shape[d];
        n->u.user.strides[d] = view->strides[d];
    }
    n->u.user.kernel = k;
    n->u.user.index = (uint8_t)j;
    n->u.user.count = (uint8_t)n_out;
    n->u.user.n_in = (uint8_t)n_in;
    n->u.user.in_place = outputs[j].array != NULL;
    if (j == 0) {
        for (int i = 0; i < n_in; i++) nd_graph_set_input(n, i, in[i], in[i]->ndim, in[i]->shape, in[i]->strides);
        int r = n_in;
        for (int m = 0; m < n_out; m++) {
            const nd_array *a = outputs[m].array;
            if (a) nd_graph_set_input(n, r++, a, a->ndim, a->shape, a->strides);
        }
    }
    if (nd_graph_set_output(&nd_rt.graph, n, buf)) return NULL;
    if (j == 0 && k) nd_user_kernel_ref(k);
    return n;
}

nd_status nd_fe_record_call(const char *fn, nd_user_kernel *k, nd_lib_call lib, const nd_lib_args *args, int n_in,
                            nd_array *const *inputs, int n_out, const nd_kernel_output *outputs,
                            nd_array **results, int track) {
    const char *callee = k ? k->name : nd_lib_calls[lib].name;
    nd_status st = ND_OK;
    /* Weak scalars become 0-d arrays of their default dtype. */
    nd_array *in[ND_USER_KERNEL_MAX_ARGS];
    int n_made = 0;
    for (int i = 0; i < n_in && st == ND_OK; i++) {
        in[i] = inputs[i];
        if (!inputs[i]->weak) continue;
        in[i] = nd_fe_strong(fn, inputs[i]);
        if (!in[i]) st = nd_last_status();
        n_made = i + 1;
    }
    nd_array *made[ND_USER_KERNEL_MAX_ARGS] = {0};
    for (int j = 0; j < n_out && st == ND_OK; j++) {
        const nd_kernel_output *o = &outputs[j];
        if (o->array) continue;
        size_t nbytes;
        nd_fe_nbytes(fn, o->ndim, o->shape, o->dtype, &nbytes);
        nd_buffer *b = nd_buffer_new(o->dtype, nbytes);
        made[j] = b ? nd_array_new_contiguous(b, o->dtype, o->ndim, o->shape) : NULL;
        if (b) nd_buffer_unref(b); /* the handle holds it */
        if (!made[j]) st = nd_error_set(ND_ERR_OOM, "%s: out of host memory recording '%s'", fn, callee);
    }
    int recorded = 0;
    if (st == ND_OK) {
        nd_runtime_before_record();
        for (; recorded < n_out; recorded++) {
            const nd_array *view = outputs[recorded].array ? outputs[recorded].array : made[recorded];
            if (!record_output(fn, k, lib, args, recorded, in, n_in, n_out, outputs, view->buf, view)) break;
        }
        if (recorded < n_out) {
            /* All outputs or none: take back the ones recorded. */
            while (recorded-- > 0) nd_graph_drop_last(&nd_rt.graph);
            st = nd_error_set(ND_ERR_OOM, "%s: out of host memory recording '%s'", fn, callee);
        }
    }
    for (int i = 0; i < n_made; i++)
        if (in[i] != inputs[i]) nd_fe_release(in[i]);
    for (int j = 0; j < n_out; j++) {
        if (!made[j]) continue;
        if (st == ND_OK) results[j] = track ? nd_runtime_track(made[j]) : made[j];
        else nd_fe_release(made[j]);
    }
    if (st != ND_OK) return st;
    nd_runtime_after_record();
    return ND_OK;
}

nd_status nd_fe_lib_call(const char *fn, nd_lib_call lib, const nd_lib_args *args, int n_in, nd_array *const *inputs,
                         int n_out, const nd_kernel_output *outputs, nd_array **results) {
    for (int j = 0; j < n_out; j++) results[j] = NULL;
    if (nd_lib_calls[lib].n_in != n_in || nd_lib_calls[lib].n_out != n_out)
        return nd_error_set(ND_ERR_STATE, "%s: routine '%s' called with %d inputs and %d outputs (its row says %d "
                            "and %d: an nd bug)", fn, nd_lib_calls[lib].name, n_in, n_out, nd_lib_calls[lib].n_in,
                            nd_lib_calls[lib].n_out);
    /* Sorts, gathers and histograms have no complex loops yet: refused
     * here, at record time (dense linear algebra, the FFT and the scans
     * take complex operands). */
    for (int j = 0; j < n_in && !nd_lib_takes_complex(lib); j++)
        if (inputs[j] && nd_dtype_is_complex(inputs[j]->dtype))
            return nd_error_set(ND_ERR_UNSUPPORTED, "%s: %s arrays are not supported yet (routine "
                                "'%s'; nd's complex support is elementwise)", fn,
                                nd_dtype_name(inputs[j]->dtype), nd_lib_calls[lib].name);
    for (int j = 0; j < n_out && !nd_lib_takes_complex(lib); j++)
        if (nd_dtype_is_complex(outputs[j].dtype))
            return nd_error_set(ND_ERR_UNSUPPORTED, "%s: %s results are not supported yet (routine "
                                "'%s')", fn, nd_dtype_name(outputs[j].dtype), nd_lib_calls[lib].name);
    return nd_fe_record_call(fn, NULL, lib, args, n_in, inputs, n_out, outputs, results, 0);
}
