/* User kernels on CUDA (include/nd/kernels.h): the program's source,
 * compiled by NVRTC through the kernel cache like nd's own kernels, or the
 * program's own function, launched on the step's stream with one
 * nd_kernel_arg per argument. Launches go through cudaLaunchKernel on the
 * plan's streams, so CUDA graph capture records them like nd's kernels. */
#include <string.h>

#include "backends/cuda/cuda_internal.h"
#include "backends/user_args.h"
#include "common/hash.h"
#include "common/user_kernel.h"

nd_status nd_cuda_user_resolve(nd_cuda *cu, const nd_user_kernel *k, const void **fn) {
    *fn = NULL;
    if (k->cuda_func) {
        *fn = k->cuda_func;
        return ND_OK;
    }
    if (!k->cuda_source)
        return nd_error_set(ND_ERR_UNSUPPORTED, "user kernel '%s' has no CUDA implementation (give it one with "
                            "nd_user_kernel_set_cuda_source or nd_user_kernel_set_cuda_function)", k->name);
    cudaLibrary_t lib;
    uint64_t key = nd_hash_bytes(nd_hash_u64(ND_HASH_SEED, 0x05E4u), k->cuda_entry, strlen(k->cuda_entry));
    nd_status s = nd_cuda_kcache_get_source(cu->cache, key, k->name, k->cuda_source, &lib);
    if (s != ND_OK) return s;
    cudaKernel_t kern;
    cudaError_t e = cudaLibraryGetKernel(&kern, lib, k->cuda_entry);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return nd_error_set(ND_ERR_COMPILE, "user kernel '%s': its CUDA source compiled but has no kernel named "
                            "'%s' (declare it extern \"C\" __global__, or pass its name as entry)", k->name,
                            k->cuda_entry);
    }
    *fn = (const void *)kern;
    return ND_OK;
}

nd_status nd_cuda_issue_user(const void *fn, const nd_user_desc *u, void *const *slots, cudaStream_t stream) {
    const nd_user_kernel *k = u->kernel;
    nd_kernel_arg args[ND_USER_KERNEL_MAX_ARGS];
    void *argv[ND_USER_KERNEL_MAX_ARGS];
    nd_user_args_bind(u, slots, args);
    for (int32_t i = 0; i < u->n_in + u->n_out; i++) argv[i] = &args[i];
    nd_kernel_launch l;
    int rc = nd_user_kernel_launch_for(k, args, &l);
    if (rc) return nd_error_set(ND_ERR_BACKEND, "user kernel '%s' failed (its launch function returned %d)", k->name, rc);
    ND_NVTX_PUSH(k->name);
    cudaError_t e = cudaLaunchKernel(fn, (dim3){l.grid[0], l.grid[1], l.grid[2]},
                                     (dim3){l.block[0], l.block[1], l.block[2]}, argv, l.shared_bytes, stream);
    ND_NVTX_POP();
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        char what[200];
        snprintf(what, sizeof what, "launching user kernel '%s' (grid %ux%ux%u, block %ux%ux%u, %zu shared bytes)",
                 k->name, l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1], l.block[2], l.shared_bytes);
        return nd_cuda_fail(e, what);
    }
    return ND_OK;
}
