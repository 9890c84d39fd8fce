/* Values several kernels would compute again (shared_values.c). */
#ifndef ND_SCHEDULER_SHARED_VALUES_H
#define ND_SCHEDULER_SHARED_VALUES_H

#include "graph/graph.h"

/* Given the planner's choice of inlined values (inl, per node; live: the
 * live nodes), sends to memory the values that a library call's or user
 * kernel's operand kernel and at least one other kernel would each compute,
 * and those that kernels unable to share them would each compute at a cost
 * above writing them once (device: the plan computes in device memory,
 * where memory is cheaper against arithmetic than on a CPU); the latest
 * of nested ones first. Returns 1 when it changed inl; sets *degraded
 * when it could not look for lack of host memory. */
int nd_materialise_shared_operands(const nd_graph *g, const uint8_t *live, uint8_t *inl, int device,
                                   uint8_t *degraded);

#endif
