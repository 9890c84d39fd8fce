/* Bytes in use per memory (host, each device) and their peak: what the
 * backends have handed out and not taken back (arrays, temporaries,
 * twins, a backend's own staging and workspace memory), counted where they
 * hand it out, for nd_stats. Caches are not in use: a block a backend
 * keeps for reuse counts when it is handed out again.
 *
 * Updated by whichever thread allocates (the recording thread, the
 * executor), so atomically; one relaxed add per allocation and a
 * compare-and-swap only when the peak grows. */
#ifndef ND_COMMON_MEM_COUNT_H
#define ND_COMMON_MEM_COUNT_H

#include <stddef.h>
#include <stdint.h>

#include "common/memory.h"

void nd_mem_count_alloc(int memory, size_t bytes);
void nd_mem_count_release(int memory, size_t bytes);
uint64_t nd_mem_in_use(int memory);
uint64_t nd_mem_peak(int memory);
/* The peak of every memory becomes its bytes in use now (nd_reset_peak). */
void nd_mem_reset_peak(void);
/* Everything to zero (nd_init: a new backend holds nothing yet). */
void nd_mem_count_reset(void);

#endif
