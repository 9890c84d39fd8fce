#include "common/user_kernel.h"

#include <stdlib.h>

#include "common/error.h"

void nd_user_kernel_ref(nd_user_kernel *k) { __atomic_add_fetch(&k->refs, 1, __ATOMIC_RELAXED); }

void nd_user_kernel_unref(nd_user_kernel *k) {
    if (!k || __atomic_sub_fetch(&k->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
    k->magic = 0;
    free(k->cuda_source);
    free(k->cuda_entry);
    free(k);
}

int nd_user_kernel_launch_for(const nd_user_kernel *k, const nd_kernel_arg *args, nd_kernel_launch *out) {
    if (k->has_launch) {
        *out = k->launch;
    } else if (k->launch_fn) {
        *out = (nd_kernel_launch){{1, 1, 1}, {1, 1, 1}, 0};
        int rc = k->launch_fn(k->launch_ctx, k->n_in, args, k->n_out, args + k->n_in, out);
        if (rc) return rc;
    } else {
        int64_t n = args[k->n_in].size, blocks = (n + 255) / 256;
        *out = (nd_kernel_launch){{(unsigned)(blocks > 0 ? blocks : 1), 1, 1}, {256, 1, 1}, 0};
    }
    for (int d = 0; d < 3; d++) {
        if (!out->grid[d]) out->grid[d] = 1;
        if (!out->block[d]) out->block[d] = 1;
    }
    return 0;
}

nd_status nd_user_kernel_run_cpu(const nd_user_kernel *k, const nd_kernel_arg *args) {
    if (!k->cpu_fn)
        return nd_error_set(ND_ERR_UNSUPPORTED, "user kernel '%s' has no CPU implementation (give it one with "
                            "nd_user_kernel_set_cpu)", k->name);
    int rc = k->cpu_fn(k->cpu_ctx, k->n_in, args, k->n_out, args + k->n_in);
    if (rc)
        return nd_error_set(ND_ERR_BACKEND, "user kernel '%s' failed (its function returned %d)", k->name, rc);
    return ND_OK;
}
