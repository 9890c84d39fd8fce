/* Edge strips first (docs/internals.md "Several devices"): a device
 * kernel that reads ghost rows runs as up to three kernels over its
 * iteration rows [i0, i1):
 *
 *   top strip  [i0, c0)   rows whose loads reach a ghost row above,
 *   bottom     [c1, i1)   rows whose loads reach a ghost row below,
 *   interior   [c0, c1)   rows whose every load of a split array stays
 *                         inside the rows the device owns.
 *
 * partition_steps.c emits, per partitioned kernel, the halo copies, then
 * every device's strips (and the clones that stay whole), then every
 * device's interior. The interior reads no ghost row, so it does not wait
 * for the halo copies; the strips write the rows the next kernel's halo
 * copies send, so those copies start as soon as the strips are done, while
 * the interiors run. The scheduler orders steps by the bytes they touch
 * (stream_assign.c), so on a backend with streams (CUDA) a halo copy and
 * an interior run side by side; the CPU backend runs steps one at a time
 * (each on every core) and gets the same steps, in the same order.
 *
 * The rule, per device: split when the clone reads a ghost row, the
 * kernel has no reduction, the interior has at least as many rows as the
 * two strips together, and it moves at least ND_EDGE_MIN_BYTES (default
 * 4 x ND_SPLIT_MIN_BYTES; two more launches per sweep cost more than they
 * hide below it). A kernel with a reduction stays whole per device: its
 * partial would be folded from three pieces of the device's rows instead
 * of one, so its bits would change with the split (and with the
 * threshold); a reduction over axis 1 keeps its rows, but a backend may
 * choose its fold from the number of rows, so it stays whole too. */
#include <stdint.h>

#include "backends/step_kinds.h"
#include "scheduler/partition_internal.h"

int nd_part_edge_split(const nd_partitioner *P, int32_t i, int32_t d, int64_t *c0, int64_t *c1) {
    const nd_step *st = &P->plan->steps[i];
    const nd_kernel *k = st->kernel;
    int64_t i0, i1;
    nd_part_iter(P, i, d, &i0, &i1);
    if (k->has_reduce || i1 <= i0) return 0;
    int64_t a = i0, b = i1;
    for (int32_t j = 0; j < k->n_loads; j++) {
        const nd_ir_access *x = &k->loads[j];
        const nd_part_slot *sp = &P->sp[st->slots[x->slot]];
        if (!sp->split) continue;
        /* Iteration row r loads row r + shift: it must be one d owns. */
        int64_t shift = x->offset / x->strides[0];
        int64_t lo = nd_split_row(sp->rows, P->n_dev, d), hi = nd_split_row(sp->rows, P->n_dev, d + 1);
        if (lo - shift > a) a = lo - shift;
        if (hi - shift < b) b = hi - shift;
    }
    if (a <= i0 && b >= i1) return 0; /* reads no ghost row */
    if (b <= a || b - a < (a - i0) + (i1 - b)) return 0;
    if (nd_kernel_unique_bytes(k) * (double)(b - a) / (double)k->shape[0] < (double)P->cfg->edge_min_bytes) return 0;
    *c0 = a;
    *c1 = b;
    return 1;
}
