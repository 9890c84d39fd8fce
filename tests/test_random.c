/* Random numbers: Philox4x32-10 known answers, the documented mapping
 * (seed, stream, index) -> value, reproducibility across seeds, calls,
 * thread counts and fusion, and the moments of 1e6 draws. */
#include "common.h"

#include <stdlib.h>

#include "common/philox.h"

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
