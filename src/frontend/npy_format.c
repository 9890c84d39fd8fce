/* .npy header parsing and building (numpy/lib/_format_impl.py is the
 * reference: the header is a Python dict literal with exactly the keys
 * 'descr', 'fortran_order' and 'shape', which np.load reads with
 * ast.literal_eval, so any key order, either quote, spaces and trailing
 * commas are accepted here too). Every read is bounds-checked: the input
 * may be anything (tests/test_npy_fuzz.c mutates valid headers). */
#include "frontend/npy_format.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/dtype.h"

static const unsigned char magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

static int fail(char *why, size_t cap, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, cap, fmt, ap);
    va_end(ap);
    return -1;
}

int nd_npy_host_big_endian(void) {
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 0;
}

void nd_npy_swap(unsigned char *p, size_t n, size_t item) {
    if (item < 2) return;
    for (size_t i = 0; i < n; i++, p += item)
        for (size_t a = 0, b = item - 1; a < b; a++, b--) {
            unsigned char t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}

/* ---- a cursor over the header text ---- */
typedef struct {
    const char *s;
    size_t n, i;
} cur;

static void ws(cur *c) {
    while (c->i < c->n && (c->s[c->i] == ' ' || c->s[c->i] == '\t' || c->s[c->i] == '\n' ||
                           c->s[c->i] == '\r'))
        c->i++;
}
static int peek(cur *c) { return c->i < c->n ? (unsigned char)c->s[c->i] : -1; }
static int eat(cur *c, char ch) {
    ws(c);
    if (peek(c) != ch) return 0;
    c->i++;
    return 1;
}

/* A quoted string without escapes (the only strings the keys and the
 * descrs of supported dtypes are) into out. */
static int string_lit(cur *c, char *out, size_t cap) {
    ws(c);
    int q = peek(c);
    if (q != '\'' && q != '"') return 0;
    c->i++;
    size_t k = 0;
    while (c->i < c->n && c->s[c->i] != q) {
        if (c->s[c->i] == '\\' || k + 1 >= cap) return 0;
        out[k++] = c->s[c->i++];
    }
    if (c->i >= c->n) return 0;
    c->i++;
    out[k] = '\0';
    return 1;
}

static int word_is(cur *c, const char *w) {
    ws(c);
    size_t n = strlen(w);
    if (c->n - c->i < n || memcmp(c->s + c->i, w, n) != 0) return 0;
    c->i += n;
    return 1;
}

/* descr (NumPy's dtype.str, e.g. '<f4') to a dtype, or -1 with why. */
static int parse_descr(const char *d, nd_npy_info *info, char *why, size_t cap) {
    const char *p = d;
    int big = nd_npy_host_big_endian(), order_big = big;
    if (*p == '<' || *p == '>' || *p == '|' || *p == '=') {
        if (*p == '<') order_big = 0;
        if (*p == '>') order_big = 1;
        p++;
    }
    char kind = *p ? *p++ : '\0';
    int size = 0, digits = 0;
    while (*p >= '0' && *p <= '9' && digits < 6) size = size * 10 + (*p++ - '0'), digits++;
    if (*p || !digits) {
        if (kind == 'O' && !*p) return fail(why, cap, "dtype '%s' (Python objects) is not supported", d);
        return fail(why, cap, "dtype '%s' is not one nd reads", d);
    }
    int t = -1;
    switch (kind) {
    case 'b':
        if (size == 1) t = ND_BOOL;
        break;
    case 'i': t = size == 1 ? ND_INT8 : size == 2 ? ND_INT16 : size == 4 ? ND_INT32 : size == 8 ? ND_INT64 : -1; break;
    case 'u': t = size == 1 ? ND_UINT8 : size == 2 ? ND_UINT16 : size == 4 ? ND_UINT32 : size == 8 ? ND_UINT64 : -1; break;
    case 'f': t = size == 2 ? ND_FLOAT16 : size == 4 ? ND_FLOAT32 : size == 8 ? ND_FLOAT64 : -1; break;
    case 'V':
        if (size == 2) t = ND_BFLOAT16; /* ml_dtypes' bfloat16 as np.save writes it */
        else return fail(why, cap, "dtype '%s' (raw records of %d bytes) is not supported", d, size);
        break;
    case 'c':
        t = size == 8 ? ND_COMPLEX64 : size == 16 ? ND_COMPLEX128 : -1;
        if (t < 0) return fail(why, cap, "dtype '%s' (complex of long double parts) is not supported", d);
        break;
    case 'O': return fail(why, cap, "dtype '%s' (Python objects) is not supported", d);
    case 'U': case 'S': case 'a': return fail(why, cap, "dtype '%s' (strings) is not supported", d);
    case 'M': case 'm': return fail(why, cap, "dtype '%s' (dates/times) is not supported", d);
    default: break;
    }
    if (t < 0) return fail(why, cap, "dtype '%s' is not one nd reads", d);
    info->dtype = (nd_dtype)t;
    info->swap = size > 1 && t != ND_BFLOAT16 && order_big != big;
    return 0;
}

/* A tuple of non-negative integers: "()", "(3,)", "(2, 3)", "(2, 3,)".
 * Python reads "(3)" as the int 3, which np.load refuses: so does this. */
static int parse_shape(cur *c, nd_npy_info *info, char *why, size_t cap) {
    if (!eat(c, '(')) return fail(why, cap, "'shape' is not a tuple");
    int nd = 0;
    if (eat(c, ')')) {
        info->ndim = 0;
        return 0;
    }
    for (;;) {
        ws(c);
        int ch = peek(c);
        if (ch < '0' || ch > '9')
            return fail(why, cap, "'shape' holds something other than non-negative integers");
        int64_t v = 0;
        while ((ch = peek(c)) >= '0' && ch <= '9') {
            if (v > (INT64_MAX - 9) / 10) return fail(why, cap, "a dimension of 'shape' is too large");
            v = v * 10 + (ch - '0');
            c->i++;
        }
        if (nd >= ND_MAX_DIMS)
            return fail(why, cap, "'shape' has more than %d axes (nd's limit)", ND_MAX_DIMS);
        info->shape[nd++] = v;
        if (eat(c, ',')) {
            if (eat(c, ')')) break;
            continue;
        }
        if (eat(c, ')') && nd > 1) break;
        return fail(why, cap, "'shape' is not a tuple of integers");
    }
    info->ndim = nd;
    return 0;
}

static int parse_dict(const char *s, size_t n, nd_npy_info *info, char *why, size_t cap) {
    cur c = {s, n, 0};
    int have_descr = 0, have_order = 0, have_shape = 0;
    if (!eat(&c, '{')) return fail(why, cap, "the header is not a Python dict");
    for (;;) {
        if (eat(&c, '}')) break;
        char key[32], val[64];
        if (!string_lit(&c, key, sizeof key)) return fail(why, cap, "the header's keys are not 'descr', 'fortran_order' and 'shape'");
        if (!eat(&c, ':')) return fail(why, cap, "the header is not a Python dict (no ':' after '%s')", key);
        if (!strcmp(key, "descr") && !have_descr) {
            ws(&c);
            if (peek(&c) == '[') return fail(why, cap, "structured dtypes (a list 'descr') are not supported");
            if (!string_lit(&c, val, sizeof val)) return fail(why, cap, "'descr' is not a dtype string");
            if (parse_descr(val, info, why, cap)) return -1;
            have_descr = 1;
        } else if (!strcmp(key, "fortran_order") && !have_order) {
            if (word_is(&c, "True")) info->fortran = 1;
            else if (word_is(&c, "False")) info->fortran = 0;
            else return fail(why, cap, "'fortran_order' is not True or False");
            have_order = 1;
        } else if (!strcmp(key, "shape") && !have_shape) {
            if (parse_shape(&c, info, why, cap)) return -1;
            have_shape = 1;
        } else {
            return fail(why, cap, "the header's keys are not 'descr', 'fortran_order' and 'shape' (found '%s')", key);
        }
        if (eat(&c, ',')) continue;
        if (eat(&c, '}')) break;
        return fail(why, cap, "the header is not a Python dict (expected ',' or '}')");
    }
    ws(&c);
    if (c.i != c.n) return fail(why, cap, "the header has text after its dict");
    if (!have_descr || !have_order || !have_shape)
        return fail(why, cap, "the header lacks '%s'", !have_descr ? "descr" : !have_order ? "fortran_order" : "shape");
    return 0;
}

int nd_npy_parse(const unsigned char *buf, size_t len, nd_npy_info *info, size_t *need, char *why,
                 size_t cap) {
    memset(info, 0, sizeof *info);
    *need = ND_NPY_PREAMBLE;
    size_t have = len < 6 ? len : 6;
    if (memcmp(buf, magic, have) != 0) return fail(why, cap, "wrong magic (not a .npy file)");
    if (len < 10) return 1;
    int major = buf[6], minor = buf[7];
    if (!(minor == 0 && (major == 1 || major == 2 || major == 3)))
        return fail(why, cap, "format version %d.%d is not supported (1.0, 2.0 and 3.0 are)", major, minor);
    size_t start, hlen;
    if (major == 1) {
        start = 10;
        hlen = (size_t)buf[8] | (size_t)buf[9] << 8;
    } else {
        if (len < 12) return 1;
        start = 12;
        hlen = (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
    }
    *need = start + hlen;
    if (len < start + hlen) return 1;
    if (parse_dict((const char *)buf + start, hlen, info, why, cap)) return -1;
    size_t item = nd_dtype_size(info->dtype), bytes = item;
    for (int k = 0; k < info->ndim; k++) {
        if (info->shape[k] != 0 && bytes > SIZE_MAX / 2 / (size_t)info->shape[k])
            return fail(why, cap, "the shape's byte count overflows");
        bytes *= (size_t)info->shape[k];
    }
    info->data_offset = start + hlen;
    info->data_bytes = bytes;
    return 0;
}

size_t nd_npy_build(nd_dtype dtype, int ndim, const int64_t *shape, unsigned char *out) {
    static const char *descr[ND_NUM_DTYPES] = {"|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2",
                                               "<u4", "<u8", "<f2", "<V2", "<f4", "<f8",
                                               "<c8", "<c16"};
    char h[ND_NPY_BUILD_MAX], sh[ND_MAX_DIMS * 24 + 4];
    size_t k = 0;
    sh[k++] = '(';
    for (int i = 0; i < ndim; i++)
        k += (size_t)snprintf(sh + k, sizeof sh - k, i ? ", %lld" : "%lld", (long long)shape[i]);
    k += (size_t)snprintf(sh + k, sizeof sh - k, ndim == 1 ? ",)" : ")");
    int n = snprintf(h, sizeof h, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                     descr[dtype], sh);
    /* np.save leaves room for the first axis to grow to 21 digits */
    if (ndim > 0) {
        char first[24];
        int w = snprintf(first, sizeof first, "%lld", (long long)shape[0]);
        for (int i = w; i < 21; i++) h[n++] = ' ';
    }
    size_t hlen = (size_t)n + 1, pad = 64 - (10 + hlen) % 64;
    memcpy(out, magic, 6);
    out[6] = 1;
    out[7] = 0;
    out[8] = (unsigned char)((hlen + pad) & 0xff);
    out[9] = (unsigned char)((hlen + pad) >> 8);
    memcpy(out + 10, h, (size_t)n);
    memset(out + 10 + n, ' ', pad);
    out[10 + (size_t)n + pad] = '\n';
    return 10 + hlen + pad;
}
