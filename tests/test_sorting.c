/* Sorting and searching (include/nd/sorting.h) against independent
 * references (sort_ref.h: a stable merge sort by plain comparisons of the
 * values) and values checked against NumPy 2.4: every dtype, NaNs of both
 * signs and payloads, infinities, -0.0 and +0.0, ties (stability), empty
 * and 0-d arrays, negative axes, views as inputs, a row long enough for the
 * CPU's parallel radix sort, and every bad argument. */
#include "sort_ref.h"

#include "common/sort_raw.h"

/* Checks sort and argsort of x (a reference of a, which may be a view with
 * the same values) along axis (ND_ALL_AXES: flattened) element by element:
 * indices exactly the stable order; values the bits of those elements,
 * NaNs the default NaN. */
static void check_sorts(const ref_arr *x, nd_array *a, int axis, const char *what) {
    nd_array *s = nd_sort(a, axis), *i = nd_argsort(a, axis);
    cr_assert(s && i, "%s: sort/argsort failed: %s", what, nd_last_error());
    ref_arr *flat = NULL;
    const ref_arr *src = x;
    int ax = axis;
    if (axis == ND_ALL_AXES) {
        int64_t n = x->size;
        flat = ref_reshape(x, 1, &n);
        src = flat;
        ax = 0;
    } else if (ax < 0) {
        ax += x->ndim;
    }
    ref_arr *gs = ndt_download(s), *gi = ndt_download(i);
    cr_assert_eq(gs->dt, x->dt, "%s: sort dtype %s", what, ref_dtype_name(gs->dt));
    cr_assert_eq(gi->dt, ND_INT64, "%s: argsort dtype", what);
    cr_assert_eq(gs->ndim, src->ndim, "%s: ndim", what);
    for (int d = 0; d < src->ndim; d++) cr_assert_eq(gs->shape[d], src->shape[d], "%s: shape[%d]", what, d);
    int64_t n = src->ndim ? src->shape[ax] : 1, rows = n ? src->size / n : 0;
    int64_t *pos = malloc(sizeof(int64_t) * (size_t)(n + 1)), *sorted = malloc(sizeof(int64_t) * (size_t)(n + 1));
    int bad = 0;
    for (int64_t r = 0; r < rows && bad < 5; r++) {
        sref_row(src, ax, r, pos);
        memcpy(sorted, pos, sizeof(int64_t) * (size_t)n);
        sref_sort(src, sorted, n);
        for (int64_t k = 0; k < n && bad < 5; k++) {
            /* the k-th of the row in sorted order came from position j of the row */
            int64_t step = n > 1 ? pos[1] - pos[0] : 1, j = (sorted[k] - pos[0]) / step;
            int64_t gidx = (int64_t)ref_getu(gi, pos[k]);
            uint64_t want = sref_bits(src, sorted[k]), got = sref_bits(gs, pos[k]);
            if (ref_is_float(src->dt) && isnan(ref_getd(src, sorted[k]))) want = sref_qnan(src->dt);
            if (gidx != j || got != want) {
                cr_expect(0, "%s (%s): row %lld, sorted[%lld]: index %lld (want %lld), bits %#llx (want %#llx)", what,
                          ref_dtype_name(src->dt), (long long)r, (long long)k, (long long)gidx, (long long)j,
                          (unsigned long long)got, (unsigned long long)want);
                bad++;
            }
        }
    }
    free(pos);
    free(sorted);
    ref_free(gs);
    ref_free(gi);
    if (flat) ref_free(flat);
    nd_free(s);
    nd_free(i);
}

NDT_TEST(sorting, every_dtype_every_axis) {
    NDT_RNG(r);
    const int64_t shapes[][3] = {{4, 37, 3}, {3, 5, 2}};
    for (int t = 0; t < NDT_NUM_DTYPES; t++) {
        nd_dtype dt = ndt_all_dtypes[t];
        for (int s = 0; s < 2; s++) {
            ref_arr *x = ndt_rand_small(&r, dt, 3, shapes[s]);
            sref_specials(&r, x);
            nd_array *a = ndt_upload(x);
            const int axes[] = {-1, 0, 1, -2, ND_ALL_AXES};
            for (int k = 0; k < 5; k++) {
                char what[64];
                snprintf(what, sizeof what, "shape %d axis %d", s, axes[k]);
                check_sorts(x, a, axes[k], what);
            }
            nd_free(a);
            ref_free(x);
        }
    }
}

NDT_TEST(sorting, full_bit_patterns) {
    /* every bit random: extreme integers (INT_MIN, UINT_MAX), subnormals */
    NDT_RNG(r);
    for (int t = 0; t < NDT_NUM_DTYPES; t++) {
        int64_t shape[2] = {3, 300};
        ref_arr *x = ndt_rand_bits(&r, ndt_all_dtypes[t], 2, shape);
        if (!ref_is_float(x->dt)) {
            for (int64_t i = 0; i < 4; i++) sref_set_bits(x, i, 0); /* zeros */
            uint64_t top = (uint64_t)1 << (8 * ref_itemsize(x->dt) - 1);
            sref_set_bits(x, 5, x->dt == ND_BOOL ? 1 : top); /* INT_MIN / 2^(w-1) */
            sref_set_bits(x, 6, x->dt == ND_BOOL ? 1 : top - 1);
        } else {
            sref_specials(&r, x);
        }
        nd_array *a = ndt_upload(x);
        check_sorts(x, a, -1, "random bits");
        check_sorts(x, a, 0, "random bits axis 0");
        nd_free(a);
        ref_free(x);
    }
}

NDT_TEST(sorting, long_rows_parallel_path) {
    /* rows of 2^18 (the CPU sorts one such row on the whole pool; CUDA
     * sorts them one after another) */
    NDT_RNG(r);
    const nd_dtype dts[] = {ND_FLOAT32, ND_INT64, ND_UINT16, ND_FLOAT64};
    for (int t = 0; t < 4; t++) {
        int64_t shape[2] = {2, 1 << 18};
        ref_arr *x = t == 2 ? ndt_rand_bits(&r, dts[t], 2, shape) : ndt_rand(&r, dts[t], 2, shape, -1000, 1000);
        if (ref_is_float(dts[t])) sref_specials(&r, x); /* CUDA: the segmented radix sort's NaN fixup */
        nd_array *a = ndt_upload(x);
        check_sorts(x, a, -1, "long rows");
        nd_free(a);
        ref_free(x);
    }
    /* Long rows of heavy ties (the CPU's sample sort puts equal keys in
     * one bucket: five values fill five of its buckets, the rest stay
     * empty), float ones with both zeros and NaNs among them, and a row
     * of one value. */
    for (int t = 0; t < 3; t++) {
        int64_t shape[1] = {(1 << 18) + 5};
        ref_arr *x = ref_new(t == 1 ? ND_INT32 : ND_FLOAT32, 1, shape);
        static const double ties[5] = {-2.0, -0.0, 0.0, 1.5, NAN};
        for (int64_t k = 0; k < shape[0]; k++) {
            double v = ties[ndt_next(&r) % 5];
            if (t == 1) v = isnan(v) ? 3.0 : v;
            ref_setd(x, k, t == 2 ? 7.0 : v);
        }
        nd_array *a = ndt_upload(x);
        check_sorts(x, a, -1, t == 2 ? "one value" : "heavy ties");
        nd_free(a);
        ref_free(x);
    }
    /* many rows of 4096 floats (CUDA: the segmented radix sort) */
    for (int t = 0; t < 2; t++) {
        int64_t shape[2] = {64, 4096};
        ref_arr *x = ndt_rand(&r, t ? ND_FLOAT64 : ND_FLOAT32, 2, shape, -1000, 1000);
        sref_specials(&r, x);
        nd_array *a = ndt_upload(x);
        check_sorts(x, a, -1, "many rows");
        nd_free(a);
        ref_free(x);
    }
}

/* The CUDA plugin sorts float values in CUB's order and then moves the
 * NaNs (common/sort_raw.h). Emulated here: a stable sort by CUB's key, the
 * two searches with T probes a step (as T threads of a block, T = 1, 3,
 * 256), the fixed row; it must be nd's sort (the reference's stable order,
 * NaNs the default NaN) bit for bit, for rows with NaNs of either sign or
 * none, all NaNs, both zeros and ties. */
static int64_t emulated_first(const uint64_t *row, int64_t lo, int64_t hi, int T, int tail, nd_sort_key_info f) {
    while (lo < hi) {
        int fails = 0;
        for (int t = 0; t < T; t++) {
            uint64_t b = row[nd_sort_probe_at(lo, hi, t, T)];
            fails += !(tail ? nd_sort_raw_in_tail(b, f) : nd_sort_raw_past_lead(b, f));
        }
        nd_sort_probe_next(&lo, &hi, fails, T);
    }
    return lo;
}

NDT_TEST(sorting, cub_order_fixup) {
    NDT_RNG(r);
    const nd_dtype dts[] = {ND_FLOAT32, ND_FLOAT64};
    const int64_t ns[] = {1, 2, 3, 17, 1000};
    const int probes[] = {1, 3, 256};
    for (int t = 0; t < 2; t++)
        for (int k = 0; k < 5; k++)
            for (int mix = 0; mix < 5; mix++) {
                int64_t n = ns[k];
                ref_arr *x = ndt_rand_small(&r, dts[t], 1, &n);
                nd_sort_key_info f = nd_sort_key_info_of(dts[t]);
                uint64_t sign = (uint64_t)1 << (8 * f.width - 1), qnan = sref_qnan(dts[t]);
                /* 0: specials (NaNs of both signs); 1: no NaN; 2: only +NaN; 3: only -NaN; 4: all NaN */
                if (mix != 1) sref_specials(&r, x);
                for (int64_t i = 0; i < n; i++) {
                    uint64_t b = sref_bits(x, i);
                    int nan = (b & ~sign) > f.exp_mask;
                    if (mix == 1 && nan) sref_set_bits(x, i, sign); /* -0.0 */
                    if (mix == 2 && nan) sref_set_bits(x, i, b & ~sign);
                    if (mix == 3 && nan) sref_set_bits(x, i, b | sign);
                    if (mix == 4) sref_set_bits(x, i, (i % 3 ? qnan : f.exp_mask + 1) | (i % 2 ? sign : 0));
                }
                /* CUB's order: a stable insertion sort by nd_sort_raw_key */
                uint64_t *cub = malloc(sizeof(uint64_t) * (size_t)n);
                for (int64_t i = 0; i < n; i++) {
                    uint64_t b = sref_bits(x, i);
                    int64_t j = i;
                    for (; j > 0 && nd_sort_raw_key(cub[j - 1], f) > nd_sort_raw_key(b, f); j--) cub[j] = cub[j - 1];
                    cub[j] = b;
                }
                int64_t *pos = malloc(sizeof(int64_t) * (size_t)n);
                for (int64_t i = 0; i < n; i++) pos[i] = i;
                sref_sort(x, pos, n);
                for (int p = 0; p < 3; p++) {
                    int has_lead = !nd_sort_raw_past_lead(cub[0], f), has_tail = nd_sort_raw_in_tail(cub[n - 1], f);
                    int64_t lead = has_lead ? emulated_first(cub, 0, n, probes[p], 0, f) : 0;
                    int64_t tail = has_tail ? emulated_first(cub, lead, n, probes[p], 1, f) : n;
                    int bad = 0;
                    for (int64_t i = 0; i < n && !bad; i++) {
                        uint64_t want = sref_bits(x, pos[i]);
                        if ((want & ~sign) > f.exp_mask) want = qnan;
                        uint64_t got = 0;
                        if (i < tail - lead) got = cub[i + lead];
                        else got = f.qnan;
                        /* the same through the shared helper, on the row's bytes */
                        if (f.width == 4) {
                            uint32_t row32[1000];
                            for (int64_t q = 0; q < n; q++) row32[q] = (uint32_t)cub[q];
                            cr_assert_eq(nd_sort_raw_fixed(row32, i, lead, tail, f), got);
                        } else {
                            cr_assert_eq(nd_sort_raw_fixed(cub, i, lead, tail, f), got);
                        }
                        if (got != want) {
                            cr_expect(0, "%s n %lld mix %d probes %d: [%lld] %#llx, want %#llx (lead %lld tail %lld)",
                                      ref_dtype_name(dts[t]), (long long)n, mix, probes[p], (long long)i,
                                      (unsigned long long)got, (unsigned long long)want, (long long)lead,
                                      (long long)tail);
                            bad = 1;
                        }
                    }
                }
                free(pos);
                free(cub);
                ref_free(x);
            }
}

NDT_TEST(sorting, views_as_inputs) {
    NDT_RNG(r);
    int64_t shape[2] = {40, 50};
    ref_arr *x = ndt_rand_small(&r, ND_FLOAT32, 2, shape);
    sref_specials(&r, x);
    nd_array *a = ndt_upload(x);
    /* a transpose */
    nd_array *t = nd_transpose(a, NULL);
    ref_arr *xt = ref_transpose(x, NULL);
    check_sorts(xt, t, -1, "transpose");
    check_sorts(xt, t, 0, "transpose axis 0");
    /* a strided slice */
    nd_array *v = nd_view(a, "1::3, ::-2");
    int64_t vs[2] = {13, 25}, vst[2] = {150, -2};
    ref_arr *xv = ref_strided(x, 2, vs, vst, 50 + 49);
    check_sorts(xv, v, -1, "strided view");
    check_sorts(xv, v, ND_ALL_AXES, "strided view flat");
    /* a broadcast */
    int64_t row[1] = {50}, bs[2] = {3, 50};
    ref_arr *x1 = ndt_rand_small(&r, ND_INT16, 1, row);
    nd_array *b1 = ndt_upload(x1), *b = nd_broadcast_to(b1, 2, bs);
    ref_arr *xb = ref_broadcast_to(x1, 2, bs);
    check_sorts(xb, b, -1, "broadcast");
    check_sorts(xb, b, 0, "broadcast axis 0");
    nd_free(t); nd_free(v); nd_free(b); nd_free(b1); nd_free(a);
    ref_free(xt); ref_free(xv); ref_free(xb); ref_free(x1); ref_free(x);
}

NDT_TEST(sorting, known_values_from_numpy) {
    /* np.sort / np.argsort(kind='stable') */
    double v[] = {3, NAN, -0.0, 1, -INFINITY, 0.0, -NAN, INFINITY, 1, -2};
    int64_t n = 10;
    nd_array *a = nd_from_host(v, ND_FLOAT64, 1, &n);
    nd_array *i = nd_argsort(a, 0), *s = nd_sort(a, -1);
    int64_t got[10], want[10] = {4, 9, 2, 5, 3, 8, 0, 7, 1, 6};
    double sv[10];
    cr_assert_eq(nd_to_host(i, got, sizeof got), ND_OK);
    cr_assert_eq(nd_to_host(s, sv, sizeof sv), ND_OK);
    for (int k = 0; k < 10; k++) cr_expect_eq(got[k], want[k], "argsort[%d] = %lld, NumPy %lld", k, (long long)got[k],
                                              (long long)want[k]);
    cr_expect(signbit(sv[2]) && !signbit(sv[3]), "-0.0 keeps its bits and its place before the later +0.0");
    cr_expect(isnan(sv[8]) && isnan(sv[9]) && !signbit(sv[9]), "NaNs last, as the default NaN");
    nd_free(a); nd_free(i); nd_free(s);
}

NDT_TEST(sorting, empty_and_0d) {
    int64_t shape[2] = {0, 4};
    nd_array *e = nd_zeros(ND_FLOAT32, 2, shape);
    nd_array *s = nd_sort(e, -1), *i = nd_argsort(e, 0), *f = nd_sort(e, ND_ALL_AXES);
    cr_assert(s && i && f, "%s", nd_last_error());
    cr_expect(nd_size(s) == 0 && nd_shape(s)[1] == 4 && nd_dtype_of(i) == ND_INT64 && nd_ndim(f) == 1 &&
              nd_size(f) == 0);
    cr_expect_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    int64_t shape2[2] = {3, 0};
    nd_array *e2 = nd_zeros(ND_INT8, 2, shape2), *s2 = nd_argsort(e2, -1);
    cr_expect(s2 && nd_size(s2) == 0 && nd_sync() == ND_OK);
    /* 0-d: flattened gives one element; an axis is an error as NumPy's */
    nd_array *z = nd_full(ND_FLOAT64, 0, NULL, 7.5), *zs = nd_sort(z, ND_ALL_AXES);
    cr_assert(zs && nd_ndim(zs) == 1 && nd_size(zs) == 1);
    cr_expect_eq(nd_item(zs), 7.5);
    cr_expect_null(nd_sort(z, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_sort");
    nd_free(e); nd_free(s); nd_free(i); nd_free(f); nd_free(e2); nd_free(s2); nd_free(z); nd_free(zs);
}

NDT_TEST(sorting, deterministic_across_thread_counts) {
    NDT_RNG(r);
    int64_t shape[1] = {(1 << 17) + 3};
    ref_arr *x = ndt_rand_small(&r, ND_FLOAT32, 1, shape);
    ref_arr *got[2];
    for (int k = 0; k < 2; k++) {
        nd_config c = {0};
        c.num_threads = k + 1;
        ndt_restart(&c);
        nd_array *a = ndt_upload(x), *i = nd_argsort(a, 0);
        got[k] = ndt_download(i);
        nd_free(a);
        nd_free(i);
    }
    cr_expect(memcmp(got[0]->data, got[1]->data, (size_t)shape[0] * 8) == 0, "1 and 2 threads give the same indices");
    ref_free(got[0]); ref_free(got[1]); ref_free(x);
}

NDT_TEST(sorting, partition) {
    double v[] = {5, 1, NAN, 3, 3, -1};
    int64_t n = 6;
    nd_array *a = nd_from_host(v, ND_FLOAT64, 1, &n);
    for (int64_t kth = -6; kth < 6; kth++) {
        nd_array *p = nd_partition(a, kth, 0), *ip = nd_argpartition(a, kth, -1);
        cr_assert(p && ip, "%s", nd_last_error());
        double got[6];
        int64_t gi[6];
        nd_to_host(p, got, sizeof got);
        nd_to_host(ip, gi, sizeof gi);
        int64_t k = kth < 0 ? kth + 6 : kth;
        const double sorted[] = {-1, 1, 3, 3, 5, NAN};
        cr_expect(got[k] == sorted[k] || (isnan(got[k]) && isnan(sorted[k])), "kth %lld in place", (long long)kth);
        for (int j = 0; j < 6; j++) {
            double x = v[gi[j]];
            if (j < k) cr_expect(!(x > sorted[k]) && !isnan(x), "before kth");
            if (j > k) cr_expect(!(x < sorted[k]), "after kth");
        }
        nd_free(p);
        nd_free(ip);
    }
    cr_expect_null(nd_partition(a, 6, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_partition");
    cr_expect_null(nd_argpartition(a, -7, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_argpartition");
    cr_expect_null(nd_partition(a, 0, 1));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_partition");
    nd_free(a);
}

/* The partition property of row r of got (values, or with idx indices
 * into x's row) for each of the kth: the element there is the one a sort
 * puts there, none before it is larger, none after it smaller, and the row
 * is a permutation of x's. */
static void check_partition_row(const ref_arr *x, const int64_t *xpos, const ref_arr *got, const int64_t *gpos,
                                int is_index, int64_t n, int64_t nkth, const int64_t *kth, const char *what) {
    /* both[0..n): the output row's values; both[n..2n): x's row sorted. */
    ref_arr *both = ref_new(x->dt, 1, (int64_t[]){2 * n});
    int64_t *sorted = malloc((size_t)(n ? n : 1) * sizeof *sorted), *perm = malloc((size_t)(n ? n : 1) * sizeof *perm);
    char *seen = calloc((size_t)(n ? n : 1), 1);
    size_t item = ref_itemsize(x->dt);
    for (int64_t j = 0; j < n; j++) sorted[j] = xpos[j];
    sref_sort(x, sorted, n);
    for (int64_t j = 0; j < n; j++) {
        int64_t src = xpos[j];
        if (is_index) {
            int64_t i = (int64_t)ref_getu(got, gpos[j]);
            cr_assert(i >= 0 && i < n && !seen[i], "%s: index %lld at %lld is not a permutation's", what, (long long)i,
                      (long long)j);
            seen[i] = 1;
            src = xpos[i];
            memcpy(both->data + j * item, x->data + src * item, item);
        } else {
            memcpy(both->data + j * item, got->data + gpos[j] * item, item);
        }
        memcpy(both->data + (n + j) * item, x->data + sorted[j] * item, item);
    }
    for (int64_t q = 0; q < nkth; q++) {
        int64_t k = kth[q] < 0 ? kth[q] + n : kth[q];
        cr_expect(sref_cmp(both, k, n + k) == 0, "%s: kth %lld holds %g, a sort puts %g there", what,
                  (long long)kth[q], ref_getd(both, k), ref_getd(both, n + k));
        for (int64_t j = 0; j < n; j++) {
            if (j < k) cr_expect(sref_cmp(both, j, k) <= 0, "%s: kth %lld: %g before it is larger", what,
                                 (long long)kth[q], ref_getd(both, j));
            if (j > k) cr_expect(sref_cmp(both, j, k) >= 0, "%s: kth %lld: %g after it is smaller", what,
                                 (long long)kth[q], ref_getd(both, j));
        }
    }
    /* A permutation of x's row: the output sorted equals x's sorted. */
    for (int64_t j = 0; j < n; j++) perm[j] = j;
    sref_sort(both, perm, n);
    for (int64_t j = 0; j < n; j++)
        cr_expect(sref_cmp(both, perm[j], n + j) == 0, "%s: the output is not a permutation of the row", what);
    free(seen);
    free(perm);
    free(sorted);
    ref_free(both);
}

/* nd_partitions and nd_argpartitions of a along axis against the property
 * of every row. */
static void check_partitions(const ref_arr *x, nd_array *a, int64_t nkth, const int64_t *kth, int axis,
                             const char *what) {
    nd_array *p = nd_partitions(a, nkth, kth, axis), *ip = nd_argpartitions(a, nkth, kth, axis);
    cr_assert(p && ip, "%s: %s", what, nd_last_error());
    ref_arr *flat = NULL;
    const ref_arr *src = x;
    int ax = axis;
    if (axis == ND_ALL_AXES) {
        int64_t n = x->size;
        src = flat = ref_reshape(x, 1, &n);
        ax = 0;
    } else if (ax < 0) {
        ax += x->ndim;
    }
    ref_arr *gp = ndt_download(p), *gi = ndt_download(ip);
    cr_assert_eq(gp->dt, x->dt, "%s: dtype", what);
    cr_assert_eq(gi->dt, ND_INT64, "%s: argpartition dtype", what);
    cr_assert_eq(gp->size, src->size, "%s: size", what);
    cr_assert_eq(gp->ndim, src->ndim, "%s: ndim", what);
    int64_t n = src->shape[ax], rows = n ? src->size / n : 0;
    int64_t *xpos = malloc((size_t)(n ? n : 1) * sizeof *xpos), *gpos = malloc((size_t)(n ? n : 1) * sizeof *gpos);
    for (int64_t r = 0; r < rows; r++) {
        sref_row(src, ax, r, xpos);
        sref_row(gp, ax, r, gpos);
        check_partition_row(src, xpos, gp, gpos, 0, n, nkth, kth, what);
        check_partition_row(src, xpos, gi, gpos, 1, n, nkth, kth, what);
    }
    free(xpos);
    free(gpos);
    ref_free(gp);
    ref_free(gi);
    ref_free(flat);
    nd_free(p);
    nd_free(ip);
}

/* Several kth (NumPy's sequence), negative ones, repeated ones, every axis
 * and the flattened array; NaNs, ties, -0.0 and +0.0; integer dtypes. */
NDT_TEST(sorting, partitions_several_and_negative_kth) {
    NDT_RNG(r);
    const nd_dtype dts[3] = {ND_FLOAT64, ND_INT32, ND_UINT8};
    for (int t = 0; t < 3; t++) {
        ref_arr *x = ndt_rand(&r, dts[t], 2, (int64_t[]){5, 9}, 0, 6); /* many ties */
        if (dts[t] == ND_FLOAT64) {
            ref_setd(x, 3, NAN);
            ref_setd(x, 11, -NAN);
            ref_setd(x, 12, -0.0);
            ref_setd(x, 20, INFINITY);
            ref_setd(x, 21, -INFINITY);
            ref_setd(x, 40, NAN);
        }
        nd_array *a = ndt_upload(x);
        const int64_t k1[] = {0, -1, 4}, k2[] = {2, 2, -3, 8}, k3[] = {-5}, k4[] = {1, 3, 40, -45};
        char what[64];
        snprintf(what, sizeof what, "%s axis 1", ref_dtype_name(dts[t]));
        check_partitions(x, a, 3, k1, 1, what);
        check_partitions(x, a, 4, k2, -1, what);
        snprintf(what, sizeof what, "%s axis 0", ref_dtype_name(dts[t]));
        check_partitions(x, a, 1, k3, 0, what);
        check_partitions(x, a, 2, (int64_t[]){4, -5}, -2, what);
        snprintf(what, sizeof what, "%s flattened", ref_dtype_name(dts[t]));
        check_partitions(x, a, 4, k4, ND_ALL_AXES, what);
        check_partitions(x, a, 0, NULL, ND_ALL_AXES, what);
        nd_free(a);
        ref_free(x);
    }
    /* A strided view (every other column). */
    ref_arr *x = ndt_rand(&r, ND_FLOAT32, 2, (int64_t[]){4, 10}, -3, 3);
    nd_array *a = ndt_upload(x), *v = nd_view(a, ":, ::2");
    ref_arr *xv = ndt_download(v);
    check_partitions(xv, v, 2, (int64_t[]){1, -1}, 1, "float32 view");
    nd_free(v);
    nd_free(a);
    ref_free(x);
    ref_free(xv);
}

NDT_TEST(sorting, partitions_errors_and_empty) {
    nd_scope_begin();
    nd_array *a = nd_arange(ND_FLOAT64, 0, 12, 1), *m = nd_reshape(a, ND_SHAPE(3, 4));
    cr_expect_null(nd_partitions(m, 3, (int64_t[]){0, 4, 1}, 1));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_partitions: kth = 4 (one of the kth) is out of bounds for an axis of length 4");
    cr_expect_null(nd_argpartitions(m, 2, (int64_t[]){-3, -4}, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_argpartitions: kth = -4 (one of the kth) is out of bounds for an axis of length 3");
    cr_expect(nd_partitions(m, 3, (int64_t[]){11, -12, 0}, ND_ALL_AXES), "flattened: 12 elements: %s",
              nd_last_error());
    cr_expect_null(nd_partitions(m, 1, (int64_t[]){12}, ND_ALL_AXES));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_partitions");
    cr_expect_null(nd_partitions(m, -1, (int64_t[]){0}, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_partitions");
    cr_expect_null(nd_argpartitions(m, 1, NULL, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_argpartitions");
    cr_expect_null(nd_partitions(m, 1, (int64_t[]){0}, 2));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_partitions");
    cr_expect_null(nd_partitions(NULL, 1, (int64_t[]){0}, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_partitions");
    /* 0-d along an axis: no axis (NumPy's AxisError); flattened: length 1. */
    nd_array *s = nd_full(ND_FLOAT64, 0, NULL, 3);
    cr_expect_null(nd_partition(s, 0, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_partition");
    nd_array *s1 = nd_partition(s, -1, ND_ALL_AXES);
    cr_assert(s1, "%s", nd_last_error());
    cr_expect_eq(nd_ndim(s1), 1);
    double got = 0;
    cr_expect_eq(nd_to_host(s1, &got, sizeof got), ND_OK);
    cr_expect_eq(got, 3);
    /* An empty array: NumPy checks no kth (np.partition(np.zeros((2, 0)), 5,
     * axis=0) is fine); the result is empty of a's shape. */
    nd_array *e = nd_zeros(ND_FLOAT64, ND_SHAPE(2, 0));
    nd_array *pe = nd_partitions(e, 2, (int64_t[]){5, -9}, 0), *ie = nd_argpartition(e, 7, 1);
    cr_assert(pe && ie, "%s", nd_last_error());
    cr_expect(nd_ndim(pe) == 2 && nd_shape(pe)[0] == 2 && nd_shape(pe)[1] == 0);
    cr_expect(nd_ndim(ie) == 2 && nd_shape(ie)[0] == 2 && nd_shape(ie)[1] == 0);
    cr_expect_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_scope_end();
}

NDT_TEST(sorting, lexsort) {
    /* np.lexsort((b, a)): a primary, b secondary; ties of both keep order */
    int32_t a[] = {1, 5, 1, 4, 3, 4, 4};
    double b[] = {9, 4, 0, 4, 0, 2, 1};
    int64_t n = 7, want[] = {2, 0, 4, 6, 5, 3, 1};
    nd_array *ka = nd_from_host(a, ND_INT32, 1, &n), *kb = nd_from_host(b, ND_FLOAT64, 1, &n);
    nd_array *keys[2] = {kb, ka};
    nd_array *i = nd_lexsort(2, keys);
    cr_assert(i, "%s", nd_last_error());
    int64_t got[7];
    nd_to_host(i, got, sizeof got);
    for (int k = 0; k < 7; k++) cr_expect_eq(got[k], want[k], "lexsort[%d] = %lld (NumPy %lld)", k, (long long)got[k],
                                             (long long)want[k]);
    /* rows of a 2-d key sort independently; against a two-key reference */
    NDT_RNG(r);
    int64_t shape[2] = {3, 60};
    ref_arr *x0 = ndt_rand(&r, ND_INT8, 2, shape, 0, 3), *x1 = ndt_rand(&r, ND_UINT8, 2, shape, 0, 3);
    nd_array *k2[2] = {ndt_upload(x0), ndt_upload(x1)};
    nd_array *li = nd_lexsort(2, k2);
    ref_arr *gl = ndt_download(li);
    for (int64_t row = 0; row < 3; row++)
        for (int64_t j = 1; j < 60; j++) {
            int64_t p = row * 60 + (int64_t)ref_getu(gl, row * 60 + j - 1), q = row * 60 + (int64_t)ref_getu(gl, row * 60 + j);
            int c1 = sref_cmp(x1, p, q), c0 = sref_cmp(x0, p, q);
            cr_expect(c1 < 0 || (c1 == 0 && (c0 < 0 || (c0 == 0 && p < q))), "row %lld pos %lld out of order",
                      (long long)row, (long long)j);
        }
    /* 0-d keys: index 0, as NumPy */
    nd_array *z = nd_full(ND_INT64, 0, NULL, 3), *zi = nd_lexsort(1, &z);
    cr_expect(zi && nd_ndim(zi) == 0 && nd_item(zi) == 0);
    /* bad keys */
    cr_expect_null(nd_lexsort(0, keys));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_lexsort");
    nd_array *bad[2] = {ka, k2[0]};
    cr_expect_null(nd_lexsort(2, bad));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_lexsort");
    nd_array *nul[2] = {ka, NULL};
    cr_expect_null(nd_lexsort(2, nul));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_lexsort");
    nd_free(ka); nd_free(kb); nd_free(i); nd_free(k2[0]); nd_free(k2[1]); nd_free(li); nd_free(z); nd_free(zi);
    ref_free(x0); ref_free(x1); ref_free(gl);
}

NDT_TEST(sorting, searchsorted) {
    /* np.searchsorted([-inf, -1, 0, 0, 2, 2, 2, nan, nan], v, side) */
    double a[] = {-INFINITY, -1, 0, -0.0, 2, 2, 2, NAN, NAN};
    double v[] = {-5, 0, -0.0, 2, 2.5, NAN, INFINITY, -INFINITY, 3};
    int64_t na = 9, nv = 9;
    int64_t left[] = {1, 2, 2, 4, 7, 7, 7, 0, 7}, right[] = {1, 4, 4, 7, 7, 9, 7, 1, 7};
    nd_array *aa = nd_from_host(a, ND_FLOAT64, 1, &na), *vv = nd_from_host(v, ND_FLOAT64, 1, &nv);
    nd_array *l = nd_searchsorted(aa, vv, ND_SIDE_LEFT), *r = nd_searchsorted(aa, vv, ND_SIDE_RIGHT);
    cr_assert(l && r, "%s", nd_last_error());
    int64_t gl[9], gr[9];
    nd_to_host(l, gl, sizeof gl);
    nd_to_host(r, gr, sizeof gr);
    for (int k = 0; k < 9; k++) {
        cr_expect_eq(gl[k], left[k], "left[%d] = %lld (NumPy %lld)", k, (long long)gl[k], (long long)left[k]);
        cr_expect_eq(gr[k], right[k], "right[%d] = %lld (NumPy %lld)", k, (long long)gr[k], (long long)right[k]);
    }
    /* int a, float and weak v, 2-d v, 0-d v: np.searchsorted([1,3,3,7], ...) */
    int32_t ai[] = {1, 3, 3, 7};
    int64_t n4 = 4, s2[2] = {2, 2};
    float v2[] = {3.0f, 2.5f, 8, 0};
    nd_array *ia = nd_from_host(ai, ND_INT32, 1, &n4), *fv = nd_from_host(v2, ND_FLOAT32, 2, s2);
    nd_array *p = nd_searchsorted(ia, fv, ND_SIDE_RIGHT), *w = nd_scalar(3.0);
    nd_array *pw = nd_searchsorted(ia, w, ND_SIDE_LEFT);
    int64_t gp[4];
    cr_assert(p && pw, "%s", nd_last_error());
    nd_to_host(p, gp, sizeof gp);
    cr_expect(nd_ndim(p) == 2 && gp[0] == 3 && gp[1] == 1 && gp[2] == 4 && gp[3] == 0, "%lld %lld %lld %lld",
              (long long)gp[0], (long long)gp[1], (long long)gp[2], (long long)gp[3]);
    cr_expect(nd_ndim(pw) == 0 && nd_item(pw) == 1);
    /* a strided a (a view) */
    nd_array *rev = nd_view(ia, "::2");
    nd_array *pr = nd_searchsorted(rev, w, ND_SIDE_RIGHT);
    cr_expect(pr && nd_item(pr) == 2, "[1, 3] right of 3");
    /* errors */
    cr_expect_null(nd_searchsorted(fv, w, ND_SIDE_LEFT));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_searchsorted");
    cr_expect_null(nd_searchsorted(ia, w, (nd_side)7));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_searchsorted");
    cr_expect_null(nd_searchsorted(NULL, w, ND_SIDE_LEFT));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_searchsorted");
    nd_free(aa); nd_free(vv); nd_free(l); nd_free(r); nd_free(ia); nd_free(fv); nd_free(p); nd_free(w);
    nd_free(pw); nd_free(rev); nd_free(pr);
}

NDT_TEST(sorting, searchsorted_every_dtype) {
    /* a sorted with nd_sort, v random with NaNs and zeros; the reference
     * insertion points by plain comparisons */
    NDT_RNG(r);
    for (int t = 0; t < NDT_NUM_DTYPES; t++) {
        int64_t na = 100, vs[2] = {7, 9};
        ref_arr *x = ndt_rand_small(&r, ndt_all_dtypes[t], 1, &na), *v = ndt_rand_small(&r, ndt_all_dtypes[t], 2, vs);
        sref_specials(&r, x);
        sref_specials(&r, v);
        nd_array *xa = ndt_upload(x), *sa = nd_sort(xa, 0), *va = ndt_upload(v);
        ref_arr *sorted = ndt_download(sa);
        for (int side = 0; side < 2; side++) {
            nd_array *g = nd_searchsorted(sa, va, side ? ND_SIDE_RIGHT : ND_SIDE_LEFT);
            cr_assert(g, "%s", nd_last_error());
            ref_arr *gr = ndt_download(g);
            cr_assert(gr->ndim == 2 && gr->shape[1] == 9);
            /* a joint array: sorted values then v's, compared by sref_cmp */
            int64_t nj = na + v->size;
            ref_arr *joint = ref_new(x->dt, 1, &nj);
            memcpy(joint->data, sorted->data, (size_t)na * ref_itemsize(x->dt));
            memcpy(joint->data + (size_t)na * ref_itemsize(x->dt), v->data, (size_t)v->size * ref_itemsize(x->dt));
            for (int64_t i = 0; i < v->size; i++) {
                int64_t want = 0;
                while (want < na && (side ? sref_cmp(joint, want, na + i) <= 0 : sref_cmp(joint, want, na + i) < 0))
                    want++;
                cr_expect_eq((int64_t)ref_getu(gr, i), want, "%s side %d v[%lld]: %lld, want %lld",
                             ref_dtype_name(x->dt), side, (long long)i, (long long)ref_getu(gr, i), (long long)want);
            }
            ref_free(joint);
            ref_free(gr);
            nd_free(g);
        }
        nd_free(xa); nd_free(sa); nd_free(va);
        ref_free(x); ref_free(v); ref_free(sorted);
    }
}

NDT_TEST(sorting, unique) {
    /* np.unique([3, nan, -0., 1, 0., 3, -nan, 1, 1], return_index, return_inverse, return_counts) */
    double v[] = {3, NAN, -0.0, 1, 0.0, 3, -NAN, 1, 1};
    int64_t n = 9, s33[2] = {3, 3};
    nd_array *a = nd_from_host(v, ND_FLOAT64, 2, s33);
    nd_unique_result u;
    cr_assert_eq(nd_unique_all(a, ND_UNIQUE_INDEX | ND_UNIQUE_INVERSE | ND_UNIQUE_COUNTS, &u), ND_OK, "%s",
                 nd_last_error());
    double gv[4];
    int64_t gi[4], gc[4], ginv[9];
    cr_assert(nd_size(u.values) == 4 && nd_size(u.index) == 4 && nd_size(u.counts) == 4);
    cr_assert(nd_ndim(u.inverse) == 2 && nd_size(u.inverse) == 9, "inverse has a's shape (NumPy 2)");
    nd_to_host(u.values, gv, sizeof gv);
    nd_to_host(u.index, gi, sizeof gi);
    nd_to_host(u.counts, gc, sizeof gc);
    nd_to_host(u.inverse, ginv, sizeof ginv);
    cr_expect(gv[0] == 0 && signbit(gv[0]) && gv[1] == 1 && gv[2] == 3 && isnan(gv[3]), "values -0, 1, 3, nan");
    int64_t wi[] = {2, 3, 0, 1}, wc[] = {2, 3, 2, 2}, winv[] = {2, 3, 0, 1, 0, 2, 3, 1, 1};
    for (int k = 0; k < 4; k++) cr_expect(gi[k] == wi[k] && gc[k] == wc[k], "index/counts [%d]", k);
    for (int k = 0; k < 9; k++) cr_expect_eq(ginv[k], winv[k], "inverse[%d]", k);
    (void)n;
    nd_free(u.values); nd_free(u.index); nd_free(u.inverse); nd_free(u.counts);
    /* every dtype, against a reference count of distinct values */
    NDT_RNG(r);
    for (int t = 0; t < NDT_NUM_DTYPES; t++) {
        int64_t shape[1] = {200};
        ref_arr *x = ndt_rand_small(&r, ndt_all_dtypes[t], 1, shape);
        nd_array *xa = ndt_upload(x);
        nd_array *uv = nd_unique(xa);
        cr_assert(uv, "%s", nd_last_error());
        ref_arr *g = ndt_download(uv);
        int64_t pos[200];
        for (int k = 0; k < 200; k++) pos[k] = k;
        sref_sort(x, pos, 200);
        int64_t distinct = 1;
        for (int k = 1; k < 200; k++) distinct += sref_cmp(x, pos[k - 1], pos[k]) != 0;
        cr_expect_eq(g->size, distinct, "%s: %lld distinct, got %lld", ref_dtype_name(x->dt), (long long)distinct,
                     (long long)g->size);
        for (int64_t k = 1; k < g->size; k++) cr_expect(sref_cmp(g, k - 1, k) < 0, "strictly increasing");
        ref_free(x); ref_free(g); nd_free(xa); nd_free(uv);
    }
    /* empty and 0-d */
    int64_t zero = 0;
    nd_array *e = nd_zeros(ND_INT32, 1, &zero), *z = nd_full(ND_INT16, 0, NULL, 4);
    nd_unique_result ue, uz;
    cr_assert_eq(nd_unique_all(e, ND_UNIQUE_COUNTS, &ue), ND_OK, "%s", nd_last_error());
    cr_expect(nd_size(ue.values) == 0 && nd_size(ue.counts) == 0 && !ue.index && !ue.inverse);
    cr_assert_eq(nd_unique_all(z, ND_UNIQUE_INVERSE, &uz), ND_OK, "%s", nd_last_error());
    cr_expect(nd_size(uz.values) == 1 && nd_ndim(uz.inverse) == 0 && nd_item(uz.inverse) == 0);
    /* errors */
    nd_unique_result ub;
    cr_expect_eq(nd_unique_all(a, 8, &ub), ND_ERR_ARG);
    cr_expect(!ub.values);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_unique_all");
    cr_expect_eq(nd_unique_all(a, 0, NULL), ND_ERR_ARG);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_unique_all");
    cr_expect_null(nd_unique(NULL));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_unique");
    nd_free(ue.values); nd_free(ue.counts); nd_free(uz.values); nd_free(uz.inverse);
    nd_free(a); nd_free(e); nd_free(z);
}

NDT_TEST(sorting, isin) {
    /* np.isin([nan, 0., -0., 1, 2.5, 7], [[nan, 0.], [7, 3]]) */
    double e[] = {NAN, 0.0, -0.0, 1, 2.5, 7};
    int32_t t[] = {0, 7, 3, 0};
    int64_t n = 6, s22[2] = {2, 2};
    nd_array *ea = nd_from_host(e, ND_FLOAT64, 1, &n), *ta = nd_from_host(t, ND_INT32, 2, s22);
    nd_array *r = nd_isin(ea, ta);
    cr_assert(r, "%s", nd_last_error());
    ndt_expect_bools(r, "011001", "isin");
    double tn[] = {NAN, 1};
    int64_t two = 2;
    nd_array *tna = nd_from_host(tn, ND_FLOAT64, 1, &two), *rn = nd_isin(ea, tna);
    ndt_expect_bools(rn, "000100", "NaN is in nothing");
    int64_t zero = 0;
    nd_array *empty = nd_zeros(ND_FLOAT32, 1, &zero), *re = nd_isin(ea, empty);
    ndt_expect_bools(re, "000000", "empty test set");
    cr_expect_null(nd_isin(ea, NULL));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_isin");
    nd_free(ea); nd_free(ta); nd_free(r); nd_free(tna); nd_free(rn); nd_free(empty); nd_free(re);
}

NDT_TEST(sorting, digitize) {
    /* np.digitize([-1, 0, 1, 1.5, 2, 3, nan], [0, 1, 2], right) and decreasing bins [2, 1, 0] */
    double x[] = {-1, 0, 1, 1.5, 2, 3, NAN};
    double inc[] = {0, 1, 2}, dec[] = {2, 1, 0};
    int64_t nx = 7, nb = 3;
    int64_t want[4][7] = {{0, 1, 2, 2, 3, 3, 3}, {0, 0, 1, 2, 2, 3, 3}, {3, 2, 1, 1, 0, 0, 0}, {3, 3, 2, 1, 1, 0, 0}};
    nd_array *xa = nd_from_host(x, ND_FLOAT64, 1, &nx);
    nd_array *bi = nd_from_host(inc, ND_FLOAT64, 1, &nb), *bd = nd_from_host(dec, ND_FLOAT64, 1, &nb);
    for (int c = 0; c < 4; c++) {
        nd_array *d = nd_digitize(xa, c < 2 ? bi : bd, c % 2);
        cr_assert(d, "%s", nd_last_error());
        int64_t got[7];
        nd_to_host(d, got, sizeof got);
        for (int k = 0; k < 7; k++)
            cr_expect_eq(got[k], want[c][k], "case %d [%d]: %lld, NumPy %lld", c, k, (long long)got[k],
                         (long long)want[c][k]);
        nd_free(d);
    }
    double bad[] = {0, 2, 1};
    nd_array *bb = nd_from_host(bad, ND_FLOAT64, 1, &nb);
    cr_expect_null(nd_digitize(xa, bb, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_digitize");
    int64_t s2[2] = {1, 3};
    nd_array *b2 = nd_reshape(bi, 2, s2);
    cr_expect_null(nd_digitize(xa, b2, 0));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_digitize");
    nd_free(xa); nd_free(bi); nd_free(bd); nd_free(bb); nd_free(b2);
}

NDT_TEST(sorting, bad_arguments) {
    int64_t shape[2] = {2, 3};
    nd_array *a = nd_zeros(ND_FLOAT32, 2, shape);
    cr_expect_null(nd_sort(NULL, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_sort");
    cr_expect_null(nd_sort(a, 2));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_sort");
    cr_expect_null(nd_argsort(a, -3));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_argsort");
    nd_free(a);
}
