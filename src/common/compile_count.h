/* Kernels the backends compiled (nd_stats.kernels_compiled): NVRTC runs of
 * the CUDA backend and C compiler runs of the CPU JIT, not kernels found
 * in a cache. Counted by whichever thread compiles (the executor, the
 * JIT's compile thread), so atomically; zeroed by nd_init. */
#ifndef ND_COMMON_COMPILE_COUNT_H
#define ND_COMMON_COMPILE_COUNT_H

#include <stdint.h>

void nd_compile_count_add(void);
uint64_t nd_compile_count(void);
void nd_compile_count_reset(void);

#endif
