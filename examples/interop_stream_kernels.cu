// A program's own CUDA kernels (see interop_stream_kernels.h), built with
// nvcc -Xcompiler -fno-exceptions,-fno-threadsafe-statics so that a C
// program links them with libcudart alone (no C++ runtime).
#include <cuda_runtime.h>

#include "interop_stream_kernels.h"

__global__ void square_add_kernel(float *x, int64_t n, float add) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        x[i] = x[i] * x[i] + add;
}

__global__ void empty_kernel() {}

__device__ static unsigned long long now_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void gate_kernel(volatile int *flag, unsigned long long timeout_ns, int *timed_out) {
    const unsigned long long end = now_ns() + timeout_ns;
    while (*flag == 0) {
        if (now_ns() > end) {
            if (timed_out) *timed_out = 1;
            return;
        }
        __nanosleep(1000);
    }
}

extern "C" int ndx_square_add(void *stream, float *x, int64_t n, float add) {
    if (n <= 0) return 0;
    int64_t blocks = (n + 255) / 256;
    if (blocks > 65535) blocks = 65535;
    square_add_kernel<<<(unsigned)blocks, 256, 0, (cudaStream_t)stream>>>(x, n, add);
    return (int)cudaGetLastError();
}

extern "C" int ndx_empty(void *stream) {
    empty_kernel<<<1, 32, 0, (cudaStream_t)stream>>>();
    return (int)cudaGetLastError();
}

extern "C" int ndx_gate(void *stream, volatile int *flag, int64_t timeout_ms, int *timed_out) {
    gate_kernel<<<1, 1, 0, (cudaStream_t)stream>>>(flag, (unsigned long long)timeout_ms * 1000000ull, timed_out);
    return (int)cudaGetLastError();
}
