/* nd_einsum against a brute-force reference written here: the subscripts
 * are parsed again independently, and every assignment of every index is
 * visited, the operands' elements multiplied and summed into the output in
 * float64 (floats), wrapping 64-bit integers (ints) or OR of ANDs (bool).
 * Random problems cover repeated indices (diagonals), '...' broadcasting,
 * length-1 broadcasting, implicit and explicit outputs, sums, 0-d operands
 * and outputs, empty dimensions and every contraction order; fixed ones
 * cover the matmul lowering, the order chosen, the path report and every
 * error with the position it names. */
#include "common.h"

#include <complex.h>
#include <ctype.h>

#define MAXOP 12
#define MAXL 64

/* ---------------------------------------------------------------- reference */

typedef struct {
    int n;
    int ndim[MAXOP];
    int lab[MAXOP][ND_MAX_DIMS]; /* a letter's ASCII code, or 200 + k for the k-th '...' dim (right-aligned) */
    int nout;
    int out[MAXL];
} rspec;

/* Parses a valid subscripts string for operands of the given ndims. */
static void rparse(const char *subs, int n, const int *ndims, rspec *s) {
    memset(s, 0, sizeof *s);
    s->n = n;
    const char *arrow = strstr(subs, "->");
    int maxell = 0, count[256] = {0};
    const char *p = subs;
    for (int k = 0; k < n; k++) {
        int letters = 0, has_ell = 0;
        const char *q = p;
        while (*q && *q != ',' && q != arrow) {
            if (isalpha((unsigned char)*q)) letters++;
            if (*q == '.') has_ell = 1, q += 2;
            q++;
        }
        int nell = has_ell ? ndims[k] - letters : 0, ax = 0;
        if (nell > maxell) maxell = nell;
        for (q = p; *q && *q != ',' && q != arrow; q++) {
            if (isalpha((unsigned char)*q)) {
                s->lab[k][ax++] = *q;
                count[(unsigned char)*q]++;
            } else if (*q == '.') {
                for (int e = 0; e < nell; e++) s->lab[k][ax++] = -1000 - (nell - e); /* distance from the right */
                q += 2;
            }
        }
        s->ndim[k] = ax;
        p = q;
        if (*p == ',') p++;
    }
    for (int k = 0; k < n; k++)
        for (int d = 0; d < s->ndim[k]; d++)
            if (s->lab[k][d] <= -1000) s->lab[k][d] = 200 + maxell - (-1000 - s->lab[k][d]);
    if (arrow) {
        for (const char *q = arrow + 2; *q; q++) {
            if (isalpha((unsigned char)*q)) s->out[s->nout++] = *q;
            else if (*q == '.') {
                for (int e = 0; e < maxell; e++) s->out[s->nout++] = 200 + e;
                q += 2;
            }
        }
    } else {
        for (int e = 0; e < maxell; e++) s->out[s->nout++] = 200 + e;
        for (int c = 0; c < 256; c++)
            if (count[c] == 1) s->out[s->nout++] = c;
    }
}

/* The einsum by visiting every index assignment; *scale gets the sum of
 * |products| per output element (a bound for rounding). */
static ref_arr *ref_einsum(const char *subs, int n, ref_arr **ops, double **scale) {
    int ndims[MAXOP];
    for (int k = 0; k < n; k++) ndims[k] = ops[k]->ndim;
    rspec s;
    rparse(subs, n, ndims, &s);
    int labels[MAXL], nl = 0;
    int64_t size[MAXL];
    for (int k = 0; k < n; k++)
        for (int d = 0; d < s.ndim[k]; d++) {
            int j = 0;
            while (j < nl && labels[j] != s.lab[k][d]) j++;
            if (j == nl) labels[nl] = s.lab[k][d], size[nl++] = 1;
            if (ops[k]->shape[d] != 1) size[j] = ops[k]->shape[d];
        }
    nd_dtype rt = ops[0]->dt;
    for (int k = 1; k < n; k++) rt = ref_promote(rt, ops[k]->dt);
    int64_t oshape[ND_MAX_DIMS];
    int opos[MAXL];
    for (int i = 0; i < s.nout; i++) {
        int j = 0;
        while (labels[j] != s.out[i]) j++;
        opos[i] = j;
        oshape[i] = size[j];
    }
    ref_arr *out = ref_new(rt, s.nout, oshape);
    double *acc = calloc((size_t)out->size + 1, sizeof(double));
    uint64_t *iacc = calloc((size_t)out->size + 1, sizeof(uint64_t));
    *scale = calloc((size_t)out->size + 1, sizeof(double));
    int64_t total = 1;
    for (int j = 0; j < nl; j++) total *= size[j];
    int64_t idx[MAXL] = {0};
    for (int64_t t = 0; t < total; t++) {
        int64_t of = 0;
        for (int i = 0; i < s.nout; i++) of = of * oshape[i] + idx[opos[i]];
        double prod = 1;
        uint64_t iprod = 1;
        for (int k = 0; k < n; k++) {
            int64_t f = 0;
            for (int d = 0; d < s.ndim[k]; d++) {
                int j = 0;
                while (labels[j] != s.lab[k][d]) j++;
                f = f * ops[k]->shape[d] + (ops[k]->shape[d] == 1 ? 0 : idx[j]);
            }
            prod *= ref_getd(ops[k], f);
            iprod *= ref_getu(ops[k], f);
            if (rt == ND_BOOL) iprod = iprod != 0;
        }
        acc[of] += prod;
        (*scale)[of] += fabs(prod);
        iacc[of] = rt == ND_BOOL ? (iacc[of] | iprod) : iacc[of] + iprod;
        for (int j = nl - 1; j >= 0; j--) { /* the next assignment */
            if (++idx[j] < size[j]) break;
            idx[j] = 0;
        }
    }
    for (int64_t i = 0; i < out->size; i++) {
        if (ref_is_float(rt)) ref_setd(out, i, acc[i]);
        else ref_setu(out, i, iacc[i]);
    }
    free(acc);
    free(iacc);
    return out;
}

/* nd_einsum_ex(subs) with every order against the reference. */
static void check_einsum(const char *subs, int n, ref_arr **in, const char *what) {
    nd_array *ops[MAXOP];
    for (int k = 0; k < n; k++) ops[k] = ndt_upload(in[k]);
    double *scale;
    ref_arr *want = ref_einsum(subs, n, in, &scale);
    const nd_einsum_optimize orders[] = {ND_EINSUM_AUTO, ND_EINSUM_GREEDY, ND_EINSUM_LEFT, ND_EINSUM_OPTIMAL};
    for (int o = 0; o < 4; o++) {
        nd_einsum_options opt = {orders[o]};
        nd_array *got = o == 0 ? nd_einsum(subs, n, ops) : nd_einsum_ex(subs, n, ops, &opt);
        cr_assert(got, "%s: einsum(\"%s\") order %d failed: %s", what, subs, o, nd_last_error());
        double rtol = want->dt == ND_FLOAT32 ? 1e-5 : want->dt == ND_FLOAT64 ? 1e-12 : 0;
        ndt_check(got, want, rtol, 0, scale, "%s: einsum(\"%s\") order %d", what, subs, o);
        nd_free(got);
    }
    for (int k = 0; k < n; k++) nd_free(ops[k]);
    ref_free(want);
    free(scale);
}

static ref_arr *rnd(ndt_rng *r, nd_dtype t, int ndim, const int64_t *shape) {
    if (t == ND_INT8 || t == ND_UINT8) return ndt_rand_bits(r, t, ndim, shape); /* wraps */
    if (ref_is_float(t)) return ndt_rand(r, t, ndim, shape, -2, 2);
    return ndt_rand_small(r, t, ndim, shape);
}

/* -------------------------------------------------------------- fixed cases */

NDT_TEST(einsum, numpy_examples) {
    /* np.einsum results printed by NumPy 2 for a = arange(25).reshape(5,5),
     * b = arange(5), c = arange(6).reshape(2,3). */
    NDT_RNG(r);
    (void)r;
    double av[25], bv[5], cv[6];
    for (int i = 0; i < 25; i++) av[i] = i;
    for (int i = 0; i < 5; i++) bv[i] = i;
    for (int i = 0; i < 6; i++) cv[i] = i;
    nd_array *a = nd_from_host(av, ND_FLOAT64, 2, (int64_t[]){5, 5});
    nd_array *b = nd_from_host(bv, ND_FLOAT64, 1, (int64_t[]){5});
    nd_array *c = nd_from_host(cv, ND_FLOAT64, 2, (int64_t[]){2, 3});
    struct {
        const char *subs;
        int n;
        nd_array *ops[2];
        int size;
        double want[30];
    } cases[] = {
        {"ii", 1, {a}, 1, {60}},
        {"ii->i", 1, {a}, 5, {0, 6, 12, 18, 24}},
        {"ij->i", 1, {a}, 5, {10, 35, 60, 85, 110}},
        {"ij,j", 2, {a, b}, 5, {30, 80, 130, 180, 230}},
        {"i,i", 2, {b, b}, 1, {30}},
        {"ji", 1, {c}, 6, {0, 3, 1, 4, 2, 5}},
        {"ij,jk", 2, {c, c}, 0, {0}}, /* shape error below */
        {"...j,j", 2, {a, b}, 5, {30, 80, 130, 180, 230}},
        {"i,j->ij", 2, {b, b}, 25, {0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 0, 2, 4, 6, 8, 0, 3, 6, 9, 12, 0, 4, 8, 12, 16}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        nd_array *got = nd_einsum(cases[k].subs, cases[k].n, cases[k].ops);
        if (!cases[k].size) {
            cr_expect_null(got, "%s should fail", cases[k].subs);
            NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_einsum");
            continue;
        }
        cr_assert(got, "%s: %s", cases[k].subs, nd_last_error());
        cr_assert_eq(nd_size(got), cases[k].size, "%s", cases[k].subs);
        double v[30];
        cr_assert_eq(nd_to_host(got, v, sizeof(double) * (size_t)cases[k].size), ND_OK);
        for (int i = 0; i < cases[k].size; i++)
            cr_expect_eq(v[i], cases[k].want[i], "%s[%d]: %g, want %g", cases[k].subs, i, v[i], cases[k].want[i]);
        nd_free(got);
    }
    nd_free(a), nd_free(b), nd_free(c);
}

NDT_TEST(einsum, random_problems_every_dtype) {
    NDT_RNG(r);
    const nd_dtype dts[] = {ND_FLOAT64, ND_FLOAT32, ND_INT32, ND_INT8, ND_UINT8, ND_INT64, ND_BOOL};
    const char pool[] = "abcdXY";
    for (int c = 0; c < 70; c++) {
        const int n = (int)ndt_int(&r, 1, 4);
        int64_t size[128];
        for (int i = 0; i < 128; i++) size[i] = ndt_int(&r, 1, 4);
        const int use_ell = ndt_int(&r, 0, 3) == 0;
        int64_t ell_size[2] = {ndt_int(&r, 1, 3), ndt_int(&r, 1, 3)};
        char subs[128];
        int w = 0, seen[128] = {0};
        ref_arr *in[MAXOP];
        int has_ell_dims = 0;
        for (int k = 0; k < n; k++) {
            int64_t shape[ND_MAX_DIMS];
            int nd = 0;
            const int nletters = (int)ndt_int(&r, 0, 3);
            const int ell_here = use_ell && ndt_int(&r, 0, 1);
            const int nell = ell_here ? (int)ndt_int(&r, 0, 2) : 0;
            const int ell_at = ell_here ? (int)ndt_int(&r, 0, nletters) : -1;
            if (k) subs[w++] = ',';
            for (int j = 0; j <= nletters; j++) {
                if (j == ell_at) {
                    memcpy(subs + w, "...", 3), w += 3;
                    for (int e = 0; e < nell; e++) {
                        /* right-aligned: this operand's dims are the last nell of two */
                        const int64_t len = ell_size[2 - nell + e];
                        shape[nd++] = ndt_int(&r, 0, 4) == 0 ? 1 : len;
                    }
                    has_ell_dims |= nell > 0;
                }
                if (j == nletters) break;
                char ch = pool[ndt_int(&r, 0, (int)sizeof pool - 2)];
                subs[w++] = ch;
                seen[(int)ch] = 1;
                /* a length-1 axis broadcasts, unless the letter repeats here */
                int repeated = 0;
                for (int q = w - 2; q >= 0 && subs[q] != ','; q--) repeated |= subs[q] == ch;
                shape[nd++] = !repeated && ndt_int(&r, 0, 5) == 0 ? 1 : size[(int)ch];
            }
            /* a repeated letter's axes must agree: the letter's full length on all */
            int pos = w; /* an empty term: no axes (from 0 it read the other terms past shape) */
            for (int q = w - 1; q >= 0 && subs[q] != ','; q--) pos = q;
            int ax = 0;
            for (int q = pos; q < w; q++) {
                if (subs[q] == '.') {
                    ax += nell;
                    q += 2;
                    continue;
                }
                int reps = 0;
                for (int q2 = pos; q2 < w; q2++) reps += subs[q2] == subs[q];
                if (reps > 1) shape[ax] = size[(int)subs[q]];
                ax++;
            }
            in[k] = rnd(&r, dts[c % 7], nd, shape);
        }
        if (ndt_int(&r, 0, 1)) {
            subs[w++] = '-', subs[w++] = '>';
            if (has_ell_dims || ndt_int(&r, 0, 1)) memcpy(subs + w, "...", 3), w += 3;
            for (int i = 0; i < (int)sizeof pool - 1; i++)
                if (seen[(int)pool[i]] && ndt_int(&r, 0, 1)) subs[w++] = pool[i];
        }
        subs[w] = '\0';
        char what[64];
        snprintf(what, sizeof what, "case %d %s", c, ref_dtype_name(dts[c % 7]));
        check_einsum(subs, n, in, what);
        for (int k = 0; k < n; k++) ref_free(in[k]);
    }
}

NDT_TEST(einsum, matmul_lowering_and_batches) {
    NDT_RNG(r);
    struct {
        const char *subs;
        int n;
        int nd[3];
        int64_t sh[3][4];
        int matmul; /* whether some step is a matmul (else every step is fused) */
    } cases[] = {
        {"ij,jk,kl->il", 3, {2, 2, 2}, {{40, 50}, {50, 20}, {20, 45}}, 1},
        {"ij,jk,kl->li", 3, {2, 2, 2}, {{60, 4}, {4, 70}, {70, 30}}, 0},
        {"bij,bjk->bik", 2, {3, 3}, {{3, 20, 30}, {3, 30, 25}}, 1},
        {"bij,bkj->bki", 2, {3, 3}, {{2, 40, 30}, {2, 25, 30}}, 1},
        {"...ij,...jk->...ik", 2, {4, 3}, {{2, 3, 20, 30}, {3, 30, 40}}, 1},
        {"ijk,kjl->il", 2, {3, 3}, {{20, 6, 7}, {7, 6, 40}}, 1},
        {"ji,kj->ik", 2, {2, 2}, {{40, 35}, {30, 40}}, 1},
        {"ij,ij->", 2, {2, 2}, {{50, 60}, {50, 60}}, 0},
        {"ij,kj->ikj", 2, {2, 2}, {{20, 30}, {25, 30}}, 0},
        {"ab,cd,bd->ac", 3, {2, 2, 2}, {{30, 40}, {35, 45}, {40, 45}}, 1},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
        for (int t = 0; t < 3; t++) {
            const nd_dtype dt = t == 0 ? ND_FLOAT64 : t == 1 ? ND_FLOAT32 : ND_INT32;
            ref_arr *in[3];
            for (int o = 0; o < cases[k].n; o++) in[o] = rnd(&r, dt, cases[k].nd[o], cases[k].sh[o]);
            check_einsum(cases[k].subs, cases[k].n, in, ref_dtype_name(dt));
            /* large real matrix products take a matmul step; the rest stay fused */
            nd_array *ops[3];
            for (int o = 0; o < cases[k].n; o++) ops[o] = ndt_upload(in[o]);
            char report[2048];
            cr_assert_eq(nd_einsum_path(cases[k].subs, cases[k].n, ops, NULL, NULL, NULL, NULL, report,
                                        sizeof report), ND_OK, "%s", nd_last_error());
            cr_expect((strstr(report, "matmul") != NULL) == cases[k].matmul, "%s: %s", cases[k].subs, report);
            for (int o = 0; o < cases[k].n; o++) ref_free(in[o]), nd_free(ops[o]);
        }
}

NDT_TEST(einsum, mixed_dtypes_promote) {
    NDT_RNG(r);
    const nd_dtype pairs[][2] = {{ND_INT8, ND_FLOAT32}, {ND_BOOL, ND_INT16}, {ND_UINT8, ND_INT8},
                                 {ND_FLOAT32, ND_FLOAT64}, {ND_BOOL, ND_FLOAT32}, {ND_INT64, ND_UINT64}};
    for (size_t p = 0; p < sizeof pairs / sizeof *pairs; p++) {
        ref_arr *in[2] = {rnd(&r, pairs[p][0], 2, (int64_t[]){4, 5}), rnd(&r, pairs[p][1], 2, (int64_t[]){5, 3})};
        check_einsum("ij,jk", 2, in, "promotion");
        check_einsum("ij,ij->i", 2, (ref_arr *[]){in[0], in[0]}, "promotion (same)");
        ref_free(in[0]), ref_free(in[1]);
    }
}

NDT_TEST(einsum, zero_d_and_empty) {
    NDT_RNG(r);
    ref_arr *s = rnd(&r, ND_FLOAT64, 0, NULL), *v = rnd(&r, ND_FLOAT64, 1, (int64_t[]){4});
    check_einsum(",->", 2, (ref_arr *[]){s, s}, "0-d");
    check_einsum("", 1, (ref_arr *[]){s}, "0-d alone");
    check_einsum("i,->i", 2, (ref_arr *[]){v, s}, "scale");
    check_einsum("i->", 1, (ref_arr *[]){v}, "sum");
    check_einsum("...,...", 2, (ref_arr *[]){v, s}, "ellipsis");
    ref_arr *e1 = rnd(&r, ND_FLOAT32, 2, (int64_t[]){3, 0}), *e2 = rnd(&r, ND_FLOAT32, 2, (int64_t[]){0, 4});
    check_einsum("ij,jk->ik", 2, (ref_arr *[]){e1, e2}, "empty sum is zero");
    ref_arr *e3 = rnd(&r, ND_FLOAT32, 2, (int64_t[]){4, 3});
    check_einsum("ij,jk->ik", 2, (ref_arr *[]){e2, e3}, "empty output");
    ref_free(e3);
    check_einsum("ij->", 1, (ref_arr *[]){e1}, "empty total");
    ref_arr *big1 = rnd(&r, ND_FLOAT64, 2, (int64_t[]){64, 0}), *big2 = rnd(&r, ND_FLOAT64, 2, (int64_t[]){0, 64});
    check_einsum("ij,jk", 2, (ref_arr *[]){big1, big2}, "empty inner of a large product");
    ref_free(s), ref_free(v), ref_free(e1), ref_free(e2), ref_free(big1), ref_free(big2);
    /* a weak scalar counts as float64 (np.einsum converts it to an array) */
    nd_array *x = nd_ones(ND_FLOAT32, 1, (int64_t[]){3}), *two = nd_scalar(2.0);
    nd_array *y = nd_einsum("i,->i", 2, (nd_array *[]){x, two});
    cr_assert(y, "%s", nd_last_error());
    cr_expect_eq(nd_dtype_of(y), ND_FLOAT64);
    nd_array *total = nd_einsum("i->", 1, &y);
    cr_expect_eq(nd_item(total), 6.0);
    nd_free(x), nd_free(two), nd_free(y), nd_free(total);
}

NDT_TEST(einsum, many_operands_greedy) {
    NDT_RNG(r);
    /* 10 matrices in a chain: more than AUTO searches exactly */
    const char *subs = "ab,bc,cd,de,ef,fg,gh,hi,ij,jk->ak";
    ref_arr *in[10];
    int64_t len[11];
    for (int i = 0; i < 11; i++) len[i] = ndt_int(&r, 1, 5);
    for (int i = 0; i < 10; i++) in[i] = rnd(&r, ND_FLOAT64, 2, (int64_t[]){len[i], len[i + 1]});
    check_einsum(subs, 10, in, "chain of 10");
    for (int i = 0; i < 10; i++) ref_free(in[i]);
}

NDT_TEST(einsum, single_operand_is_a_view) {
    double m[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    nd_array *a = nd_from_host(m, ND_FLOAT64, 2, (int64_t[]){3, 3});
    nd_array *d = nd_einsum("ii->i", 1, &a);
    cr_assert(d, "%s", nd_last_error());
    cr_assert_eq(nd_fill(d, 0), ND_OK, "%s", nd_last_error()); /* NumPy's einsum views are writeable */
    double back[9];
    cr_assert_eq(nd_to_host(a, back, sizeof back), ND_OK);
    for (int i = 0; i < 9; i++) cr_expect_eq(back[i], i % 4 == 0 ? 0 : m[i], "[%d]", i);
    nd_free(d), nd_free(a);
}

NDT_TEST(einsum, path_picks_the_cheap_order) {
    nd_array *a = nd_empty(ND_FLOAT32, 2, (int64_t[]){1000, 5});
    nd_array *b = nd_empty(ND_FLOAT32, 2, (int64_t[]){5, 1000});
    nd_array *c = nd_empty(ND_FLOAT32, 2, (int64_t[]){1000, 10});
    nd_array *ops[3] = {a, b, c};
    int path[2][2], nsteps = -1;
    double flops = 0;
    char report[2048];
    for (int o = 0; o < 3; o++) {
        nd_einsum_options opt = {o == 0 ? ND_EINSUM_AUTO : o == 1 ? ND_EINSUM_OPTIMAL : ND_EINSUM_GREEDY};
        cr_assert_eq(nd_einsum_path("ij,jk,kl->il", 3, ops, &opt, path, &nsteps, &flops, report, sizeof report),
                     ND_OK, "%s", nd_last_error());
        cr_expect_eq(nsteps, 2);
        /* (b @ c) first: 5*1000*10*2 + 1000*5*10*2, not 1000*5*1000*2 + ... */
        cr_expect(path[0][0] == 1 && path[0][1] == 2 && path[1][0] == 0 && path[1][1] == 1,
                  "order %d: path (%d,%d),(%d,%d)", o, path[0][0], path[0][1], path[1][0], path[1][1]);
        cr_expect_eq(flops, 2e5, "flops %g", flops);
    }
    cr_expect(strstr(report, "Complete contraction:  ij,jk,kl->il") && strstr(report, "jk,kl->jl") &&
              strstr(report, "matmul"), "%s", report);
    nd_einsum_options left = {ND_EINSUM_LEFT};
    cr_assert_eq(nd_einsum_path("ij,jk,kl->il", 3, ops, &left, path, &nsteps, &flops, NULL, 0), ND_OK);
    cr_expect(path[0][0] == 0 && path[0][1] == 1 && path[1][0] == 0 && path[1][1] == 1);
    cr_expect_eq(flops, 2 * 1000 * 5 * 1000 + 2 * 1000 * 1000 * 10.0);
    /* the square case of the benchmark: two matmuls whatever the order */
    nd_array *sq[3];
    for (int i = 0; i < 3; i++) sq[i] = nd_empty(ND_FLOAT32, 2, (int64_t[]){4096, 4096});
    cr_assert_eq(nd_einsum_path("ij,jk,kl->il", 3, sq, NULL, path, &nsteps, &flops, report, sizeof report), ND_OK);
    cr_expect_eq(flops, 4.0 * 4096 * 4096 * 4096);
    cr_expect(strstr(report, "matmul") != NULL, "%s", report);
    for (int i = 0; i < 3; i++) nd_free(sq[i]);
    /* a tiny report buffer is truncated, terminated */
    char tiny[8];
    cr_assert_eq(nd_einsum_path("ij,jk,kl->il", 3, ops, NULL, NULL, NULL, NULL, tiny, sizeof tiny), ND_OK);
    cr_expect_eq(strlen(tiny), 7);
    nd_free(a), nd_free(b), nd_free(c);
}

/* ------------------------------------------------------------------- errors */

NDT_TEST(einsum, errors_name_the_position) {
    nd_array *m = nd_zeros(ND_FLOAT32, 2, (int64_t[]){3, 4});
    nd_array *m2 = nd_zeros(ND_FLOAT32, 2, (int64_t[]){5, 4});
    nd_array *sq = nd_zeros(ND_FLOAT32, 2, (int64_t[]){3, 3});
    nd_array *ns = nd_zeros(ND_FLOAT32, 2, (int64_t[]){3, 2});
    nd_array *v = nd_zeros(ND_FLOAT32, 1, (int64_t[]){3});
    nd_array *b3 = nd_zeros(ND_FLOAT32, 3, (int64_t[]){2, 3, 4});
    nd_array *b5 = nd_zeros(ND_FLOAT32, 3, (int64_t[]){5, 3, 4});
    struct {
        const char *subs;
        int n;
        nd_array *ops[2];
        nd_status st;
        const char *needle;
    } cases[] = {
        {"ij,j1", 2, {m, v}, ND_ERR_ARG, "position 4: invalid character '1'"},
        {"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZab", 1, {m}, ND_ERR_ARG,
         "position 53: more than 52 subscripts in one term"},
        {"ij->abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ...z", 1, {m}, ND_ERR_ARG,
         "position 59: more than 52 subscripts in one term"},
        {"i.j", 1, {m}, ND_ERR_ARG, "position 1: '.' that is not"},
        {"...i...", 1, {m}, ND_ERR_ARG, "position 4: a second '...'"},
        {"ij->i...j...", 1, {m}, ND_ERR_ARG, "position 9: a second '...'"},
        {"ij,jk", 1, {m}, ND_ERR_ARG, "position 3: the subscripts of operand 1 start here"},
        {"ij", 2, {m, v}, ND_ERR_ARG, "position 0: the subscripts name 1 operand but 2"},
        {"ij->ik", 1, {m}, ND_ERR_ARG, "position 5: output index 'k' appears in no operand"},
        {"ij->iji", 1, {m}, ND_ERR_ARG, "position 6: output index 'i' repeats (first at position 4)"},
        {"ij-i", 1, {m}, ND_ERR_ARG, "position 2: '-' not followed by '>'"},
        {"ij>i", 1, {m}, ND_ERR_ARG, "position 2: '>' without '-'"},
        {"ij->i,j", 1, {m}, ND_ERR_ARG, "position 5: ',' in the output"},
        {"ij->i->j", 1, {m}, ND_ERR_ARG, "position 5: a second '->'"},
        {"...j->j", 1, {b3}, ND_ERR_ARG, "position 6: the operands have 2 dimensions under '...'"},
        {"ij,jk", 2, {m, m2}, ND_ERR_SHAPE, "position 3: index 'j' has length 5 in operand 1 but length 4 at position 1"},
        {"ii", 1, {ns}, ND_ERR_SHAPE, "position 1: 'i' repeats in operand 0, whose axes 0 and 1 have lengths 3 and 2"},
        {"ijk", 1, {m}, ND_ERR_SHAPE, "position 0: operand 0 has 2 dimensions but its subscripts name 3"},
        {"ij,i", 2, {m, sq}, ND_ERR_SHAPE, "position 3: operand 1 has 2 dimensions but its subscripts name 1"},
        {"...jk,...jk", 2, {b3, b5}, ND_ERR_SHAPE, "position 6: the dimensions under '...' of operand 1"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        cr_expect_null(nd_einsum(cases[k].subs, cases[k].n, cases[k].ops), "\"%s\" should fail", cases[k].subs);
        const char *msg = nd_last_error();
        cr_expect(msg && strstr(msg, cases[k].needle), "\"%s\": message '%s' lacks '%s'", cases[k].subs,
                  msg ? msg : "(null)", cases[k].needle);
        NDT_EXPECT_ERR(cases[k].st, "nd_einsum");
        /* nd_einsum_path checks the same, without recording */
        cr_expect_eq(nd_einsum_path(cases[k].subs, cases[k].n, cases[k].ops, NULL, NULL, NULL, NULL, NULL, 0),
                     cases[k].st);
        NDT_EXPECT_ERR(cases[k].st, "nd_einsum_path");
    }
    cr_expect_null(nd_einsum(NULL, 1, &m));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_einsum");
    cr_expect_null(nd_einsum("ij", 0, &m));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_einsum");
    cr_expect_null(nd_einsum("i,i", 2, (nd_array *[]){v, NULL}));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_einsum");
    /* nine output dimensions */
    nd_array *a5 = nd_zeros(ND_FLOAT32, 5, (int64_t[]){1, 1, 1, 1, 1});
    cr_expect_null(nd_einsum("abcde,fghij", 2, (nd_array *[]){a5, a5}));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_einsum");
    nd_free(a5);
    /* nothing broke: the arrays still work */
    nd_array *ok = nd_einsum("ij->", 1, &m);
    cr_expect_eq(nd_item(ok), 0.0);
    nd_free(ok);
    nd_free(m), nd_free(m2), nd_free(sq), nd_free(ns), nd_free(v), nd_free(b3), nd_free(b5);
}

/* A fused contraction never stores its products: one kernel each. */
NDT_TEST(einsum, fused_steps_are_one_kernel) {
    NDT_RNG(r);
    ref_arr *a = rnd(&r, ND_FLOAT32, 2, (int64_t[]){30, 40}), *b = rnd(&r, ND_FLOAT32, 2, (int64_t[]){30, 40});
    ref_arr *q = rnd(&r, ND_FLOAT32, 2, (int64_t[]){40, 40});
    nd_array *x = ndt_upload(a), *y = ndt_upload(b), *sq = ndt_upload(q);
    const char *subs[] = {"ij,ij->i", "ij,ij->", "ij,ij->ji", "ii->", "ij->j"};
    for (int k = 0; k < 5; k++) {
        cr_assert_eq(nd_sync(), ND_OK);
        nd_stats before, after;
        nd_get_stats(&before);
        nd_array *z = k < 3 ? nd_einsum(subs[k], 2, (nd_array *[]){x, y}) : nd_einsum(subs[k], 1, &sq);
        cr_assert(z, "%s", nd_last_error());
        cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
        nd_get_stats(&after);
        cr_expect_eq(NDT_KERNELS(after) - NDT_KERNELS(before), 1, "%s: %llu kernels", subs[k],
                     (unsigned long long)(NDT_KERNELS(after) - NDT_KERNELS(before)));
        nd_free(z);
    }
    nd_free(x), nd_free(y), nd_free(sq);
    ref_free(a), ref_free(b), ref_free(q);
}

/* complex128, no conjugation, against C's complex arithmetic: small
 * (the fused multiply-sum) and large enough for a complex matmul; complex64
 * with float32 promotes to complex64. */
static void complex_product(int M, int K, int N);

NDT_TEST(einsum, complex_operands) {
    complex_product(3, 4, 5);    /* fused */
    complex_product(40, 30, 50); /* 60000 multiply-adds: a matmul */
}

static void complex_product(int M, int K, int N) {
    NDT_RNG(r);
    double *av = malloc(sizeof(double) * 2 * M * K), *bv = malloc(sizeof(double) * 2 * K * N);
    double *got = malloc(sizeof(double) * 2 * M * N);
    float *fv = malloc(sizeof(float) * 2 * M * K), *rg = malloc(sizeof(float) * 2 * M);
    cr_assert(av && bv && got && fv && rg);
    for (int i = 0; i < 2 * M * K; i++) av[i] = ndt_uniform(&r, -1, 1);
    for (int i = 0; i < 2 * K * N; i++) bv[i] = ndt_uniform(&r, -1, 1);
    nd_array *a = nd_from_host(av, ND_COMPLEX128, 2, (int64_t[]){M, K});
    nd_array *b = nd_from_host(bv, ND_COMPLEX128, 2, (int64_t[]){K, N});
    char report[2048];
    cr_assert_eq(nd_einsum_path("ij,jk->ik", 2, (nd_array *[]){a, b}, NULL, NULL, NULL, NULL, report, sizeof report),
                 ND_OK, "%s", nd_last_error());
    cr_expect((strstr(report, "matmul") != NULL) == (M * K * N >= 32768), "%dx%dx%d: %s", M, K, N, report);
    nd_array *c = nd_einsum("ij,jk->ik", 2, (nd_array *[]){a, b});
    cr_assert(c, "%s", nd_last_error());
    cr_expect_eq(nd_dtype_of(c), ND_COMPLEX128);
    for (int i = 0; i < 2 * M * N; i++) got[i] = NAN; /* poison */
    cr_assert_eq(nd_to_host(c, got, sizeof(double) * 2 * M * N), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < M; i++)
        for (int k = 0; k < N; k++) {
            double complex s = 0;
            for (int j = 0; j < K; j++)
                s += (av[2 * (i * K + j)] + I * av[2 * (i * K + j) + 1]) *
                     (bv[2 * (j * N + k)] + I * bv[2 * (j * N + k) + 1]);
            const double *g = &got[2 * (i * N + k)];
            cr_expect(fabs(g[0] - creal(s)) < 1e-12 && fabs(g[1] - cimag(s)) < 1e-12, "[%d,%d]: %g%+gi want %g%+gi",
                      i, k, g[0], g[1], creal(s), cimag(s));
        }
    for (int i = 0; i < 2 * M * K; i++) fv[i] = (float)av[i];
    nd_array *a64 = nd_from_host(fv, ND_COMPLEX64, 2, (int64_t[]){M, K});
    nd_array *ones = nd_ones(ND_FLOAT32, 1, (int64_t[]){K});
    nd_array *rows = nd_einsum("ij,j->i", 2, (nd_array *[]){a64, ones});
    cr_assert(rows, "%s", nd_last_error());
    cr_expect_eq(nd_dtype_of(rows), ND_COMPLEX64);
    for (int i = 0; i < 2 * M; i++) rg[i] = NAN;
    cr_assert_eq(nd_to_host(rows, rg, sizeof(float) * 2 * M), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < M; i++) {
        double re = 0, im = 0;
        for (int j = 0; j < K; j++) re += fv[2 * (i * K + j)], im += fv[2 * (i * K + j) + 1];
        cr_expect(fabs(rg[2 * i] - re) < 1e-5 * K && fabs(rg[2 * i + 1] - im) < 1e-5 * K, "row %d", i);
    }
    nd_free(a), nd_free(b), nd_free(c), nd_free(a64), nd_free(ones), nd_free(rows);
    free(av), free(bv), free(got), free(fv), free(rg);
}

/* Random strings over the grammar's characters: every one either works or
 * fails with ND_ERR_ARG or ND_ERR_SHAPE, never anything worse. */
NDT_TEST(einsum, random_strings_never_crash) {
    NDT_RNG(r);
    nd_array *ops[2] = {nd_ones(ND_FLOAT32, 2, (int64_t[]){2, 2}), nd_ones(ND_FLOAT32, 1, (int64_t[]){2})};
    const char alphabet[] = "ij.,->k ..a1-";
    int worked = 0;
    for (int c = 0; c < 3000; c++) {
        char subs[24];
        const int len = (int)ndt_int(&r, 0, 22);
        for (int i = 0; i < len; i++) subs[i] = alphabet[ndt_int(&r, 0, (int)sizeof alphabet - 2)];
        subs[len] = '\0';
        nd_array *z = nd_einsum(subs, (int)ndt_int(&r, 1, 2), ops);
        if (z) {
            worked++;
            nd_free(z);
            continue;
        }
        const nd_status st = nd_last_status();
        cr_expect(st == ND_ERR_ARG || st == ND_ERR_SHAPE, "\"%s\": %s", subs, nd_last_error());
        cr_expect(strstr(nd_last_error(), "nd_einsum") != NULL);
        nd_clear_error();
    }
    cr_expect(worked > 0, "no random string was valid");
    nd_free(ops[0]), nd_free(ops[1]);
}
