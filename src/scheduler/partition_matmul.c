/* Matmul over pieces (docs/internals.md "Several devices", "Matmul over
 * pieces"). C = A @ B with A and C split in row blocks: device d computes
 * its rows of C from its rows of A, C_d = A_d @ B. B is read one of three
 * ways:
 *
 * - whole, where B does not split (another step reads it whole, or the
 *   matmul reads it column-major): every device reads the whole array in
 *   place, as device kernels read whole arrays;
 * - replicated, a small B (below ND_SPLIT_MIN_BYTES, or no larger than
 *   one device's block of A, so a replica at most doubles what a device
 *   holds of the operands): every device's piece of B holds every row, so
 *   the pieces machinery keeps the replica after the flush and a later
 *   flush adopts it while B's version is unchanged (copied once per device
 *   per version of B: nd_stats.matmul_replicas);
 * - a ring, a large B split in row blocks that match A's column blocks
 *   (B's rows are the inner dimension): P GEMM steps per device, step t
 *   multiplying A_d's column block j = (d + t) mod P by B's block j and
 *   adding into C_d (step 0 overwrites), so the sum runs in one fixed
 *   order per device and the result is the same run to run for a given
 *   device count (not bitwise one whole GEMM's: the inner sum is cut in
 *   blocks). Step 0 uses the device's own block of B; block j of a later
 *   step is copied from its owner's piece into one of two ring buffers of
 *   the device (nd_stats.ring_copies), issued before the GEMM of the step
 *   before, so the copy of the next block overlaps the current product.
 *   Every device fetches at distance t at step t: each piece is read by
 *   one device per step. Only for float32, float64, complex64 and
 *   complex128 operands BLAS addresses in place (the accumulating GEMM);
 *   other Bs are replicated.
 *
 * A batched matmul, one whose A does not split (a transpose, a view that
 * crosses rows) or whose result does not, stays whole (ND_LOG=2 names it). */
#include <string.h>

#include "backends/step_kinds.h"
#include "common/dtype.h"
#include "common/error.h"
#include "scheduler/partition_internal.h"

/* Whether operand (offset, row stride rs, column stride cs, cols columns)
 * walks whole rows of its slot: its row stride and first row. */
static int mm_row(int64_t off, int64_t rs, int64_t cs, int64_t cols, int64_t *stride, int64_t *shift) {
    if (rs <= 0 || off < 0) return 0;
    int64_t lo = off % rs, hi = lo, reach = cs * (cols > 0 ? cols - 1 : 0);
    if (reach < 0) lo += reach;
    else hi += reach;
    if (lo < 0 || hi >= rs) return 0;
    *stride = rs;
    *shift = off / rs;
    return 1;
}

static void mark(nd_partitioner *P, int32_t s, int ok, int64_t stride, size_t item) {
    nd_part_slot *sp = &P->sp[s];
    if (sp->state < 0) return;
    if (!ok || (sp->state == 1 && (sp->row != stride || sp->item != item))) {
        sp->state = -1;
        return;
    }
    sp->state = 1;
    sp->row = stride;
    sp->item = item;
}

/* The row strides matmul step st walks its slots in (row_stride per plan
 * slot), so that an elementwise kernel fusion collapsed to one axis is
 * given the same rows (partition.c restore_rows). */
void nd_part_matmul_strides(const nd_step *st, int64_t *row_stride) {
    const nd_matmul_desc *mm = &st->matmul;
    int64_t stride, shift;
    if (mm->batch_ndim > 0 || mm->m <= 0 || mm->n <= 0) return;
    if (mm_row(mm->a_offset, mm->a_rs, mm->a_cs, mm->k, &stride, &shift)) row_stride[mm->a_slot] = stride;
    if (mm_row(mm->c_offset, mm->c_rs, mm->c_cs, mm->n, &stride, &shift)) row_stride[mm->c_slot] = stride;
    if (mm->k > 0 && mm_row(mm->b_offset, mm->b_rs, mm->b_cs, mm->n, &stride, &shift)) row_stride[mm->b_slot] = stride;
}

int nd_part_matmul_rows(nd_partitioner *P, const nd_step *st) {
    const nd_matmul_desc *mm = &st->matmul;
    if (mm->batch_ndim > 0 || mm->m <= 0 || mm->n <= 0) return 0;
    size_t item = nd_dtype_size(mm->dtype);
    int64_t stride = 0, shift;
    int ok = mm_row(mm->a_offset, mm->a_rs, mm->a_cs, mm->k, &stride, &shift);
    mark(P, mm->a_slot, ok, stride, item);
    ok = mm_row(mm->c_offset, mm->c_rs, mm->c_cs, mm->n, &stride, &shift);
    mark(P, mm->c_slot, ok, stride, item);
    if (mm->k > 0) {
        ok = mm_row(mm->b_offset, mm->b_rs, mm->b_cs, mm->n, &stride, &shift);
        mark(P, mm->b_slot, ok, stride, item);
    }
    return 1;
}

int nd_part_matmul_partitions(nd_partitioner *P, int32_t i, int64_t *anchor, const char **why) {
    const nd_matmul_desc *mm = &P->plan->steps[i].matmul;
    const nd_part_slot *a = &P->sp[mm->a_slot], *c = &P->sp[mm->c_slot];
    int64_t stride = 0, shift = 0;
    if (!a->split) {
        *why = "its A is not split (a transposed A, a view across rows, or another step reads it whole): "
               "the matmul runs whole";
        return 0;
    }
    if (!c->split) {
        *why = "its result is not split (another step reads it whole): the matmul runs whole";
        return 0;
    }
    if (mm->c_slot == mm->a_slot || mm->c_slot == mm->b_slot) {
        *why = "it writes one of its operands";
        return 0;
    }
    if (a->bytes < P->cfg->min_bytes && c->bytes < P->cfg->min_bytes) {
        *why = "its arrays are below the split size";
        return 0;
    }
    mm_row(mm->c_offset, mm->c_rs, mm->c_cs, mm->n, &stride, &shift);
    *anchor = shift;
    P->arows[i] = c->rows;
    return 1;
}

static int dtype_rings(nd_dtype dt) {
    return dt == ND_FLOAT32 || dt == ND_FLOAT64 || dt == ND_COMPLEX64 || dt == ND_COMPLEX128;
}

/* Whether partitioned matmul step i rotates its (split) B in a ring:
 * large, laid out for the accumulating GEMM, and split in the blocks of
 * the inner dimension. */
static int ring_fits(const nd_partitioner *P, int32_t i) {
    const nd_matmul_desc *mm = &P->plan->steps[i].matmul;
    const nd_part_slot *b = &P->sp[mm->b_slot];
    int64_t stride, shift;
    if (b->bytes < P->cfg->min_bytes || b->bytes * (size_t)P->n_dev <= P->sp[mm->a_slot].bytes) return 0;
    if (!dtype_rings(mm->dtype) || mm->a_cs != 1 || mm->b_cs != 1 || mm->c_cs != 1) return 0;
    return mm_row(mm->b_offset, mm->b_rs, mm->b_cs, mm->n, &stride, &shift) && shift == 0 && b->rows == mm->k;
}

void nd_part_matmul_replicas(nd_partitioner *P) {
    for (int32_t i = 0; i < P->plan->n_steps; i++) {
        const nd_step *st = &P->plan->steps[i];
        if (!P->kpart[i] || st->kind != ND_STEP_MATMUL || st->matmul.k <= 0) continue;
        nd_part_slot *b = &P->sp[st->matmul.b_slot];
        if (b->split && !ring_fits(P, i)) b->replica = 1;
    }
}

static int rings(const nd_partitioner *P, const nd_matmul_desc *mm) {
    const nd_part_slot *b = &P->sp[mm->b_slot];
    return mm->k > 0 && b->split && !b->replica;
}

void nd_part_matmul_need(const nd_partitioner *P, int32_t i, int32_t s, int32_t d, int64_t *lo, int64_t *hi) {
    const nd_matmul_desc *mm = &P->plan->steps[i].matmul;
    int64_t i0, i1, stride, shift;
    *lo = INT64_MAX;
    *hi = INT64_MIN;
    nd_part_iter(P, i, d, &i0, &i1);
    stride = shift = 0;
    if (i1 <= i0) return;
    if (s == mm->a_slot && mm_row(mm->a_offset, mm->a_rs, mm->a_cs, mm->k, &stride, &shift)) {
        *lo = i0 + shift;
        *hi = i1 + shift;
    }
    /* A replica is every row; a ring reads each block from its owner. */
    if (s == mm->b_slot && mm->k > 0 && P->sp[s].replica) {
        *lo = 0;
        if (P->sp[s].rows > *hi) *hi = P->sp[s].rows;
    }
}

/* Whether some device's matmul reads rows of split slot s that its piece
 * holds as ghost rows. */
static int reads_ghosts(const nd_partitioner *P, int32_t i, int32_t s) {
    const nd_part_slot *sp = &P->sp[s];
    for (int32_t d = 0; d < P->n_dev; d++) {
        int64_t lo, hi;
        nd_part_matmul_need(P, i, s, d, &lo, &hi);
        if (hi > lo && (lo < nd_split_row(sp->rows, P->n_dev, d) || hi > nd_split_row(sp->rows, P->n_dev, d + 1)))
            return 1;
    }
    return 0;
}

/* The whole array of slot s into every piece: a scatter, or (a replica)
 * the copies nd_stats counts as replications. */
static int fill_pieces(nd_part_emitter *E, int32_t s, int part, const nd_step *orig) {
    const nd_part_slot *sp = &E->P->sp[s];
    size_t rb = (size_t)sp->row * sp->item;
    for (int32_t d = 0; d < E->P->n_dev; d++)
        if (sp->piece[d] >= 0 && !nd_part_copy(E, s, (size_t)sp->p0[d] * rb, sp->piece[d], 0, (size_t)sp->pn[d] * rb,
                                               part, d, orig))
            return 0;
    if (part == ND_PART_SCATTER) E->P->plan->n_scattered++;
    return 1;
}

/* Before the matmul: its split operands in pieces, ghost rows fresh. */
static int prologue(nd_part_emitter *E, int32_t i) {
    nd_partitioner *P = E->P;
    const nd_step *orig = &P->plan->steps[i];
    const nd_matmul_desc *mm = &orig->matmul;
    const int32_t slots[3] = {mm->a_slot, mm->b_slot, mm->c_slot};
    for (int j = 0; j < 3; j++) {
        int32_t s = slots[j];
        nd_part_slot *sp = &P->sp[s];
        if (!sp->split || (j == 1 && mm->k <= 0) || (j > 0 && s == slots[0]) || (j == 2 && s == slots[1])) continue;
        if (!sp->in_pieces) {
            sp->in_pieces = 1;
            if (j < 2 && P->plan->slots[s].role != ND_SLOT_TEMP) {
                if (!fill_pieces(E, s, j == 1 && sp->replica ? ND_PART_REPLICA : ND_PART_SCATTER, orig)) return 0;
            } else {
                sp->stale = 1; /* C, written whole: ghosts come after */
            }
        } else if (sp->stale && sp->ghosts && reads_ghosts(P, i, s)) {
            if (!nd_part_halo(E, s, orig)) return 0;
            sp->stale = 0;
        }
    }
    return 1;
}

/* Device d's GEMM over its C rows [i0, i1) and the inner block [k0, k1),
 * B's block read from slot b_slot at element offset b_offset. */
static int gemm(nd_part_emitter *E, const nd_step *orig, int32_t d, int64_t i0, int64_t i1, int64_t k0, int64_t k1,
                int32_t b_slot, int64_t b_offset, int accumulate) {
    nd_partitioner *P = E->P;
    const nd_matmul_desc *m0 = &orig->matmul;
    const nd_part_slot *a = &P->sp[m0->a_slot], *c = &P->sp[m0->c_slot];
    nd_step *s = nd_part_push(E);
    if (!s) return 0;
    nd_matmul_desc *mm = &s->matmul;
    *mm = *m0;
    mm->m = i1 - i0;
    mm->k = k1 - k0;
    mm->a_slot = a->piece[d];
    mm->a_offset += (i0 - a->p0[d]) * m0->a_rs + k0 * m0->a_cs;
    mm->c_slot = c->piece[d];
    mm->c_offset += (i0 - c->p0[d]) * m0->c_rs;
    mm->b_slot = b_slot;
    mm->b_offset = b_offset;
    mm->accumulate = (uint8_t)accumulate;
    s->kind = ND_STEP_MATMUL;
    s->part = ND_PART_KERNEL;
    s->device = (uint8_t)(d + 1);
    s->first_node = orig->first_node;
    s->last_node = orig->last_node;
    return 1;
}

/* P steps per device over the blocks of B, in the order d, d+1, ...:
 * the copies of step t+1's blocks, then step t's GEMMs. */
static int ring(nd_part_emitter *E, const nd_step *orig, const int64_t *i0s, const int64_t *i1s) {
    nd_partitioner *P = E->P;
    const nd_matmul_desc *mm = &orig->matmul;
    const nd_part_slot *b = &P->sp[mm->b_slot];
    const int32_t n = P->n_dev;
    size_t rb = (size_t)b->row * b->item;
    int64_t most = 0;
    for (int32_t j = 0; j < n; j++) {
        int64_t r = nd_split_row(mm->k, n, j + 1) - nd_split_row(mm->k, n, j);
        if (r > most) most = r;
    }
    int32_t buf[ND_MAX_SPLIT][2];
    uint8_t started[ND_MAX_SPLIT] = {0};
    for (int32_t d = 0; d < n; d++) {
        buf[d][0] = buf[d][1] = -1;
        if (i1s[d] <= i0s[d]) continue;
        for (int h = 0; h < 2 && h < n - 1; h++)
            if ((buf[d][h] = nd_part_new_temp(E, (size_t)most * rb, d)) < 0) return 0;
    }
    for (int32_t t = 0; t < n; t++) {
        for (int32_t d = 0; d < n && t + 1 < n; d++) {
            int32_t j = (d + t + 1) % n;
            int64_t k0 = nd_split_row(mm->k, n, j), k1 = nd_split_row(mm->k, n, j + 1);
            if (i1s[d] <= i0s[d] || k1 <= k0) continue;
            if (!nd_part_copy(E, b->piece[j], (size_t)(k0 - b->p0[j]) * rb, buf[d][t % 2], 0, (size_t)(k1 - k0) * rb,
                              ND_PART_RING, d, orig))
                return 0;
        }
        for (int32_t d = 0; d < n; d++) {
            int32_t j = (d + t) % n;
            int64_t k0 = nd_split_row(mm->k, n, j), k1 = nd_split_row(mm->k, n, j + 1);
            if (i1s[d] <= i0s[d] || k1 <= k0) continue;
            int32_t src = t == 0 ? b->piece[d] : buf[d][(t - 1) % 2];
            /* B's first row is the block's (B starts at row 0: ring_fits) */
            int64_t row = t == 0 ? k0 - b->p0[d] : 0;
            if (!gemm(E, orig, d, i0s[d], i1s[d], k0, k1, src, mm->b_offset + row * mm->b_rs, started[d])) return 0;
            started[d] = 1;
        }
    }
    return 1;
}

int nd_part_matmul_step(nd_part_emitter *E, int32_t i) {
    nd_partitioner *P = E->P;
    const nd_step *orig = &P->plan->steps[i];
    const nd_matmul_desc *mm = &orig->matmul;
    if (!prologue(E, i)) return 0;
    int64_t i0s[ND_MAX_SPLIT], i1s[ND_MAX_SPLIT];
    for (int32_t d = 0; d < P->n_dev; d++) nd_part_iter(P, i, d, &i0s[d], &i1s[d]);
    const nd_part_slot *b = &P->sp[mm->b_slot];
    const char *how = mm->k <= 0 ? "no B" : !b->split ? "B read whole" : b->replica ? "B replicated" : "B in a ring";
    nd_logf(3, "partition: step %d: matmul %lldx%lldx%lld over %d devices, %s", i, (long long)mm->m,
            (long long)mm->n, (long long)mm->k, P->n_dev, how);
    if (rings(P, mm)) {
        if (!ring(E, orig, i0s, i1s)) return 0;
    } else {
        for (int32_t d = 0; d < P->n_dev; d++) {
            if (i1s[d] <= i0s[d]) continue;
            int split = mm->k > 0 && b->split;
            /* A replica holds B's rows from p0 (0); a whole B is read in place. */
            int32_t bs = split ? b->piece[d] : mm->b_slot;
            int64_t off = mm->b_offset - (split ? b->p0[d] * mm->b_rs : 0);
            if (!gemm(E, orig, d, i0s[d], i1s[d], 0, mm->k, bs, off, 0)) return 0;
        }
    }
    nd_part_slot *c = &P->sp[mm->c_slot];
    c->written = 1;
    c->stale = 1;
    return 1;
}
