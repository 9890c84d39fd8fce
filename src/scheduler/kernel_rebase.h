/* Kernel offsets into slot addresses (kernel_rebase.c).
 *
 * A kernel over a view keeps the view's element offset in its IR, and the
 * backends key compiled code by the IR: so a loop over the rows of a
 * matrix (`x[i] * 2 + x[i]` for each i), the pieces of a split array and
 * the chunks of a streamed one would each compile a kernel of their own
 * (NVRTC takes tens of milliseconds a kernel). This pass moves each
 * slot's least offset into the step's slot_byte_offset (added to the
 * slot's address at launch, as chunking does) and leaves the IR the
 * offsets relative to it: kernels that differ only by where their views
 * start become one IR, one hash and one compile. Index maps (ND_IR_INDEX:
 * logical positions, not addresses) keep their offsets. */
#ifndef ND_SCHEDULER_KERNEL_REBASE_H
#define ND_SCHEDULER_KERNEL_REBASE_H

#include "backends/plan.h"

/* Rebases every kernel step of the plan. Run last: passes before it read
 * the IR's offsets as positions in the slot's buffer. ND_ERR_OOM when a
 * step's offset array cannot be allocated (the plan is then unusable). */
nd_status nd_plan_rebase_kernels(nd_plan *plan);

#endif
