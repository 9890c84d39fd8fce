/*
 * convolve_bench.c — nd_convolve_nd's two methods and AUTO's choice
 * between them, on long and short filters (float32, mode 'same'):
 *
 *   long1d    2^22 signal x 4096 taps          (AUTO should take the FFT)
 *   image63   2048 x 2048 image x 63 x 63      (FFT)
 *   image5    2048 x 2048 image x 5 x 5        (direct: one fused kernel)
 *   short1d   2^22 signal x 64 taps            (direct)
 *   np1d      the 1-d nd_convolve on long1d's arrays (same rule)
 *
 * Per case: the median time of DIRECT, FFT and AUTO (each run from the
 * call to the nd_sync that waits for it; random inputs made and synced
 * outside), which method AUTO took (probed by a NaN in the signal: the
 * FFT spreads it over every output, direct does not), and a check that
 * FFT and DIRECT agree (max |fft - direct| / max |direct| < 1e-3; float32
 * FFT rounding over up to 2^22 points). WARM untimed runs per method
 * first (kernel compiles, cuFFT plans, and on CUDA the graphs of the
 * plan: a graph is captured per new set of buffer addresses, and the first
 * runs of a plan see new addresses until the memory pool's reuse settles;
 * with a single warm-up the FFT column paid ~0.1 ms of captures on the
 * H200 that AUTO, the same plan timed after it, did not). The AUTO rule
 * is right for a case when AUTO's time is within noise of the faster
 * method's; ND_CUDA_GRAPHS=0 takes graphs out of the comparison.
 *
 * Usage: bench_convolve_bench [RUNS] [SHRINK] [WARM]    (defaults 7 0 4)
 *   SHRINK divides every signal axis by 2^SHRINK (filters unchanged), for
 *   a quick run on a small CPU. ND_BACKEND picks the backend.
 */
#include "bench_util.h"

#include <nd.h>

#include <math.h>

typedef struct {
    const char *name;
    int nd;
    int64_t sa[2], sv[2];
    int one_d_api; /* nd_convolve instead of nd_convolve_nd */
} conv_case;

static nd_array *run(const conv_case *c, nd_array *a, nd_array *v, nd_conv_method m) {
    if (c->one_d_api) return nd_convolve(a, v, ND_CONV_SAME); /* AUTO's rule inside */
    return nd_convolve_nd(a, v, ND_CONV_SAME, m);
}

static int WARM = 4;

/* Median seconds of `runs` calls; NaN when a call fails. */
static double time_method(const conv_case *c, nd_array *a, nd_array *v, nd_conv_method m, int runs) {
    double t[64];
    for (int i = 0; i < WARM; i++) {
        nd_array *w = run(c, a, v, m);
        if (!w || nd_sync() != ND_OK) return NAN;
        nd_free(w);
    }
    for (int i = 0; i < runs; i++) {
        double t0 = bench_now();
        nd_array *z = run(c, a, v, m);
        if (!z || nd_sync() != ND_OK) return NAN;
        t[i] = bench_now() - t0;
        nd_free(z);
    }
    return bench_median(t, runs);
}

/* max |x - y| / max |y| */
static double rel_diff(nd_array *x, nd_array *y) {
    nd_scope_begin();
    double d = nd_item(nd_max(nd_abs(nd_sub(x, y)), ND_ALL_AXES));
    double m = nd_item(nd_max(nd_abs(y), ND_ALL_AXES));
    nd_scope_end();
    return m > 0 ? d / m : d;
}

/* 1 when AUTO took the FFT: a NaN at the signal's first element reaches
 * every output only through the transform. */
static int auto_took_fft(const conv_case *c, nd_array *a, nd_array *v) {
    nd_scope_begin();
    nd_array *p = nd_copy(a);
    nd_assign(nd_view(p, c->nd == 1 ? "0" : "0, 0"), nd_scalar(NAN));
    nd_array *z = run(c, p, v, ND_CONV_AUTO);
    double nans = z ? nd_item(nd_count_nonzero(nd_isnan(z), ND_ALL_AXES)) : -1;
    int fft = z && nans == (double)nd_size(z);
    nd_scope_end();
    return fft;
}

int main(int argc, char **argv) {
    int runs = argc >= 2 ? atoi(argv[1]) : 7, shrink = argc >= 3 ? atoi(argv[2]) : 0;
    WARM = argc >= 4 ? atoi(argv[3]) : 4;
    runs = runs < 3 ? 3 : runs > 64 ? 64 : runs;
    if (shrink < 0 || shrink > 10 || WARM < 1 || WARM > 64) {
        fprintf(stderr, "usage: bench_convolve_bench [RUNS] [SHRINK 0..10] [WARM 1..64]\n");
        return 2;
    }
    if (nd_init(NULL) != ND_OK) {
        fprintf(stderr, "convolve_bench: nd_init failed: %s\n", nd_last_error());
        return 1;
    }
    nd_random_seed(2026);
    conv_case cases[] = {
        {"long1d", 1, {1 << 22}, {4096}, 0},  {"image63", 2, {2048, 2048}, {63, 63}, 0},
        {"image5", 2, {2048, 2048}, {5, 5}, 0}, {"short1d", 1, {1 << 22}, {64}, 0},
        {"np1d", 1, {1 << 22}, {4096}, 1},
    };
    const int ncases = (int)(sizeof cases / sizeof *cases);
    int ok = 1;
    printf("convolve_bench: float32, mode same, median of %d after %d warm-up runs, backend %s, signals / 2^%d\n",
           runs, WARM, nd_backend_name(), shrink);
    printf("  %-8s %-22s %11s %11s %11s  %-6s %s\n", "case", "shape", "direct ms", "fft ms", "auto ms", "auto",
           "fft vs direct");
    for (int k = 0; k < ncases; k++) {
        conv_case *c = &cases[k];
        for (int d = 0; d < c->nd; d++) c->sa[d] = c->sa[d] >> shrink > c->sv[d] ? c->sa[d] >> shrink : c->sv[d];
        nd_array *a = nd_random_uniform(ND_FLOAT32, c->nd, c->sa, -1, 1);
        nd_array *v = nd_random_uniform(ND_FLOAT32, c->nd, c->sv, -1, 1);
        nd_sync();
        double td = c->one_d_api ? NAN : time_method(c, a, v, ND_CONV_DIRECT, runs);
        double tf = c->one_d_api ? NAN : time_method(c, a, v, ND_CONV_FFT, runs);
        double ta = time_method(c, a, v, ND_CONV_AUTO, runs);
        double diff = NAN;
        if (!c->one_d_api) {
            nd_array *zd = nd_convolve_nd(a, v, ND_CONV_SAME, ND_CONV_DIRECT);
            nd_array *zf = nd_convolve_nd(a, v, ND_CONV_SAME, ND_CONV_FFT);
            diff = zd && zf ? rel_diff(zf, zd) : NAN;
            nd_free(zd), nd_free(zf);
            if (!(diff < 1e-3) || isnan(td) || isnan(tf)) ok = 0;
        }
        if (isnan(ta)) ok = 0;
        const int fft = auto_took_fft(c, a, v);
        char shape[64];
        if (c->nd == 1)
            snprintf(shape, sizeof shape, "%lld x %lld", (long long)c->sa[0], (long long)c->sv[0]);
        else
            snprintf(shape, sizeof shape, "%lldx%lld x %lldx%lld", (long long)c->sa[0], (long long)c->sa[1],
                     (long long)c->sv[0], (long long)c->sv[1]);
        printf("  %-8s %-22s %11.3f %11.3f %11.3f  %-6s %.2e\n", c->name, shape, 1e3 * td, 1e3 * tf, 1e3 * ta,
               fft ? "fft" : "direct", diff);
        printf("JSON {\"bench\":\"convolve\",\"case\":\"%s\",\"shape\":\"%s\",\"runs\":%d,\"direct_ms\":%.4f,"
               "\"fft_ms\":%.4f,\"auto_ms\":%.4f,\"auto_method\":\"%s\",\"fft_vs_direct\":%.3g,\"backend\":\"%s\"}\n",
               c->name, shape, runs, 1e3 * td, 1e3 * tf, 1e3 * ta, fft ? "fft" : "direct", diff, nd_backend_name());
        nd_free(a), nd_free(v);
    }
    if (!ok) printf("  ERROR: a run failed or FFT and direct disagree\n");
    nd_shutdown();
    return ok ? 0 : 1;
}
