/* What every plan step kind declares, in one place: its name, what it
 * counts as (kernel, library call, copy), which slots it reads and writes
 * in which memory, what it owns, and how logs and profiles name it.
 *
 * The passes that order, place, chunk, bind, fail and profile steps
 * (stream_assign.c, plan_build.c, chunking.c, executor.c, dot_export.c,
 * the CUDA plan runner) ask these functions instead of looking into a
 * step's kind-specific fields, so a new kind (a scan, a gather, a sort, a
 * solver call, a collective) is described here once; only the code that
 * runs it (the executor's run_step and each backend's run_plan) and the
 * code that builds it are added elsewhere. docs/internals.md, "Adding a
 * step kind", lists the places. */
#ifndef ND_BACKENDS_STEP_KINDS_H
#define ND_BACKENDS_STEP_KINDS_H

#include <stddef.h>
#include <stdint.h>

#include "backends/plan.h"
#include "common/profile.h"

typedef struct {
    const char *name;         /* "kernel", "matmul", "copy": logs and dumps */
    nd_profile_kind category; /* counts as a kernel, a library call or a copy
                                 (nd_stats, ND_PROFILE, ND_TRACE); a copy's
                                 writes repeat a value that exists elsewhere,
                                 every other kind's writes make a new value */
} nd_step_kind_info;

extern const nd_step_kind_info nd_step_kinds[ND_STEP_KIND_COUNT];

static inline nd_profile_kind nd_step_category(const nd_step *st) { return nd_step_kinds[st->kind].category; }
static inline int nd_step_is_copy(const nd_step *st) { return nd_step_category(st) == ND_PROFILE_COPY; }

/* One slot a step touches: `mode` is ND_ACCESS_* bits (a region write keeps
 * the rest of the buffer, so it depends on the buffer's value like a read),
 * `memory` the memory space the access happens in. */
typedef struct {
    int32_t slot;
    uint8_t mode;
    int32_t memory;
} nd_step_access;

/* The accesses of step st of a plan whose kernels and library calls run in
 * plan_memory, in a fixed order (kernel slots in the kernel's order; matmul
 * A, B, C; copy source, destination):
 *     for (int32_t j = 0, n = nd_step_n_accesses(st); j < n; j++) {
 *         nd_step_access a = nd_step_access_at(st, j, plan->memory); ... } */
int32_t nd_step_n_accesses(const nd_step *st);
nd_step_access nd_step_access_at(const nd_step *st, int32_t j, int32_t plan_memory);

/* Frees what the step owns (its wait list and kind-specific arrays). */
void nd_step_free(nd_step *st);

/* Short name for profiles, traces and NVTX ranges: the kernel's name,
 * "matmul 8192x8192x8192 float32", "copy host->device". */
void nd_step_label(const nd_step *st, char *buf, size_t cap);

/* What a label adds for a device kernel split at its halo (plan.h
 * ND_STRIP_*): " (edge rows)", " (interior)", else "". */
static inline const char *nd_step_strip_suffix(const nd_step *st) {
    return st->strip == ND_STRIP_EDGE ? " (edge rows)" : st->strip == ND_STRIP_INTERIOR ? " (interior)" : "";
}

/* One line for ND_LOG=3: the step and the slots it reads and writes. */
void nd_step_describe(const nd_step *st, char *buf, size_t cap);

/* One step that took `seconds`, into the ND_PROFILE table: named after
 * kernel_name (NULL: nd_step_label), after "value_name: " when the value
 * it computes has a name (nd_set_name, a named scope; else NULL), with
 * the unique bytes it moves (common/profile.h) or the arithmetic it does. */
void nd_profile_add_step(nd_profile *p, const nd_step *st, const char *kernel_name, const char *value_name,
                         double seconds);

/* The bytes kernel k must move at least: each element of each slot it
 * reads once, each element it writes once (what the benchmarks' floors
 * count; common/profile.h). */
double nd_kernel_unique_bytes(const nd_kernel *k);

#endif
