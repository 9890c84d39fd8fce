/* What partition.c finds and partition_steps.c rewrites with. */
#ifndef ND_SCHEDULER_PARTITION_INTERNAL_H
#define ND_SCHEDULER_PARTITION_INTERNAL_H

#include "scheduler/partition.h"

/* Per plan slot. */
typedef struct {
    int8_t state;      /* 0 untouched, 1 a row slot, -1 not */
    uint8_t split;     /* split in row blocks over the devices */
    int64_t row;       /* elements per row (the accesses' axis-0 stride) */
    size_t item;       /* element bytes */
    size_t bytes;
    int64_t rows;
    int64_t ghost_lo, ghost_hi; /* ghost rows above and below each piece */
    /* While rewriting: per device its piece (a temporary, -1: it owns no
     * rows), the piece's first row and row count. */
    int32_t piece[ND_MAX_SPLIT];
    int64_t p0[ND_MAX_SPLIT], pn[ND_MAX_SPLIT];
    uint8_t in_pieces; /* the pieces hold the current value */
    uint8_t stale;     /* ... but their ghost rows an older one */
    uint8_t written;   /* a partitioned kernel wrote it: gathered at the end */
} nd_part_slot;

typedef struct {
    nd_plan *plan;
    const nd_flush_walk *walk;
    const nd_split_config *cfg;
    int32_t n_dev;
    nd_part_slot *sp;  /* per plan slot */
    uint8_t *kpart;    /* per step: runs per device */
    int64_t *anchor;   /* per step: the row shift of its writes */
} nd_partitioner;

const nd_ir_access *nd_part_access(const nd_kernel *k, int32_t j, int *write);
int32_t nd_part_n_accesses(const nd_kernel *k);
/* The new step list (partition_steps.c). */
nd_status nd_part_rewrite(nd_partitioner *P);

#endif
