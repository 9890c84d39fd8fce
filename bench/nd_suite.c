/*
 * nd_suite.c — nd's side of the side-by-side suite (bench/README.md,
 * "Side-by-side suite"): the workloads of nd_suite_*.c, run through
 * nd on whatever backend ND_BACKEND picks, each checked against a float64
 * host reference and then timed. One JSON line per workload on stdout (the
 * format every peer in bench/peers/ prints), a table on stderr.
 *
 * Usage: bench_nd_suite [--small] [--runs N] [--h2d-gib G] [--set SIZE=V ...]
 *                       [WORKLOAD ... | la | lib]
 * (--set overrides one of the linear algebra sizes: la_n, svd_n, bsolve_b,
 * bsvd_b, fft_n, rfft2_n, einsum_n; la and lib name the groups of bench/suite.sh)
 * Exit status: 0 when every workload ran and was right, 1 when one failed
 * (its JSON line has an "error" field), 2 for bad arguments.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "nd_suite.h"

/* The time budget of bench/README.md: long runs get fewer repetitions so
 * the slowest library still fits the suite into one device call. */
#define MIN_RUNS 7
#define LONG_RUN_S 10.0     /* a run this long: 3 timed runs are enough */
#define BUDGET_S 20.0       /* past this, stop adding runs once MIN_RUNS are done */
#define MAX_RUNS 1000

typedef struct {
    bool small;
    bool h2d_named; /* --h2d-gib given: h2d_sum runs under --small too */
    int runs;
    suite_sizes sz;
    const char *only[64];
    int n_only;
} options;

/* In the order they run and are reported. */
static const suite_workload *const workloads[] = {
    &suite_chain, &suite_black_scholes, &suite_stencil, &suite_small_stencil, &suite_pi,
    &suite_matmul_chain, &suite_dot, &suite_small_ops, &suite_small_ops_body, &suite_sum, &suite_h2d_sum,
    &suite_uniform_sum, &suite_integers_sum, &suite_scope_read, &suite_shared_matmul,
    &suite_sort, &suite_argsort, &suite_sort_rows, &suite_cumsum, &suite_gather_map, &suite_mask_select,
    &suite_histogram, &suite_cholesky_f32, &suite_cholesky_f64, &suite_solve_f32, &suite_solve_f64,
    &suite_eigh_f32, &suite_eigh_f64, &suite_svd_f32, &suite_svd_f64, &suite_batched_solve, &suite_batched_svd, &suite_fft,
    &suite_rfft2, &suite_fft_window, &suite_einsum3,
};
/* The named groups (bench/peers/suite_common.py's LIB_WORKLOADS, LA_WORKLOADS). */
static const char *const lib_group[] = {"sort", "argsort", "sort_rows", "cumsum", "gather_map", "mask_select",
                                        "histogram", NULL};
static const char *const la_group[] = {"cholesky_f32", "cholesky_f64", "solve_f32", "solve_f64", "eigh_f32",
                                       "eigh_f64", "svd_f32", "svd_f64", "batched_solve", "batched_svd", "fft",
                                       "rfft2", "fft_window", "einsum3", NULL};
#define N_WORKLOADS ((int)(sizeof workloads / sizeof workloads[0]))

static void sizes_full(suite_sizes *sz)
{
    *sz = (suite_sizes){
        .chain_n = (int64_t)1 << 27,
        .bs_n = (int64_t)1 << 26,
        .stencil_n = 16384,
        .stencil_iters = 20,
        .small_n = 1000,
        .small_iters = 50,
        .pi_n = (int64_t)1 << 28,
        .matmul_n = 8192,
        .dot_n = 100000000,
        .ops_n = 1000,
        .ops_iters = 1000,
        .sum_n = (int64_t)1 << 28,
        .scope_n = (int64_t)1 << 24,
        .norm_n = 4096,
        .sort_n = (int64_t)1 << 28,
        .argsort_n = (int64_t)1 << 26,
        .rows_r = 4096,
        .rows_c = 65536,
        .cumsum_n = (int64_t)1 << 28,
        .gather_n = (int64_t)1 << 26,
        .mask_n = (int64_t)1 << 28,
        .hist_n = (int64_t)1 << 28,
        .la_n = 8192,
        .svd_n = 4096, /* 8192: 6-12 s a call on the H200 (--set svd_n=8192) */
        .bsolve_b = 100000,
        .bsvd_b = 10000,
        .fft_n = (int64_t)1 << 26,
        .rfft2_n = 8192,
        .einsum_n = 4096,
        .h2d_gib = 16.0,
    };
}

/* --small: every size shrunk so the whole suite takes seconds on two cores. */
static void sizes_small(suite_sizes *sz)
{
    *sz = (suite_sizes){
        .chain_n = (int64_t)1 << 20,
        .bs_n = (int64_t)1 << 20,
        .stencil_n = 1024,
        .stencil_iters = 20,
        .small_n = 200,
        .small_iters = 50,
        .pi_n = (int64_t)1 << 22,
        .matmul_n = 512,
        .dot_n = 1000000,
        .ops_n = 1000,
        .ops_iters = 100,
        .sum_n = (int64_t)1 << 22,
        .scope_n = (int64_t)1 << 20,
        .norm_n = 256,
        .sort_n = (int64_t)1 << 20,
        .argsort_n = (int64_t)1 << 20,
        .rows_r = 64,
        .rows_c = 4096,
        .cumsum_n = (int64_t)1 << 20,
        .gather_n = (int64_t)1 << 20,
        .mask_n = (int64_t)1 << 20,
        .hist_n = (int64_t)1 << 20,
        .la_n = 1024,
        .svd_n = 1024,
        .bsolve_b = 10000,
        .bsvd_b = 1000,
        .fft_n = (int64_t)1 << 22,
        .rfft2_n = 2048,
        .einsum_n = 1024,
        .h2d_gib = 0.0625,
    };
}

static int usage(const char *why)
{
    fprintf(stderr, "bench_nd_suite: %s\nusage: bench_nd_suite [--small] [--runs N] [--h2d-gib G] "
                    "[--set SIZE=V] [WORKLOAD ... | la | lib]\nworkloads:", why);
    for (int i = 0; i < N_WORKLOADS; i++)
        fprintf(stderr, " %s", workloads[i]->name);
    fprintf(stderr, "\n");
    return 2;
}

/* --set NAME=VALUE: one of the linear algebra sizes. */
static int set_size(suite_sizes *sz, const char *arg)
{
    static const struct {
        const char *name;
        size_t off;
    } keys[] = {
        {"la_n", offsetof(suite_sizes, la_n)},         {"svd_n", offsetof(suite_sizes, svd_n)},
        {"bsolve_b", offsetof(suite_sizes, bsolve_b)}, {"bsvd_b", offsetof(suite_sizes, bsvd_b)},
        {"fft_n", offsetof(suite_sizes, fft_n)},
        {"rfft2_n", offsetof(suite_sizes, rfft2_n)},   {"einsum_n", offsetof(suite_sizes, einsum_n)},
    };
    const char *eq = strchr(arg, '=');
    for (size_t i = 0; eq && i < sizeof keys / sizeof keys[0]; i++)
        if (strlen(keys[i].name) == (size_t)(eq - arg) && strncmp(arg, keys[i].name, (size_t)(eq - arg)) == 0) {
            long long v = atoll(eq + 1);
            if (v < 1)
                return -1;
            *(int64_t *)((char *)sz + keys[i].off) = v;
            return 0;
        }
    return -1;
}

static int add_name(options *o, const char *a)
{
    const char *const *group = strcmp(a, "la") == 0 ? la_group : strcmp(a, "lib") == 0 ? lib_group : NULL;
    if (group) {
        for (int i = 0; group[i]; i++)
            if (add_name(o, group[i]))
                return -1;
        return 0;
    }
    bool known = false;
    for (int w = 0; w < N_WORKLOADS; w++)
        known = known || strcmp(a, workloads[w]->name) == 0;
    if (!known || o->n_only == 64)
        return usage(known ? "too many workloads named" : "unknown workload");
    o->only[o->n_only++] = a;
    return 0;
}

static int parse(int argc, char **argv, options *o)
{
    double h2d_gib = 0;
    const char *sets[16];
    int n_sets = 0;
    o->runs = 9;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--small") == 0) {
            o->small = true;
        } else if (strcmp(a, "--runs") == 0 && i + 1 < argc) {
            o->runs = atoi(argv[++i]);
            if (o->runs < 1 || o->runs > MAX_RUNS)
                return usage("--runs takes 1..1000");
        } else if (strcmp(a, "--h2d-gib") == 0 && i + 1 < argc) {
            h2d_gib = atof(argv[++i]);
            if (!(h2d_gib > 0))
                return usage("--h2d-gib takes a positive size in GiB");
            o->h2d_named = true;
        } else if (strcmp(a, "--set") == 0 && i + 1 < argc && n_sets < 16) {
            sets[n_sets++] = argv[++i];
        } else if (a[0] == '-') {
            return usage("unknown option");
        } else if (add_name(o, a)) {
            return 2;
        }
    }
    if (o->small)
        sizes_small(&o->sz);
    else
        sizes_full(&o->sz);
    for (int i = 0; i < n_sets; i++)
        if (set_size(&o->sz, sets[i]))
            return usage("--set takes la_n, svd_n, bsolve_b, bsvd_b, fft_n, rfft2_n or einsum_n = a positive size");
    if (h2d_gib > 0)
        o->sz.h2d_gib = h2d_gib;
    return 0;
}

/* Named on the command line, or part of the default list for this run. */
static bool selected(const options *o, const suite_workload *w, bool on_gpu)
{
    if (o->n_only > 0) {
        for (int i = 0; i < o->n_only; i++)
            if (strcmp(o->only[i], w->name) == 0)
                return true;
        return false;
    }
    if (w->named_only)
        return false; /* quietly: the default list is the suite's default set */
    if (w->gpu_only && !on_gpu) {
        fprintf(stderr, "  (%s left out: it measures host->device streaming; name it to run it)\n",
                w->name);
        return false;
    }
    if (w->big && o->small && !o->h2d_named) {
        fprintf(stderr, "  (%s left out under --small; name it or give --h2d-gib)\n", w->name);
        return false;
    }
    return true;
}

static void json_number(const char *key, double v)
{
    if (isfinite(v))
        printf(",\"%s\":%.10g", key, v);
    else
        printf(",\"%s\":null", key);
}

/* all_s: the workload's wall time so far (see run_workload). */
static void report_error(const char *impl, const suite_workload *w, const char *what, double all_s)
{
    printf("{\"impl\":\"%s\",\"workload\":\"%s\",\"error\":\"", impl, w->name);
    for (const char *c = what; *c; c++) /* JSON string: escape quotes, drop controls */
        if (*c == '"' || *c == '\\')
            printf("\\%c", *c);
        else if ((unsigned char)*c >= 0x20)
            putchar(*c);
    printf("\"}\n");
    fflush(stdout);
    fprintf(stderr, "  %-14s FAILED after %.1f s: %s\n", w->name, all_s, what);
}

static void free_state(suite_state *s)
{
    for (int i = 0; i < 3; i++) {
        nd_free(s->in[i]);
        s->in[i] = NULL;
    }
    for (int i = 0; i < 3; i++) {
        nd_free(s->out[i]);
        s->out[i] = NULL;
    }
    free(s->host);
    s->host = NULL;
}

static void free_outputs(suite_state *s)
{
    for (int i = 0; i < 3; i++) {
        nd_free(s->out[i]);
        s->out[i] = NULL;
    }
}

/* prepare + run, with the run's wall time in *t (host clock around
 * recording and nd_sync). */
static nd_status one_run(const suite_workload *w, suite_state *s, bool for_check, double *t)
{
    nd_status st = w->prepare(s, for_check);
    if (st != ND_OK)
        return st;
    double t0 = bench_now();
    st = w->run(s);
    *t = bench_now() - t0;
    return st;
}

/* The timing rule of bench/README.md. Returns 0 on success. The table row
 * also gives the workload's whole wall time (inputs, checked run, warm-up,
 * timed runs, checks, freeing): the timed runs are often the small part, and
 * the suite's time budget is spent on the whole. */
static int run_workload(const char *impl, const suite_workload *w, const options *o)
{
    suite_state s = {.sz = &o->sz};
    suite_measure m;
    w->measure(&o->sz, &m);
    double start = bench_now(), t = 0, worst = 0, tol = suite_tolerance(w, &o->sz);
    char msg[256];
    nd_clear_error();

    /* 1. the checked run: nothing is timed before the answer is right */
    nd_status st = one_run(w, &s, true, &t);
    double err = st == ND_OK ? w->check(&s) : NAN;
    free_outputs(&s);
    if (st != ND_OK || nd_last_status() != ND_OK) {
        snprintf(msg, sizeof msg, "nd error: %s (%s)", nd_last_error(),
                 nd_status_name(st != ND_OK ? st : nd_last_status()));
        goto failed;
    }
    if (!(err <= tol)) {
        snprintf(msg, sizeof msg, "wrong answer: error %.3g exceeds the tolerance %.1e (%s check)",
                 err, tol, w->check_kind);
        goto failed;
    }
    worst = err;
    /* 2. one more untimed run (plans cached, graphs captured, pools full),
     *    unless the checked run was already long */
    if (t <= LONG_RUN_S) {
        st = one_run(w, &s, false, &t);
        free_outputs(&s);
        if (st != ND_OK)
            goto nd_failed;
    }
    /* 3. the timed runs */
    double times[MAX_RUNS];
    int runs = 0;
    int target = o->runs > MIN_RUNS ? o->runs : MIN_RUNS;
    if (w->max_runs > 0 && target > w->max_runs)
        target = w->max_runs;
    while (runs < target) {
        st = one_run(w, &s, false, &times[runs]);
        if (st != ND_OK)
            goto nd_failed;
        if (w->check_every_run) {
            err = w->check(&s);
            if (!(err <= tol)) {
                snprintf(msg, sizeof msg, "wrong answer in timed run %d: error %.3g exceeds %.1e",
                         runs + 1, err, tol);
                goto failed;
            }
            worst = err > worst ? err : worst;
        }
        free_outputs(&s);
        runs++;
        if (runs >= 3 && times[runs - 1] > LONG_RUN_S)
            break;
        if (runs >= MIN_RUNS && bench_now() - start > BUDGET_S)
            break;
    }
    double mn = times[0];
    for (int i = 1; i < runs; i++)
        mn = times[i] < mn ? times[i] : mn;
    double med = bench_median(times, runs);
    free_state(&s);
    double all_s = bench_now() - start;

    printf("{\"impl\":\"%s\",\"workload\":\"%s\",\"n\":%lld,\"dtype\":\"%s\"", impl, w->name,
           (long long)m.n, w->dtype);
    json_number("median_s", med);
    json_number("min_s", mn);
    printf(",\"runs\":%d", runs);
    json_number("err", worst);
    json_number("tol", tol);
    printf(",\"check\":\"%s\"", w->check_kind);
    json_number("bytes", m.bytes >= 0 ? m.bytes : NAN);
    json_number("flops", m.flops);
    printf("}\n");
    fflush(stdout);
    char rate[32] = "";
    if (m.bytes >= 0)
        snprintf(rate, sizeof rate, "%8.1f GB/s", m.bytes / med * 1e-9);
    fprintf(stderr, "  %-14s %12.4f %12.4f %5d %10.2e %8.1f %s\n", w->name, med * 1e3, mn * 1e3, runs,
            worst, all_s, rate);
    return 0;

nd_failed:
    snprintf(msg, sizeof msg, "nd error: %s (%s)", nd_last_error(), nd_status_name(st));
failed:
    free_state(&s);
    report_error(impl, w, msg, bench_now() - start);
    nd_clear_error();
    return 1;
}

int main(int argc, char **argv)
{
    options o = {0};
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc;
    if (nd_init(NULL) != ND_OK) {
        fprintf(stderr, "bench_nd_suite: nd_init failed: %s\n", nd_last_error());
        return 1;
    }
    char impl[32];
    snprintf(impl, sizeof impl, "nd-%s", nd_backend_name());
    bool on_gpu = strcmp(nd_backend_name(), "cpu") != 0;
    printf("{\"impl\":\"%s\",\"meta\":{\"library\":\"nd %d.%d.%d\",\"backend\":\"%s\","
           "\"threads\":%d,\"small\":%s}}\n",
           impl, ND_VERSION_MAJOR, ND_VERSION_MINOR, ND_VERSION_PATCH, nd_backend_name(),
           bench_threads(), o.small ? "true" : "false");
    fflush(stdout);
    fprintf(stderr, "%s%s: median and minimum of the timed runs (ms); all: the workload's whole wall time (s), "
                    "inputs, checks and untimed runs included\n", impl, o.small ? " (--small sizes)" : "");
    fprintf(stderr, "  %-14s %12s %12s %5s %10s %8s\n", "workload", "median", "min", "runs", "error", "all (s)");
    nd_random_seed(20261123);
    int failures = 0;
    for (int i = 0; i < N_WORKLOADS; i++)
        if (selected(&o, workloads[i], on_gpu))
            failures += run_workload(impl, workloads[i], &o);
    nd_shutdown();
    if (failures)
        fprintf(stderr, "%s: %d workload(s) FAILED (see the \"error\" lines)\n", impl, failures);
    return failures ? 1 : 0;
}
