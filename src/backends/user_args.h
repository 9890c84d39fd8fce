/* The arguments a user kernel step passes (include/nd/kernels.h's
 * nd_kernel_arg), from its plan-slot views and the bound slot addresses:
 * the same on every backend, host or device pointers alike. Inline: the
 * backends' self-tests link without the shared backend sources. */
#ifndef ND_BACKENDS_USER_ARGS_H
#define ND_BACKENDS_USER_ARGS_H

#include <string.h>

#include "backends/plan.h"

/* args[0 .. u->n_in + u->n_out): data = slot base + offset elements. */
static inline void nd_user_args_bind(const nd_user_desc *u, void *const *plan_slots, nd_kernel_arg *args) {
    for (int32_t i = 0; i < u->n_in + u->n_out; i++) {
        const nd_user_arg_desc *d = &u->args[i];
        nd_kernel_arg *a = &args[i];
        memset(a, 0, sizeof *a);
        int64_t item = (int64_t)nd_dtype_size((nd_dtype)d->dtype);
        char *base = plan_slots[d->slot];
        a->data = base ? base + d->offset * item : NULL;
        a->dtype = d->dtype;
        a->ndim = d->ndim;
        a->size = 1;
        for (int k = 0; k < d->ndim; k++) {
            a->shape[k] = d->shape[k];
            a->strides[k] = d->strides[k];
            a->size *= d->shape[k];
        }
    }
}

#endif
