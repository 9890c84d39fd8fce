/* Observability: names (nd_set_name, nd_scope_begin_named) in dumps,
 * profile rows and messages; a recorded loop drawn once ("repeated xN");
 * the plan picture; ND_LOG=2's line per flush; the unique bytes a kernel
 * moves; the progress callback. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mkstemp, dup */
#endif
#include "common.h"

#include <unistd.h>

#include "backends/step_kinds.h"

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

static int count(const char *hay, const char *needle) {
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

static void tmp_path(char *buf, size_t cap, const char *suffix) {
    snprintf(buf, cap, "/tmp/nd-observe-%d-%s", (int)getpid(), suffix);
}

static int early_flush_on = 1;

/* ITERS Jacobi sweeps over a grid named "grid", each in a scope named
 * "jacobi sweep", recorded and left pending. */
static nd_array *record_sweeps(int iters, int64_t n) {
    if (early_flush_on) {
        nd_config cfg = ND_CONFIG_INIT;
        cfg.early_flush = -1; /* the whole loop stays pending for the dump */
        ndt_restart(&cfg);
        early_flush_on = 0;
    }
    nd_array *u = nd_zeros(ND_FLOAT64, ND_SHAPE(n, n));
    cr_assert(u);
    cr_assert_eq(nd_set_name(u, "grid"), ND_OK, "%s", nd_last_error());
    nd_array *edge = nd_view(u, "0, :");
    cr_assert_eq(nd_fill(edge, 100), ND_OK, "%s", nd_last_error());
    nd_free(edge);
    cr_assert_eq(nd_sync(), ND_OK);
    for (int it = 0; it < iters; it++) {
        nd_scope_begin_named("jacobi sweep");
        nd_array *c = nd_view(u, "1:-1, 1:-1");
        nd_array *s = nd_add(nd_add(nd_add(nd_add(c, nd_view(u, ":-2, 1:-1")), nd_view(u, "2:, 1:-1")),
                                    nd_view(u, "1:-1, :-2")),
                             nd_view(u, "1:-1, 2:"));
        cr_assert_eq(nd_assign(c, nd_mul(nd_scalar(0.25), s)), ND_OK, "%s", nd_last_error());
        nd_scope_end();
    }
    return u;
}

NDT_TEST(observe, names_set_get_and_views_share_them) {
    nd_array *a = nd_zeros(ND_FLOAT32, ND_SHAPE(4, 4));
    cr_assert_null(nd_get_name(a));
    cr_assert_eq(nd_set_name(a, "weights"), ND_OK);
    cr_assert_str_eq(nd_get_name(a), "weights");
    nd_array *v = nd_view(a, "1:, ::2");
    cr_assert_str_eq(nd_get_name(v), "weights", "a view names the same data");
    cr_assert_eq(nd_set_name(v, "w2"), ND_OK);
    cr_assert_str_eq(nd_get_name(a), "w2", "naming a view names its base");
    cr_assert_eq(nd_set_name(a, ""), ND_OK);
    cr_assert_null(nd_get_name(a), "an empty name removes it");
    cr_assert_eq(nd_set_name(a, "x"), ND_OK);
    cr_assert_eq(nd_set_name(a, NULL), ND_OK);
    cr_assert_null(nd_get_name(v));
    nd_array *b = nd_add(a, a);
    cr_assert_null(nd_get_name(b), "a result does not inherit its inputs' names");
    nd_free(b);
    nd_free(v);
    nd_free(a);
}

NDT_TEST(observe, names_errors) {
    cr_assert_eq(nd_set_name(NULL, "x"), ND_ERR_ARG);
    cr_assert(strstr(nd_last_error(), "nd_set_name"), "%s", nd_last_error());
    nd_clear_error();
    nd_array *a = nd_zeros(ND_FLOAT32, ND_SHAPE(2));
    cr_assert_eq(nd_set_name(a, "x"), ND_OK);
    cr_assert_eq(nd_set_name(a, "bad\"quote"), ND_ERR_ARG);
    cr_assert(strstr(nd_last_error(), "nd_set_name: name \"bad\"quote\""), "%s", nd_last_error());
    cr_assert_str_eq(nd_get_name(a), "x", "a bad name changes nothing");
    cr_assert_eq(nd_set_name(a, "tab\there"), ND_ERR_ARG);
    char longname[300];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    cr_assert_eq(nd_set_name(a, longname), ND_ERR_ARG);
    cr_assert(strstr(nd_last_error(), "299 characters is too long (at most 200)"), "%s", nd_last_error());
    nd_clear_error();
    cr_assert_null(nd_get_name(NULL));
    cr_assert_eq(nd_last_status(), ND_ERR_ARG);
    nd_clear_error();
    /* A bad scope name opens no scope. */
    nd_scope_begin_named("a\\b");
    cr_assert_eq(nd_last_status(), ND_ERR_ARG);
    nd_clear_error();
    nd_scope_end();
    cr_assert_eq(nd_last_status(), ND_ERR_STATE, "no scope should have opened");
    nd_clear_error();
    cr_assert_eq(nd_set_progress(NULL, NULL, -1), ND_ERR_ARG);
    cr_assert(strstr(nd_last_error(), "nd_set_progress: seconds = -1 is invalid"), "%s", nd_last_error());
    cr_assert_eq(nd_set_progress(NULL, NULL, NAN), ND_ERR_ARG);
    cr_assert_eq(nd_plan_dump_dot(NULL), ND_ERR_ARG);
    nd_clear_error();
    nd_free(a);
}

NDT_TEST(observe, loop_is_drawn_once_with_names) {
    nd_array *u = record_sweeps(12, 32);
    char path[256];
    tmp_path(path, sizeof path, "loop.dot");
    cr_assert_eq(nd_graph_dump_dot(path), ND_OK, "%s", nd_last_error());
    char *s = slurp(path);
    cr_assert(s);
    cr_expect(strstr(s, "repeated x12"), "the 12 sweeps should be one body drawn x12:\n%.2000s", s);
    /* One sweep is 4 adds, a mul and a store: drawn once, not 12 times. */
    cr_expect_eq(count(s, "\\nnd_assign"), 1, "the store should be drawn once");
    cr_expect_eq(count(s, "nd_add\\n"), 4, "the sweep's four adds should be drawn once");
    cr_expect(strstr(s, "jacobi sweep/grid\\nnd_assign"), "the store is named scope/array");
    /* split, the kernel is a device's edge rows or interior: "add_mul (edge rows)" */
    cr_expect(strstr(s, ": add_mul\\njacobi sweep\\n") ||
                  (ndt_devices_split() && (strstr(s, ": add_mul (edge rows)\\njacobi sweep\\n") ||
                                           strstr(s, ": add_mul (interior)\\njacobi sweep\\n"))),
              "the sweep's kernel carries the scope's name:\n%.3000s", s);
    cr_expect_null(strstr(s, "jacobi sweep\\nnd_add"), "said once on the kernel, not on each add");
    cr_expect(strstr(s, "'grid'\\nbuffer"), "the grid buffer is named");
    cr_expect(strstr(s, "next iteration"), "the value carried between sweeps is drawn");
    free(s);
    if (system("command -v dot >/dev/null 2>&1") == 0) {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "dot -Tsvg '%s' -o /dev/null", path);
        cr_expect_eq(system(cmd), 0, "dot rejected %s", path);
    }
    /* The plan picture: kernels, stream clusters, and the loop once. */
    char plan_path[256];
    tmp_path(plan_path, sizeof plan_path, "plan.dot");
    cr_assert_eq(nd_plan_dump_dot(plan_path), ND_OK, "%s", nd_last_error());
    s = slurp(plan_path);
    cr_assert(s);
    /* A split plan draws a cluster per device, its streams inside. */
    cr_expect(strstr(s, ndt_devices_split() ? "cluster_dev0_stream0" : "cluster_stream0"), "%.1500s", s);
    cr_expect(strstr(s, "kernel"), "%.1500s", s);
    if (ndt_one_device("the plan's sweeps drawn once: split, the devices' kernels take their streams in a "
                       "rotation longer than a third of the 12 sweeps, so no run of steps repeats 3 times"))
        cr_expect(strstr(s, "repeated x"), "the plan's repeated kernels are drawn once:\n%.3000s", s);
    cr_expect(strstr(s, "jacobi sweep/grid"), "steps carry names");
    free(s);
    cr_assert_eq(nd_sync(), ND_OK);
    unlink(path);
    unlink(plan_path);
    nd_free(u);
}

NDT_TEST(observe, two_sweeps_are_not_folded) {
    nd_array *u = record_sweeps(2, 32);
    char path[256];
    tmp_path(path, sizeof path, "two.dot");
    cr_assert_eq(nd_graph_dump_dot(path), ND_OK);
    char *s = slurp(path);
    cr_expect_null(strstr(s, "repeated x"), "two sweeps draw well as they are");
    cr_expect_eq(count(s, "\\nnd_assign"), 2);
    free(s);
    unlink(path);
    nd_free(u);
}

NDT_TEST(observe, nested_scope_names_make_a_path) {
    nd_scope_begin_named("solver");
    nd_scope_begin_named("step");
    nd_array *a = nd_ones(ND_FLOAT32, ND_SHAPE(8));
    nd_array *b = nd_keep(nd_add(a, a)); /* to "solver" */
    nd_scope_end();
    nd_keep(b); /* to the caller */
    nd_scope_begin(); /* unnamed: keeps "solver" */
    nd_array *c = nd_keep(nd_mul(b, b));
    nd_scope_end();
    nd_keep(c);
    nd_scope_end();
    nd_array *d = nd_sub(c, b); /* outside every scope */
    char path[256];
    tmp_path(path, sizeof path, "nested.dot");
    cr_assert_eq(nd_graph_dump_dot(path), ND_OK);
    char *s = slurp(path);
    cr_expect(strstr(s, "solver/step\\nnd_add"), "%.2000s", s);
    cr_expect(strstr(s, "solver\\nnd_mul"), "%.2000s", s);
    cr_expect(strstr(s, "label=\"nd_sub"), "an op outside scopes has no name:\n%.2000s", s);
    free(s);
    unlink(path);
    float out[8];
    cr_assert_eq(nd_to_host(d, out, sizeof out), ND_OK);
    cr_expect_float_eq(out[3], 2.f, 0);
    nd_free(b);
    nd_free(c);
    nd_free(d);
}

/* Unique bytes: a 5-point stencil reads its grid once and writes it once,
 * whatever the number of shifted loads. */
NDT_TEST(observe, kernel_unique_bytes_count_each_element_once) {
    nd_ir_access loads[5];
    memset(loads, 0, sizeof loads);
    const int64_t n = 100;
    int64_t offs[5] = {n + 1, 1, 2 * n + 1, n, n + 2};
    for (int j = 0; j < 5; j++) {
        loads[j].slot = 0;
        loads[j].dtype = ND_FLOAT64;
        loads[j].offset = offs[j];
        loads[j].strides[0] = n;
        loads[j].strides[1] = 1;
    }
    nd_ir_store store;
    memset(&store, 0, sizeof store);
    store.at = loads[0];
    store.at.slot = 1;
    nd_kernel k;
    memset(&k, 0, sizeof k);
    k.ndim = 2;
    k.shape[0] = k.shape[1] = n - 2;
    k.n_loads = 5;
    k.loads = loads;
    k.n_stores = 1;
    k.stores = &store;
    /* Reads: the union of the five spans, rows 0..n-1 minus the first and
     * last element: n*n - 2; writes: the interior's span, (n-2) rows of n
     * minus the 2 elements outside at its end: both at most the sums. */
    double reads = (double)(n * n - 2) * 8, writes = (double)((n - 3) * n + (n - 2)) * 8;
    double writes_elems = (double)((n - 2) * (n - 2)) * 8;
    cr_expect_float_eq(nd_kernel_unique_bytes(&k), reads + (writes < writes_elems ? writes : writes_elems), 1e-6);
    /* Two disjoint columns: the sum of their elements, not their span. */
    k.n_loads = 2;
    k.shape[0] = n;
    k.shape[1] = 1;
    loads[0].offset = 0;
    loads[1].offset = 1;
    k.n_stores = 0;
    cr_expect_float_eq(nd_kernel_unique_bytes(&k), 2.0 * n * 8, 1e-6);
    /* A broadcast load counts its elements once. */
    k.n_loads = 1;
    loads[0].strides[0] = 0;
    k.shape[1] = 7;
    cr_expect_float_eq(nd_kernel_unique_bytes(&k), 7.0 * 8, 1e-6);
}

/* ND_LOG=2: one line per flush with nodes, kernels, bytes, times and the
 * plan cache. */
NDT_TEST(observe, log_level_2_prints_one_line_per_flush) {
    char path[256];
    tmp_path(path, sizeof path, "log.txt");
    fflush(stderr);
    int saved = dup(2);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    dup2(fileno(f), 2);
    nd_config cfg = ND_CONFIG_INIT;
    cfg.log = 2;
    cfg.early_flush = -1;
    ndt_restart(&cfg);
    early_flush_on = 0;
    for (int i = 0; i < 3; i++) {
        nd_array *u = record_sweeps(4, 64);
        cr_assert_eq(nd_sync(), ND_OK);
        nd_free(u);
    }
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    fclose(f);
    char *s = slurp(path);
    cr_assert(s);
    int lines = count(s, "nodes -> ");
    cr_expect_geq(lines, 6, "one line per flush (two per grid: setup, sweeps):\n%s", s);
    cr_expect(strstr(s, "plan cache miss"), "%s", s);
    cr_expect(strstr(s, "plan cache hit"), "the second grid's flushes hit the cache:\n%s", s);
    cr_expect(strstr(s, "kB moved") || strstr(s, "MB moved"), "%s", s);
    cr_expect(strstr(s, "(jacobi sweep/grid)"), "named flushes say so:\n%s", s);
    cr_expect_eq(count(s, "nd debug"), 0, "level 2 prints no debug timeline");
    free(s);
    unlink(path);
    ndt_restart(NULL);
}

typedef struct {
    int calls;
    uint64_t last_done, last_nodes;
    int monotonic;
} progress_seen;

static void on_progress(const nd_progress *p, void *ctx) {
    progress_seen *s = ctx;
    if (p->flushes_done < s->last_done || p->nodes_done < s->last_nodes || p->seconds < 0) s->monotonic = 0;
    s->last_done = p->flushes_done;
    s->last_nodes = p->nodes_done;
    s->calls++;
}

NDT_TEST(observe, progress_is_called_with_growing_counts) {
    nd_config cfg = ND_CONFIG_INIT;
    cfg.max_pending = 40;
    ndt_restart(&cfg);
    nd_scope_begin(); /* releases the loop's temporaries at the end */
    progress_seen seen = {0, 0, 0, 1};
    cr_assert_eq(nd_set_progress(on_progress, &seen, 0), ND_OK);
    nd_stats before;
    nd_get_stats(&before);
    nd_array *x = nd_zeros(ND_FLOAT64, ND_SHAPE(1000));
    for (int i = 0; i < 200; i++) {
        nd_array *y = nd_add(nd_mul(x, nd_scalar(0.5)), nd_scalar(1.0));
        nd_free(x);
        x = y;
    }
    cr_assert_eq(nd_sync(), ND_OK);
    nd_stats after;
    nd_get_stats(&after);
    cr_expect_geq(seen.calls, 5, "seconds = 0: called after every flush (%d calls, %llu flushes)", seen.calls,
                  (unsigned long long)(after.flushes - before.flushes));
    cr_expect(seen.monotonic, "counts never go back");
    cr_expect_eq(seen.last_done, after.flushes, "the last call saw every flush done");
    nd_array *x0 = nd_view(x, "0");
    double v = nd_item(x0);
    nd_free(x0);
    /* x_k = 2 - 2 * 0.5^k from x_0 = 0. */
    cr_expect_float_eq(v, 2.0 - 2.0 * pow(0.5, 200), 1e-12);
    /* Off: no more calls. */
    cr_assert_eq(nd_set_progress(NULL, NULL, 0), ND_OK);
    int calls = seen.calls;
    nd_array *z = nd_add(x, x);
    cr_assert_eq(nd_sync(), ND_OK);
    cr_expect_eq(seen.calls, calls);
    nd_free(z);
    nd_free(x);
    nd_scope_end();
}

NDT_TEST(observe, progress_respects_its_interval) {
    progress_seen seen = {0, 0, 0, 1};
    cr_assert_eq(nd_set_progress(on_progress, &seen, 3600), ND_OK);
    for (int i = 0; i < 5; i++) {
        nd_array *a = nd_ones(ND_FLOAT32, ND_SHAPE(100));
        nd_array *b = nd_add(a, a);
        cr_assert_eq(nd_sync(), ND_OK);
        nd_free(a);
        nd_free(b);
    }
    cr_expect_eq(seen.calls, 1, "once at the first flush, then not within the hour");
    cr_assert_eq(nd_set_progress(NULL, NULL, 0), ND_OK);
}

#include "common/fault.h"

/* A value that could not be computed is named in the message of the read
 * that finds it (and of the nd_sync that ran it). */
NDT_TEST(observe, a_failed_value_is_named_in_messages) {
    nd_array *a = nd_ones(ND_FLOAT32, ND_SHAPE(1000));
    cr_assert_eq(nd_sync(), ND_OK);
    nd_scope_begin_named("update");
    nd_array *b = nd_keep(nd_add(a, a));
    nd_scope_end();
    cr_assert_eq(nd_set_name(b, "velocity"), ND_OK);
    nd_fault_arm(ND_FAULT_DEVICE_ALLOC, 1, 1);
    nd_status st = nd_sync();
    nd_fault_disarm();
    cr_assert_neq(st, ND_OK, "the allocation of b's memory should have failed");
    cr_expect(strstr(nd_last_error(), "for 'update/velocity'"), "%s", nd_last_error());
    nd_clear_error();
    float out[1000];
    cr_assert_neq(nd_to_host(b, out, sizeof out), ND_OK);
    cr_expect(strstr(nd_last_error(), "computed by nd_add for 'update/velocity' could not be computed"), "%s",
              nd_last_error());
    nd_clear_error();
    nd_free(b);
    nd_free(a);
}

/* A shape error names the named operand. */
NDT_TEST(observe, record_errors_name_arrays) {
    nd_array *a = nd_zeros(ND_FLOAT32, ND_SHAPE(3, 4));
    nd_array *b = nd_zeros(ND_FLOAT32, ND_SHAPE(5));
    cr_assert_eq(nd_set_name(a, "grid"), ND_OK);
    cr_assert_null(nd_add(a, b));
    cr_expect(strstr(nd_last_error(), "nd_add: shapes (3,4) ('grid') and (5,) cannot be broadcast together"), "%s",
              nd_last_error());
    nd_clear_error();
    cr_assert_null(nd_add(b, a));
    cr_expect(strstr(nd_last_error(), "nd_add: shapes (5,) and (3,4) ('grid') cannot be broadcast together"), "%s",
              nd_last_error());
    nd_clear_error();
    nd_free(a);
    nd_free(b);
}

/* ND_PROFILE: rows named after the values, unique bytes per call (a
 * sweep of a 64x64 float64 grid reads the grid once, 4094 elements of its
 * span, and writes the 62x62 interior once: 63.5 kB, not the 6 operands'
 * 190 kB), the measured copy bandwidth, and the share of it reached. */
NDT_TEST(observe, profile_rows_are_named_and_count_unique_bytes) {
    char path[256];
    tmp_path(path, sizeof path, "profile.txt");
    fflush(stderr);
    int saved = dup(2);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    dup2(fileno(f), 2);
    nd_config cfg = ND_CONFIG_INIT;
    cfg.profile = 1;
    cfg.early_flush = -1;
    ndt_restart(&cfg);
    early_flush_on = 0;
    nd_array *u = record_sweeps(10, 64);
    cr_assert_eq(nd_sync(), ND_OK);
    nd_free(u);
    nd_shutdown(); /* prints the table */
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    fclose(f);
    char *s = slurp(path);
    cr_assert(s);
    int in_backend_table = strstr(s, "nd profile (cpu)") != NULL;
    if (!in_backend_table) cr_skip_test("the CUDA backend prints its own table (checked by scripts/gpu/observe.sh)");
    cr_expect(strstr(s, "copy bandwidth "), "%s", s);
    cr_expect(strstr(s, "of copy"), "%s", s);
    const char *row = strstr(s, "jacobi sweep/grid: add_mul");
    cr_assert(row, "the sweep's row carries its name:\n%s", s);
    const char *eol = strchr(row, '\n');
    char line[512];
    snprintf(line, sizeof line, "%.*s", eol ? (int)(eol - row) : 200, row);
    if (ndt_one_device("the sweep row's count and unique bytes: split, each device runs its edge rows and "
                       "interior as kernels of their own, over its rows only")) {
        cr_expect(strstr(line, " 10 "), "ten sweeps: %s", line);
        cr_expect(strstr(line, "63.5 kB"), "unique bytes per sweep: %s", line);
    }
    free(s);
    unlink(path);
    ndt_setup(); /* the fixture's teardown shuts down again */
}

/* ND_TRACE: every step an event named after its value (the CPU backend's
 * executor writes host times; CUDA writes device times). */
NDT_TEST(observe, trace_events_carry_names) {
    char path[256];
    tmp_path(path, sizeof path, "trace.json");
    nd_config cfg = ND_CONFIG_INIT;
    cfg.trace = path;
    cfg.early_flush = -1;
    ndt_restart(&cfg);
    early_flush_on = 0;
    nd_array *u = record_sweeps(4, 32);
    cr_assert_eq(nd_sync(), ND_OK);
    nd_free(u);
    nd_shutdown(); /* closes the trace */
    char *s = slurp(path);
    cr_assert(s, "no trace written");
    cr_expect(strncmp(s, "{\"traceEvents\":[", 16) == 0, "%.200s", s);
    cr_expect(strstr(s, "{}]}"), "the trace is closed");
    cr_expect(strstr(s, "\"name\":\"jacobi sweep/grid: "), "%.2000s", s);
    cr_expect(strstr(s, "\"cat\":\"kernel\""), "%.2000s", s);
    free(s);
    unlink(path);
    ndt_setup();
}
