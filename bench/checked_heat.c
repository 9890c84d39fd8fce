/*
 * checked_heat.c — a heat loop with a convergence check: a float32 grid
 * made by nd_random_uniform (in a flush of its own), then rounds of SWEEPS
 * in-place Jacobi sweeps (one nd_sync) each ended by a read of the grid's
 * sum (nd_item). Under several devices (ND_DEVICES=0,1, 0,0, cpu:N) the
 * grid stays split from round to round: the sum runs on its pieces and
 * nothing is gathered or scattered (docs/internals.md "Several devices");
 * the copies the rounds made are printed with the times.
 *
 * Prints the first and second rounds' times and the median of the others,
 * and what rounds 3.. scattered, gathered and copied.
 *
 * Usage: checked_heat [N [SWEEPS [ROUNDS]]]   (default 16384 10 12)
 */
#include "bench_util.h"
#include "suite_patterns.h"

#include <nd.h>

#include <stdio.h>
#include <stdlib.h>

#define MAX_ROUNDS 64

int main(int argc, char **argv) {
    int64_t n = argc > 1 ? atoll(argv[1]) : 16384;
    int sweeps = argc > 2 ? atoi(argv[2]) : 10, rounds = argc > 3 ? atoi(argv[3]) : 12;
    if (n < 3 || sweeps < 1 || rounds < 3 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "usage: %s [N>=3 [SWEEPS>=1 [ROUNDS 3..%d]]]\n", argv[0], MAX_ROUNDS);
        return 2;
    }
    if (nd_init(NULL) != ND_OK) {
        fprintf(stderr, "nd_init: %s\n", nd_last_error());
        return 1;
    }
    nd_array *u = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n, n), 0.0, 1.0);
    if (!u || nd_sync() != ND_OK) {
        fprintf(stderr, "making the grid: %s\n", nd_last_error());
        return 1;
    }
    double t[MAX_ROUNDS], last = 0;
    nd_stats s0, s1;
    for (int r = 0; r < rounds; r++) {
        if (r == 2) nd_get_stats(&s0);
        double t0 = bench_now();
        for (int s = 0; s < sweeps; s++) suite_jacobi_step(u); /* the suite's sweep */
        nd_status st = nd_sync();
        nd_array *total = nd_sum(u, ND_ALL_AXES);
        last = nd_item(total);
        nd_free(total);
        t[r] = bench_now() - t0;
        if (st != ND_OK || last != last) {
            fprintf(stderr, "round %d: %s\n", r, nd_last_error());
            return 1;
        }
    }
    nd_get_stats(&s1);
    double first = t[0], second = t[1], med = bench_median(t + 2, rounds - 2);
    printf("checked heat %lldx%lld float32, rounds of %d sweeps and a sum read: first %.2f ms, second %.2f ms, "
           "median of rounds 3-%d %.2f ms; rounds 3-%d scattered %llu, gathered %llu, piece copies %llu, halo "
           "copies %llu (sum %.6g)\n",
           (long long)n, (long long)n, sweeps, first * 1e3, second * 1e3, rounds, med * 1e3, rounds,
           (unsigned long long)(s1.arrays_scattered - s0.arrays_scattered),
           (unsigned long long)(s1.arrays_gathered - s0.arrays_gathered),
           (unsigned long long)(s1.piece_copies - s0.piece_copies),
           (unsigned long long)(s1.halo_copies - s0.halo_copies), last);
    nd_free(u);
    nd_shutdown();
    return 0;
}
