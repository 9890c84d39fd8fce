/* NumPy basic indexing from a string: "1:-1, ::2, 3, ..., None".
 *
 * Grammar: items separated by commas (one trailing comma allowed, as in
 * a[1,]); an item is "...", "None", an integer, or a slice
 * [start]:[stop][:[step]] with optional signs and surrounding spaces. The
 * slice rules are CPython's PySlice_AdjustIndices, so negative steps and
 * out-of-range bounds behave exactly as NumPy. */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/frontend.h"

typedef enum { ITEM_INT, ITEM_SLICE, ITEM_ELLIPSIS, ITEM_NEWAXIS } item_kind;

typedef struct {
    item_kind kind;
    int has[3];     /* slice: start/stop/step given */
    int64_t v[3];   /* int: v[0]; slice: start, stop, step */
    int pos;        /* character position, for messages */
} index_item;

#define MAX_ITEMS 64

static int index_error(const char *fn, const char *index, int pos, const char *what) {
    nd_error_set(ND_ERR_INDEX, "%s: index \"%s\" is malformed at position %d: %s (items are "
                 "integers, slices start:stop:step, \"...\" or \"None\", separated by commas)",
                 fn, index, pos, what);
    return -1;
}

/* Parses an optional integer in [p, end) (spaces trimmed). */
static int parse_int(const char *fn, const char *index, const char *p, const char *end,
                     int *has, int64_t *v) {
    while (p < end && isspace((unsigned char)*p)) p++;
    while (end > p && isspace((unsigned char)end[-1])) end--;
    *has = 0;
    if (p == end) return 0;
    const char *q = p;
    if (*q == '+' || *q == '-') q++;
    if (q == end) return index_error(fn, index, (int)(p - index), "a sign without digits");
    for (const char *c = q; c < end; c++)
        if (!isdigit((unsigned char)*c))
            return index_error(fn, index, (int)(c - index), "expected an integer");
    char buf[32];
    if (end - p >= (ptrdiff_t)sizeof buf)
        return index_error(fn, index, (int)(p - index), "integer too large");
    memcpy(buf, p, (size_t)(end - p));
    buf[end - p] = '\0';
    errno = 0;
    long long x = strtoll(buf, NULL, 10);
    if (errno) return index_error(fn, index, (int)(p - index), "integer too large");
    *has = 1;
    *v = x;
    return 0;
}

static int parse_item(const char *fn, const char *index, const char *p, const char *end,
                      index_item *it) {
    const char *b = p, *e = end;
    while (b < e && isspace((unsigned char)*b)) b++;
    while (e > b && isspace((unsigned char)e[-1])) e--;
    it->pos = (int)(b - index);
    if (b == e) return index_error(fn, index, it->pos, "an empty item");
    if (e - b == 3 && !memcmp(b, "...", 3)) {
        it->kind = ITEM_ELLIPSIS;
        return 0;
    }
    if (e - b == 4 && !memcmp(b, "None", 4)) {
        it->kind = ITEM_NEWAXIS;
        return 0;
    }
    const char *colon[2];
    int nc = 0;
    for (const char *c = b; c < e; c++)
        if (*c == ':') {
            if (nc == 2) return index_error(fn, index, (int)(c - index), "a slice has at most "
                                            "two colons");
            colon[nc++] = c;
        }
    if (nc == 0) {
        it->kind = ITEM_INT;
        return parse_int(fn, index, b, e, &it->has[0], &it->v[0]);
    }
    it->kind = ITEM_SLICE;
    const char *s0 = b, *e0 = colon[0], *s1 = colon[0] + 1, *e1 = nc == 2 ? colon[1] : e;
    if (parse_int(fn, index, s0, e0, &it->has[0], &it->v[0]) ||
        parse_int(fn, index, s1, e1, &it->has[1], &it->v[1]))
        return -1;
    it->has[2] = 0;
    if (nc == 2 && parse_int(fn, index, colon[1] + 1, e, &it->has[2], &it->v[2])) return -1;
    if (it->has[2] && it->v[2] == 0)
        return index_error(fn, index, it->pos, "slice step cannot be zero");
    if (it->has[2] && it->v[2] == INT64_MIN)
        return index_error(fn, index, it->pos, "slice step too large");
    return 0;
}

/* PySlice_AdjustIndices: (start, step, length) of a slice over n. */
static void adjust_slice(const index_item *it, int64_t n, int64_t *start, int64_t *step,
                         int64_t *len) {
    int64_t st = it->has[2] ? it->v[2] : 1, lo, hi;
    if (st > 0) {
        lo = it->has[0] ? it->v[0] : 0;
        hi = it->has[1] ? it->v[1] : n;
        if (lo < 0) { lo += n; if (lo < 0) lo = 0; } else if (lo > n) lo = n;
        if (hi < 0) { hi += n; if (hi < 0) hi = 0; } else if (hi > n) hi = n;
        *len = hi > lo ? (hi - lo - 1) / st + 1 : 0;
    } else {
        lo = it->has[0] ? it->v[0] : n - 1;
        hi = it->has[1] ? it->v[1] : -1;
        if (it->has[0]) {
            if (lo < 0) { lo += n; if (lo < 0) lo = -1; } else if (lo >= n) lo = n - 1;
        }
        if (it->has[1]) {
            if (hi < 0) { hi += n; if (hi < 0) hi = -1; } else if (hi >= n) hi = n - 1;
        }
        *len = lo > hi ? (lo - hi - 1) / (-st) + 1 : 0;
    }
    *start = lo;
    *step = st;
}

/* Items of `index`; -1 (error set) if malformed. */
static int parse_items(const char *fn, const char *index, index_item *items) {
    int n = 0;
    const char *p = index;
    /* An all-blank string is the empty index: the whole array. */
    const char *q = index;
    while (*q && isspace((unsigned char)*q)) q++;
    if (*q) {
        for (;;) {
            const char *c = strchr(p, ',');
            const char *end = c ? c : p + strlen(p);
            if (n == MAX_ITEMS) return index_error(fn, index, (int)(p - index), "too many items");
            if (parse_item(fn, index, p, end, &items[n])) return -1;
            n++;
            if (!c) break;
            p = c + 1;
            /* One trailing comma is allowed, as in Python's a[1,]. */
            const char *r = p;
            while (*r && isspace((unsigned char)*r)) r++;
            if (!*r) break;
        }
    }
    return n;
}

/* Parsed index strings, by content. A loop views the same few strings
 * over and over (a stencil sweep: five), and parsing was most of a view's
 * cost: 146 ns a view, 37 of the 59 us it took to record 50 sweeps of the
 * 1000x1000 stencil. Direct-mapped on a hash of the text, per thread (no
 * locks), short strings of few items only; a string that failed to parse
 * is never stored, so its error is reported every time. */
#define PARSED_SLOTS 16
#define PARSED_TEXT 48
#define PARSED_ITEMS 8

typedef struct {
    uint32_t len; /* 0: empty slot */
    int n;
    char text[PARSED_TEXT];
    index_item items[PARSED_ITEMS];
} parsed_index;

static _Thread_local parsed_index parsed[PARSED_SLOTS];

static int cached_items(const char *fn, const char *index, index_item *items, const index_item **use) {
    uint32_t h = 2166136261u, len = 0;
    for (const char *c = index; *c && len < PARSED_TEXT; c++, len++) h = (h ^ (unsigned char)*c) * 16777619u;
    parsed_index *slot = index[len] == '\0' && len > 0 ? &parsed[h % PARSED_SLOTS] : NULL;
    if (slot && slot->len == len && memcmp(slot->text, index, len) == 0) {
        *use = slot->items;
        return slot->n;
    }
    int n = parse_items(fn, index, items);
    *use = items;
    if (slot && n >= 0 && n <= PARSED_ITEMS) {
        slot->len = len;
        slot->n = n;
        memcpy(slot->text, index, len);
        memcpy(slot->items, items, sizeof *items * (size_t)n);
    }
    return n;
}

int nd_index_apply(const char *fn, const char *index, int ndim, const int64_t *shape,
                   const int64_t *strides, int64_t offset, int *out_ndim, int64_t *out_shape,
                   int64_t *out_strides, int64_t *out_offset) {
    index_item parsed_now[MAX_ITEMS];
    const index_item *items;
    int n = cached_items(fn, index, parsed_now, &items);
    if (n < 0) return -1;
    int consumed = 0, ellipsis = -1;
    for (int i = 0; i < n; i++) {
        if (items[i].kind == ITEM_INT || items[i].kind == ITEM_SLICE) consumed++;
        else if (items[i].kind == ITEM_ELLIPSIS) {
            if (ellipsis >= 0)
                return index_error(fn, index, items[i].pos, "an index can only have a single "
                                   "ellipsis (\"...\")");
            ellipsis = i;
        }
    }
    if (consumed > ndim) {
        nd_error_set(ND_ERR_INDEX, "%s: too many indices in \"%s\": the array is %d-dimensional "
                     "but %d were indexed (drop some, or view a higher-dimensional array)",
                     fn, index, ndim, consumed);
        return -1;
    }
    int nd = 0, axis = 0;
    int64_t off = offset;
    for (int i = 0; i <= n; i++) {
        /* The implicit trailing ellipsis runs at i == n when none was given. */
        int expand = (i < n && items[i].kind == ITEM_ELLIPSIS) || (i == n && ellipsis < 0);
        if (expand) {
            int count = ndim - consumed;
            for (int k = 0; k < count; k++, axis++) {
                if (nd == ND_MAX_DIMS) goto too_many_dims;
                out_shape[nd] = shape[axis];
                out_strides[nd++] = strides[axis];
            }
            consumed = ndim; /* the ellipsis (explicit or not) expands once */
            continue;
        }
        if (i == n) break;
        const index_item *it = &items[i];
        if (it->kind == ITEM_NEWAXIS) {
            if (nd == ND_MAX_DIMS) goto too_many_dims;
            out_shape[nd] = 1;
            out_strides[nd++] = 0;
        } else if (it->kind == ITEM_INT) {
            if (!it->has[0]) return index_error(fn, index, it->pos, "an empty item");
            int64_t v = it->v[0], len = shape[axis];
            if (v < -len || v >= len) {
                nd_error_set(ND_ERR_INDEX, "%s: index %lld in \"%s\" is out of bounds for axis "
                             "%d with size %lld (use %lld..%lld)",
                             fn, (long long)v, index, axis, (long long)len, (long long)-len,
                             (long long)len - 1);
                return -1;
            }
            if (v < 0) v += len;
            off += v * strides[axis];
            axis++;
        } else {
            int64_t start, step, len;
            adjust_slice(it, shape[axis], &start, &step, &len);
            if (nd == ND_MAX_DIMS) goto too_many_dims;
            if (len > 0) off += start * strides[axis];
            out_shape[nd] = len;
            out_strides[nd++] = len > 1 ? strides[axis] * step : strides[axis];
            axis++;
        }
    }
    *out_ndim = nd;
    *out_offset = off;
    return 0;
too_many_dims:
    nd_error_set(ND_ERR_INDEX, "%s: index \"%s\" makes more than %d dimensions (use fewer "
                 "\"None\" items)", fn, index, ND_MAX_DIMS);
    return -1;
}
