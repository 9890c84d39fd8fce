/* Shaping functions that make new arrays: roll, rot90, tile, repeat, pad,
 * split/array_split/split_at, hstack/vstack/dstack/column_stack, diff,
 * ediff1d, outer, inner, vdot. Each against a reference that maps every
 * output element to its source by a closed formula (NumPy's definitions,
 * the pad modes as periodic extensions), computed here in C; inputs are
 * random, in every dtype, and also given as transposed or reversed views. */
#include "common.h"

#include <limits.h>

/* ---- references */

/* Fills idx (input multi-index) for output index o; returns 0 where the
 * output holds a constant instead. */
typedef int (*src_map)(const int64_t *o, int64_t *idx, const ref_arr *in, const void *ctx);

static ref_arr *ref_map(const ref_arr *in, int ond, const int64_t *osh, src_map src,
                        const void *ctx, double constant) {
    ref_arr *out = ref_new(in->dt, ond, osh);
    int64_t o[ND_MAX_DIMS] = {0}, i[ND_MAX_DIMS] = {0};
    for (int64_t f = 0; f < out->size; f++) {
        ref_unravel(f, ond, osh, o);
        if (src(o, i, in, ctx)) ref_cast_elem(out, f, in, ref_ravel(i, in->ndim, in->shape));
        else ref_setd(out, f, constant);
    }
    return out;
}

/* Input variants with the same logical values: 0 a fresh array, 1 a
 * transpose of the transposed data, 2 axis 0 reversed by a view. */
static nd_array *upload_as(const ref_arr *r, int how) {
    if (how == 0 || r->ndim == 0) return ndt_upload(r);
    int64_t st[ND_MAX_DIMS];
    st[r->ndim - 1] = 1;
    for (int d = r->ndim - 2; d >= 0; d--) st[d] = st[d + 1] * r->shape[d + 1];
    if (how == 1) {
        ref_arr *t = ref_transpose(r, NULL);
        nd_array *u = ndt_upload(t), *v = nd_transpose(u, NULL);
        nd_free(u);
        ref_free(t);
        return v;
    }
    int64_t off = r->shape[0] ? (r->shape[0] - 1) * st[0] : 0;
    st[0] = -st[0];
    ref_arr *f = r->size ? ref_strided(r, r->ndim, r->shape, st, off) : ref_new(r->dt, r->ndim, r->shape);
    nd_array *u = ndt_upload(f), *v = nd_view(u, "::-1");
    nd_free(u);
    ref_free(f);
    return v;
}

static const char *const how_names[] = {"array", "transpose", "reversed view"};

/* ---- roll */

typedef struct {
    int64_t shift;
    int ax; /* -1: flattened */
} roll_ctx;

static int roll_src(const int64_t *o, int64_t *i, const ref_arr *in, const void *c) {
    const roll_ctx *r = c;
    memcpy(i, o, sizeof(int64_t) * (size_t)in->ndim);
    if (r->ax >= 0) {
        int64_t n = in->shape[r->ax];
        i[r->ax] = ((o[r->ax] - r->shift % n) % n + n) % n;
        return 1;
    }
    int64_t f = ref_ravel(o, in->ndim, in->shape), n = in->size;
    ref_unravel(((f - r->shift % n) % n + n) % n, in->ndim, in->shape, i);
    return 1;
}

NDT_TEST(shaping_copies, roll) {
    NDT_RNG(r);
    const int64_t shifts[] = {1, -1, 2, 7, -11, 0, 12, INT64_MIN, INT64_MAX};
    for (int t = 0; t < 24; t++) {
        nd_dtype dt = ndt_all_dtypes[t % NDT_NUM_DTYPES];
        int64_t sh[3] = {ndt_int(&r, 1, 5), ndt_int(&r, 1, 6), ndt_int(&r, 1, 4)};
        ref_arr *ra = ndt_rand_small(&r, dt, 3, sh);
        int how = t % 3, axis = (int)ndt_int(&r, -3, 3);
        if (axis == 3) axis = ND_ALL_AXES;
        int64_t shift = shifts[t % 9];
        nd_array *a = upload_as(ra, how), *b = nd_roll(a, shift, axis);
        roll_ctx c = {shift, axis == ND_ALL_AXES ? -1 : (axis + 3) % 3};
        ref_arr *w = ref_map(ra, 3, sh, roll_src, &c, 0);
        ndt_check(b, w, 0, 0, NULL, "roll %s %s shift %lld axis %d", ref_dtype_name(dt),
                  how_names[how], (long long)shift, axis);
        nd_free(a); nd_free(b);
        ref_free(ra); ref_free(w);
    }
}

NDT_TEST(shaping_copies, roll_edges) {
    nd_scope_begin(); /* frees the handles made inside calls */
    /* 0-d (ND_ALL_AXES only), empty axes, a new array (writes to it leave a
     * alone), a weak scalar. */
    nd_array *s = nd_full(ND_INT32, ND_SCALAR_SHAPE, 5), *rs = nd_roll(s, 3, ND_ALL_AXES);
    cr_assert(rs, "%s", nd_last_error());
    cr_expect(nd_ndim(rs) == 0 && nd_item(rs) == 5);
    nd_array *e = nd_zeros(ND_FLOAT32, ND_SHAPE(0, 3)), *re = nd_roll(e, 2, 0), *re2 = nd_roll(e, 2, 1);
    cr_assert(re && re2, "%s", nd_last_error());
    cr_expect(nd_shape(re)[0] == 0 && nd_shape(re2)[1] == 3);
    nd_array *x = nd_arange(ND_INT64, 0, 4, 1), *y = nd_roll(x, 4, 0);
    cr_assert_eq(nd_fill(y, 9), ND_OK, "%s", nd_last_error());
    int64_t got[4];
    cr_assert_eq(nd_to_host(x, got, sizeof got), ND_OK);
    for (int i = 0; i < 4; i++) cr_expect_eq(got[i], i, "roll by the length still copies");
    nd_array *w = nd_roll(nd_scalar(2.5), 1, ND_ALL_AXES);
    cr_assert(w, "%s", nd_last_error());
    cr_expect(nd_dtype_of(w) == ND_FLOAT64 && nd_item(w) == 2.5);
    nd_free(s); nd_free(rs); nd_free(e); nd_free(re); nd_free(re2); nd_free(x); nd_free(y);
    nd_free(w);
    nd_scope_end();
}

/* ---- rot90 */

static int rot_src(const int64_t *o, int64_t *i, const ref_arr *in, const void *c) {
    int q = *(const int *)c;
    int64_t n0 = in->shape[0], n1 = in->shape[1];
    memcpy(i, o, sizeof(int64_t) * (size_t)in->ndim);
    switch (q) {
    case 1: i[0] = o[1]; i[1] = n1 - 1 - o[0]; break;
    case 2: i[0] = n0 - 1 - o[0]; i[1] = n1 - 1 - o[1]; break;
    case 3: i[0] = n0 - 1 - o[1]; i[1] = o[0]; break;
    default: break;
    }
    return 1;
}

NDT_TEST(shaping_copies, rot90) {
    NDT_RNG(r);
    ref_arr *ra = ndt_rand_small(&r, ND_INT16, 3, (int64_t[]){3, 4, 2});
    for (int k = -6; k <= 6; k++) {
        int q = ((k % 4) + 4) % 4, how = (k + 6) % 3;
        nd_array *a = upload_as(ra, how), *b = nd_rot90(a, k);
        int64_t osh[3] = {q % 2 ? 4 : 3, q % 2 ? 3 : 4, 2};
        ref_arr *w = ref_map(ra, 3, osh, rot_src, &q, 0);
        ndt_check(b, w, 0, 0, NULL, "rot90 k=%d of a %s", k, how_names[how]);
        nd_free(a); nd_free(b);
        ref_free(w);
    }
    /* A view, as NumPy's: writes show in the base. */
    nd_array *a = ndt_upload(ra), *b = nd_rot90(a, 1), *corner = nd_view(b, "0, 0");
    cr_assert_eq(nd_fill(corner, 1000), ND_OK, "%s", nd_last_error());
    /* out[0, 0, :] is a[0, n1-1, :] */
    ref_setd(ra, ref_ravel((int64_t[]){0, 3, 0}, 3, ra->shape), 1000);
    ref_setd(ra, ref_ravel((int64_t[]){0, 3, 1}, 3, ra->shape), 1000);
    ndt_check(a, ra, 0, 0, NULL, "a write through rot90 reaches the base");
    nd_free(a); nd_free(b); nd_free(corner);
    ref_free(ra);
}

/* ---- tile and repeat */

static int tile_src(const int64_t *o, int64_t *i, const ref_arr *in, const void *c) {
    int d = *(const int *)c;
    for (int j = 0; j < in->ndim; j++) i[j] = o[j + d - in->ndim] % in->shape[j];
    return 1;
}

static void check_tile(ndt_rng *r, nd_dtype dt, int nd, const int64_t *sh, int n,
                       const int64_t *reps, int how) {
    ref_arr *ra = ndt_rand_small(r, dt, nd, sh);
    nd_array *a = upload_as(ra, how), *b = nd_tile(a, n, reps);
    int d = n > nd ? n : nd;
    int64_t osh[ND_MAX_DIMS];
    for (int i = 0; i < d; i++) {
        int ai = i - (d - nd), ri = i - (d - n);
        osh[i] = (ai >= 0 ? sh[ai] : 1) * (ri >= 0 ? reps[ri] : 1);
    }
    ref_arr *w = ref_map(ra, d, osh, tile_src, &d, 0);
    ndt_check(b, w, 0, 0, NULL, "tile of a %d-d %s %s with %d reps", nd, ref_dtype_name(dt),
              how_names[how], n);
    nd_free(a); nd_free(b);
    ref_free(ra); ref_free(w);
}

NDT_TEST(shaping_copies, tile) {
    nd_scope_begin(); /* frees the handles made inside calls */
    NDT_RNG(r);
    check_tile(&r, ND_FLOAT32, 2, (int64_t[]){2, 3}, 2, (int64_t[]){3, 2}, 0);
    check_tile(&r, ND_INT8, 2, (int64_t[]){2, 3}, 1, (int64_t[]){4}, 1);          /* n < ndim */
    check_tile(&r, ND_UINT16, 2, (int64_t[]){2, 3}, 4, (int64_t[]){2, 1, 2, 2}, 2); /* n > ndim */
    check_tile(&r, ND_BOOL, 1, (int64_t[]){5}, 2, (int64_t[]){2, 0}, 0);         /* empty */
    check_tile(&r, ND_FLOAT64, 0, NULL, 2, (int64_t[]){2, 3}, 0);                /* 0-d */
    check_tile(&r, ND_INT64, 3, (int64_t[]){1, 3, 1}, 3, (int64_t[]){2, 2, 3}, 1); /* length-1 axes */
    check_tile(&r, ND_FLOAT16, 2, (int64_t[]){2, 3}, 0, NULL, 1);                /* a copy */
    /* 6 axes repeated need 12 view dims: done in two passes. */
    check_tile(&r, ND_INT32, 6, (int64_t[]){2, 1, 3, 2, 2, 2}, 6, (int64_t[]){2, 2, 2, 1, 2, 3}, 1);
    /* 8-d with repeated axes of length > 1: one axis at a time */
    check_tile(&r, ND_INT16, 8, (int64_t[]){2, 1, 2, 1, 3, 1, 1, 2}, 3, (int64_t[]){2, 3, 2}, 2);
    check_tile(&r, ND_FLOAT32, 8, (int64_t[]){2, 2, 1, 1, 1, 1, 1, 2}, 8,
               (int64_t[]){3, 1, 2, 1, 1, 1, 1, 2}, 1);
    /* A broadcast input gives a new writable array. */
    nd_array *s = nd_full(ND_FLOAT32, ND_SHAPE(1, 3), 2), *bc = nd_broadcast_to(s, ND_SHAPE(2, 3));
    nd_array *t = nd_tile(bc, 1, (int64_t[]){2});
    cr_assert(t, "%s", nd_last_error());
    cr_expect_eq(nd_fill(t, 1), ND_OK, "%s", nd_last_error());
    cr_expect_eq(nd_item(nd_view(s, "0, 0")), 2.0, "the source keeps its value");
    nd_free(s); nd_free(bc); nd_free(t);
    nd_scope_end();
}

typedef struct {
    int64_t reps;
    int ax;
} rep_ctx;

static int repeat_src(const int64_t *o, int64_t *i, const ref_arr *in, const void *c) {
    const rep_ctx *p = c;
    if (p->ax < 0) {
        ref_unravel(o[0] / p->reps, in->ndim, in->shape, i);
        return 1;
    }
    memcpy(i, o, sizeof(int64_t) * (size_t)in->ndim);
    i[p->ax] = o[p->ax] / p->reps;
    return 1;
}

static void check_repeat(ndt_rng *r, nd_dtype dt, int nd, const int64_t *sh, int64_t reps,
                         int axis, int how) {
    ref_arr *ra = ndt_rand_small(r, dt, nd, sh);
    nd_array *a = upload_as(ra, how), *b = nd_repeat(a, reps, axis);
    rep_ctx c = {reps, axis == ND_ALL_AXES ? -1 : (axis + nd) % nd};
    int64_t osh[ND_MAX_DIMS];
    int ond = c.ax < 0 ? 1 : nd;
    if (c.ax < 0) osh[0] = ra->size * reps;
    else {
        memcpy(osh, sh, sizeof(int64_t) * (size_t)nd);
        osh[c.ax] *= reps;
    }
    ref_arr *w = ref_map(ra, ond, osh, repeat_src, &c, 0);
    ndt_check(b, w, 0, 0, NULL, "repeat %lld of a %d-d %s %s on axis %d", (long long)reps, nd,
              ref_dtype_name(dt), how_names[how], axis);
    nd_free(a); nd_free(b);
    ref_free(ra); ref_free(w);
}

NDT_TEST(shaping_copies, repeat) {
    NDT_RNG(r);
    check_repeat(&r, ND_FLOAT32, 2, (int64_t[]){3, 4}, 3, 0, 0);
    check_repeat(&r, ND_INT16, 2, (int64_t[]){3, 4}, 2, -1, 1);
    check_repeat(&r, ND_BOOL, 3, (int64_t[]){2, 3, 2}, 2, ND_ALL_AXES, 1);
    check_repeat(&r, ND_UINT8, 3, (int64_t[]){2, 3, 2}, 0, 1, 2);
    check_repeat(&r, ND_BFLOAT16, 1, (int64_t[]){5}, 1, 0, 2);
    check_repeat(&r, ND_FLOAT64, 0, NULL, 4, ND_ALL_AXES, 0);
    check_repeat(&r, ND_INT64, 2, (int64_t[]){0, 3}, 3, 1, 0);
    /* 8-d: no room for the extra axis, done on a 3-d reshape. */
    check_repeat(&r, ND_INT32, 8, (int64_t[]){2, 1, 2, 3, 1, 2, 1, 2}, 2, 3, 1);
}

/* ---- pad */

typedef struct {
    nd_pad_mode m;
    int64_t w[ND_MAX_DIMS][2];
} pad_ctx;

static int pad_src(const int64_t *o, int64_t *i, const ref_arr *in, const void *c) {
    const pad_ctx *p = c;
    for (int d = 0; d < in->ndim; d++) {
        int64_t n = in->shape[d], j = o[d] - p->w[d][0];
        if (j >= 0 && j < n) {
            i[d] = j;
            continue;
        }
        switch (p->m) {
        case ND_PAD_CONSTANT: return 0;
        case ND_PAD_EDGE: i[d] = j < 0 ? 0 : n - 1; break;
        case ND_PAD_WRAP: i[d] = ((j % n) + n) % n; break;
        case ND_PAD_SYMMETRIC: {
            int64_t m = ((j % (2 * n)) + 2 * n) % (2 * n);
            i[d] = m < n ? m : 2 * n - 1 - m;
            break;
        }
        case ND_PAD_REFLECT: {
            if (n == 1) {
                i[d] = 0;
                break;
            }
            int64_t P = 2 * (n - 1), m = ((j % P) + P) % P;
            i[d] = m < n ? m : P - m;
            break;
        }
        }
    }
    return 1;
}

static const char *const mode_names[] = {"constant", "edge", "reflect", "symmetric", "wrap"};

static void check_pad(ndt_rng *r, nd_dtype dt, int nd, const int64_t *sh, int n,
                      const int64_t (*w)[2], nd_pad_mode m, double cval, int how) {
    ref_arr *ra = ndt_rand_small(r, dt, nd, sh);
    nd_array *a = upload_as(ra, how), *b = nd_pad(a, n, w, m, cval);
    pad_ctx c = {.m = m};
    int64_t osh[ND_MAX_DIMS];
    for (int d = 0; d < nd; d++) {
        c.w[d][0] = w[n == 1 ? 0 : d][0];
        c.w[d][1] = w[n == 1 ? 0 : d][1];
        osh[d] = sh[d] + c.w[d][0] + c.w[d][1];
    }
    ref_arr *want = ref_map(ra, nd, osh, pad_src, &c, cval);
    ndt_check(b, want, 0, 0, NULL, "pad %s of a %d-d %s %s (first widths %lld, %lld)",
              mode_names[m], nd, ref_dtype_name(dt), how_names[how],
              (long long)(n ? w[0][0] : 0), (long long)(n ? w[0][1] : 0));
    nd_free(a); nd_free(b);
    ref_free(ra); ref_free(want);
}

NDT_TEST(shaping_copies, pad_every_mode) {
    NDT_RNG(r);
    for (int m = ND_PAD_CONSTANT; m <= ND_PAD_WRAP; m++) {
        for (int t = 0; t < 10; t++) {
            nd_dtype dt = ndt_all_dtypes[(m * 3 + t) % NDT_NUM_DTYPES];
            int nd = 1 + t % 3;
            int64_t sh[3], w[3][2];
            for (int d = 0; d < nd; d++) {
                sh[d] = ndt_int(&r, 1, 5);
                /* mostly within the axis, sometimes far beyond it */
                int64_t hi = t >= 7 ? 13 : sh[d];
                w[d][0] = ndt_int(&r, 0, hi);
                w[d][1] = ndt_int(&r, 0, hi);
            }
            check_pad(&r, dt, nd, sh, nd, (const int64_t(*)[2])w, (nd_pad_mode)m, -3.0, t % 3);
        }
        /* one pair for every axis */
        check_pad(&r, ND_FLOAT32, 2, (int64_t[]){3, 4}, 1, (const int64_t[][2]){{2, 1}},
                  (nd_pad_mode)m, 7.5, 1);
        /* length-1 axes (reflect of one element repeats it) */
        check_pad(&r, ND_INT32, 2, (int64_t[]){1, 2}, 2, (const int64_t[][2]){{3, 2}, {5, 4}},
                  (nd_pad_mode)m, 1, 0);
        /* an 8-d input, wide on two axes: padded axis by axis */
        check_pad(&r, ND_UINT8, 8, (int64_t[]){2, 1, 2, 1, 1, 2, 1, 3}, 8,
                  (const int64_t[][2]){{9, 4}, {0, 0}, {1, 0}, {0, 2}, {0, 0}, {1, 1}, {0, 0},
                                       {7, 8}}, (nd_pad_mode)m, 4, 1);
        /* many periods: whole periods stored as broadcasts */
        check_pad(&r, ND_FLOAT32, 2, (int64_t[]){3, 2}, 2, (const int64_t[][2]){{40, 33}, {5, 61}},
                  (nd_pad_mode)m, 2, 1);
        check_pad(&r, ND_INT8, 1, (int64_t[]){2}, 1, (const int64_t[][2]){{100, 77}},
                  (nd_pad_mode)m, 2, 2);
        check_pad(&r, ND_INT64, 2, (int64_t[]){1, 4}, 2, (const int64_t[][2]){{30, 29}, {3, 0}},
                  (nd_pad_mode)m, 2, 0);
        /* 0-d: a copy */
        check_pad(&r, ND_FLOAT64, 0, NULL, 0, NULL, (nd_pad_mode)m, 0, 0);
    }
}

NDT_TEST(shaping_copies, pad_constant_values_and_empty) {
    NDT_RNG(r);
    /* The constant is cast to a's dtype (NumPy: unsafe cast): 1.5 -> 1,
     * -1 -> 255 in uint8, NaN in float. */
    check_pad(&r, ND_INT16, 1, (int64_t[]){3}, 1, (const int64_t[][2]){{2, 1}}, ND_PAD_CONSTANT,
              1.5, 0);
    check_pad(&r, ND_UINT8, 2, (int64_t[]){2, 2}, 1, (const int64_t[][2]){{1, 1}},
              ND_PAD_CONSTANT, -1, 0);
    check_pad(&r, ND_FLOAT32, 1, (int64_t[]){4}, 1, (const int64_t[][2]){{1, 2}},
              ND_PAD_CONSTANT, NAN, 2);
    check_pad(&r, ND_BOOL, 2, (int64_t[]){2, 3}, 2, (const int64_t[][2]){{0, 1}, {2, 0}},
              ND_PAD_CONSTANT, 2, 1);
    /* An empty axis pads with the constant; other modes may leave it alone. */
    check_pad(&r, ND_FLOAT64, 2, (int64_t[]){0, 3}, 2, (const int64_t[][2]){{2, 1}, {1, 1}},
              ND_PAD_CONSTANT, 4, 0);
    check_pad(&r, ND_FLOAT64, 2, (int64_t[]){0, 3}, 2, (const int64_t[][2]){{0, 0}, {1, 2}},
              ND_PAD_REFLECT, 0, 0);
    nd_array *e = nd_zeros(ND_FLOAT32, ND_SHAPE(0, 3));
    cr_expect_null(nd_pad(e, 1, (const int64_t[][2]){{1, 0}}, ND_PAD_EDGE, 0));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_pad");
    nd_free(e);
}

/* ---- splits */

static void expect_part(nd_array *part, const ref_arr *ra, int ax, int64_t start, int64_t len,
                        const char *what, int i) {
    int64_t sh[ND_MAX_DIMS];
    memcpy(sh, ra->shape, sizeof sh);
    sh[ax] = len;
    ref_arr *w = ref_new(ra->dt, ra->ndim, sh);
    int64_t o[ND_MAX_DIMS];
    for (int64_t f = 0; f < w->size; f++) {
        ref_unravel(f, ra->ndim, sh, o);
        o[ax] += start;
        ref_cast_elem(w, f, ra, ref_ravel(o, ra->ndim, ra->shape));
    }
    ndt_check(part, w, 0, 0, NULL, "%s part %d (start %lld, length %lld)", what, i,
              (long long)start, (long long)len);
    ref_free(w);
}

NDT_TEST(shaping_copies, split_and_array_split) {
    NDT_RNG(r);
    ref_arr *ra = ndt_rand_small(&r, ND_INT32, 2, (int64_t[]){7, 6});
    nd_array *a = upload_as(ra, 1), *out[8];
    cr_assert_eq(nd_split(a, 3, -1, out), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 3; i++) {
        expect_part(out[i], ra, 1, 2 * i, 2, "split 3 on axis -1", i);
        nd_free(out[i]);
    }
    cr_assert_eq(nd_array_split(a, 3, 0, out), ND_OK, "%s", nd_last_error());
    const int64_t starts[] = {0, 3, 5}, lens[] = {3, 2, 2};
    for (int i = 0; i < 3; i++) {
        expect_part(out[i], ra, 0, starts[i], lens[i], "array_split 7 in 3", i);
        nd_free(out[i]);
    }
    cr_assert_eq(nd_array_split(a, 8, 0, out), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 8; i++) {
        expect_part(out[i], ra, 0, i < 7 ? i : 7, i < 7 ? 1 : 0, "array_split 7 in 8", i);
        nd_free(out[i]);
    }
    /* NumPy: split(arange(7), [2, -1, 10]) -> [0:2], [2:6], [6:7], [7:]; a
     * decreasing pair gives an empty part. */
    cr_assert_eq(nd_split_at(a, 3, (int64_t[]){2, -1, 10}, 0, out), ND_OK, "%s", nd_last_error());
    const int64_t s2[] = {0, 2, 6, 7}, l2[] = {2, 4, 1, 0};
    for (int i = 0; i < 4; i++) {
        expect_part(out[i], ra, 0, s2[i], l2[i], "split_at [2,-1,10]", i);
        nd_free(out[i]);
    }
    cr_assert_eq(nd_split_at(a, 2, (int64_t[]){4, 1}, 1, out), ND_OK, "%s", nd_last_error());
    const int64_t s3[] = {0, 4, 1}, l3[] = {4, 0, 5};
    for (int i = 0; i < 3; i++) {
        expect_part(out[i], ra, 1, s3[i], l3[i], "split_at [4,1]", i);
        nd_free(out[i]);
    }
    /* Parts are views: a write shows in a. */
    cr_assert_eq(nd_split(a, 2, 1, out), ND_OK, "%s", nd_last_error());
    cr_assert_eq(nd_fill(out[1], -5), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 7; i++)
        for (int j = 3; j < 6; j++) ref_setd(ra, i * 6 + j, -5);
    ndt_check(a, ra, 0, 0, NULL, "a write through a split part");
    nd_free(out[0]); nd_free(out[1]);
    /* Unequal split: an error, every out NULL. */
    out[0] = out[1] = (nd_array *)&r;
    cr_expect_eq(nd_split(a, 4, 0, out), ND_ERR_SHAPE);
    cr_expect(out[0] == NULL && out[1] == NULL);
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_split");
    nd_free(a);
    ref_free(ra);
}

/* ---- stack family */

/* Copies `in` into out at offset pos along axis (in has out's ndim). */
static void place(ref_arr *out, const ref_arr *in, int axis, int64_t pos) {
    int64_t idx[ND_MAX_DIMS];
    for (int64_t f = 0; f < in->size; f++) {
        ref_unravel(f, in->ndim, in->shape, idx);
        idx[axis] += pos;
        ref_cast_elem(out, ref_ravel(idx, out->ndim, out->shape), in, f);
    }
}

typedef nd_array *(*join_fn)(int, nd_array *const *);

/* n inputs (reference shapes already in the join's form: the reshape the
 * function should apply) joined on axis. */
static void check_join(join_fn f, const char *name, int n, ref_arr *const *in,
                       ref_arr *const *as_shaped, int axis) {
    nd_array *arrs[4] = {0};
    nd_dtype rt = in[0]->dt;
    int64_t sh[ND_MAX_DIMS];
    memcpy(sh, as_shaped[0]->shape, sizeof sh);
    sh[axis] = 0;
    for (int i = 0; i < n; i++) {
        arrs[i] = upload_as(in[i], i % 3);
        if (i) rt = ref_promote(rt, in[i]->dt);
        sh[axis] += as_shaped[i]->shape[axis];
    }
    nd_array *got = f(n, arrs);
    ref_arr *want = ref_new(rt, as_shaped[0]->ndim, sh);
    int64_t pos = 0;
    for (int i = 0; i < n; i++) {
        place(want, as_shaped[i], axis, pos);
        pos += as_shaped[i]->shape[axis];
    }
    ndt_check(got, want, 0, 0, NULL, "%s of %d arrays", name, n);
    nd_free(got);
    ref_free(want);
    for (int i = 0; i < n; i++) nd_free(arrs[i]);
}

NDT_TEST(shaping_copies, stack_family) {
    nd_scope_begin(); /* frees the handles made inside calls */
    NDT_RNG(r);
    ref_arr *v3 = ndt_rand_small(&r, ND_INT8, 1, (int64_t[]){3});
    ref_arr *w3 = ndt_rand_small(&r, ND_FLOAT32, 1, (int64_t[]){3});
    ref_arr *m23 = ndt_rand_small(&r, ND_UINT8, 2, (int64_t[]){2, 3});
    ref_arr *m32 = ndt_rand_small(&r, ND_INT16, 2, (int64_t[]){3, 2});
    ref_arr *s0 = ndt_rand_small(&r, ND_FLOAT64, 0, NULL);
    ref_arr *r1n = ref_reshape(v3, 2, (int64_t[]){1, 3}), *rw1n = ref_reshape(w3, 2, (int64_t[]){1, 3});
    ref_arr *cn1 = ref_reshape(v3, 2, (int64_t[]){3, 1}), *cw1 = ref_reshape(w3, 2, (int64_t[]){3, 1});
    ref_arr *s1 = ref_reshape(s0, 1, (int64_t[]){1}), *s11 = ref_reshape(s0, 2, (int64_t[]){1, 1});
    ref_arr *d1n1 = ref_reshape(v3, 3, (int64_t[]){1, 3, 1});
    ref_arr *dm = ref_reshape(m23, 3, (int64_t[]){2, 3, 1});
    ref_arr *d111 = ref_reshape(s0, 3, (int64_t[]){1, 1, 1});
    ref_arr *e0 = ndt_rand_small(&r, ND_INT8, 2, (int64_t[]){3, 0});

    /* hstack: 1-d end to end (a 0-d counts as 1-d), 2-d on axis 1 */
    check_join(nd_hstack, "hstack 1-d", 3, (ref_arr *[]){v3, w3, s0}, (ref_arr *[]){v3, w3, s1}, 0);
    check_join(nd_hstack, "hstack 2-d", 3, (ref_arr *[]){m32, cn1, e0}, (ref_arr *[]){m32, cn1, e0}, 1);
    /* vstack: (3,) -> (1,3), 0-d -> (1,1) */
    check_join(nd_vstack, "vstack", 3, (ref_arr *[]){v3, m23, w3}, (ref_arr *[]){r1n, m23, rw1n}, 0);
    check_join(nd_vstack, "vstack 0-d", 2, (ref_arr *[]){s0, s0}, (ref_arr *[]){s11, s11}, 0);
    /* dstack: (3,) -> (1,3,1), (2,3) -> (2,3,1), 0-d -> (1,1,1) */
    check_join(nd_dstack, "dstack", 2, (ref_arr *[]){m23, m23}, (ref_arr *[]){dm, dm}, 2);
    check_join(nd_dstack, "dstack 1-d", 2, (ref_arr *[]){v3, v3}, (ref_arr *[]){d1n1, d1n1}, 2);
    check_join(nd_dstack, "dstack 0-d", 1, (ref_arr *[]){s0}, (ref_arr *[]){d111}, 2);
    /* column_stack: 1-d inputs become columns */
    check_join(nd_column_stack, "column_stack", 3, (ref_arr *[]){v3, m32, w3},
               (ref_arr *[]){cn1, m32, cw1}, 1);
    check_join(nd_column_stack, "column_stack 0-d", 1, (ref_arr *[]){s0}, (ref_arr *[]){s11}, 1);
    /* A weak scalar is a float64 array (NumPy: np.hstack([f32, 2.0]) is f64). */
    nd_array *f = nd_full(ND_FLOAT32, ND_SHAPE(2), 1), *h = nd_hstack(2, (nd_array *[]){f, nd_scalar(2.5)});
    cr_assert(h, "%s", nd_last_error());
    cr_expect(nd_dtype_of(h) == ND_FLOAT64 && nd_shape(h)[0] == 3);
    cr_expect_eq(nd_item(nd_view(h, "2")), 2.5);
    nd_free(f); nd_free(h);
    ref_arr *all[] = {v3, w3, m23, m32, s0, r1n, rw1n, cn1, cw1, s1, s11, d1n1, dm, d111, e0};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) ref_free(all[i]);
    nd_scope_end();
}

/* ---- diff and ediff1d */

static ref_arr *ref_diff_once(const ref_arr *x, int ax) {
    int64_t sh[ND_MAX_DIMS], i[ND_MAX_DIMS];
    memcpy(sh, x->shape, sizeof sh);
    sh[ax] = sh[ax] ? sh[ax] - 1 : 0;
    ref_arr *y = ref_new(x->dt, x->ndim, sh);
    for (int64_t f = 0; f < y->size; f++) {
        ref_unravel(f, x->ndim, sh, i);
        int64_t lo = ref_ravel(i, x->ndim, x->shape);
        i[ax]++;
        int64_t hi = ref_ravel(i, x->ndim, x->shape);
        if (x->dt == ND_BOOL) ref_setu(y, f, ref_getu(x, hi) != ref_getu(x, lo));
        else if (ref_is_int(x->dt)) ref_setu(y, f, ref_getu(x, hi) - ref_getu(x, lo));
        else ref_setd(y, f, ref_getd(x, hi) - ref_getd(x, lo));
    }
    return y;
}

NDT_TEST(shaping_copies, diff) {
    NDT_RNG(r);
    for (int t = 0; t < 26; t++) {
        nd_dtype dt = ndt_all_dtypes[t % NDT_NUM_DTYPES];
        int64_t sh[2] = {ndt_int(&r, 1, 6), ndt_int(&r, 0, 5)};
        ref_arr *ra = t % 4 ? ndt_rand_small(&r, dt, 2, sh) : ndt_rand_bits(&r, dt, 2, sh);
        int n = (int)ndt_int(&r, 0, 7), axis = (int)ndt_int(&r, -2, 1), how = t % 3;
        nd_array *a = upload_as(ra, how), *d = nd_diff(a, n, axis);
        ref_arr *w = ref_astype(ra, dt);
        for (int i = 0; i < n; i++) {
            ref_arr *nx = ref_diff_once(w, (axis + 2) % 2);
            ref_free(w);
            w = nx;
        }
        /* float differences: compare relative to the operands' size */
        double tol = ref_is_float(dt) ? ndt_rtol(dt) * (1 << n) : 0;
        ndt_check(d, w, tol, tol * 8, NULL, "diff n=%d axis %d of a %s %s", n, axis,
                  ref_dtype_name(dt), how_names[how]);
        nd_free(a); nd_free(d);
        ref_free(ra); ref_free(w);
    }
}

NDT_TEST(shaping_copies, diff_edges) {
    nd_scope_begin(); /* frees the handles made inside calls */
    /* n = 0 is a view of a; INT_MIN wraps as NumPy; NaN and inf propagate */
    nd_array *a = nd_from_host((int32_t[]){INT32_MIN, 1, INT32_MAX, -1}, ND_INT32, ND_SHAPE(4));
    nd_array *d0 = nd_diff(a, 0, 0), *d1 = nd_diff(a, 1, 0);
    cr_assert(d0 && d1, "%s", nd_last_error());
    cr_assert_eq(nd_fill(nd_view(d0, "0"), 7), ND_OK);
    cr_expect_eq(nd_item(nd_view(a, "0")), 7, "n = 0 returns a (a view)");
    int32_t g[3];
    cr_assert_eq(nd_to_host(d1, g, sizeof g), ND_OK, "%s", nd_last_error());
    /* d1 was recorded before the write: it sees INT32_MIN (NumPy order) */
    cr_expect(g[0] == INT32_MIN + 1 && g[1] == INT32_MAX - 1 && g[2] == INT32_MIN,
              "wrap: %d %d %d", g[0], g[1], g[2]);
    nd_array *f = nd_from_host((double[]){1, NAN, INFINITY, INFINITY, -0.0}, ND_FLOAT64, ND_SHAPE(5));
    nd_array *df = nd_diff(f, 1, -1);
    double h[4];
    cr_assert_eq(nd_to_host(df, h, sizeof h), ND_OK, "%s", nd_last_error());
    cr_expect(isnan(h[0]) && isnan(h[1]) && isnan(h[2]) && h[3] == -INFINITY);
    /* n past the axis length: an empty axis, same dtype */
    nd_array *dn = nd_diff(a, 1000000, 0);
    cr_assert(dn, "%s", nd_last_error());
    cr_expect(nd_shape(dn)[0] == 0 && nd_dtype_of(dn) == ND_INT32);
    nd_free(a); nd_free(d0); nd_free(d1); nd_free(f); nd_free(df); nd_free(dn);
    nd_scope_end();
}

NDT_TEST(shaping_copies, ediff1d) {
    NDT_RNG(r);
    ref_arr *ra = ndt_rand_small(&r, ND_INT8, 2, (int64_t[]){3, 4});
    nd_array *a = upload_as(ra, 1);
    nd_array *b = nd_from_host((int64_t[]){300, -2}, ND_INT64, ND_SHAPE(2, 1));
    nd_array *e = nd_from_host((uint8_t[]){9}, ND_UINT8, ND_SHAPE(1));
    nd_array *d = nd_ediff1d(a, e, b);
    ref_arr *flat = ref_reshape(ra, 1, (int64_t[]){12}), *df = ref_diff_once(flat, 0);
    ref_arr *w = ref_new(ND_INT8, 1, (int64_t[]){14});
    ref_setd(w, 0, 300); /* wraps to 44 as NumPy's cast */
    ref_setd(w, 1, -2);
    for (int i = 0; i < 11; i++) ref_cast_elem(w, 2 + i, df, i);
    ref_setd(w, 13, 9);
    ndt_check(d, w, 0, 0, NULL, "ediff1d(int8 (3,4) transpose view, to_end uint8, to_begin int64)");
    nd_array *dn = nd_ediff1d(a, NULL, NULL);
    ndt_check(dn, df, 0, 0, NULL, "ediff1d without ends");
    /* size 1 and 0-d: empty */
    nd_array *one = nd_full(ND_FLOAT32, ND_SCALAR_SHAPE, 3), *d1 = nd_ediff1d(one, NULL, NULL);
    cr_assert(d1, "%s", nd_last_error());
    cr_expect(nd_ndim(d1) == 1 && nd_shape(d1)[0] == 0 && nd_dtype_of(d1) == ND_FLOAT32);
    /* same_kind: a float to_begin into int8, signed into unsigned: errors */
    nd_array *fl = nd_full(ND_FLOAT32, ND_SHAPE(1), 1.5), *u = nd_full(ND_UINT8, ND_SHAPE(2), 1);
    cr_expect_null(nd_ediff1d(a, NULL, fl));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_ediff1d");
    cr_expect_null(nd_ediff1d(u, b, NULL));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "to_end");
    nd_array *bo = nd_full(ND_BOOL, ND_SHAPE(3), 1);
    cr_expect_null(nd_ediff1d(bo, NULL, NULL));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_ediff1d");
    nd_free(a); nd_free(b); nd_free(e); nd_free(d); nd_free(dn); nd_free(one); nd_free(d1);
    nd_free(fl); nd_free(u); nd_free(bo);
    ref_free(ra); ref_free(flat); ref_free(df); ref_free(w);
}

/* ---- outer, inner, vdot */

/* out[i, j] = sum_k a[i*K + k] * b[j*K + k] over flat rows of length K > 0,
 * in a's and b's promoted dtype (ints wrap, bool OR of ANDs, floats in
 * float64 with |a||b| sums as the tolerance scale). */
static ref_arr *ref_rows_dot(const ref_arr *a, const ref_arr *b, int64_t K, nd_dtype rt, int ond,
                             const int64_t *osh, double **scale) {
    ref_arr *o = ref_new(rt, ond, osh);
    int64_t nb = b->size / K; /* rows of b: the fastest output index */
    *scale = calloc((size_t)o->size + 1, sizeof(double));
    for (int64_t f = 0; f < o->size; f++) {
        int64_t i = nb ? f / nb : 0, j = nb ? f % nb : 0;
        double s = 0, sa = 0;
        uint64_t u = 0;
        for (int64_t k = 0; k < K; k++) {
            int64_t x = i * K + k, y = j * K + k;
            if (rt == ND_BOOL) u |= (ref_getd(a, x) != 0) && (ref_getd(b, y) != 0);
            else if (ref_is_int(rt)) u += ref_getu(a, x) * ref_getu(b, y);
            else {
                s += ref_getd(a, x) * ref_getd(b, y);
                sa += fabs(ref_getd(a, x) * ref_getd(b, y));
            }
        }
        if (ref_is_float(rt)) ref_setd(o, f, s);
        else ref_setu(o, f, u);
        (*scale)[f] = sa;
    }
    return o;
}

NDT_TEST(shaping_copies, outer_inner_vdot) {
    nd_scope_begin(); /* frees the handles made inside calls */
    NDT_RNG(r);
    const nd_dtype pairs[][2] = {{ND_FLOAT32, ND_FLOAT32}, {ND_INT8, ND_INT8}, {ND_BOOL, ND_BOOL},
                                 {ND_UINT8, ND_INT16}, {ND_FLOAT64, ND_INT32},
                                 {ND_FLOAT16, ND_FLOAT16}};
    for (size_t p = 0; p < sizeof pairs / sizeof *pairs; p++) {
        nd_dtype ta = pairs[p][0], tb = pairs[p][1], rt = ref_promote(ta, tb);
        double tol = ref_is_float(rt) ? ndt_rtol(rt) * 4 : 0;
        ref_arr *ra = ndt_rand_bits(&r, ta, 3, (int64_t[]){2, 3, 4});
        ref_arr *rb = ndt_rand_bits(&r, tb, 2, (int64_t[]){5, 4});
        nd_array *a = upload_as(ra, (int)p % 3), *b = upload_as(rb, (int)(p + 1) % 3);
        double *sc;
        /* inner: (2,3,4) . (5,4) -> (2,3,5) */
        nd_array *in = nd_inner(a, b);
        ref_arr *wi = ref_rows_dot(ra, rb, 4, rt, 3, (int64_t[]){2, 3, 5}, &sc);
        ndt_check(in, wi, tol, 0, sc, "inner %s . %s", ref_dtype_name(ta), ref_dtype_name(tb));
        free(sc);
        /* outer: rows of length 1 */
        nd_array *ou = nd_outer(a, b);
        ref_arr *wo = ref_rows_dot(ra, rb, 1, rt, 2, (int64_t[]){24, 20}, &sc);
        ndt_check(ou, wo, tol, 0, sc, "outer %s . %s", ref_dtype_name(ta), ref_dtype_name(tb));
        free(sc);
        /* vdot: (5,4) with (20,) flattened; inner of 1-d vectors */
        ref_arr *rc = ndt_rand_bits(&r, ta, 1, (int64_t[]){20});
        nd_array *c = ndt_upload(rc), *vd = nd_vdot(b, c), *i1 = nd_inner(c, nd_ravel(b));
        ref_arr *wv = ref_rows_dot(rb, rc, 20, rt, 0, NULL, &sc);
        ndt_check(vd, wv, tol, 0, sc, "vdot %s . %s", ref_dtype_name(tb), ref_dtype_name(ta));
        ndt_check(i1, wv, tol, 0, sc, "inner of vectors %s . %s", ref_dtype_name(ta),
                  ref_dtype_name(tb));
        free(sc);
        nd_free(a); nd_free(b); nd_free(c); nd_free(in); nd_free(ou); nd_free(vd); nd_free(i1);
        ref_free(ra); ref_free(rb); ref_free(rc); ref_free(wi); ref_free(wo); ref_free(wv);
    }
    /* 0-d operands multiply; a Python scalar is int64/float64 (NumPy:
     * np.inner(int8 array, 3) is int64); empty sums are zeros. */
    nd_array *x = nd_full(ND_INT8, ND_SHAPE(3), 100), *y = nd_inner(x, nd_scalar_int(3));
    cr_assert(y, "%s", nd_last_error());
    cr_expect(nd_dtype_of(y) == ND_INT64 && nd_shape(y)[0] == 3 && nd_item(nd_view(y, "1")) == 300);
    nd_array *e1 = nd_zeros(ND_FLOAT32, ND_SHAPE(2, 0)), *e2 = nd_ones(ND_FLOAT32, ND_SHAPE(3, 0));
    nd_array *z = nd_inner(e1, e2), *zs = nd_sum(z, ND_ALL_AXES);
    cr_assert(z && zs, "%s", nd_last_error());
    cr_expect(nd_shape(z)[0] == 2 && nd_shape(z)[1] == 3 && nd_item(zs) == 0);
    nd_array *o = nd_outer(nd_scalar(2.0), x);
    cr_assert(o, "%s", nd_last_error());
    cr_expect(nd_dtype_of(o) == ND_FLOAT64 && nd_shape(o)[0] == 1 && nd_shape(o)[1] == 3);
    nd_free(x); nd_free(y); nd_free(e1); nd_free(e2); nd_free(z); nd_free(zs); nd_free(o);
    nd_scope_end();
}

/* ---- broadcast inputs (read-only views with stride 0) */

NDT_TEST(shaping_copies, broadcast_inputs) {
    NDT_RNG(r);
    nd_scope_begin();
    ref_arr *row = ndt_rand_small(&r, ND_INT16, 2, (int64_t[]){1, 4});
    ref_arr *rb = ref_broadcast_to(row, 2, (int64_t[]){3, 4});
    nd_array *u = ndt_upload(row), *b = nd_broadcast_to(u, ND_SHAPE(3, 4));
    roll_ctx rc = {5, 0};
    ref_arr *w = ref_map(rb, 2, rb->shape, roll_src, &rc, 0);
    ndt_check(nd_roll(b, 5, 0), w, 0, 0, NULL, "roll of a broadcast");
    ref_free(w);
    pad_ctx pc = {.m = ND_PAD_SYMMETRIC, .w = {{4, 1}, {2, 5}}};
    w = ref_map(rb, 2, (int64_t[]){8, 11}, pad_src, &pc, 0);
    ndt_check(nd_pad(b, 2, (const int64_t[][2]){{4, 1}, {2, 5}}, ND_PAD_SYMMETRIC, 0), w, 0, 0,
              NULL, "pad of a broadcast");
    ref_free(w);
    rep_ctx pr = {2, 0};
    w = ref_map(rb, 2, (int64_t[]){6, 4}, repeat_src, &pr, 0);
    nd_array *rp = nd_repeat(b, 2, 0);
    ndt_check(rp, w, 0, 0, NULL, "repeat of a broadcast");
    cr_expect_eq(nd_fill(rp, 0), ND_OK, "the result is writable: %s", nd_last_error());
    ref_free(w);
    /* diff down a broadcast axis is zero */
    ref_arr *z = ref_new(ND_INT16, 2, (int64_t[]){2, 4});
    ndt_check(nd_diff(b, 1, 0), z, 0, 0, NULL, "diff along a broadcast axis");
    ref_free(z);
    /* vstack of a broadcast and itself; vdot of 0-d operands */
    ref_arr *two = ref_new(ND_INT16, 2, (int64_t[]){6, 4});
    place(two, rb, 0, 0);
    place(two, rb, 0, 3);
    ndt_check(nd_vstack(2, (nd_array *[]){b, b}), two, 0, 0, NULL, "vstack of broadcasts");
    ref_free(two);
    nd_array *v = nd_vdot(nd_full(ND_INT32, ND_SCALAR_SHAPE, 6), nd_scalar_int(7));
    cr_assert(v, "%s", nd_last_error());
    cr_expect(nd_ndim(v) == 0 && nd_dtype_of(v) == ND_INT64 && nd_item(v) == 42);
    nd_scope_end();
    ref_free(row); ref_free(rb);
}

/* ---- what the scheduler makes of them */

static uint64_t kernels_for(nd_array *x) {
    nd_stats before, after;
    nd_get_stats(&before);
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    (void)x;
    nd_get_stats(&after);
    return NDT_KERNELS(after) - NDT_KERNELS(before);
}

NDT_TEST(shaping_copies, results_fuse) {
    nd_array *x = nd_arange(ND_FLOAT32, 0, 64, 1), *m = nd_reshape(x, ND_SHAPE(8, 8));
    cr_assert_eq(nd_sync(), ND_OK);
    /* An n-th difference fuses into its consumer: summed, it costs what a
     * sum of one elementwise op does. */
    nd_array *sq = nd_mul(m, m), *base = nd_sum(sq, ND_ALL_AXES);
    uint64_t kb = kernels_for(base);
    nd_array *d = nd_diff(m, 3, 1), *s = nd_sum(d, ND_ALL_AXES);
    uint64_t k = kernels_for(s);
    cr_expect_eq(k, kb, "sum(diff(m, 3)) ran %llu kernels, sum(m * m) %llu",
                 (unsigned long long)k, (unsigned long long)kb);
    cr_expect_eq(nd_item(s), 0.0, "third differences of a ramp");
    /* tile and repeat are one copy each */
    nd_array *t = nd_tile(m, 2, (int64_t[]){2, 3});
    k = kernels_for(t);
    cr_expect_eq(k, 1, "tile ran %llu kernels", (unsigned long long)k);
    nd_array *rp = nd_repeat(m, 3, 0);
    k = kernels_for(rp);
    cr_expect_eq(k, 1, "repeat ran %llu kernels", (unsigned long long)k);
    nd_free(x); nd_free(m); nd_free(d); nd_free(s); nd_free(t); nd_free(rp); nd_free(sq);
    nd_free(base);
}

/* ---- bad input */

NDT_TEST(shaping_copies, errors) {
    nd_scope_begin(); /* frees the handles made inside calls */
    nd_array *a = nd_zeros(ND_FLOAT32, ND_SHAPE(2, 3)), *out[4];
    cr_expect_null(nd_roll(NULL, 1, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_roll");
    cr_expect_null(nd_roll(a, 1, 3));
    NDT_EXPECT_ERR(ND_ERR_ARG, "axis 3 is out of range");
    cr_expect_null(nd_rot90(nd_view(a, "0"), 1));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_rot90");
    cr_expect_null(nd_tile(a, 2, (int64_t[]){1, -2}));
    NDT_EXPECT_ERR(ND_ERR_ARG, "reps[1] = -2");
    cr_expect_null(nd_tile(a, 1, NULL));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_tile");
    cr_expect_null(nd_tile(a, 9, (int64_t[]){1, 1, 1, 1, 1, 1, 1, 1, 1}));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_tile");
    cr_expect_null(nd_repeat(a, -1, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "repeats = -1");
    cr_expect_null(nd_repeat(a, 2, -3));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_repeat");
    cr_expect_null(nd_pad(a, 2, (const int64_t[][2]){{1, -1}, {0, 0}}, ND_PAD_EDGE, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "widths[0][1] = -1");
    cr_expect_null(nd_pad(a, 3, (const int64_t[][2]){{1, 1}, {0, 0}, {0, 0}}, ND_PAD_EDGE, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_pad");
    cr_expect_null(nd_pad(a, 1, (const int64_t[][2]){{1, 1}}, (nd_pad_mode)9, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "mode 9");
    cr_expect_null(nd_pad(a, 1, NULL, ND_PAD_WRAP, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_pad");
    cr_expect_eq(nd_split(a, 0, 0, out), ND_ERR_ARG);
    NDT_EXPECT_ERR(ND_ERR_ARG, "sections = 0");
    cr_expect_eq(nd_split(a, 2, 0, NULL), ND_ERR_ARG);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_split");
    cr_expect_eq(nd_array_split(a, 2, 2, out), ND_ERR_ARG);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_array_split");
    cr_expect_eq(nd_split_at(a, 1, NULL, 0, out), ND_ERR_ARG);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_split_at");
    cr_expect_eq(nd_split_at(NULL, 0, NULL, 0, out), ND_ERR_ARG);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_split_at");
    cr_expect_null(nd_hstack(0, NULL));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_hstack");
    cr_expect_null(nd_vstack(2, (nd_array *[]){a, NULL}));
    NDT_EXPECT_ERR(ND_ERR_ARG, "arrays[1]");
    cr_expect_null(nd_dstack(2, (nd_array *[]){a, nd_view(a, "0")}));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_dstack");
    cr_expect_null(nd_column_stack(2, (nd_array *[]){a, nd_zeros(ND_INT8, ND_SHAPE(3))}));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_column_stack");
    cr_expect_null(nd_diff(a, -1, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "n = -1");
    cr_expect_null(nd_diff(nd_scalar(1.0), 1, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_diff");
    cr_expect_null(nd_diff(a, 1, 2));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_diff");
    cr_expect_null(nd_ediff1d(NULL, NULL, NULL));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_ediff1d");
    cr_expect_null(nd_outer(a, NULL));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_outer");
    cr_expect_null(nd_inner(a, nd_zeros(ND_FLOAT32, ND_SHAPE(4))));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_inner");
    cr_expect_null(nd_vdot(a, nd_zeros(ND_FLOAT32, ND_SHAPE(5))));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_vdot");
    nd_array *b = nd_zeros(ND_FLOAT32, ND_SHAPE(1, 1, 1, 1, 1, 2));
    cr_expect_null(nd_inner(b, b));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_inner");
    nd_free(a); nd_free(b);
    nd_scope_end();
}
