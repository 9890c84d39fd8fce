/* Several devices in one process: the partition pass (partition.c) and the
 * steps it inserts (partition_steps.c). docs/internals.md "Several
 * devices" is the design. */
#ifndef ND_SCHEDULER_PARTITION_H
#define ND_SCHEDULER_PARTITION_H

#include <stddef.h>
#include <stdint.h>

#include "backends/plan.h"
#include "common/memory.h"
#include "scheduler/flush_walk.h"

/* The most logical devices ND_DEVICES=cpu:N may name. */
#define ND_MAX_SPLIT ND_MAX_PIECES

typedef struct {
    int32_t n_devices;  /* 1: the pass does nothing */
    size_t min_bytes;   /* ND_SPLIT_MIN_BYTES: smaller arrays stay whole */
    /* ND_EDGE_MIN_BYTES: a device kernel reading ghost rows runs as edge
     * strips and interior when the interior moves at least this many
     * bytes (partition_edges.c). */
    size_t edge_min_bytes;
} nd_split_config;

/* The first row device d of n owns when `rows` rows are split in blocks
 * whose sizes differ by at most one (the first rows % n blocks have one
 * more); d = n gives `rows`. */
static inline int64_t nd_split_row(int64_t rows, int32_t n, int32_t d) {
    int64_t q = rows / n, r = rows % n;
    return (int64_t)d * q + (d < r ? d : r);
}

/* Rewrites a plan so that its kernels over arrays of at least
 * cfg->min_bytes run once per device over the rows the device owns, on
 * per-device pieces with ghost rows, with scatter, halo and gather copies
 * and partial reductions folded in device order. What does not partition
 * keeps the whole array (plan->n_whole counts those arrays; ND_LOG=2
 * names them). Run before storages and streams are assigned. */
nd_status nd_plan_partition(nd_plan *plan, const nd_flush_walk *walk, const nd_split_config *cfg);

#endif
