/* What partition.c finds and partition_steps.c rewrites with. */
#ifndef ND_SCHEDULER_PARTITION_INTERNAL_H
#define ND_SCHEDULER_PARTITION_INTERNAL_H

#include "graph/buffer.h"
#include "scheduler/partition.h"

/* Ghost rows on each side of the pieces of an array a creation writes,
 * before any stencil has said how far it reaches: the first stencil plan
 * starts from pieces that hold the rows it reads (a piece holding more
 * than a plan needs fits it), where one row made a stencil reaching two
 * rows gather the array and split it again. Two rows cover the 5- and
 * 9-point stencils and fourth-order differences, for 4 rows of memory a
 * piece. */
#define ND_PART_CREATION_GHOST_ROWS 2

/* Per plan slot. */
typedef struct {
    int8_t state;      /* 0 untouched, 1 a row slot, -1 not */
    uint8_t split;     /* split in row blocks over the devices */
    int64_t row;       /* elements per row (the accesses' axis-0 stride) */
    size_t item;       /* element bytes */
    size_t bytes;
    int64_t rows;
    /* Per device: the rows its piece holds, [p0, p0 + pn): the rows it
     * owns and the ghost rows its kernels read beyond them (pn 0: no
     * piece); and while rewriting, the piece (a temporary). */
    int64_t p0[ND_MAX_SPLIT], pn[ND_MAX_SPLIT];
    int32_t piece[ND_MAX_SPLIT];
    uint8_t ghosts;    /* some piece holds ghost rows */
    uint8_t in_pieces; /* the pieces hold the current value */
    uint8_t stale;     /* ... but their ghost rows an older one */
    uint8_t written;   /* a partitioned kernel wrote it: gathered at the end */
    /* Pieces that outlive the flush (a buffer or twin: graph/buffer.h
     * nd_buffer_pieces). held: the pieces it has from an earlier flush
     * hold its value (NULL: none). persist: its pieces are the buffer's
     * (ND_SLOT_PIECE slots), not temporaries; adopt: those held, as they
     * are (no scatter). gather_first: the held pieces go back into the
     * whole memory before the plan (it reads the array whole, or splits
     * it another way). */
    const nd_buffer_pieces *held;
    uint8_t persist, adopt, gather_first;
    uint8_t touched, plan_writes; /* some step of the plan reads or writes it; writes it */
    /* A matmul's B replicated: every device's piece holds every row
     * (partition_matmul.c). */
    uint8_t replica;
    /* Written whole by a flat kernel split along the array's own rows:
     * its pieces get ND_PART_CREATION_GHOST_ROWS ghost rows on each side
     * (partition.c restore_rows). */
    uint8_t margin;
    int32_t old_piece[ND_MAX_SPLIT]; /* gather_first: the held pieces' slots */
    /* A twin that holds no value yet (store chains fill it in this plan):
     * its pieces start from nothing, not from a scatter of its whole
     * memory, which is then never bound. */
    uint8_t undefined;
} nd_part_slot;

typedef struct {
    nd_plan *plan;
    const nd_flush_walk *walk;
    const nd_split_config *cfg;
    int32_t n_dev;
    nd_part_slot *sp;  /* per plan slot */
    uint8_t *kpart;    /* per step: runs per device */
    int64_t *anchor;   /* per step: the row shift of its writes */
    int64_t *arows;    /* per step: the rows of its anchor slot */
    int32_t n_gather_first; /* slots whose held pieces are gathered first */
} nd_partitioner;

/* Device d's iteration rows [*i0, *i1) of partitioned kernel step i: those
 * whose anchor row d owns (empty: i0 >= i1). */
void nd_part_iter(const nd_partitioner *P, int32_t i, int32_t d, int64_t *i0, int64_t *i1);
/* The rows of split slot s that device d's clone of kernel step i loads:
 * [*lo, *hi), empty (lo >= hi) when none. */
void nd_part_need(const nd_partitioner *P, int32_t i, int32_t s, int32_t d, int64_t *lo, int64_t *hi);

/* partition_edges.c: whether device d's clone of partitioned kernel step
 * i runs as edge strips and interior; its interior rows [*c0, *c1), the
 * strips being its other iteration rows. */
int nd_part_edge_split(const nd_partitioner *P, int32_t i, int32_t d, int64_t *c0, int64_t *c1);

const nd_ir_access *nd_part_access(const nd_kernel *k, int32_t j, int *write);
/* The new step list (partition_steps.c). */
nd_status nd_part_rewrite(nd_partitioner *P);

/* Widens split slot s's pieces to the rows device clones of step i read. */
void nd_part_widen(nd_partitioner *P, int32_t i, int32_t s);

/* What partition_steps.c writes the new step list with. */
typedef struct nd_part_emitter {
    nd_partitioner *P;
    nd_step *out;
    uint32_t n_out, cap_out;
    uint32_t cap_slots;
    int32_t *made; /* kernels made here (freed on failure) */
} nd_part_emitter;
nd_step *nd_part_push(nd_part_emitter *E);
int32_t nd_part_new_temp(nd_part_emitter *E, size_t bytes, int32_t device);
int nd_part_copy(nd_part_emitter *E, int32_t src, size_t src_off, int32_t dst, size_t dst_off, size_t bytes, int part,
                 int32_t device, const nd_step *orig);
int nd_part_halo(nd_part_emitter *E, int32_t s, const nd_step *orig);

/* Matmul over pieces (partition_matmul.c): C's rows follow A's, B is
 * replicated or rotates in a ring. Row slots of matmul step st (0: it
 * does not split, its slots stay whole); whether step i partitions; the
 * rows of slot s device d's matmuls read; which Bs are replicated; the
 * steps of partitioned matmul step i. */
int nd_part_matmul_rows(nd_partitioner *P, const nd_step *st);
void nd_part_matmul_strides(const nd_step *st, int64_t *row_stride);
int nd_part_matmul_partitions(nd_partitioner *P, int32_t i, int64_t *anchor, const char **why);
void nd_part_matmul_need(const nd_partitioner *P, int32_t i, int32_t s, int32_t d, int64_t *lo, int64_t *hi);
void nd_part_matmul_replicas(nd_partitioner *P);
int nd_part_matmul_step(nd_part_emitter *E, int32_t i);

#endif
