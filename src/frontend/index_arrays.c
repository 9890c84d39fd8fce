/* NumPy's advanced indexing with several index arrays (include/nd/indexing.h):
 * nd_view's index strings where "$k" names arrays[k]. The basic part of
 * the string (slices, integers, None, ...) becomes a view, each "$k" a ':'
 * in it whose axis arrays[k] then indexes; integers count as index arrays
 * once any array is present (NumPy's rule), which decides where the
 * broadcast index axes go: in place of the indexed axes when those are
 * adjacent, first otherwise. */
#include <ctype.h>
#include <stdlib.h>

#include "frontend/indexing_internal.h"

enum { TOK_SLICE, TOK_INT, TOK_NONE, TOK_ELLIPSIS, TOK_ARRAY };

typedef struct {
    int kind;
    int64_t value; /* TOK_INT: the integer; TOK_ARRAY: k */
} token;

/* Splits the index string into tokens and writes its basic form (each
 * "$k", and each integer when arrays are present, as ':') into basic. */
static int parse(const char *fn, const char *index, int n_arrays, token *tok, int *n_tok, char *basic, size_t cap) {
    int n = 0, arrays = 0;
    const char *p = index;
    while (1) {
        while (isspace((unsigned char)*p)) p++;
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        while (len && isspace((unsigned char)p[len - 1])) len--;
        if (n == ND_MAX_DIMS * 2)
            return nd_error_set(ND_ERR_INDEX, "%s: too many indices in \"%s\"", fn, index), 1;
        token *t = &tok[n++];
        if (len && p[0] == '$') {
            char *e;
            long k = strtol(p + 1, &e, 10);
            if (e != p + len || e == p + 1 || k < 0 || k >= n_arrays)
                return nd_error_set(ND_ERR_INDEX, "%s: \"%.*s\" in \"%s\" names no array (use $0..$%d for the %d "
                                    "arrays passed)", fn, (int)len, p, index, n_arrays - 1, n_arrays), 1;
            t->kind = TOK_ARRAY;
            t->value = k;
            arrays++;
        } else if (len == 3 && !strncmp(p, "...", 3)) {
            t->kind = TOK_ELLIPSIS;
        } else if (len == 4 && !strncmp(p, "None", 4)) {
            t->kind = TOK_NONE;
        } else if (memchr(p, ':', len) || len == 0) {
            t->kind = TOK_SLICE;
        } else {
            char *e;
            t->kind = TOK_INT;
            t->value = strtoll(p, &e, 10);
            if (e != p + len) t->kind = TOK_SLICE; /* let nd_view's parser report it */
        }
        if (!end) break;
        p = end + 1;
    }
    *n_tok = n;
    size_t used = 0;
    basic[0] = 0;
    p = index;
    for (int i = 0; i < n; i++) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        int as_colon = tok[i].kind == TOK_ARRAY || (arrays && tok[i].kind == TOK_INT);
        int w = snprintf(basic + used, cap - used, "%s%.*s", i ? "," : "", as_colon ? 1 : (int)len, as_colon ? ":" : p);
        if (w < 0 || (size_t)w >= cap - used) return nd_error_set(ND_ERR_INDEX, "%s: index \"%s\" is too long", fn, index), 1;
        used += (size_t)w;
        p = end ? end + 1 : p + len;
    }
    return 0;
}

/* The view of a[basic] and the advanced index over its axes; *plain: no
 * arrays (the view is the answer). held[] take what adv points to. */
static nd_array *resolve(const char *fn, nd_array *a, const char *index, int n_arrays, nd_array *const *arrays,
                         nd_fe_adv_index *adv, nd_array **held, int *n_held, int *plain) {
    if (!index) return nd_error_set(ND_ERR_ARG, "%s: index is NULL", fn), NULL;
    if (n_arrays < 0 || (n_arrays > 0 && !arrays))
        return nd_error_set(ND_ERR_ARG, "%s: %d arrays passed as %s", fn, n_arrays, arrays ? "a count" : "NULL"), NULL;
    for (int k = 0; k < n_arrays; k++) {
        char name[24];
        snprintf(name, sizeof name, "arrays[%d]", k);
        if (nd_fe_arg(fn, name, arrays[k])) return NULL;
    }
    token tok[ND_MAX_DIMS * 2];
    int n_tok;
    char basic[512];
    if (parse(fn, index, n_arrays, tok, &n_tok, basic, sizeof basic)) return NULL;
    int consumed = 0, any = 0;
    for (int i = 0; i < n_tok; i++) {
        consumed += tok[i].kind == TOK_SLICE || tok[i].kind == TOK_INT || tok[i].kind == TOK_ARRAY;
        any |= tok[i].kind == TOK_ARRAY;
    }
    nd_array *view = nd_fe_view_index(fn, a, basic);
    if (!view) return NULL;
    *plain = !any;
    if (!any) return view;
    memset(adv, 0, sizeof *adv);
    int out_axis = 0, first = -1, last = -1, adjacent = 1, failed = 0;
    for (int i = 0; i < n_tok && !failed; i++) {
        int kind = tok[i].kind;
        if (kind == TOK_ELLIPSIS) {
            out_axis += a->ndim - consumed;
            continue;
        }
        if (kind == TOK_ARRAY || kind == TOK_INT) {
            nd_array *x = kind == TOK_ARRAY ? arrays[tok[i].value]
                                            : (held[(*n_held)++] = nd_fe_full(fn, ND_INT64, 0, NULL,
                                                                              (nd_scalar_bits){.i = tok[i].value}));
            if (x && x->dtype == ND_BOOL && !x->weak) {
                if (x->ndim != 1) {
                    nd_error_set(ND_ERR_INDEX, "%s: a %d-d bool array in an index string is not supported; select with "
                                 "nd_mask_select", fn, x->ndim);
                    x = NULL;
                } else {
                    /* A 1-d mask is its nonzero positions (synchronises). */
                    x = held[(*n_held)++] = nd_fe_flatnonzero(fn, x);
                }
            }
            if (!x) {
                failed = 1;
                break;
            }
            if (last >= 0 && last != i - 1) adjacent = 0;
            if (first < 0) first = out_axis;
            last = i;
            adv->axes[adv->K] = out_axis;
            adv->idx[adv->K++] = x;
        }
        out_axis++;
    }
    if (failed) {
        nd_fe_release(view);
        return NULL;
    }
    adv->pos = adjacent ? first : 0;
    return view;
}

nd_array *nd_index(nd_array *a, const char *index, int n_arrays, nd_array *const *arrays) {
    ND_API_GUARD();
    const char *fn = "nd_index";
    if (nd_fe_arg(fn, "a", a) || nd_runtime_ensure() != ND_OK) return NULL;
    nd_fe_adv_index adv;
    nd_array *held[ND_MAX_DIMS * 2] = {0}, *r = NULL;
    int n_held = 0, plain = 0;
    nd_array *view = resolve(fn, a, index, n_arrays, arrays, &adv, held, &n_held, &plain);
    if (view && plain) return nd_runtime_track(view);
    if (view) {
        nd_fe_gather_geom g;
        if (!nd_fe_adv_geom(fn, view, &adv, &g)) {
            r = nd_fe_gather(fn, ND_INDEX_FN_INDEX, &g);
            nd_fe_geom_release(&g);
        }
    }
    nd_fe_release(view);
    for (int i = 0; i < n_held; i++) nd_fe_release(held[i]);
    return nd_runtime_track(r);
}

/* a[index] = values (ND_SCATTER_ASSIGN) or np.add.at(a, index, values)
 * (ND_SCATTER_ADD). Without arrays the index is basic: its view is
 * written (no element is named twice, so adding is one lazy map). */
static nd_status scatter_index(const char *fn, int fn_id, int mode, nd_array *a, const char *index, int n_arrays,
                               nd_array *const *arrays, nd_array *values) {
    if (nd_fe_arg(fn, "a", a) || nd_fe_arg(fn, "values", values)) return nd_last_status();
    nd_status s = nd_runtime_ensure();
    if (s == ND_OK) s = nd_fe_check_dst(fn, a);
    if (s != ND_OK) return s;
    nd_fe_adv_index adv;
    nd_array *held[ND_MAX_DIMS * 2] = {0};
    int n_held = 0, plain = 0;
    nd_array *view = resolve(fn, a, index, n_arrays, arrays, &adv, held, &n_held, &plain);
    if (!view) {
        s = nd_last_status();
    } else if (plain && mode == ND_SCATTER_ASSIGN) {
        s = nd_fe_store(fn, view, values);
    } else if (plain) {
        /* The values in a's dtype first, as the scatter adds them. */
        nd_array *v = values->dtype == view->dtype && !values->weak ? nd_retain(values)
                                                                    : nd_fe_astype(fn, values, view->dtype);
        nd_array *sum = v ? nd_fe_binary(fn, ND_OP_ADD, view, v) : NULL;
        s = sum ? nd_fe_store(fn, view, sum) : nd_last_status();
        nd_fe_release(sum);
        nd_fe_release(v);
    } else {
        nd_fe_gather_geom g;
        if (nd_fe_adv_geom(fn, view, &adv, &g)) s = nd_last_status();
        else {
            s = nd_fe_scatter(fn, fn_id, mode, &g, values);
            nd_fe_geom_release(&g);
        }
    }
    nd_fe_release(view);
    for (int i = 0; i < n_held; i++) nd_fe_release(held[i]);
    return s;
}

nd_status nd_index_assign(nd_array *a, const char *index, int n_arrays, nd_array *const *arrays, nd_array *values) {
    ND_API_GUARD();
    return scatter_index("nd_index_assign", ND_INDEX_FN_INDEX_ASSIGN, ND_SCATTER_ASSIGN, a, index, n_arrays, arrays,
                         values);
}

nd_status nd_add_at_index(nd_array *a, const char *index, int n_arrays, nd_array *const *arrays, nd_array *values) {
    ND_API_GUARD();
    return scatter_index("nd_add_at_index", ND_INDEX_FN_ADD_AT_INDEX, ND_SCATTER_ADD, a, index, n_arrays, arrays,
                         values);
}
