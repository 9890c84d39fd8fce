/*
 * heat.c — the seed workload: Jacobi relaxation of the heat equation.
 *
 * A float64 N x N plate (default 1000 x 1000): top edge held at 100, bottom
 * edge at 0, left and right edges at 50, and a 20 x 20 square of 200 in the
 * centre as the initial condition. Each iteration replaces every interior
 * point by the average of itself and its four neighbours, written exactly as
 * NumPy users write it:
 *
 *     c = u[1:-1, 1:-1]
 *     c[...] = 0.2 * (c + u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
 *
 * The edges are never written, so they stay fixed. The right-hand side reads
 * the region it overwrites; as in NumPy it is computed in full before the
 * store. The iterations are recorded as a graph and the scheduler turns
 * each one into one fused stencil kernel; the device starts on the first
 * ones while the rest are recorded (early flushes), and the single nd_sync
 * at the end waits for the last.
 *
 * Usage: heat [N] [ITERS] [--dot FILE]
 *   --dot FILE  writes the graph of the ITERS iterations as Graphviz
 *               (render with `dot -Tpng FILE -o heat.png`). For the picture
 *               the boundary setup runs first and early flushes are off, so
 *               the graph holds exactly the ITERS sweeps (up to ND_MAX_PENDING
 *               nodes, ~800 sweeps).
 */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif
#include <nd.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int fail(const char *what)
{
    fprintf(stderr, "heat: %s failed: %s (%s)\n", what, nd_last_error(),
            nd_status_name(nd_last_status()));
    nd_shutdown();
    return 1;
}

/* One Jacobi sweep over the interior of u, recorded (not run). The scope
 * releases the five views and the temporaries of the expression. */
static nd_status jacobi_step(nd_array *u)
{
    nd_scope_begin_named("jacobi sweep"); /* names the sweep's work in dumps and profiles */
    nd_array *c = nd_view(u, "1:-1, 1:-1");
    nd_array *north = nd_view(u, ":-2, 1:-1");
    nd_array *south = nd_view(u, "2:, 1:-1");
    nd_array *west = nd_view(u, "1:-1, :-2");
    nd_array *east = nd_view(u, "1:-1, 2:");
    nd_array *sum = nd_add(nd_add(nd_add(nd_add(c, north), south), west), east);
    nd_status st = nd_assign(c, nd_mul(nd_scalar(0.2), sum));
    nd_scope_end();
    return st;
}

int main(int argc, char **argv)
{
    int64_t n = 1000;
    int iters = 50;
    const char *dot_path = NULL;
    int positional = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--dot") == 0 && i + 1 < argc) {
            dot_path = argv[++i];
        } else if (positional == 0) {
            n = atoll(argv[i]);
            positional++;
        } else {
            iters = atoi(argv[i]);
            positional++;
        }
    }
    if (n < 24 || iters < 1) {
        fprintf(stderr, "usage: heat [N >= 24] [ITERS >= 1] [--dot FILE]\n");
        return 2;
    }

    if (dot_path) {
        nd_config cfg = ND_CONFIG_INIT;
        cfg.early_flush = -1; /* the whole loop stays pending for the dump */
        if (nd_init(&cfg) != ND_OK)
            return fail("nd_init");
    }
    double t0 = now_seconds();
    nd_array *u = nd_zeros(ND_FLOAT64, ND_SHAPE(n, n));
    if (!u)
        return fail("nd_zeros");
    nd_set_name(u, "grid");

    /* Boundary and initial condition, each set through a view. The rows go
     * last so the corners belong to the top and bottom edges. */
    char centre[96];
    snprintf(centre, sizeof centre, "%lld:%lld, %lld:%lld", (long long)(n / 2 - 10),
             (long long)(n / 2 + 10), (long long)(n / 2 - 10), (long long)(n / 2 + 10));
    const struct {
        const char *index;
        double value;
    } regions[] = {
        {":, 0", 50.0}, {":, -1", 50.0}, {"0, :", 100.0}, {"-1, :", 0.0}, {centre, 200.0},
    };
    for (size_t i = 0; i < sizeof regions / sizeof regions[0]; i++) {
        nd_array *v = nd_view(u, regions[i].index);
        nd_status st = nd_fill(v, regions[i].value);
        nd_free(v);
        if (st != ND_OK)
            return fail("nd_fill");
    }

    /* The picture shows the sweeps only: the setup runs before them. */
    if (dot_path && nd_sync() != ND_OK)
        return fail("nd_sync");
    for (int it = 0; it < iters; it++) {
        if (jacobi_step(u) != ND_OK)
            return fail("jacobi_step");
    }
    /* Dumping runs nothing: the graph is what nd_sync then runs. */
    if (dot_path && nd_graph_dump_dot(dot_path) != ND_OK)
        return fail("nd_graph_dump_dot");
    if (nd_sync() != ND_OK)
        return fail("nd_sync");
    double t1 = now_seconds();

    nd_array *mn = nd_min(u, ND_ALL_AXES);
    nd_array *mx = nd_max(u, ND_ALL_AXES);
    nd_array *mean = nd_mean(u, ND_ALL_AXES);
    double vmin = nd_item(mn), vmax = nd_item(mx), vmean = nd_item(mean);
    if (nd_last_status() != ND_OK)
        return fail("reading the result");

    printf("heat: %lld x %lld float64, %d iterations on %s\n", (long long)n, (long long)n,
           iters, nd_backend_name());
    printf("  min %.6f  max %.6f  mean %.6f\n", vmin, vmax, vmean);
    printf("  time %.3f s (record + run, one sync)\n", t1 - t0);
    if (dot_path)
        printf("  graph of the %d iterations written to %s\n", iters, dot_path);

    /* Fixed edges and a maximum principle: every value stays within the
     * initial range, and the top edge still reads 100. */
    int ok = vmin >= 0.0 && vmax <= 200.0 && vmax >= 100.0 && vmean > 0.0 && vmean < 200.0;
    nd_free(mn);
    nd_free(mx);
    nd_free(mean);
    nd_free(u);
    nd_shutdown();
    if (!ok) {
        fprintf(stderr, "heat: result out of the physical range\n");
        return 1;
    }
    return 0;
}
