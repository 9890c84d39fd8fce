/* nd_stats' memory figures, nd_trim and nd_reset_peak. Bytes in use are
 * counted where the backends hand memory out (common/mem_count.h); what
 * the backends keep cached they report themselves; the pooled temporaries
 * and the twins are the scheduler's and the buffers'. */
#include "common/mem_count.h"
#include "frontend/frontend.h"

_Static_assert(ND_STATS_MEMORIES == ND_MAX_MEMORIES, "nd_stats has a figure per memory");

void nd_runtime_memory_stats(nd_stats *s) {
    s->bytes_allocated = 0;
    for (int m = 0; m < ND_MAX_MEMORIES; m++) {
        s->bytes_in_use[m] = nd_mem_in_use(m);
        s->bytes_peak[m] = nd_mem_peak(m);
        s->bytes_allocated += s->bytes_in_use[m];
    }
    nd_backend_cached c;
    nd_runtime_backend_cached(&c);
    for (int m = 0; m < ND_MAX_MEMORIES; m++) s->bytes_cached[m] = c.per_memory[m];
    s->bytes_block_cache = c.block_cache;
    s->bytes_pinned_cache = c.pinned_cache;
    s->bytes_temporaries = nd_temp_pool_bytes(&nd_rt.sched);
    s->bytes_twins = nd_buffers_twin_bytes();
}

void nd_trim(void) {
    ND_API_GUARD();
    if (nd_runtime_ensure() != ND_OK) return;
    nd_runtime_wait(); /* the executor's pool is its own while a flush runs */
    nd_temp_pool_trim(&nd_rt.sched);
    nd_runtime_backend_trim();
}

void nd_reset_peak(void) {
    ND_API_GUARD();
    if (nd_runtime_ensure() != ND_OK) return;
    nd_runtime_wait();
    nd_mem_reset_peak();
}
