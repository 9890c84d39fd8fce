/* Random numbers: Philox4x32-10 known answers, the documented mapping
 * (seed, stream, index) -> value, reproducibility across seeds, calls,
 * thread counts and fusion, and the moments of 1e6 draws. */
#include "common.h"

#include <stdlib.h>

#include "common/philox.h"
#include "frontend/runtime.h" /* nd_rt.rng_stream: streams past 2^32 without 2^32 calls */

NDT_TEST(random, philox_reference_known_answers) {
    /* Random123 kat_vectors, "philox4x32 10": counter, key -> output */
    nd_philox4x32 z = nd_philox4x32_10(0, 0, 0);
    cr_expect(z.x[0] == 0x6627e8d5u && z.x[1] == 0xe169c58du && z.x[2] == 0xbc57ac4cu &&
              z.x[3] == 0x9b00dbd8u, "zero vector");
    nd_philox4x32 f = nd_philox4x32_10(UINT64_MAX, UINT64_MAX, UINT64_MAX);
    cr_expect(f.x[0] == 0x408f276du && f.x[1] == 0x41c83b0eu && f.x[2] == 0xa20bc7c6u &&
              f.x[3] == 0x6d5451fdu, "all-ones vector");
    nd_philox4x32 p = nd_philox4x32_10(0x299f31d0a4093822ull, 0x85a308d3243f6a88ull,
                                       0x0370734413198a2eull);
    cr_expect(p.x[0] == 0xd16cfe09u && p.x[1] == 0x94fdccebu && p.x[2] == 0x5001e420u &&
              p.x[3] == 0x24126ea1u, "pi vector");
}

static ref_arr *draw(int normal, nd_dtype t, int64_t n, double a, double b) {
    nd_array *x = normal ? nd_random_normal(t, 1, &n, a, b) : nd_random_uniform(t, 1, &n, a, b);
    cr_assert(x, "random draw failed: %s", nd_last_error());
    ref_arr *h = ndt_download(x);
    nd_free(x);
    return h;
}

static int same_bits(const ref_arr *a, const ref_arr *b) {
    return a->size == b->size && a->dt == b->dt &&
           memcmp(a->data, b->data, (size_t)a->size * ref_itemsize(a->dt)) == 0;
}

NDT_TEST(random, follows_the_philox_mapping) {
    const uint64_t seed = 987654321;
    nd_random_seed(seed);
    ref_arr *u = draw(0, ND_FLOAT64, 1000, -2, 3);
    ref_arr *uf = draw(0, ND_FLOAT32, 1000, 1, 2);
    ref_arr *nn = draw(1, ND_FLOAT64, 1000, 0.5, 2);
    /* the stream counts calls since the seed; accept numbering from 0 or 1 */
    uint64_t base = 0;
    if (fabs(ref_getd(u, 0) - (-2 + 5 * nd_philox_uniform_f64(seed, 0, 0))) > 1e-12) base = 1;
    for (int64_t i = 0; i < 1000; i++) {
        double w = -2 + 5 * nd_philox_uniform_f64(seed, base, (uint64_t)i);
        cr_expect(fabs(ref_getd(u, i) - w) <= 1e-15 * 5, "uniform f64 [%lld]: %.17g vs philox %.17g",
                  (long long)i, ref_getd(u, i), w);
        double wf = 1.0f + 1.0f * nd_philox_uniform_f32(seed, base + 1, (uint64_t)i);
        cr_expect(fabs(ref_getd(uf, i) - wf) <= 2.5e-7, "uniform f32 [%lld]: %.9g vs philox %.9g",
                  (long long)i, ref_getd(uf, i), wf);
        double wn = 0.5 + 2 * nd_philox_normal_f64(seed, base + 2, (uint64_t)i);
        cr_expect(fabs(ref_getd(nn, i) - wn) <= 1e-12 * (1 + fabs(wn)), "normal f64 [%lld]: %.17g vs philox %.17g",
                  (long long)i, ref_getd(nn, i), wn);
    }
    ref_free(u); ref_free(uf); ref_free(nn);
}

/* The scaling lo + (hi - lo) * u is rounded step by step in float32 on every
 * backend (no fused multiply-add), so draws agree bit for bit with the
 * reference, not just within an ulp. A range where fusing would change bits. */
NDT_TEST(random, uniform_float32_scaling_is_bit_exact) {
    const uint64_t seed = 20261122;
    const float lo = -3.7f, hi = 11.3f;
    nd_random_seed(seed);
    ref_arr *uf = draw(0, ND_FLOAT32, 4096, lo, hi);
    const float *got = (const float *)uf->data;
    int64_t mismatches = 0, first = -1;
    for (uint64_t base = 0; base < 2; base++) { /* stream numbering from 0 or 1 */
        mismatches = 0;
        first = -1;
        for (int64_t i = 0; i < 4096; i++) {
            float width = hi - lo; /* separate statements: rounded one by one */
            float scaled = width * nd_philox_uniform_f32(seed, base, (uint64_t)i);
            float want = lo + scaled;
            if (memcmp(&want, &got[i], sizeof want) != 0 && mismatches++ == 0) first = i;
        }
        if (mismatches == 0) break;
    }
    cr_expect_eq(mismatches, 0, "%lld of 4096 draws differ from the reference bits (first at %lld)",
                 (long long)mismatches, (long long)first);
    ref_free(uf);
}

NDT_TEST(random, same_seed_same_numbers_new_call_new_numbers) {
    nd_random_seed(42);
    ref_arr *a = draw(0, ND_FLOAT32, 4096, 0, 1), *a2 = draw(0, ND_FLOAT32, 4096, 0, 1);
    ref_arr *n1 = draw(1, ND_FLOAT64, 777, 0, 1);
    nd_random_seed(42);
    ref_arr *b = draw(0, ND_FLOAT32, 4096, 0, 1), *b2 = draw(0, ND_FLOAT32, 4096, 0, 1);
    ref_arr *n2 = draw(1, ND_FLOAT64, 777, 0, 1);
    nd_random_seed(43);
    ref_arr *c = draw(0, ND_FLOAT32, 4096, 0, 1);
    cr_expect(same_bits(a, b), "same seed, first call: same numbers");
    cr_expect(same_bits(a2, b2), "same seed, second call: same numbers");
    cr_expect(same_bits(n1, n2), "same seed, normal: same numbers");
    cr_expect(!same_bits(a, a2), "a second call gives new numbers");
    cr_expect(!same_bits(a, c), "another seed gives new numbers");
    int64_t eq = 0;
    for (int64_t i = 0; i < a->size; i++) eq += ref_getd(a, i) == ref_getd(a2, i);
    cr_expect_lt(eq, 10, "%lld of 4096 elements repeat between calls", (long long)eq);
    ref_free(a); ref_free(a2); ref_free(b); ref_free(b2); ref_free(c); ref_free(n1); ref_free(n2);
}

/* A random draw and an expression over it, downloaded. */
static void draw_set(ref_arr **out) {
    nd_scope_begin();
    nd_random_seed(2024);
    int64_t n = 1 << 17;
    nd_array *u = nd_random_uniform(ND_FLOAT32, 1, &n, -1, 1);
    nd_array *g = nd_random_normal(ND_FLOAT64, ND_SHAPE(256, 300), 0, 1);
    nd_array *e = nd_add(nd_mul(u, nd_scalar(2.0)), nd_scalar(1.0));
    nd_array *s = nd_sum(g, 1);
    out[0] = ndt_download(u);
    out[1] = ndt_download(g);
    out[2] = ndt_download(e);
    out[3] = ndt_download(s);
    nd_free(u); nd_free(g); nd_free(e); nd_free(s);
    nd_scope_end();
}

static void compare_sets(ref_arr **a, ref_arr **b, const char *what) {
    cr_expect(same_bits(a[0], b[0]), "%s: uniform float32 differs", what);
    cr_expect(same_bits(a[1], b[1]), "%s: normal float64 differs", what);
    for (int k = 2; k < 4; k++)
        for (int64_t i = 0; i < a[k]->size && i < b[k]->size; i++) {
            double x = ref_getd(a[k], i), y = ref_getd(b[k], i);
            if (fabs(x - y) > 1e-6 * (fabs(y) + 1)) {
                cr_expect_fail("%s: derived result %d element %lld: %.9g vs %.9g", what, k,
                               (long long)i, x, y);
                break;
            }
        }
}

NDT_TEST(random, independent_of_threads_and_fusion) {
    ref_arr *t1[4], *t2[4], *nf[4];
    nd_config c1 = {0}, c2 = {0}, c3 = {0};
    c1.num_threads = 1;
    c2.num_threads = 2;
    c3.num_threads = 2;
    c3.fusion = -1;
    ndt_restart(&c1);
    draw_set(t1);
    ndt_restart(&c2);
    draw_set(t2);
    ndt_restart(&c3);
    draw_set(nf);
    compare_sets(t1, t2, "1 vs 2 threads");
    compare_sets(t2, nf, "fusion on vs off");
    for (int k = 0; k < 4; k++) {
        ref_free(t1[k]);
        ref_free(t2[k]);
        ref_free(nf[k]);
    }
}

static void moments(const ref_arr *a, double *mean, double *var, double *lo, double *hi) {
    double s = 0, q = 0;
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int64_t i = 0; i < a->size; i++) {
        double x = ref_getd(a, i);
        s += x;
        if (x < *lo) *lo = x;
        if (x > *hi) *hi = x;
    }
    *mean = s / (double)a->size;
    for (int64_t i = 0; i < a->size; i++) {
        double d = ref_getd(a, i) - *mean;
        q += d * d;
    }
    *var = q / (double)a->size;
}

NDT_TEST(random, uniform_range_and_moments) {
    nd_random_seed(7);
    const nd_dtype dts[2] = {ND_FLOAT64, ND_FLOAT32};
    for (int k = 0; k < 2; k++) {
        double a = -2, b = 5, mean, var, lo, hi;
        ref_arr *u = draw(0, dts[k], 1000000, a, b);
        moments(u, &mean, &var, &lo, &hi);
        cr_expect(lo >= a && hi < b, "%s uniform outside [%g, %g): min %.9g max %.9g", ref_dtype_name(dts[k]), a, b, lo, hi);
        cr_expect(fabs(mean - 1.5) < 5 * 7 / sqrt(12e6), "%s mean %.6g, want 1.5", ref_dtype_name(dts[k]), mean);
        cr_expect(fabs(var / (49.0 / 12) - 1) < 0.01, "%s variance %.6g, want %.6g", ref_dtype_name(dts[k]), var, 49.0 / 12);
        int64_t bins[10] = {0};
        for (int64_t i = 0; i < u->size; i++) {
            int bi = (int)((ref_getd(u, i) - a) / (b - a) * 10);
            bins[bi < 0 ? 0 : bi > 9 ? 9 : bi]++;
        }
        for (int i = 0; i < 10; i++)
            cr_expect(labs((long)(bins[i] - 100000)) < 2000, "%s bin %d has %lld of 1e6", ref_dtype_name(dts[k]), i, (long long)bins[i]);
        ref_free(u);
    }
    ref_arr *unit = draw(0, ND_FLOAT32, 1000000, 0, 1);
    double mean, var, lo, hi;
    moments(unit, &mean, &var, &lo, &hi);
    cr_expect(lo >= 0 && hi < 1, "float32 [0,1): min %.9g max %.9g", lo, hi);
    ref_free(unit);
    const nd_dtype small[2] = {ND_FLOAT16, ND_BFLOAT16};
    for (int k = 0; k < 2; k++) {
        ref_arr *h = draw(0, small[k], 10000, -1, 1);
        moments(h, &mean, &var, &lo, &hi);
        cr_expect(lo >= -1 && hi <= 1 && fabs(mean) < 0.05, "%s uniform: min %g max %g mean %g", ref_dtype_name(small[k]), lo, hi, mean);
        ref_free(h);
    }
}

NDT_TEST(random, normal_moments) {
    nd_random_seed(11);
    const nd_dtype dts[2] = {ND_FLOAT64, ND_FLOAT32};
    for (int k = 0; k < 2; k++) {
        double mean, var, lo, hi;
        ref_arr *g = draw(1, dts[k], 1000000, 3, 2);
        moments(g, &mean, &var, &lo, &hi);
        cr_expect(fabs(mean - 3) < 5 * 2 / 1000.0, "%s normal mean %.6g, want 3", ref_dtype_name(dts[k]), mean);
        cr_expect(fabs(sqrt(var) / 2 - 1) < 0.01, "%s normal sd %.6g, want 2", ref_dtype_name(dts[k]), sqrt(var));
        cr_expect(isfinite(lo) && isfinite(hi) && lo < 3 - 8 && hi > 3 + 8, "%s tails: min %g max %g", ref_dtype_name(dts[k]), lo, hi);
        int64_t within1 = 0;
        for (int64_t i = 0; i < g->size; i++) within1 += fabs(ref_getd(g, i) - 3) < 2;
        cr_expect(fabs((double)within1 / 1e6 - 0.682689) < 0.003, "%s: %.4f within one sd", ref_dtype_name(dts[k]), (double)within1 / 1e6);
        ref_free(g);
    }
}

/* ------------------------------------------------ the shared-call mapping */

/* The words of Philox call c that the draw at index i reads (philox.h):
 * W = 4/k consecutive indices share call i / W. Pins the reference itself. */
NDT_TEST(random, reference_shares_each_call_among_consecutive_indices) {
    const uint64_t seeds[3] = {0, 0x0123456789abcdefull, UINT64_MAX};
    for (int s = 0; s < 3; s++)
        for (uint64_t c = 0; c < 50; c++) {
            uint64_t call = c * 0x9e3779b97f4a7c15ull >> 3; /* large counters too */
            nd_philox4x32 r = nd_philox4x32_10(seeds[s], call, 7);
            for (uint64_t j = 0; j < 4; j++)
                cr_expect(nd_philox_uniform_f32(seeds[s], 7, 4 * call + j) == nd_philox_u01_f32(r.x[j]),
                          "float32 uniform at index 4c+%d reads word %d of call c", (int)j, (int)j);
            for (uint64_t p = 0; p < 2; p++) {
                cr_expect(nd_philox_uniform_f64(seeds[s], 7, 2 * call + p) ==
                              nd_philox_u01_f64(r.x[2 * p], r.x[2 * p + 1]),
                          "float64 uniform at index 2c+%d reads words %d,%d", (int)p, (int)(2 * p),
                          (int)(2 * p + 1));
                float u1 = 1.0f - nd_philox_u01_f32(r.x[2 * p]), u2 = nd_philox_u01_f32(r.x[2 * p + 1]);
                float z = sqrtf(-2.0f * logf(u1)) * cosf(6.28318530717958647692f * u2);
                cr_expect(nd_philox_normal_f32(seeds[s], 7, 2 * call + p) == z,
                          "float32 normal at index 2c+%d reads words %d,%d", (int)p, (int)(2 * p),
                          (int)(2 * p + 1));
            }
            double u1 = 1.0 - nd_philox_u01_f64(r.x[0], r.x[1]), u2 = nd_philox_u01_f64(r.x[2], r.x[3]);
            cr_expect(nd_philox_normal_f64(seeds[s], 7, call) ==
                          sqrt(-2.0 * log(u1)) * cos(6.28318530717958647692 * u2),
                      "float64 normal at index c reads all four words of call c");
        }
}

/* The value of draw (seed, stream, index) with parameters (a, b) in dtype t,
 * as the kernel builder computes it: in float64 for float64, else in float32
 * one rounding per operation, then rounded to t. */
static double want_draw(int normal, nd_dtype t, uint64_t seed, uint64_t stream, uint64_t i,
                        double a, double b) {
    if (t == ND_FLOAT64) {
        if (normal) {
            double sc = b * nd_philox_normal_f64(seed, stream, i);
            return a + sc;
        }
        double width = b - a;
        double sc = width * nd_philox_uniform_f64(seed, stream, i);
        return a + sc;
    }
    float af = (float)a, bf = (float)b, v;
    if (normal) {
        float sc = bf * nd_philox_normal_f32(seed, stream, i);
        v = af + sc;
    } else {
        float width = bf - af;
        float sc = width * nd_philox_uniform_f32(seed, stream, i);
        v = af + sc;
    }
    return ref_round_to(t, v);
}

/* Uniform draws must match bit for bit; normal ones within the vector (or
 * device) log/cos ulps, and one rounding step of a 16-bit dtype. */
static double draw_tol(int normal, nd_dtype t) {
    if (!normal) return 0;
    return t == ND_FLOAT64 ? 1e-12 : t == ND_FLOAT32 ? 2e-6 : t == ND_FLOAT16 ? 1e-3 : 8e-3;
}

/* got[i] against the draws at indices ix[i] of one random call. */
static int check_draws(const ref_arr *got, const int64_t *ix, int normal, uint64_t seed,
                       uint64_t stream, double a, double b, const char *what) {
    double tol = draw_tol(normal, got->dt);
    for (int64_t i = 0; i < got->size; i++) {
        double w = want_draw(normal, got->dt, seed, stream, (uint64_t)ix[i], a, b);
        double g = ref_getd(got, i);
        if (tol == 0 ? g != w : !(fabs(g - w) <= tol * (1 + fabs(w)))) {
            cr_expect_fail("%s %s %s, seed %llu: element %lld (index %lld) is %.17g, want %.17g", what,
                           ref_dtype_name(got->dt), normal ? "normal" : "uniform",
                           (unsigned long long)seed, (long long)i, (long long)ix[i], g, w);
            return 0;
        }
    }
    return 1;
}

static const nd_dtype float_dtypes[4] = {ND_FLOAT16, ND_BFLOAT16, ND_FLOAT32, ND_FLOAT64};

/* Fresh arrays of sizes that W does not divide, across tile boundaries;
 * parameters (0, 1) too, which record the standard uniform (the draw with
 * no scaling) and must give the same bits as 0 + (1 - 0) * u. */
NDT_TEST(random, fresh_draws_follow_the_mapping_in_every_float_dtype) {
    const uint64_t seeds[3] = {0, 987654321, UINT64_MAX - 6};
    const int64_t sizes[4] = {1, 3, 1027, 4099};
    const double params[2][2] = {{-1.5, 2.25}, {0, 1}};
    int64_t *ix = malloc(sizeof(int64_t) * 4099);
    for (int64_t i = 0; i < 4099; i++) ix[i] = i;
    for (int s = 0; s < 3; s++)
        for (int d = 0; d < 4; d++)
            for (int normal = 0; normal < 2; normal++)
                for (int p = 0; p < 2; p++) {
                    const double a = params[p][0], b = params[p][1];
                    nd_random_seed(seeds[s]);
                    for (int z = 0; z < 4; z++) {
                        ref_arr *x = draw(normal, float_dtypes[d], sizes[z], a, b);
                        check_draws(x, ix, normal, seeds[s], (uint64_t)z, a, b, p ? "fresh (0, 1)" : "fresh");
                        ref_free(x);
                    }
                }
    free(ix);
}

/* A view recipe, applied alike to a random array and to the arange of its
 * flat indices (which tells the draw index of each element of the view). */
typedef struct {
    const char *name;
    int ndim;
    int64_t shape[3];
    const char *index; /* nd_view string, or NULL */
    int transpose;     /* then reverse the axes */
    int64_t bcast;     /* then broadcast to (bcast, ...) when > 0 */
} view_recipe;

static nd_array *apply_view(nd_array *base, const view_recipe *r) {
    nd_array *a = nd_reshape(base, r->ndim, r->shape);
    if (r->index) {
        nd_array *b = nd_view(a, r->index);
        nd_free(a);
        a = b;
    }
    if (r->transpose) {
        nd_array *b = nd_transpose(a, NULL);
        nd_free(a);
        a = b;
    }
    if (r->bcast > 0) {
        int64_t sh[ND_MAX_DIMS + 1];
        sh[0] = r->bcast;
        for (int d = 0; d < nd_ndim(a); d++) sh[d + 1] = nd_shape(a)[d];
        nd_array *b = nd_broadcast_to(a, nd_ndim(a) + 1, sh);
        nd_free(a);
        a = b;
    }
    cr_assert(a, "view %s: %s", r->name, nd_last_error());
    return a;
}

static const view_recipe recipes[] = {
    {"odd start", 1, {1001}, "1:", 0, 0},
    {"reversed", 1, {1001}, "::-1", 0, 0},
    {"stride 3", 1, {1001}, "3:-2:3", 0, 0},
    {"transposed", 2, {37, 53}, NULL, 1, 0},
    {"inner rows", 2, {37, 53}, "1:, 2:-1", 0, 0},
    {"reversed rows, odd columns", 2, {37, 52}, "::-1, 5:", 0, 0},
    {"3-d transposed slice", 3, {6, 7, 12}, "1:, :, 3:", 1, 0},
    {"broadcast row", 1, {101}, "None, 3:11", 0, 5},
};
#define N_RECIPES ((int)(sizeof recipes / sizeof recipes[0]))

static int64_t recipe_size(const view_recipe *r) {
    int64_t n = 1;
    for (int d = 0; d < r->ndim; d++) n *= r->shape[d];
    return n;
}

/* Draw indices of the elements of recipe r's view, row-major. */
static int64_t *recipe_indices(const view_recipe *r, int64_t *count) {
    nd_array *ar = nd_arange(ND_INT64, 0, (double)recipe_size(r), 1);
    nd_array *v = apply_view(ar, r);
    ref_arr *h = ndt_download(v);
    int64_t *ix = malloc(sizeof(int64_t) * (size_t)h->size);
    for (int64_t i = 0; i < h->size; i++) ix[i] = (int64_t)ref_getu(h, i);
    *count = h->size;
    ref_free(h);
    nd_free(v);
    nd_free(ar);
    return ix;
}

/* consume(view) with only the consumer's result kept, so the draw is
 * evaluated inside the consumer's kernel through the view's index map. */
static ref_arr *draw_view(int normal, nd_dtype t, const view_recipe *r, double a, double b,
                          nd_array *(*consume)(nd_array *, void *), void *arg) {
    int64_t n = recipe_size(r);
    nd_array *x = normal ? nd_random_normal(t, 1, &n, a, b) : nd_random_uniform(t, 1, &n, a, b);
    cr_assert(x, "draw: %s", nd_last_error());
    nd_array *v = apply_view(x, r);
    nd_free(x);
    nd_array *y = consume(v, arg);
    nd_free(v);
    cr_assert(y, "consumer of view %s: %s", r->name, nd_last_error());
    ref_arr *h = ndt_download(y);
    nd_free(y);
    return h;
}

static nd_array *times_one(nd_array *v, void *arg) {
    (void)arg;
    nd_array *one = nd_scalar(1.0), *y = nd_mul(v, one);
    nd_free(one);
    return y;
}

NDT_TEST(random, views_of_random_arrays_follow_the_mapping) {
    const uint64_t seed = 31337;
    for (int q = 0; q < N_RECIPES; q++) {
        int64_t m;
        int64_t *ix = recipe_indices(&recipes[q], &m);
        for (int d = 0; d < 4; d++)
            for (int normal = 0; normal < 2; normal++) {
                nd_random_seed(seed);
                ref_arr *y = draw_view(normal, float_dtypes[d], &recipes[q], 0.5, 3, times_one, NULL);
                cr_expect_eq(y->size, m, "%s: size", recipes[q].name);
                if (y->size == m) check_draws(y, ix, normal, seed, 0, 0.5, 3, recipes[q].name);
                ref_free(y);
            }
        free(ix);
    }
}

static nd_array *sum_axis(nd_array *v, void *arg) { return nd_sum(v, *(const int *)arg); }

/* Reductions over views of random arrays (the draws inlined into the
 * reduction kernel, as in Monte Carlo pi): sums against the reference sums
 * of the mapped draws, along every axis and over all of them. */
NDT_TEST(random, reductions_of_random_views_follow_the_mapping) {
    const uint64_t seed = 4242;
    for (int q = 0; q < N_RECIPES; q++) {
        int64_t m;
        int64_t *ix = recipe_indices(&recipes[q], &m);
        /* the view's shape, from the index array */
        nd_array *ar = nd_arange(ND_INT64, 0, (double)recipe_size(&recipes[q]), 1);
        nd_array *shp = apply_view(ar, &recipes[q]);
        int nd = nd_ndim(shp);
        int64_t shape[ND_MAX_DIMS];
        memcpy(shape, nd_shape(shp), sizeof(int64_t) * (size_t)nd);
        nd_free(shp);
        nd_free(ar);
        for (int d = 2; d < 4; d++)
            for (int normal = 0; normal < 2; normal++)
                for (int axis = -1; axis < nd; axis++) {
                    int ax = axis < 0 ? ND_ALL_AXES : axis;
                    nd_random_seed(seed);
                    ref_arr *got = draw_view(normal, float_dtypes[d], &recipes[q], -1, 2, sum_axis, &ax);
                    /* reference: per output, the float64 sum of the mapped draws */
                    int64_t inner = 1, ext = axis < 0 ? m : shape[axis];
                    for (int k = axis + 1; axis >= 0 && k < nd; k++) inner *= shape[k];
                    int64_t n_out = m / ext;
                    cr_assert_eq(got->size, n_out, "%s axis %d: %lld outputs", recipes[q].name, axis,
                                 (long long)got->size);
                    for (int64_t o = 0; o < n_out; o++) {
                        int64_t base = (o / inner) * ext * inner + o % inner;
                        double sum = 0, mag = 0;
                        for (int64_t j = 0; j < ext; j++) {
                            int64_t e = axis < 0 ? j : base + j * inner;
                            double w = want_draw(normal, float_dtypes[d], seed, 0, (uint64_t)ix[e], -1, 2);
                            sum += w;
                            mag += fabs(w);
                        }
                        double g = ref_getd(got, o);
                        double tol = (float_dtypes[d] == ND_FLOAT64 ? 1e-12 : 2e-6) * (mag + 1);
                        if (!(fabs(g - sum) <= tol)) {
                            cr_expect_fail("%s %s %s sum over axis %d: output %lld is %.17g, want %.17g",
                                           recipes[q].name, ref_dtype_name(float_dtypes[d]),
                                           normal ? "normal" : "uniform", axis, (long long)o, g, sum);
                            break;
                        }
                    }
                    ref_free(got);
                }
        free(ix);
    }
}

/* Monte Carlo pi's kernel shape: two fresh float32 draws, a comparison and
 * a full reduction. The count of points inside matches the reference
 * (x*x + y*y may be contracted to an FMA on a GPU: allow a few boundary
 * points to flip). */
NDT_TEST(random, monte_carlo_count_follows_the_mapping) {
    const uint64_t seed = 77;
    const int64_t n = (1 << 20) + 3;
    nd_random_seed(seed);
    nd_scope_begin(); /* every intermediate released: one fused kernel */
    nd_array *x = nd_random_uniform(ND_FLOAT32, 1, &n, 0, 1);
    nd_array *y = nd_random_uniform(ND_FLOAT32, 1, &n, 0, 1);
    nd_array *in = nd_le(nd_add(nd_mul(x, x), nd_mul(y, y)), nd_scalar(1.0));
    nd_array *c = nd_keep(nd_sum(nd_astype(in, ND_INT64), ND_ALL_AXES));
    nd_scope_end();
    cr_assert(c, "count: %s", nd_last_error());
    double got = nd_item(c);
    nd_free(c);
    int64_t want = 0;
    for (int64_t i = 0; i < n; i++) {
        float u = nd_philox_uniform_f32(seed, 0, (uint64_t)i), v = nd_philox_uniform_f32(seed, 1, (uint64_t)i);
        float uu = u * u, vv = v * v;
        float r2 = uu + vv;
        want += r2 <= 1.0f;
    }
    cr_expect(fabs(got - (double)want) <= 8, "inside: %.0f, reference %lld", got, (long long)want);
}

/* x * y of two float64 standard uniforms of n points, x of seed sx and
 * stream `stream`, y of seed sy and the next stream (set after the seed
 * when the seeds differ), both freed before y's product is read: one
 * kernel draws both. Checked against philox.h point by point; returns the
 * plan-cache misses of the flush. */
static uint64_t product_of_draws(uint64_t sx, uint64_t sy, uint64_t stream, int64_t n) {
    nd_random_seed(sx);
    nd_rt.rng_stream = stream;
    nd_array *x = nd_random_uniform(ND_FLOAT64, 1, &n, 0, 1);
    if (sy != sx) nd_random_seed(sy);
    nd_rt.rng_stream = stream + 1;
    nd_array *y = nd_random_uniform(ND_FLOAT64, 1, &n, 0, 1);
    nd_array *p = nd_mul(x, y);
    nd_free(x);
    nd_free(y);
    nd_stats s0, s1;
    nd_get_stats(&s0);
    ref_arr *h = ndt_download(p);
    nd_get_stats(&s1);
    nd_free(p);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        const double want = nd_philox_uniform_f64(sx, stream, (uint64_t)i) * nd_philox_uniform_f64(sy, stream + 1, (uint64_t)i);
        const double got = ref_getd(h, i);
        if (memcmp(&got, &want, sizeof got) != 0 && bad++ < 3)
            cr_expect_fail("seeds %llu, %llu, streams %#llx, +1: point %lld is %.17g, want %.17g",
                           (unsigned long long)sx, (unsigned long long)sy, (unsigned long long)stream, (long long)i,
                           got, want);
    }
    ref_free(h);
    return s1.plan_cache_misses - s0.plan_cache_misses;
}

/* A kernel's draws of one seed read one seed parameter, and on CUDA share
 * the first round's c3 ^ k1 word, while their streams have one high word
 * (kernel_ir.h's ND_IR_ONE_HIGH_WORD, flush_walk.h's rng_root). Whether
 * each draw continues the run of the one before is in the plan's key, so
 * a plan made for one seed is not used for two, nor one made for streams
 * of one high word for streams that straddle 2^32. */
NDT_TEST(random, draws_share_a_seed_only_where_the_plan_says_so) {
    const uint64_t A = 0x0123456789abcdefull, B = 99;
    const int64_t n = 4099;
    product_of_draws(A, A, 10, n); /* one seed, one high word: the run's plan */
    cr_expect_eq(product_of_draws(A, A, 20, n), 0, "the same run again takes the cached plan");
    cr_expect_gt(product_of_draws(A, B, 30, n), 0, "two seeds must not take the one-seed plan");
    product_of_draws(A, A, 0xffffffffull, n); /* streams 2^32 - 1 and 2^32: two runs */
    cr_expect_eq(product_of_draws(A, A, 0x100000007ull, n), 0, "one high word again: the run's plan");
    cr_expect_eq(product_of_draws(A, A, 0x1ffffffffull, n), 0, "two runs again: their plan");
}
