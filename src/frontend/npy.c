/* nd_save_npy and nd_load_npy, and the .npy reading and writing that the
 * .npz archives share. A load reads straight into the new array's host
 * buffer (nd_fe_host_array, as nd_from_host makes); only Fortran-order
 * data goes through a second buffer, to be reordered row-major. The file's
 * size is checked against the header before anything is allocated, so a
 * header that lies about the shape fails as a truncated file. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "common/alloc.h"
#include "common/dtype.h"
#include "frontend/frontend.h"
#include "frontend/npy_format.h"
#include "frontend/npy_io.h"

static void crc_add(nd_npy_src *s, const unsigned char *p, size_t n) {
    while (n > 0) {
        uInt k = n > (1u << 30) ? (1u << 30) : (uInt)n;
        s->crc = (uint32_t)crc32(s->crc, p, k);
        p += k;
        n -= k;
    }
}

/* Reads up to n bytes of what is left in src; returns how many. */
static size_t src_read(nd_npy_src *s, void *dst, size_t n) {
    if (n > s->len - s->pos) n = (size_t)(s->len - s->pos);
    size_t got;
    if (s->f) {
        got = n ? fread(dst, 1, n, s->f) : 0;
    } else {
        memcpy(dst, s->mem + s->pos, n);
        got = n;
    }
    s->pos += got;
    if (s->crc_on) crc_add(s, dst, got);
    return got;
}

/* Row-major copy of column-major data. */
static void fortran_to_c(unsigned char *dst, const unsigned char *src, size_t item, int ndim,
                         const int64_t *shape) {
    int64_t fst[ND_MAX_DIMS], idx[ND_MAX_DIMS] = {0}, total = 1, off = 0;
    for (int k = 0; k < ndim; k++) {
        fst[k] = k ? fst[k - 1] * shape[k - 1] : 1;
        total *= shape[k];
    }
    for (int64_t i = 0; i < total; i++) {
        memcpy(dst + (size_t)i * item, src + (size_t)off * item, item);
        for (int k = ndim - 1; k >= 0; k--) {
            off += fst[k];
            if (++idx[k] < shape[k]) break;
            off -= shape[k] * fst[k];
            idx[k] = 0;
        }
    }
}

nd_array *nd_npy_read(const char *fn, const char *what, nd_npy_src *src) {
    char why[256];
    nd_npy_info info;
    size_t need = 0, got;
    unsigned char pre[ND_NPY_PREAMBLE];
    got = src_read(src, pre, sizeof pre);
    int r = nd_npy_parse(pre, got, &info, &need, why, sizeof why);
    if (r == 1) {
        if (need > got + (src->len - src->pos)) {
            nd_error_set(ND_ERR_IO, "%s: %s: truncated: the header needs %zu bytes, the file has %llu",
                         fn, what, need, (unsigned long long)src->len);
            return NULL;
        }
        unsigned char *h = nd_malloc(need);
        if (!h) {
            nd_error_set(ND_ERR_OOM, "%s: %s: out of host memory for a %zu-byte header", fn, what, need);
            return NULL;
        }
        memcpy(h, pre, got);
        size_t more = src_read(src, h + got, need - got);
        if (more != need - got) {
            free(h);
            nd_error_set(ND_ERR_IO, "%s: %s: reading the header failed after %zu of %zu bytes", fn,
                         what, got + more, need);
            return NULL;
        }
        r = nd_npy_parse(h, need, &info, &need, why, sizeof why);
        free(h);
        if (r == 1) snprintf(why, sizeof why, "the header's length is inconsistent");
    }
    if (r != 0) {
        nd_error_set(ND_ERR_IO, "%s: %s: %s", fn, what, why);
        return NULL;
    }
    uint64_t left = src->len - src->pos;
    if (info.data_bytes > left) {
        char sh[ND_MAX_DIMS * 24 + 4];
        nd_error_set(ND_ERR_IO, "%s: %s: truncated: the header's shape %s of %s needs %zu bytes "
                     "of data, %llu follow the header",
                     fn, what, nd_format_shape(sh, sizeof sh, info.ndim, info.shape),
                     nd_dtype_name(info.dtype), info.data_bytes, (unsigned long long)left);
        return NULL;
    }
    void *data;
    nd_array *a = nd_fe_host_array(fn, info.dtype, info.ndim, info.shape, &data);
    if (!a) return NULL;
    if (info.data_bytes == 0) return a;
    size_t item = nd_dtype_size(info.dtype);
    unsigned char *tmp = NULL, *into = data;
    if (info.fortran && info.ndim > 1) {
        tmp = nd_malloc(info.data_bytes);
        if (!tmp) {
            nd_fe_release(a);
            nd_error_set(ND_ERR_OOM, "%s: %s: out of host memory for %zu bytes", fn, what,
                         info.data_bytes);
            return NULL;
        }
        into = tmp;
    }
    got = src_read(src, into, info.data_bytes);
    if (got != info.data_bytes) {
        free(tmp);
        nd_fe_release(a);
        nd_error_set(ND_ERR_IO, "%s: %s: reading the data failed after %zu of %zu bytes%s%s", fn,
                     what, got, info.data_bytes, src->f && ferror(src->f) ? ": " : "",
                     src->f && ferror(src->f) ? strerror(errno) : "");
        return NULL;
    }
    if (tmp) {
        fortran_to_c(data, tmp, item, info.ndim, info.shape);
        free(tmp);
    }
    /* a complex element swaps each of its two parts */
    size_t word = nd_dtype_is_complex(info.dtype) ? item / 2 : item;
    if (info.swap) nd_npy_swap(data, info.data_bytes / word, word);
    return a;
}

unsigned char *nd_npy_encode(const char *fn, nd_array *a, size_t *len) {
    if (nd_fe_arg(fn, "a", a)) return NULL;
    if (nd_runtime_ensure() != ND_OK) return NULL;
    unsigned char prefix[ND_NPY_BUILD_MAX];
    size_t plen = nd_npy_build(a->dtype, a->ndim, a->shape, prefix);
    size_t item = nd_dtype_size(a->dtype);
    size_t bytes = (size_t)nd_shape_size(a->ndim, a->shape) * item;
    unsigned char *out = nd_malloc(plen + bytes);
    if (!out) {
        nd_error_set(ND_ERR_OOM, "%s: out of host memory for %zu bytes", fn, plen + bytes);
        return NULL;
    }
    memcpy(out, prefix, plen);
    if (bytes > 0 && nd_to_host(a, out + plen, bytes) != ND_OK) {
        free(out);
        return NULL;
    }
    size_t word = nd_dtype_is_complex(a->dtype) ? item / 2 : item;
    if (nd_npy_host_big_endian() && a->dtype != ND_BFLOAT16) nd_npy_swap(out + plen, bytes / word, word);
    *len = plen + bytes;
    return out;
}

nd_status nd_save_npy(const char *path, nd_array *a) {
    ND_API_GUARD();
    static const char fn[] = "nd_save_npy";
    if (!path) return nd_error_set(ND_ERR_ARG, "%s: path is NULL (pass the file to write)", fn);
    size_t len;
    unsigned char *bytes = nd_npy_encode(fn, a, &len);
    if (!bytes) return nd_last_status();
    FILE *f = fopen(path, "wb");
    if (!f) {
        int e = errno;
        free(bytes);
        return nd_error_set(ND_ERR_IO, "%s: cannot open '%s' for writing: %s", fn, path, strerror(e));
    }
    size_t put = fwrite(bytes, 1, len, f);
    int e = errno;
    int closed = fclose(f);
    if (closed != 0) e = errno;
    free(bytes);
    if (put != len || closed != 0) {
        remove(path);
        return nd_error_set(ND_ERR_IO, "%s: writing '%s' failed after %zu of %zu bytes: %s (the "
                            "partial file was removed)", fn, path, put, len, strerror(e));
    }
    return ND_OK;
}

FILE *nd_npy_open_read(const char *fn, const char *path, uint64_t *size) {
    if (!path) {
        nd_error_set(ND_ERR_ARG, "%s: path is NULL (pass the file to read)", fn);
        return NULL;
    }
    if (nd_runtime_ensure() != ND_OK) return NULL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        nd_error_set(ND_ERR_IO, "%s: cannot open '%s': %s", fn, path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        nd_error_set(ND_ERR_IO, "%s: '%s' is not a regular file", fn, path);
        return NULL;
    }
    *size = (uint64_t)st.st_size;
    return f;
}

nd_array *nd_load_npy(const char *path) {
    ND_API_GUARD();
    static const char fn[] = "nd_load_npy";
    uint64_t size;
    FILE *f = nd_npy_open_read(fn, path, &size);
    if (!f) return NULL;
    size_t wn = strlen(path) + 3;
    char *what = nd_malloc(wn);
    if (!what) {
        fclose(f);
        nd_error_set(ND_ERR_OOM, "%s: out of host memory", fn);
        return NULL;
    }
    snprintf(what, wn, "'%s'", path);
    nd_npy_src src = {.f = f, .len = size};
    nd_array *a = nd_npy_read(fn, what, &src);
    free(what);
    fclose(f);
    return nd_runtime_track(a);
}
