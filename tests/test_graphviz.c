/* Graphviz export of a recorded heat-stencil loop: the file parses with
 * `dot`, draws fused kernels as clusters and has a legend; dumping runs
 * nothing; ND_DUMP_DOT writes one file per flush. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mkstemp, mkdtemp */
#endif
#include "common.h"

#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

static int have_dot(void) { return system("command -v dot >/dev/null 2>&1") == 0; }

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    size_t got = fread(s, 1, (size_t)n, f);
    s[got] = 0;
    fclose(f);
    return s;
}

static int contains_ci(const char *hay, const char *needle) {
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i])) i++;
        if (i == n) return 1;
    }
    return 0;
}

static void check_dot_file(const char *path) {
    char *s = slurp(path);
    cr_assert(s, "cannot read %s", path);
    cr_expect(strstr(s, "digraph"), "%s: not a digraph", path);
    cr_expect(strstr(s, "cluster"), "%s: fused kernels should be drawn as clusters", path);
    cr_expect(contains_ci(s, "legend"), "%s: a legend is required", path);
    free(s);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "dot -Tsvg '%s' -o /dev/null", path);
    cr_expect_eq(system(cmd), 0, "dot rejected %s", path);
}

/* A few Jacobi iterations on a small grid, recorded but not run. */
static nd_array *record_heat(int iters) {
    nd_array *c = nd_zeros(ND_FLOAT32, ND_SHAPE(16, 16));
    nd_array *edge = nd_view(c, "0, :");
    cr_assert_eq(nd_fill(edge, 100), ND_OK, "%s", nd_last_error());
    nd_free(edge);
    for (int it = 0; it < iters; it++) {
        nd_scope_begin();
        nd_array *center = nd_view(c, "1:-1, 1:-1");
        nd_array *s = nd_add(nd_add(nd_add(nd_add(center, nd_view(c, ":-2, 1:-1")),
                                           nd_view(c, "2:, 1:-1")),
                                    nd_view(c, "1:-1, :-2")),
                             nd_view(c, "1:-1, 2:"));
        cr_assert_eq(nd_assign(center, nd_mul(nd_scalar(0.2), s)), ND_OK, "%s", nd_last_error());
        nd_scope_end();
    }
    return c;
}

static void heat_ref(float *g, int iters) {
    float t[256];
    for (int i = 0; i < 256; i++) g[i] = i < 16 ? 100.f : 0.f;
    for (int it = 0; it < iters; it++) {
        memcpy(t, g, sizeof t);
        for (int i = 1; i < 15; i++)
            for (int j = 1; j < 15; j++)
                g[i * 16 + j] = 0.2f * ((((t[i * 16 + j] + t[(i - 1) * 16 + j]) + t[(i + 1) * 16 + j]) +
                                         t[i * 16 + j - 1]) + t[i * 16 + j + 1]);
    }
}

NDT_TEST(graphviz, heat_stencil_dump_parses) {
    if (!have_dot()) cr_skip_test("graphviz `dot` is not installed; cannot validate the dump");
    nd_array *c = record_heat(3);
    nd_stats before, after;
    nd_get_stats(&before);
    char path[] = "/tmp/nd-test-graph-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    cr_assert_eq(nd_graph_dump_dot(path), ND_OK, "%s", nd_last_error());
    nd_get_stats(&after);
    cr_expect_eq(after.flushes, before.flushes, "dumping must not run anything");
    check_dot_file(path);
    unlink(path);
    /* and the recorded loop still computes the right thing */
    float got[256], want[256];
    cr_assert_eq(nd_to_host(c, got, sizeof got), ND_OK, "%s", nd_last_error());
    heat_ref(want, 3);
    for (int i = 0; i < 256; i++)
        cr_expect(fabsf(got[i] - want[i]) <= 1e-4f, "c[%d] = %g, want %g", i, got[i], want[i]);
    nd_free(c);
}

NDT_TEST(graphviz, dump_dot_dir_writes_one_file_per_flush) {
    if (!have_dot()) cr_skip_test("graphviz `dot` is not installed; cannot validate the dump");
    char dir[] = "/tmp/nd-test-dots-XXXXXX";
    cr_assert(mkdtemp(dir));
    nd_config cfg = {0};
    cfg.dump_dot = dir;
    ndt_restart(&cfg);
    nd_array *c = record_heat(2);
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_array *d = nd_sum(c, ND_ALL_AXES);
    cr_expect(isfinite(nd_item(d)));
    nd_free(d);
    nd_free(c);
    DIR *dh = opendir(dir);
    cr_assert(dh);
    int files = 0;
    struct dirent *e;
    while ((e = readdir(dh))) {
        if (e->d_name[0] == '.') continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        check_dot_file(p);
        unlink(p);
        files++;
    }
    closedir(dh);
    rmdir(dir);
    cr_expect_geq(files, 2, "two flushes should leave two files, found %d", files);
}

NDT_TEST(graphviz, empty_graph_dumps) {
    char path[] = "/tmp/nd-test-empty-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    cr_expect_eq(nd_graph_dump_dot(path), ND_OK, "dumping an empty graph: %s", nd_last_error());
    if (have_dot()) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, "dot -Tsvg '%s' -o /dev/null", path);
        cr_expect_eq(system(cmd), 0, "dot rejected the empty dump");
    }
    unlink(path);
}

/* A split plan (cpu:3, every array split): each logical device's steps in
 * a cluster of its own, halo copies drawn as edges between the clusters,
 * the stencil's kernels split at their halo (edge rows, interior), and on
 * each device the interior on another stream than the halo copies into
 * its piece, so they can overlap (stream_assign.c). */
NDT_TEST(graphviz, split_plan_draws_a_cluster_per_device) {
    if (!have_dot()) cr_skip_test("graphviz `dot` is not installed; cannot validate the dump");
    setenv("ND_SPLIT_MIN_BYTES", "0", 1);
    nd_config cfg = ND_CONFIG_INIT;
    cfg.backend = ND_BACKEND_CPU;
    cfg.devices = "cpu:3";
    ndt_restart(&cfg);
    nd_array *c = record_heat(2);
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error()); /* split: the next plan starts from pieces */
    nd_free(c);
    c = record_heat(0);
    nd_free(c);
    nd_array *u = nd_zeros(ND_FLOAT32, ND_SHAPE(31, 16));
    cr_assert_eq(nd_fill(u, 1.0), ND_OK);
    for (int it = 0; it < 3; it++) {
        nd_scope_begin();
        nd_array *center = nd_view(u, "1:-1, 1:-1");
        nd_array *s = nd_add(nd_add(nd_add(nd_add(center, nd_view(u, ":-2, 1:-1")), nd_view(u, "2:, 1:-1")),
                                    nd_view(u, "1:-1, :-2")),
                             nd_view(u, "1:-1, 2:"));
        cr_assert_eq(nd_assign(center, nd_mul(nd_scalar(0.2), s)), ND_OK, "%s", nd_last_error());
        nd_scope_end();
    }
    char path[] = "/tmp/nd-test-split-plan-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    cr_assert_eq(nd_plan_dump_dot(path), ND_OK, "%s", nd_last_error());
    check_dot_file(path);
    char *dot = slurp(path);
    cr_assert(dot);
    for (int d = 0; d < 3; d++) {
        char want[64];
        snprintf(want, sizeof want, "subgraph cluster_dev%d {", d);
        cr_expect(strstr(dot, want), "no %s in the split plan", want);
        snprintf(want, sizeof want, "label=\"device %d\"", d);
        cr_expect(strstr(dot, want), "no %s in the split plan", want);
    }
    cr_expect(strstr(dot, "halo from device 0"), "no halo edge from device 0's cluster");
    cr_expect(strstr(dot, "halo from device 2"), "no halo edge from device 2's cluster");
    cr_expect(strstr(dot, "(edge rows)") && strstr(dot, "(interior)"), "the stencil was not split at its halo");
    /* Device 1's interior and the halo copies into its piece: the stream
     * clusters they are drawn in. */
    int stream = -1, dev = -1, interior = -1, halo = -1, both = 0;
    for (char *line = strtok(dot, "\n"); line; line = strtok(NULL, "\n")) {
        const char *cl = strstr(line, "subgraph cluster_dev");
        if (cl && strstr(cl, "_stream")) sscanf(cl, "subgraph cluster_dev%d_stream%d", &dev, &stream);
        if (!strstr(line, "[label=") || !strstr(line, "device 1\"")) continue;
        if (strstr(line, "(interior)")) interior = stream;
        if (strstr(line, "halo, ")) halo = stream;
        if (interior >= 0 && halo >= 0 && interior == halo) both = 1;
    }
    cr_expect(interior >= 0 && halo >= 0, "device 1 has no interior (%d) or no halo copy (%d)", interior, halo);
    cr_expect(!both, "device 1's interior and its halo copies share stream %d", interior);
    free(dot);
    unlink(path);
    /* and the sweeps still compute the right thing: a constant grid stays 1 */
    float got[31 * 16];
    cr_assert_eq(nd_to_host(u, got, sizeof got), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 31 * 16; i++) cr_expect(fabsf(got[i] - 1.0f) <= 1e-6f, "u[%d] = %g", i, got[i]);
    nd_free(u);
}
