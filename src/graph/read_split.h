/* A read flushes what it reads, no more (docs/internals.md, "Reads flush
 * what they read").
 *
 * nd_to_host / nd_item of an array with pending writers used to run the
 * whole pending graph, and every value a handle could see was written to
 * memory, in case it was read later: `nd_item(nd_sum(nd_add(z, w)))` inside
 * the scope that owns z, w and their temporaries wrote every one of them.
 * Instead the read's flush takes the nodes the read needs; the others stay
 * pending, and a value the read needs only inside its kernels, which a
 * handle could still read later, is computed inside them and its node (its
 * recipe) also stays pending, to run if it is read. The versions a node that
 * stays reads must still exist when it runs, so one that reads a version
 * this flush overwrites runs now instead (and with it what it reads). */
#ifndef ND_GRAPH_READ_SPLIT_H
#define ND_GRAPH_READ_SPLIT_H

#include "graph/graph.h"

/* What becomes of each pending node at a read's flush. */
enum {
    ND_FATE_DROP = 0,  /* dead: no handle sees its effect */
    ND_FATE_LATER = 1, /* stays pending: the read does not need it */
    ND_FATE_NOW = 2,   /* runs in this flush */
    ND_FATE_BOTH = 3   /* runs inside this flush's kernels and stays pending */
};
#define ND_FATE_STAYS 1u /* bit: LATER or BOTH */
#define ND_FATE_RUNS 2u  /* bit: NOW or BOTH */
#define ND_FATE_VALUE_NEEDED 4u /* NOW: a node that stays reads its value; BOTH:
                                   one that stays and is no recipe does */
#define ND_FATE_MASK 3u         /* the fate itself, without VALUE_NEEDED */

/* Decides the fate of every node of g for a read of `target`'s latest
 * version (fate: g->n_nodes bytes; live: as many, scratch). Returns how
 * many nodes stay pending; 0 means a flush of the whole graph does the
 * same work. */
uint32_t nd_graph_read_fates(const nd_graph *g, const nd_buffer *target, uint8_t *fate, uint8_t *live);

/* Splits g by the fates: the nodes that stay are copied, in record order,
 * into `later` (empty; origin[k] = the index in g of its node k), and g
 * keeps the nodes that run, renumbered (pos[i] = the new index of old node
 * i, -1 if it left), flagged ND_NODE_RECIPE_KEPT / ND_NODE_VALUE_NEEDED;
 * buffers' writer lists then name g's nodes only. `stamp` must be fresh
 * (the buffers' scratch stamp). ND_ERR_OOM, with g unchanged and no error
 * set, when `later` cannot be made. */
nd_status nd_graph_split(nd_graph *g, const uint8_t *fate, nd_graph *later, uint32_t *origin, int32_t *pos,
                         uint64_t stamp);

/* After g's flush was submitted (g cleared): drops the nodes of `later`
 * with drop[k] set (recipes whose value the flush wrote to memory after
 * all) and makes the others the pending writers of their buffers again.
 * `stamp` must be fresh. */
void nd_graph_split_finish(nd_graph *later, const uint8_t *drop, uint64_t stamp);

#endif
