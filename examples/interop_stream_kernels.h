/* A program's own CUDA kernels, compiled by nvcc (interop_stream_kernels.cu)
 * and called from C: what examples/interop_stream.c interleaves with nd's
 * ops on the program's stream (tests/test_interop_stream.c and
 * bench/interop_stream.c use them too). Each launcher enqueues on `stream`
 * (a cudaStream_t) and returns the launch's cudaError_t (0 = cudaSuccess). */
#ifndef ND_EXAMPLES_INTEROP_STREAM_KERNELS_H
#define ND_EXAMPLES_INTEROP_STREAM_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* x[i] = x[i] * x[i] + add, for i < n (float32, in place). */
int ndx_square_add(void *stream, float *x, int64_t n, float add);
/* An empty kernel of one block: a launch's cost and nothing else. */
int ndx_empty(void *stream);
/* A gate: one thread spins until *flag (host memory mapped for the
 * device, cudaHostAllocMapped) is nonzero, holding the stream meanwhile,
 * or until timeout_ms passed; then writes 1 to *timed_out if it gave up
 * (a mapped int too, may be NULL). The host opens it by storing 1. */
int ndx_gate(void *stream, volatile int *flag, int64_t timeout_ms, int *timed_out);

#ifdef __cplusplus
}
#endif
#endif
