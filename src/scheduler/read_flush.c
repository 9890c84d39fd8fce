/* The flush a read makes: only what the read needs (graph/read_split.h). */
#include "scheduler/scheduler.h"

#include <stdlib.h>

#include "common/alloc.h"
#include "common/error.h"
#include "graph/read_split.h"

nd_status nd_scheduler_run_read(nd_scheduler_ctx *ctx, nd_graph *g, nd_graph *spare, const nd_buffer *target) {
    nd_graph_compact(g);
    uint32_t n = g->n_nodes;
    uint8_t *fate = nd_malloc((size_t)n * 2 + 1);
    uint32_t *origin = nd_malloc(sizeof *origin * ((size_t)n + 1));
    int32_t *pos = nd_malloc(sizeof *pos * ((size_t)n + 1));
    uint32_t stays = fate && origin && pos ? nd_graph_read_fates(g, target, fate, fate + n) : 0;
    /* Without memory for the split, the whole graph runs (as a sync). */
    if (stays == 0 || nd_graph_split(g, fate, spare, origin, pos, ++ctx->walk_stamp) != ND_OK) {
        free(fate);
        free(origin);
        free(pos);
        return nd_scheduler_run(ctx, g);
    }
    nd_logf(3, "read: flushing %u of %u pending nodes; %u stay pending until something reads them", g->n_nodes, n,
            spare->n_nodes);
    nd_flush_job job;
    nd_status rc = nd_scheduler_submit(ctx, g, &job);
    /* A recipe whose value the plan wrote to memory after all (the fusion
     * cost cap, a view that could not be composed) is done. */
    uint8_t *drop = fate + n;
    for (uint32_t k = 0; k < spare->n_nodes; k++) {
        int32_t p = (fate[origin[k]] & ND_FATE_RUNS) ? pos[origin[k]] : -1;
        drop[k] = (uint8_t)(p >= 0 && job.plan && job.plan->node_materialised[p]);
    }
    nd_graph_split_finish(spare, drop, ++ctx->walk_stamp);
    free(fate);
    free(origin);
    free(pos);
    /* The nodes that stay are the pending graph now. */
    nd_graph t = *g;
    *g = *spare;
    *spare = t;
    if (rc != ND_OK) return rc;
    rc = nd_scheduler_execute(ctx, &job);
    nd_scheduler_finish(ctx, &job);
    return rc;
}
