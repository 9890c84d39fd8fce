/* GPU scheduling seen from outside: independent branches of a plan go to
 * different streams (and, on CUDA, really overlap in time, read from the
 * ND_TRACE timeline), repeated plans replayed as CUDA Graphs give the same
 * answers as direct launches, and a long recorded loop with temporaries is
 * right. Runs on every backend; the timing checks only where there is a
 * device timeline (CUDA). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mkstemp */
#endif
#include "common.h"

#include <unistd.h>

#define CHAIN_ITERS 100

/* x <- sin(x)*0.5 + 0.25, CHAIN_ITERS times: contractive, so float32
 * rounding does not grow along the chain. */
static nd_array *record_chain(nd_array *x) {
    for (int i = 0; i < CHAIN_ITERS; i++) {
        nd_array *y = nd_add(nd_mul(nd_sin(x), nd_scalar(0.5)), nd_scalar(0.25));
        if (i > 0) nd_free(x);
        x = y;
    }
    return x;
}

static void chain_ref(ref_arr *a) {
    for (int64_t i = 0; i < a->size; i++) {
        double v = ref_getd(a, i);
        for (int k = 0; k < CHAIN_ITERS; k++) v = sin(v) * 0.5 + 0.25;
        ref_setd(a, i, v);
    }
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) n = 0;
    if (s) s[n] = 0;
    fclose(f);
    return s;
}

typedef struct {
    double start, end;
    int tid;
    char cat[16];
    unsigned long long flush;
} trace_event;

/* The events of ND_TRACE's file (one JSON object per line). */
static int read_trace(const char *path, trace_event *ev, int cap) {
    FILE *f = fopen(path, "r");
    cr_assert(f, "cannot read the trace %s", path);
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f) && n < cap) {
        const char *c = strstr(line, "\"cat\":\""), *t = strstr(line, "\"tid\":"),
                   *ts = strstr(line, "\"ts\":"), *d = strstr(line, "\"dur\":"),
                   *fl = strstr(line, "\"flush\":");
        if (!c || !t || !ts || !d || !fl) continue;
        trace_event *e = &ev[n];
        if (sscanf(c + 7, "%15[a-z]", e->cat) != 1) continue;
        e->tid = atoi(t + 6);
        e->start = atof(ts + 5);
        e->end = e->start + atof(d + 6);
        e->flush = strtoull(fl + 8, NULL, 10);
        n++;
    }
    fclose(f);
    return n;
}

/* Two chains on device-resident inputs and the sum of a host array in one
 * flush: three independent branches. */
NDT_TEST(streams, independent_chains_and_copy_overlap) {
    char trace[] = "/tmp/nd-test-trace-XXXXXX";
    int fd = mkstemp(trace);
    cr_assert(fd >= 0);
    close(fd);
    nd_config cfg = {0};
    cfg.trace = trace;
    cfg.early_flush = -1; /* the graph dump below needs everything still pending */
    ndt_restart(&cfg);
    /* releases the chains' temporaries (alive, as before, until the end) */
    nd_scope_begin();
    int cuda = ndt_backend_is_cuda();
    /* Big enough on a GPU that each kernel and the copy take tens of
     * microseconds or more; small on the CPU, where only answers count. */
    int64_t n = cuda ? (1 << 20) : (1 << 12), nh = cuda ? (1 << 24) : (1 << 14);
    NDT_RNG(r);
    /* Different lengths, so the planner cannot merge the two chains into
     * shared kernels (it would for equal iteration spaces). */
    ref_arr *ra = ndt_rand(&r, ND_FLOAT32, ND_SHAPE(n), -2, 2);
    ref_arr *rb = ndt_rand(&r, ND_FLOAT32, ND_SHAPE(n + 4096), -2, 2);
    ref_arr *rh = ndt_rand(&r, ND_FLOAT32, ND_SHAPE(nh), 0, 1);
    /* Chain inputs computed first, so they already live where kernels run. */
    nd_array *a = nd_copy(ndt_upload(ra)), *b = nd_copy(ndt_upload(rb));
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_array *h = ndt_upload(rh);
    /* The sum first: its copy is then issued before the chains' kernels. */
    nd_array *sh = nd_sum(h, ND_ALL_AXES), *ca = record_chain(a), *cb = record_chain(b);
    cr_assert(ca && cb && sh, "%s", nd_last_error());

    char dot[] = "/tmp/nd-test-streams-XXXXXX";
    fd = mkstemp(dot);
    cr_assert(fd >= 0);
    close(fd);
    cr_assert_eq(nd_graph_dump_dot(dot), ND_OK, "%s", nd_last_error());
    char *s = slurp(dot);
    cr_assert(s);
    cr_expect(strstr(s, "stream 0") && strstr(s, "stream 1"),
              "the two independent chains should be planned on two streams");
    if (cuda) cr_expect(strstr(s, "host -> device") && strstr(s, "stream 4"),
                        "the host array's copy should be on the host->device stream");
    free(s);
    unlink(dot);

    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    chain_ref(ra);
    chain_ref(rb);
    ndt_check(ca, ra, 1e-5, 1e-6, NULL, "chain a");
    ndt_check(cb, rb, 1e-5, 1e-6, NULL, "chain b");
    double want = 0;
    for (int64_t i = 0; i < nh; i++) want += ref_getd(rh, i);
    cr_expect(fabs(nd_item(sh) - want) <= 1e-5 * want, "sum = %.9g, want %.9g", nd_item(sh), want);
    nd_free(ca);
    nd_free(cb);
    nd_free(sh);
    nd_free(h);
    ref_free(ra);
    ref_free(rb);
    ref_free(rh);
    nd_scope_end();

    if (cuda) {
        nd_shutdown(); /* closes the trace file */
        static trace_event ev[4096];
        int ne = read_trace(trace, ev, 4096);
        unsigned long long last = 0;
        for (int i = 0; i < ne; i++)
            if (ev[i].flush > last) last = ev[i].flush;
        /* Kernel span per compute stream, and the copy, in the big flush. */
        double lo[8], hi[8], copy_lo = -1, copy_hi = -1;
        for (int t = 0; t < 8; t++) lo[t] = 1e300, hi[t] = -1e300;
        for (int i = 0; i < ne; i++) {
            if (ev[i].flush != last || ev[i].tid < 0 || ev[i].tid >= 8) continue;
            if (strcmp(ev[i].cat, "copy") == 0) {
                copy_lo = ev[i].start;
                copy_hi = ev[i].end;
            } else if (strcmp(ev[i].cat, "kernel") == 0) {
                if (ev[i].start < lo[ev[i].tid]) lo[ev[i].tid] = ev[i].start;
                if (ev[i].end > hi[ev[i].tid]) hi[ev[i].tid] = ev[i].end;
            }
        }
        int overlapping_streams = 0, copy_overlaps = 0;
        for (int t = 0; t < 4; t++)
            for (int u = t + 1; u < 4; u++)
                if (hi[t] > lo[t] && hi[u] > lo[u] && lo[t] < hi[u] && lo[u] < hi[t]) overlapping_streams++;
        for (int t = 0; t < 4; t++)
            if (hi[t] > lo[t] && copy_hi > copy_lo && lo[t] < copy_hi && copy_lo < hi[t]) copy_overlaps++;
        char spans[512];
        int len = snprintf(spans, sizeof spans, "copy [%.1f, %.1f] us;", copy_lo, copy_hi);
        for (int t = 0; t < 4 && len > 0 && (size_t)len < sizeof spans; t++)
            if (hi[t] > lo[t])
                len += snprintf(spans + len, sizeof spans - (size_t)len, " stream %d kernels [%.1f, %.1f] us;", t,
                                lo[t], hi[t]);
        cr_expect(overlapping_streams > 0, "no two compute streams ran kernels at the same time: %s (%d events)",
                  spans, ne);
        cr_expect(copy_overlaps > 0, "the host->device copy did not overlap any kernel: %s", spans);
        ndt_restart(NULL);
    }
    unlink(trace);
}

/* A loop that syncs every iteration, ping-ponging between buffers with a
 * scalar that changes: the plan repeats, the graph's signature alternates
 * and changes. Graphs on and off must agree bit for bit. Three reductions
 * and the maps between them make a plan of more than four steps (fewer
 * are launched directly, never replayed: plan_runner.c). */
static void run_loop(ref_arr **out, const ref_arr *init) {
    nd_array *x = ndt_upload(init);
    for (int it = 0; it < 12; it++) {
        nd_scope_begin();
        nd_array *t = nd_scalar(0.01 * (it % 5));
        nd_array *y = nd_add(nd_mul(nd_cos(x), nd_scalar(0.9)), nd_mul(x, t));
        nd_array *z = nd_sub(y, nd_mean(y, ND_ALL_AXES));
        nd_array *w = nd_div(z, nd_add(nd_max(nd_abs(z), ND_ALL_AXES), nd_scalar(1.0)));
        w = nd_keep(nd_sub(w, nd_mul(nd_mean(w, ND_ALL_AXES), nd_scalar(0.5))));
        nd_scope_end();
        nd_free(x);
        x = w;
        cr_assert_eq(nd_sync(), ND_OK, "iteration %d: %s", it, nd_last_error());
    }
    *out = ndt_download(x);
    nd_free(x);
}

NDT_TEST(streams, graph_replay_matches_direct_launches) {
    NDT_RNG(r);
    ref_arr *init = ndt_rand(&r, ND_FLOAT32, ND_SHAPE(4096), -1, 1);
    ref_arr *with = NULL, *without = NULL;
    run_loop(&with, init);
    nd_config off = {0};
    off.cuda_graphs = -1;
    ndt_restart(&off);
    run_loop(&without, init);
    cr_assert_eq(memcmp(with->data, without->data, (size_t)with->size * 4), 0,
                 "the loop's result differs with and without CUDA Graphs");
    /* and both are right */
    ref_arr *ref = ref_astype(init, ND_FLOAT64);
    for (int it = 0; it < 12; it++) {
        double tv = (double)(float)(0.01 * (it % 5)), mean = 0;
        for (int64_t i = 0; i < ref->size; i++) {
            double x = (double)(float)ref_getd(ref, i);
            ref_setd(ref, i, cos(x) * 0.9 + x * tv);
            mean += ref_getd(ref, i);
        }
        mean /= (double)ref->size;
        double top = 0;
        for (int64_t i = 0; i < ref->size; i++) {
            ref_setd(ref, i, ref_getd(ref, i) - mean);
            top = fmax(top, fabs(ref_getd(ref, i)));
        }
        double m2 = 0;
        for (int64_t i = 0; i < ref->size; i++) {
            ref_setd(ref, i, ref_getd(ref, i) / (top + 1));
            m2 += ref_getd(ref, i);
        }
        m2 /= (double)ref->size;
        for (int64_t i = 0; i < ref->size; i++) ref_setd(ref, i, ref_getd(ref, i) - 0.5 * m2);
    }
    for (int64_t i = 0; i < ref->size; i++)
        cr_expect(fabs(ref_getd(with, i) - ref_getd(ref, i)) <= 1e-4, "x[%lld] = %g, want %g", (long long)i,
                  ref_getd(with, i), ref_getd(ref, i));
    ref_free(ref);
    ref_free(with);
    ref_free(without);
    ref_free(init);
}

/* 50 Jacobi iterations recorded before one sync, three times with fresh
 * data (the second and third replay the captured graph): the iterations'
 * versions alternate between the grid and one temporary (store_chains.c). */
NDT_TEST(streams, stencil_loop_in_one_flush) {
    ndt_restart(&(nd_config){.early_flush = -1});
    NDT_RNG(r);
    const int N = 48, iters = 50;
    for (int rep = 0; rep < 3; rep++) {
        ref_arr *init = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(N, N), 0, 1);
        nd_array *u0 = ndt_upload(init), *u = nd_copy(u0);
        for (int it = 0; it < iters; it++) {
            nd_scope_begin();
            nd_array *c = nd_view(u, "1:-1, 1:-1");
            nd_array *s = nd_add(nd_add(nd_add(nd_add(c, nd_view(u, ":-2, 1:-1")), nd_view(u, "2:, 1:-1")),
                                        nd_view(u, "1:-1, :-2")),
                                 nd_view(u, "1:-1, 2:"));
            cr_assert_eq(nd_assign(c, nd_mul(nd_scalar(0.2), s)), ND_OK, "%s", nd_last_error());
            nd_scope_end();
        }
        cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
        double *g = malloc(sizeof(double) * N * N), *t = malloc(sizeof(double) * N * N);
        for (int i = 0; i < N * N; i++) g[i] = ref_getd(init, i);
        for (int it = 0; it < iters; it++) {
            memcpy(t, g, sizeof(double) * N * N);
            for (int i = 1; i < N - 1; i++)
                for (int j = 1; j < N - 1; j++)
                    g[i * N + j] = 0.2 * ((((t[i * N + j] + t[(i - 1) * N + j]) + t[(i + 1) * N + j]) +
                                           t[i * N + j - 1]) + t[i * N + j + 1]);
        }
        ref_arr *want = ref_from_doubles(ND_FLOAT64, ND_SHAPE(N, N), g);
        ndt_check(u, want, 1e-12, 1e-12, NULL, "stencil repetition %d", rep);
        ref_free(want);
        ref_free(init);
        free(g);
        free(t);
        nd_free(u);
        nd_free(u0);
    }
}

/* A host array three times the device memory limit, reduced three ways:
 * without streaming it through the device in chunks its copy would not
 * fit (ND_ERR_OOM). Each reduction is its own flush (one kernel reading the
 * host array is what streams). */
NDT_TEST(streams, host_array_larger_than_device_limit_streams_in_chunks) {
    nd_config cfg = {0};
    cfg.device_memory_limit = 8 << 20; /* chunks of 1 MiB */
    ndt_restart(&cfg);
    const int64_t R = 3000, C = 2000; /* 24 MB of float32 */
    NDT_RNG(r);
    ref_arr *rx = ndt_rand(&r, ND_FLOAT32, ND_SHAPE(R, C), -4, 4);
    nd_array *x = ndt_upload(rx);
    nd_stats before, after;
    nd_get_stats(&before);

    /* Scopes: intermediates with live handles would have to be kept (on
     * the device, where they do not fit). */
    nd_scope_begin();
    nd_array *all = nd_keep(nd_sum(nd_add(nd_mul(nd_sqrt(nd_abs(x)), nd_scalar(2.0)), nd_scalar(1.0)), ND_ALL_AXES));
    nd_scope_end();
    cr_assert_eq(nd_sync(), ND_OK, "full reduction: %s", nd_last_error());
    nd_scope_begin();
    nd_array *cols = nd_keep(nd_max(nd_mul(x, nd_scalar(3.0)), 0));
    nd_scope_end();
    cr_assert_eq(nd_sync(), ND_OK, "reduction over axis 0: %s", nd_last_error());
    nd_array *rows = nd_sum(x, 1);
    cr_assert_eq(nd_sync(), ND_OK, "reduction over axis 1: %s", nd_last_error());
    nd_get_stats(&after);

    double want_all = 0;
    ref_arr *want_cols = ref_new(ND_FLOAT32, ND_SHAPE(C)), *want_rows = ref_new(ND_FLOAT32, ND_SHAPE(R));
    for (int64_t j = 0; j < C; j++) ref_setd(want_cols, j, -INFINITY);
    for (int64_t i = 0; i < R; i++) {
        double rs = 0;
        for (int64_t j = 0; j < C; j++) {
            double v = ref_getd(rx, i * C + j);
            want_all += sqrt(fabs(v)) * 2 + 1;
            rs += v;
            if (3 * v > ref_getd(want_cols, j)) ref_setd(want_cols, j, (double)(float)(3 * (float)v));
        }
        ref_setd(want_rows, i, rs);
    }
    cr_expect(fabs(nd_item(all) - want_all) <= 1e-5 * want_all, "sum = %.9g, want %.9g", nd_item(all), want_all);
    ndt_check(cols, want_cols, 0, 0, NULL, "max over axis 0");
    ndt_check(rows, want_rows, 1e-5, 1e-3, NULL, "sum over axis 1");
    if (ndt_backend_is_cuda())
        cr_expect(after.copies - before.copies >= 3 * 20, "expected >= 20 chunk copies per flush, got %llu in 3",
                  (unsigned long long)(after.copies - before.copies));
    nd_free(all);
    nd_free(cols);
    nd_free(rows);
    nd_free(x);
    ref_free(rx);
    ref_free(want_cols);
    ref_free(want_rows);
}

/* nd_flush hands each batch to the executor thread while the next one is
 * recorded; reads in between wait for it. Results must match a reference
 * however the batches interleave. */
NDT_TEST(streams, flushed_batches_run_on_the_executor_thread) {
    nd_scope_begin(); /* releases the batches' temporaries at the end */
    NDT_RNG(r);
    ref_arr *init = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(5000), -1, 1);
    nd_array *x = ndt_upload(init);
    double *want = malloc(sizeof(double) * 5000);
    for (int64_t i = 0; i < 5000; i++) want[i] = ref_getd(init, i);
    for (int batch = 0; batch < 30; batch++) {
        for (int k = 0; k < 4; k++) {
            nd_array *y = nd_add(nd_mul(x, nd_scalar(0.5)), nd_scalar((double)batch));
            nd_free(x);
            x = y;
            for (int64_t i = 0; i < 5000; i++) want[i] = want[i] * 0.5 + batch;
        }
        cr_assert_eq(nd_flush(), ND_OK, "batch %d: %s", batch, nd_last_error());
        if (batch % 7 == 3) {
            ref_arr *got = ndt_download(x);
            for (int64_t i = 0; i < 5000; i += 499)
                cr_expect(fabs(ref_getd(got, i) - want[i]) <= 1e-12 * (1 + fabs(want[i])),
                          "batch %d: x[%lld] = %.17g, want %.17g", batch, (long long)i, ref_getd(got, i), want[i]);
            ref_free(got);
        }
    }
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    ref_arr *want_arr = ref_from_doubles(ND_FLOAT64, ND_SHAPE(5000), want);
    ndt_check(x, want_arr, 1e-12, 1e-12, NULL, "after 30 flushed batches");
    nd_stats st;
    nd_get_stats(&st);
    cr_expect(st.flushes >= 30, "expected one flush per batch, got %llu", (unsigned long long)st.flushes);
    ref_free(want_arr);
    ref_free(init);
    free(want);
    nd_free(x);
    nd_scope_end();
}
