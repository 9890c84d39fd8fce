/* Device queries without a backend (nd_device_count, nd_get_device_info):
 * the CUDA runtime asked directly, so they work before nd_init and beside
 * a CPU backend. */
#include <stdio.h>
#include <string.h>

#include "backends/cuda/cuda_internal.h"
#include "backends/devices.h"

int nd_cuda_device_count(char *why, size_t cap) {
    int count = 0;
    nd_error_saved before;
    nd_error_save(&before);
    if (nd_cuda_load() != ND_OK) { /* the CUDA libraries are not there: a reason, not an error */
        snprintf(why, cap, "%s", nd_last_error());
        nd_error_restore(&before);
        return 0;
    }
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(why, cap, "no CUDA device: %s", cudaGetErrorString(e));
        return 0;
    }
    if (count <= 0) snprintf(why, cap, "no CUDA device: the driver reports 0 devices");
    return count > 0 ? count : 0;
}

nd_status nd_cuda_device_props(int device, nd_device_info *out) {
    struct cudaDeviceProp prop;
    cudaError_t e = cudaGetDeviceProperties(&prop, device);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return nd_error_set(ND_ERR_BACKEND, "cuda: cudaGetDeviceProperties(device %d) failed: %s", device,
                            cudaGetErrorString(e));
    }
    snprintf(out->name, sizeof out->name, "%s", prop.name);
    out->compute_major = prop.major;
    out->compute_minor = prop.minor;
    out->multiprocessors = prop.multiProcessorCount;
    out->total_memory = prop.totalGlobalMem;
    /* cudaMemGetInfo answers for the calling thread's current device. */
    int before = 0;
    e = cudaGetDevice(&before);
    if (e == cudaSuccess && before != device) e = cudaSetDevice(device);
    size_t free_b = 0, total_b = 0;
    if (e == cudaSuccess) e = cudaMemGetInfo(&free_b, &total_b);
    if (before != device) cudaSetDevice(before);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return nd_error_set(ND_ERR_BACKEND, "cuda: cudaMemGetInfo(device %d) failed: %s", device,
                            cudaGetErrorString(e));
    }
    out->free_memory = free_b;
    if (total_b) out->total_memory = total_b;
    return ND_OK;
}
