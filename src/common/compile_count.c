/* nd_stats.kernels_compiled (common/compile_count.h). */
#include "common/compile_count.h"

#include <stdatomic.h>

static atomic_uint_least64_t compiled;

void nd_compile_count_add(void) { atomic_fetch_add_explicit(&compiled, 1, memory_order_relaxed); }

uint64_t nd_compile_count(void) { return atomic_load_explicit(&compiled, memory_order_relaxed); }

void nd_compile_count_reset(void) { atomic_store_explicit(&compiled, 0, memory_order_relaxed); }
