/* Finding the repeated part of a sequence (a recorded loop's nodes, a
 * plan's steps), so a picture draws it once with "x50". */
#ifndef ND_SCHEDULER_DOT_FOLD_H
#define ND_SCHEDULER_DOT_FOLD_H

#include <stdint.h>

/* Items [start, start + period * reps) are reps copies of [start, start +
 * period); reps == 0: nothing repeats (at least 3 times). */
typedef struct {
    int32_t start, period, reps;
} nd_fold;

/* same(i, j, period, ctx): item j = i + period repeats item i. Takes the
 * fold that leaves out the most items (the shortest period on a tie),
 * trying periods up to 1024, and only one that leaves out at least
 * min_saved items (a fold of a short polynomial's repeated multiply-add
 * would only puzzle the reader). */
nd_fold nd_fold_find(int32_t n, const uint64_t *sig, int (*same)(int32_t i, int32_t j, int32_t period, void *ctx),
                     void *ctx, int32_t min_saved);

/* Which copy item i is in: -1 before the repeats, reps after, else 0..reps-1. */
static inline int32_t nd_fold_copy(const nd_fold *f, int32_t i) {
    if (f->reps == 0 || i < f->start) return -1;
    int32_t k = (i - f->start) / f->period;
    return k < f->reps ? k : f->reps;
}
/* The item drawn for i: its twin in the first copy. */
static inline int32_t nd_fold_rep(const nd_fold *f, int32_t i) {
    int32_t k = nd_fold_copy(f, i);
    return k > 0 && k < f->reps ? i - k * f->period : i;
}
static inline int nd_fold_in_body(const nd_fold *f, int32_t i) { return nd_fold_copy(f, i) == 0; }

#endif
