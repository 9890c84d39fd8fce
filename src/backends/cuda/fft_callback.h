/* The elementwise kernel that feeds a cuFFT transform, fused into cuFFT's
 * read of its input as an LTO load callback (fft_callback.c; the run is
 * lib_fft.c's, the choice plan_runner.c's). docs/internals.md, "Discrete
 * Fourier transforms", has the design. */
#ifndef ND_BACKENDS_CUDA_FFT_CALLBACK_H
#define ND_BACKENDS_CUDA_FFT_CALLBACK_H

#include <stddef.h>
#include <stdint.h>

#include "backends/plan.h"

/* The symbol the generated callback defines (C++ linkage, cuFFT's LTO
 * load-callback signature). */
#define ND_FFT_CB_SYMBOL "nd_fft_load"

/* The kernel step whose only work is computing the packed input of FFT
 * step f (a C2C or R2C call) element by element, so that the callback can
 * compute each element where cuFFT reads it instead; or -1, with *why
 * saying what rules it out. Sound when: the input is a temporary that
 * only that kernel writes (one contiguous store over its whole space, no
 * reduction, gather or random draw) and only step f reads; and no step
 * after the kernel writes anything the kernel reads, nor the memory of a
 * temporary it reads, f's output included (the callback reads them when
 * step f runs, later than the kernel would have). One device, whole
 * steps; a body of at most ND_FFT_CB_MAX_INSTS instructions. */
#define ND_FFT_CB_MAX_INSTS 64
int32_t nd_cuda_fft_cb_producer(const nd_plan *plan, int32_t f, const char **why);

/* The callback's CUDA C: kernel k's value at the point whose linear index
 * is cuFFT's offset, returned as the transform's input element (kind
 * ND_LIB_FFT_C2C or R2C, double precision or single). Its dataIn is the
 * kernel's argument words (nd_cuda_fft_cb_words) in device memory. NULL
 * when out of host memory. The caller frees. */
char *nd_cuda_fft_cb_source(const nd_kernel *k, int kind, int f64);

/* The words the callback reads through dataIn: kernel slot j's address at
 * j, then the parameters as nd_cuda_issue_kernel passes them. Returns the
 * count (at most ND_FFT_CB_MAX_WORDS). */
#define ND_FFT_CB_MAX_WORDS 64
int nd_cuda_fft_cb_words(const nd_kernel *k, void *const *slots, const nd_scalar_bits *params, uint64_t *words);

/* NVRTC: src as LTO-IR for compute_<arch> (malloc'd into *ir). ND_OK, or
 * the error (this NVRTC lacks LTO-IR output; a compile error, with the
 * log's first line). */
nd_status nd_cuda_fft_cb_ltoir(const char *src, int arch, void **ir, size_t *len);

#endif
