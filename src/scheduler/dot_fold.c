/* See dot_fold.h. For each period p the pairs (i, i + p) that match form
 * runs; a run of r pairs starting at a makes r / p + 1 copies of [a, a + p).
 * Signatures (a hash of what must be equal) reject most pairs with one
 * compare; `same` checks the rest (inputs relative to the period). */
#include "scheduler/dot_fold.h"

#define MAX_PERIOD 1024

nd_fold nd_fold_find(int32_t n, const uint64_t *sig, int (*same)(int32_t i, int32_t j, int32_t period, void *ctx),
                     void *ctx, int32_t min_saved) {
    nd_fold best = {0, 0, 0};
    int64_t best_saved = 0;
    for (int32_t p = 1; p <= n / 3 && p <= MAX_PERIOD; p++) {
        int32_t run_start = -1;
        for (int32_t i = 0; i + p <= n; i++) {
            int ok = i + p < n && sig[i] == sig[i + p] && same(i, i + p, p, ctx);
            if (ok && run_start < 0) run_start = i;
            if (ok || run_start < 0) continue;
            int32_t reps = (i - run_start) / p + 1;
            int64_t saved = (int64_t)(reps - 1) * p;
            if (reps >= 3 && saved >= min_saved && saved > best_saved) {
                best_saved = saved;
                best = (nd_fold){run_start, p, reps};
            }
            run_start = -1;
        }
    }
    return best;
}
