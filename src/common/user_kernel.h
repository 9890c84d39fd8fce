/* A user kernel (include/nd/kernels.h): the program's implementations for
 * each backend, shared by the handle the program holds, the graph nodes
 * that call it and the plans that run it, each of which holds a reference
 * (a cached plan may outlive the program's handle). Plain data, so the
 * frontend that records calls, the scheduler that plans them and the
 * backends that run them all read it. */
#ifndef ND_COMMON_USER_KERNEL_H
#define ND_COMMON_USER_KERNEL_H

#include <stdint.h>

#include "nd.h"

#define ND_USER_KERNEL_MAX_ARGS 64

struct nd_user_kernel {
    uint32_t magic; /* ND_USER_KERNEL_MAGIC while the program's handle lives */
    int refs;       /* atomic: handle + nodes + plan steps */
    int called;     /* a call was recorded: the implementations are fixed */
    int n_in, n_out;
    char name[64];
    nd_kernel_cpu_fn cpu_fn;
    void *cpu_ctx;
    /* CUDA: the prelude (nd_kernel_arg, ND_<DTYPE>) followed by the
     * program's source, or NULL; or the program's function. */
    char *cuda_source;
    char *cuda_entry;
    const void *cuda_func;
    int has_launch;
    nd_kernel_launch launch;
    nd_kernel_launch_fn launch_fn;
    void *launch_ctx;
};

#define ND_USER_KERNEL_MAGIC 0x6B75444Eu

void nd_user_kernel_ref(nd_user_kernel *k);
void nd_user_kernel_unref(nd_user_kernel *k);

/* The launch for one run: the fixed one, the program's callback, or one
 * thread per element of the first output in blocks of 256. Nonzero: the
 * callback failed (its value). */
int nd_user_kernel_launch_for(const nd_user_kernel *k, const nd_kernel_arg *args, nd_kernel_launch *out);

/* Calls the CPU function; an error naming the kernel when it fails or is
 * missing. */
nd_status nd_user_kernel_run_cpu(const nd_user_kernel *k, const nd_kernel_arg *args);

#endif
