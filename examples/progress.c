/*
 * progress.c — a progress bar for a long run (nd_set_progress).
 *
 * A 1-d heat rod relaxes for STEPS explicit time steps:
 *
 *     u[1:-1] += 0.25 * (u[:-2] - 2*u[1:-1] + u[2:])
 *
 * Recording is much faster than running, so the loop records all the steps
 * long before they have run, and then nd_sync waits. nd calls the progress
 * function from its executor after the flushes run (at most every 0.1 s
 * here), with the flushes and operations done so far; the program knows
 * how many operations it recorded, so it can draw a bar. The recorded
 * steps carry a name (a named scope), which ND_LOG=2 prints on each
 * flush's line and ND_PROFILE on each kernel's row.
 *
 * The answer is checked against the same steps computed in C in float64.
 *
 * Usage: progress [N] [STEPS]       (default 100000 points, 2000 steps)
 */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif
#include <nd.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    uint64_t total_nodes; /* what the program recorded: the bar's 100% */
    int calls;
    uint64_t last_done;
    int went_back;
} bar;

/* Runs on nd's executor thread (or inside nd_sync): it must not call nd.
 * It reads `total_nodes`, which main set before nd_set_progress. */
static void show(const nd_progress *p, void *ctx)
{
    bar *b = ctx;
    b->calls++;
    if (p->nodes_done < b->last_done)
        b->went_back = 1;
    b->last_done = p->nodes_done;
    double frac = b->total_nodes ? (double)p->nodes_done / (double)b->total_nodes : 0;
    if (frac > 1)
        frac = 1;
    int filled = (int)(frac * 40);
    fprintf(stderr, "\r  [%.*s%*s] %5.1f%%  %llu flushes done, %llu pending, %.1f s", filled,
            "########################################", 40 - filled, "", 100 * frac,
            (unsigned long long)p->flushes_done, (unsigned long long)p->flushes_pending, p->seconds);
}

static int fail(const char *what)
{
    fprintf(stderr, "progress: %s failed: %s\n", what, nd_last_error());
    nd_shutdown();
    return 1;
}

int main(int argc, char **argv)
{
    int64_t n = argc > 1 ? atoll(argv[1]) : 100000;
    int steps = argc > 2 ? atoi(argv[2]) : 2000;
    if (n < 3 || steps < 1) {
        fprintf(stderr, "usage: progress [N >= 3] [STEPS >= 1]\n");
        return 2;
    }
    /* Smaller flushes than the default, so a short run shows several. */
    nd_config cfg = ND_CONFIG_INIT;
    cfg.max_pending = 400;
    if (nd_init(&cfg) != ND_OK)
        return fail("nd_init");

    double *host = malloc((size_t)n * sizeof *host);
    if (!host)
        return 1;
    for (int64_t i = 0; i < n; i++)
        host[i] = sin(3.14159265358979 * (double)i / (double)(n - 1)) + (i == 0 || i == n - 1 ? 0 : 0.5);
    nd_array *u = nd_from_host(host, ND_FLOAT64, ND_SHAPE(n));
    if (!u || nd_set_name(u, "rod") != ND_OK || nd_sync() != ND_OK)
        return fail("making the rod");

    bar b = {0, 0, 0, 0};
    nd_stats s0, s1;
    nd_get_stats(&s0);
    /* Count what one step records, to know the whole run's size. */
    for (int k = 0; k < steps; k++) {
        nd_scope_begin_named("diffusion step");
        nd_array *mid = nd_view(u, "1:-1");
        nd_array *lap = nd_add(nd_sub(nd_view(u, ":-2"), nd_mul(nd_scalar(2.0), mid)), nd_view(u, "2:"));
        nd_status st = nd_assign(mid, nd_add(mid, nd_mul(nd_scalar(0.25), lap)));
        nd_scope_end();
        if (st != ND_OK)
            return fail("recording a step");
        if (k == 0) {
            /* The first step is recorded: the run's size is known, and the
             * callback starts now (nothing of this step has run yet). */
            nd_get_stats(&s1);
            b.total_nodes = (s1.nodes_recorded - s0.nodes_recorded) * (uint64_t)steps;
            if (nd_set_progress(show, &b, 0.1) != ND_OK)
                return fail("nd_set_progress");
        }
    }
    if (nd_sync() != ND_OK)
        return fail("nd_sync");
    nd_set_progress(NULL, NULL, 0);
    fprintf(stderr, "\n");

    /* The same steps in float64 on the host. */
    double *ref = malloc((size_t)n * sizeof *ref), *got = malloc((size_t)n * sizeof *got);
    if (!ref || !got)
        return 1;
    for (int k = 0; k < steps; k++) {
        double prev = host[0];
        for (int64_t i = 1; i < n - 1; i++) {
            double cur = host[i];
            ref[i] = cur + 0.25 * (prev - 2 * cur + host[i + 1]);
            prev = cur;
        }
        for (int64_t i = 1; i < n - 1; i++)
            host[i] = ref[i];
    }
    if (nd_to_host(u, got, (size_t)n * sizeof *got) != ND_OK)
        return fail("nd_to_host");
    double err = 0;
    for (int64_t i = 0; i < n; i++)
        err = fmax(err, fabs(got[i] - host[i]));
    printf("progress: %lld points, %d steps on %s; the callback ran %d times; max |error| %.3g\n",
           (long long)n, steps, nd_backend_name(), b.calls, err);
    int ok = err < 1e-9 && b.calls >= 1 && !b.went_back;
    if (!ok)
        fprintf(stderr, "progress: FAILED (error %.3g, %d calls%s)\n", err, b.calls,
                b.went_back ? ", counts went back" : "");
    free(host);
    free(ref);
    free(got);
    nd_free(u);
    nd_shutdown();
    return ok ? 0 : 1;
}
