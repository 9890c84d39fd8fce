/* nd_print and nd_to_string: NumPy 2's repr of an array with its default
 * print options (precision 8, floatmode 'maxprec', threshold 1000,
 * edgeitems 3, linewidth 75), following numpy/_core/arrayprint.py:
 * FloatingFormat, IntegerFormat and BoolFormat choose one width for every
 * element shown, _formatArray nests brackets and wraps rows, and
 * _array_repr_implementation adds the shape and dtype extras.
 *
 * Only the elements shown are read: a summarised axis (past 1000 elements
 * in all, more than 6 along it) is cut to its 3 leading and 3 trailing
 * items with views and a concatenate before the copy to the host. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/dtype.h"
#include "common/strbuf.h"
#include "frontend/frontend.h"

#define PR_THRESHOLD 1000
#define PR_EDGE 3
#define PR_LINEWIDTH 75
#define PR_PRECISION 8

typedef nd_strbuf sbuf;
static void sb_put(sbuf *b, const char *s, size_t n) { nd_strbuf_printf(b, "%.*s", (int)n, s); }
static void sb_str(sbuf *b, const char *s) { nd_strbuf_printf(b, "%s", s); }
static void sb_spaces(sbuf *b, int n) {
    if (n > 0) nd_strbuf_printf(b, "%*s", n, "");
}

/* ---- Floats: Dragon4's "unique, at most 8 digits" output ----------------- */

/* Does the decimal text s read back as exactly the element x of dtype t? */
static int round_trips(const char *s, double x, nd_dtype t) {
    switch (t) {
    case ND_FLOAT64: return strtod(s, NULL) == x;
    case ND_FLOAT32: return strtof(s, NULL) == (float)x;
    case ND_FLOAT16: return nd_float_to_half(strtof(s, NULL)) == nd_float_to_half((float)x);
    default: return nd_float_to_bf16(strtof(s, NULL)) == nd_float_to_bf16((float)x);
    }
}

/* The digits of finite x >= 0 as d.ddd x 10^exp: the fewest significant
 * digits that read back as x in its dtype. */
typedef struct {
    char dig[32];
    int n, exp;
} decimal;

static void from_e_format(const char *s, decimal *d) {
    d->n = 0;
    for (; *s && *s != 'e'; s++)
        if (*s >= '0' && *s <= '9') d->dig[d->n++] = *s;
    d->exp = *s == 'e' ? atoi(s + 1) : 0;
    while (d->n > 1 && d->dig[d->n - 1] == '0') d->n--;
    d->dig[d->n] = '\0';
}

static void shortest(double x, nd_dtype t, decimal *d) {
    char s[64];
    for (int p = 1; p <= 17; p++) {
        snprintf(s, sizeof s, "%.*e", p - 1, x);
        if (round_trips(s, x, t)) break;
    }
    from_e_format(s, d);
}

typedef struct {
    char ip[420]; /* integer part with sign */
    char fp[420]; /* fraction digits */
    char ex[16];  /* exponent digits (scientific) */
    int exneg;
} fparts;

/* Positional: the unique digits, or x rounded to 8 fraction digits when the
 * unique ones are more; trailing zeros dropped. */
static void positional(double x, nd_dtype t, int plus, fparts *o) {
    decimal d;
    double ax = fabs(x);
    shortest(ax, t, &d);
    const char *sign = signbit(x) ? "-" : plus ? "+" : "";
    int frac = d.n - 1 - d.exp;
    if (frac > PR_PRECISION) {
        char s[400];
        snprintf(s, sizeof s, "%.*f", PR_PRECISION, ax);
        char *dot = strchr(s, '.');
        *dot = '\0';
        snprintf(o->ip, sizeof o->ip, "%s%s", sign, s);
        snprintf(o->fp, sizeof o->fp, "%s", dot + 1);
    } else if (d.exp >= 0) {
        int k = snprintf(o->ip, sizeof o->ip, "%s", sign);
        for (int i = 0; i <= d.exp; i++) o->ip[k++] = i < d.n ? d.dig[i] : '0';
        o->ip[k] = '\0';
        snprintf(o->fp, sizeof o->fp, "%s", d.n > d.exp + 1 ? d.dig + d.exp + 1 : "");
    } else {
        snprintf(o->ip, sizeof o->ip, "%s0", sign);
        int k = 0;
        for (int i = 0; i < -d.exp - 1; i++) o->fp[k++] = '0';
        snprintf(o->fp + k, sizeof o->fp - (size_t)k, "%s", d.dig);
    }
    size_t n = strlen(o->fp);
    while (n > 0 && o->fp[n - 1] == '0') o->fp[--n] = '\0';
}

/* Scientific: d.ddd with at most 8 fraction digits, exponent digits apart. */
static void scientific(double x, nd_dtype t, int plus, fparts *o) {
    decimal d;
    double ax = fabs(x);
    shortest(ax, t, &d);
    if (d.n - 1 > PR_PRECISION) {
        char s[64];
        snprintf(s, sizeof s, "%.*e", PR_PRECISION, ax);
        from_e_format(s, &d);
    }
    snprintf(o->ip, sizeof o->ip, "%s%c", signbit(x) ? "-" : plus ? "+" : "", d.dig[0]);
    snprintf(o->fp, sizeof o->fp, "%s", d.dig + 1);
    o->exneg = d.exp < 0;
    snprintf(o->ex, sizeof o->ex, "%02d", abs(d.exp));
}

/* FloatingFormat's choices for the elements shown. plus: sign='+' (the
 * imaginary parts of a complex: ComplexFloatingFormat). */
typedef struct {
    int exp_format, pad_left, pad_right, precision, exp_size, plus;
} ffmt;

/* A threshold as a value of dtype t (NumPy compares a float16/float32
 * maximum with the Python float 1e8 in the array's own dtype). */
static double in_dtype(double v, nd_dtype t) {
    switch (t) {
    case ND_FLOAT32: return (float)v;
    case ND_FLOAT16: return nd_half_to_float(nd_float_to_half((float)v));
    case ND_BFLOAT16: return nd_bf16_to_float(nd_float_to_bf16((float)v));
    default: return v;
    }
}

static void float_fill(ffmt *f, const double *v, int64_t n, nd_dtype t, int plus) {
    memset(f, 0, sizeof *f);
    f->plus = plus;
    double mx = 0, mn = INFINITY;
    int64_t finite = 0, nonzero = 0;
    int neginf = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(v[i])) {
            if (isinf(v[i]) && v[i] < 0) neginf = 1;
            continue;
        }
        finite++;
        double a = fabs(v[i]);
        if (a == 0) continue;
        nonzero++;
        if (a > mx) mx = a;
        if (a < mn) mn = a;
    }
    if (nonzero) {
        double ratio = in_dtype(mx / mn, t); /* overflows to inf as NumPy's division does */
        if (mx >= in_dtype(1e8, t) || mn < in_dtype(1e-4, t) || ratio > 1000.) f->exp_format = 1;
    }
    fparts p;
    if (finite == 0) {
        f->pad_left = f->pad_right = 0;
    } else if (f->exp_format) {
        int ilen = 0, flen = 0, elen = 0;
        for (int64_t i = 0; i < n; i++) {
            if (!isfinite(v[i])) continue;
            scientific(v[i], t, plus, &p);
            int a = (int)strlen(p.ip), b = (int)strlen(p.fp), c = (int)strlen(p.ex);
            if (a > ilen) ilen = a;
            if (b > flen) flen = b;
            if (c > elen) elen = c;
        }
        f->exp_size = elen;
        f->precision = flen;
        f->pad_left = ilen;
        f->pad_right = elen + 2 + flen;
    } else {
        int ilen = 0, flen = 0;
        for (int64_t i = 0; i < n; i++) {
            if (!isfinite(v[i])) continue;
            positional(v[i], t, plus, &p);
            int a = (int)strlen(p.ip), b = (int)strlen(p.fp);
            if (a > ilen) ilen = a;
            if (b > flen) flen = b;
        }
        f->pad_left = ilen;
        f->pad_right = flen;
    }
    if (finite != n) {
        if (plus) neginf = 1; /* "+inf" as long as "-inf" */
        int offset = f->pad_right + 1;
        if (3 - offset > f->pad_left) f->pad_left = 3 - offset;
        if (3 + neginf - offset > f->pad_left) f->pad_left = 3 + neginf - offset;
    }
}

static void float_word(sbuf *b, const ffmt *f, double x, nd_dtype t) {
    if (!isfinite(x)) {
        const char *s = isnan(x) ? (f->plus ? "+nan" : "nan")
                        : x < 0  ? "-inf"
                                 : (f->plus ? "+inf" : "inf");
        sb_spaces(b, f->pad_left + f->pad_right + 1 - (int)strlen(s));
        sb_str(b, s);
        return;
    }
    fparts p;
    if (f->exp_format) {
        scientific(x, t, f->plus, &p);
        sb_spaces(b, f->pad_left - (int)strlen(p.ip));
        sb_str(b, p.ip);
        sb_str(b, ".");
        sb_str(b, p.fp);
        for (int i = (int)strlen(p.fp); i < f->precision; i++) sb_str(b, "0");
        sb_str(b, p.exneg ? "e-" : "e+");
        for (int i = (int)strlen(p.ex); i < f->exp_size; i++) sb_str(b, "0");
        sb_str(b, p.ex);
    } else {
        positional(x, t, f->plus, &p);
        sb_spaces(b, f->pad_left - (int)strlen(p.ip));
        sb_str(b, p.ip);
        sb_str(b, ".");
        sb_str(b, p.fp);
        sb_spaces(b, f->pad_right - (int)strlen(p.fp));
    }
}

/* ---- The array ----------------------------------------------------------- */

typedef struct {
    nd_dtype dtype;
    int ndim;
    const int64_t *shape;   /* the array's */
    int64_t cshape[ND_MAX_DIMS]; /* the compact copy's (6 on summarised axes) */
    int summarise;
    const unsigned char *data; /* compact copy, row-major */
    size_t item;
    ffmt f, fi; /* fi: a complex's imaginary parts */
    int int_width;
} pctx;

static int axis_cut(const pctx *c, int k) { return c->summarise && c->shape[k] > 2 * PR_EDGE; }

/* idx holds indices into the compact copy. */
static const unsigned char *elem_at(const pctx *c, const int64_t *idx) {
    int64_t off = 0;
    for (int k = 0; k < c->ndim; k++) off = off * c->cshape[k] + idx[k];
    return c->data + (size_t)off * c->item;
}

static void word(sbuf *b, const pctx *c, const unsigned char *p) {
    char s[48];
    switch (nd_dtype_kind_of(c->dtype)) {
    case ND_KIND_BOOL:
        sb_str(b, *p ? (c->ndim ? " True" : "True") : "False");
        return;
    default: break;
    }
    if (c->dtype == ND_UINT64) {
        uint64_t u;
        memcpy(&u, p, 8);
        snprintf(s, sizeof s, "%*llu", c->int_width, (unsigned long long)u);
    } else if (nd_dtype_is_int(c->dtype)) {
        int64_t v;
        nd_convert_element(&v, ND_INT64, p, c->dtype);
        snprintf(s, sizeof s, "%*lld", c->int_width, (long long)v);
    } else if (nd_dtype_is_complex(c->dtype)) {
        /* ComplexFloatingFormat: real, then imaginary with its sign and a
         * 'j' before the imaginary part's padding */
        double re, im;
        nd_load_complex(p, c->dtype, &re, &im);
        nd_dtype pt = nd_dtype_part(c->dtype);
        float_word(b, &c->f, re, pt);
        sbuf w = {0};
        float_word(&w, &c->fi, im, pt);
        size_t n = w.len;
        while (n > 0 && w.buf[n - 1] == ' ') n--;
        sb_put(b, w.buf ? w.buf : "", n);
        sb_str(b, "j");
        sb_put(b, w.buf ? w.buf + n : "", w.len - n);
        if (w.failed) b->failed = 1;
        free(w.buf);
        return;
    } else {
        float_word(b, &c->f, nd_load_double(p, c->dtype), c->dtype);
        return;
    }
    sb_str(b, s);
}

static void put_line_rstrip(sbuf *s, const sbuf *line) {
    size_t n = line->len;
    while (n > 0 && line->buf[n - 1] == ' ') n--;
    sb_put(s, line->buf, n);
    sb_put(s, "\n", 1);
}

/* _extendLine: wraps before word when it would pass width, unless the line
 * holds only its indent. */
static void extend_line(sbuf *s, sbuf *line, const char *w, size_t wn, int width, int indent) {
    if ((int)(line->len + wn) > width && (int)line->len > indent) {
        put_line_rstrip(s, line);
        line->len = 0;
        sb_spaces(line, indent);
    }
    sb_put(line, w, wn);
}

/* _formatArray's recurser: appends the text of the sub-array at idx[0..axis)
 * to out. indent is the hanging indent's length. */
static void recurse(const pctx *c, int64_t *idx, int axis, int indent, int width, sbuf *out) {
    int left = c->ndim - axis;
    if (left == 0) {
        word(out, c, elem_at(c, idx));
        return;
    }
    int64_t n = c->shape[axis];
    int cut = axis_cut(c, axis);
    int64_t lead = cut ? PR_EDGE : 0, trail = cut ? PR_EDGE : n;
    int64_t cn = c->cshape[axis];
    sbuf s = {0};
    if (left == 1) {
        int elem_width = width - 1;
        sbuf line = {0}, w = {0};
        sb_spaces(&line, indent);
        /* items: lead from the front, "...", then trail - 1 and the last */
        for (int64_t i = 0; i < lead; i++) {
            idx[axis] = i;
            w.len = 0;
            recurse(c, idx, axis + 1, indent + 1, width - 1, &w);
            extend_line(&s, &line, w.buf ? w.buf : "", w.len, elem_width, indent);
            sb_str(&line, ", ");
        }
        if (cut) {
            extend_line(&s, &line, "...", 3, elem_width, indent);
            sb_str(&line, ", ");
        }
        for (int64_t i = trail; i >= 1; i--) {
            idx[axis] = cn - i;
            w.len = 0;
            recurse(c, idx, axis + 1, indent + 1, width - 1, &w);
            extend_line(&s, &line, w.buf ? w.buf : "", w.len, elem_width, indent);
            if (i > 1) sb_str(&line, ", ");
        }
        sb_put(&s, line.buf ? line.buf : "", line.len);
        if (line.failed || w.failed) s.failed = 1;
        free(line.buf);
        free(w.buf);
    } else {
        char sep[ND_MAX_DIMS + 2] = ","; /* ',' and a newline per axis left below */
        for (int k = 0; k < left - 1 && k < ND_MAX_DIMS; k++) {
            sep[1 + k] = '\n';
            sep[2 + k] = '\0';
        }
        for (int64_t i = 0; i < lead; i++) {
            idx[axis] = i;
            sb_spaces(&s, indent);
            recurse(c, idx, axis + 1, indent + 1, width - 1, &s);
            sb_str(&s, sep);
        }
        if (cut) {
            sb_spaces(&s, indent);
            sb_str(&s, "...");
            sb_str(&s, sep);
        }
        for (int64_t i = trail; i >= 1; i--) {
            idx[axis] = cn - i;
            sb_spaces(&s, indent);
            recurse(c, idx, axis + 1, indent + 1, width - 1, &s);
            if (i > 1) sb_str(&s, sep);
        }
    }
    sb_str(out, "[");
    if (s.len >= (size_t)indent) sb_put(out, s.buf + indent, s.len - (size_t)indent);
    sb_str(out, "]");
    if (s.failed) out->failed = 1;
    free(s.buf);
}

/* The elements shown, as a compact array: each summarised axis cut to its
 * first and last PR_EDGE items. A new reference, or NULL with the error. */
static nd_array *shown_part(nd_array *a, int summarise) {
    nd_array *cur = nd_retain(a);
    if (!summarise) return cur;
    for (int k = 0; k < a->ndim && cur; k++) {
        if (a->shape[k] <= 2 * PR_EDGE) continue;
        char lo[64] = "", hi[64] = "";
        for (int j = 0; j < k; j++) {
            strcat(lo, ":,");
            strcat(hi, ":,");
        }
        snprintf(lo + strlen(lo), sizeof lo - strlen(lo), ":%d", PR_EDGE);
        snprintf(hi + strlen(hi), sizeof hi - strlen(hi), "-%d:", PR_EDGE);
        nd_array *parts[2] = {nd_view(cur, lo), nd_view(cur, hi)};
        nd_array *next = parts[0] && parts[1] ? nd_concatenate(2, parts, k) : NULL;
        nd_free(parts[0]);
        nd_free(parts[1]);
        nd_free(cur);
        cur = next;
    }
    return cur;
}

/* Python's repr of a shape tuple: "(0, 3)", "(0,)", "()". */
static void put_shape(sbuf *b, int ndim, const int64_t *shape) {
    char s[32];
    sb_str(b, "(");
    for (int k = 0; k < ndim; k++) {
        snprintf(s, sizeof s, k ? ", %lld" : "%lld", (long long)shape[k]);
        sb_str(b, s);
    }
    sb_str(b, ndim == 1 ? ",)" : ")");
}

/* The repr of a into out; ND_OK or the error (set, naming fn). */
static nd_status repr(const char *fn, nd_array *a, sbuf *out) {
    if (nd_fe_arg(fn, "a", a)) return nd_last_status();
    nd_status st = nd_runtime_ensure();
    if (st != ND_OK) return st;
    pctx c;
    memset(&c, 0, sizeof c);
    c.dtype = a->dtype;
    c.ndim = a->ndim;
    c.shape = a->shape;
    c.item = nd_dtype_size(a->dtype);
    int64_t size = nd_shape_size(a->ndim, a->shape);
    c.summarise = size > PR_THRESHOLD;
    const int linewidth = PR_LINEWIDTH - 1; /* less len(")") */
    sb_str(out, "array(");
    unsigned char *host = NULL;
    if (size == 0) {
        sb_str(out, "[]");
    } else {
        nd_array *part = shown_part(a, c.summarise);
        if (!part) return nd_last_status();
        int64_t n = nd_shape_size(part->ndim, part->shape);
        for (int k = 0; k < c.ndim; k++) c.cshape[k] = part->shape[k];
        host = nd_malloc((size_t)n * c.item);
        if (!host) {
            nd_free(part);
            return nd_error_set(ND_ERR_OOM, "%s: out of host memory for %lld bytes", fn,
                                (long long)((size_t)n * c.item));
        }
        st = nd_to_host(part, host, (size_t)n * c.item);
        nd_free(part);
        if (st != ND_OK) {
            free(host);
            return st;
        }
        c.data = host;
        if (nd_dtype_is_float(c.dtype)) {
            double *v = nd_malloc((size_t)n * sizeof *v);
            if (!v) {
                free(host);
                return nd_error_set(ND_ERR_OOM, "%s: out of host memory", fn);
            }
            for (int64_t i = 0; i < n; i++) v[i] = nd_load_double(host + (size_t)i * c.item, c.dtype);
            float_fill(&c.f, v, n, c.dtype, 0);
            free(v);
        } else if (nd_dtype_is_complex(c.dtype)) {
            double *v = nd_malloc((size_t)n * 2 * sizeof *v);
            if (!v) {
                free(host);
                return nd_error_set(ND_ERR_OOM, "%s: out of host memory", fn);
            }
            for (int64_t i = 0; i < n; i++) nd_load_complex(host + (size_t)i * c.item, c.dtype, &v[i], &v[n + i]);
            float_fill(&c.f, v, n, nd_dtype_part(c.dtype), 0);
            float_fill(&c.fi, v + n, n, nd_dtype_part(c.dtype), 1);
            free(v);
        } else if (nd_dtype_is_int(c.dtype)) {
            char s[32];
            for (int64_t i = 0; i < n; i++) {
                const unsigned char *p = host + (size_t)i * c.item;
                int w;
                if (c.dtype == ND_UINT64) {
                    uint64_t u;
                    memcpy(&u, p, 8);
                    w = snprintf(s, sizeof s, "%llu", (unsigned long long)u);
                } else {
                    int64_t v;
                    nd_convert_element(&v, ND_INT64, p, c.dtype);
                    w = snprintf(s, sizeof s, "%lld", (long long)v);
                }
                if (w > c.int_width) c.int_width = w;
            }
        }
        int64_t idx[ND_MAX_DIMS] = {0};
        recurse(&c, idx, 0, 7, linewidth, out);
        free(host);
    }
    /* extras: the shape when it cannot be read off the text, the dtype
     * unless it is one NumPy implies */
    sbuf ex = {0};
    if ((size == 0 && !(a->ndim == 1)) || c.summarise) {
        sb_str(&ex, "shape=");
        put_shape(&ex, a->ndim, a->shape);
    }
    int implied = a->dtype == ND_FLOAT64 || a->dtype == ND_INT64 || a->dtype == ND_BOOL ||
                  a->dtype == ND_COMPLEX128;
    if (!implied || size == 0) {
        if (ex.len) sb_str(&ex, ", ");
        sb_str(&ex, "dtype=");
        sb_str(&ex, nd_dtype_name(a->dtype));
    }
    if (ex.len) {
        sb_str(out, ",");
        const char *nl = out->buf ? strrchr(out->buf, '\n') : NULL;
        size_t last = nl ? out->len - (size_t)(nl + 1 - out->buf) : out->len;
        if ((int)(last + ex.len + 2) > PR_LINEWIDTH) {
            sb_str(out, "\n");
            sb_spaces(out, 6);
        } else {
            sb_str(out, " ");
        }
        sb_put(out, ex.buf ? ex.buf : "", ex.len);
    }
    if (ex.failed) out->failed = 1;
    free(ex.buf);
    sb_str(out, ")");
    if (out->failed) return nd_error_set(ND_ERR_OOM, "%s: out of host memory for the text", fn);
    return ND_OK;
}

int64_t nd_to_string(nd_array *a, char *buf, size_t cap) {
    ND_API_GUARD();
    static const char fn[] = "nd_to_string";
    if (!buf && cap > 0) {
        nd_error_set(ND_ERR_ARG, "%s: buf is NULL with cap = %zu (pass a buffer, or cap = 0 to "
                     "ask for the length)", fn, cap);
        return -1;
    }
    sbuf s = {0};
    if (repr(fn, a, &s) != ND_OK) {
        free(s.buf);
        return -1;
    }
    if (cap > 0) {
        size_t n = s.len < cap - 1 ? s.len : cap - 1;
        memcpy(buf, s.buf, n);
        buf[n] = '\0';
    }
    int64_t len = (int64_t)s.len;
    free(s.buf);
    return len;
}

nd_status nd_print(FILE *f, nd_array *a) {
    ND_API_GUARD();
    static const char fn[] = "nd_print";
    if (!f) return nd_error_set(ND_ERR_ARG, "%s: f is NULL (pass a FILE *, such as stdout)", fn);
    sbuf s = {0};
    nd_status st = repr(fn, a, &s);
    if (st == ND_OK && (fwrite(s.buf, 1, s.len, f) != s.len || fputc('\n', f) == EOF))
        st = nd_error_set(ND_ERR_IO, "%s: writing the text failed", fn);
    free(s.buf);
    return st;
}
