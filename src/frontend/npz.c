/* .npz archives: a ZIP container of .npy members, written and read here
 * with zlib for the deflate streams and CRC-32 (APPNOTE.TXT, the PKWARE ZIP
 * specification, is the reference for the records).
 *
 * Writing: each member's .npy bytes are built in memory (and deflated for
 * nd_savez_compressed), then written as a local header and data; the
 * central directory and the end record follow. ZIP64 fields are written
 * only where a size or offset passes 0xFFFFFFFF, as Python's zipfile does
 * for its central directory.
 *
 * Reading goes by the central directory (np.savez's local headers carry
 * ZIP64 placeholders, so their sizes are not trusted): the end record is
 * found in the file's last 64 KiB, then the ZIP64 end record if the end
 * record says so. Every size and offset is checked against the file's
 * size before it is used. Stored members are read from the file into the
 * array's buffer; deflated ones are inflated into memory first. Both are
 * checked against their CRC-32. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/alloc.h"
#include "frontend/frontend.h"
#include "frontend/npy_io.h"

#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_END 0x06054b50u
#define SIG_END64 0x06064b50u
#define SIG_LOC64 0x07064b50u
#define U32_MAX_FIELD 0xffffffffu
#define DOS_DATE_1980 0x21 /* 1980-01-01: fixed, so archives are reproducible */

uint64_t nd_npz_zip64_from = U32_MAX_FIELD;

struct nd_npz {
    int n;
    char **names;
    nd_array **arrays;
};

/* ---- little-endian fields ---- */
static void put16(unsigned char *p, unsigned v) {
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}
static void put32(unsigned char *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void put64(unsigned char *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static unsigned get16(const unsigned char *p) { return (unsigned)p[0] | (unsigned)p[1] << 8; }
static uint32_t get32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t get64(const unsigned char *p) { return get32(p) | (uint64_t)get32(p + 4) << 32; }

/* ---- writing ---- */

typedef struct {
    uint32_t crc;
    uint64_t usize, csize, offset;
    int method;
} member_rec;

/* The fields a member's local header (from byte 4) and its central
 * directory entry (from byte 6) share, in the same order: version needed,
 * flags, method, time, date, CRC, sizes (0xffffffff where ZIP64's extra
 * field holds them), name length. */
static void put_entry_fields(unsigned char *p, unsigned version, const member_rec *m, int big_c, int big_u,
                             size_t nlen) {
    put16(p, version);
    put16(p + 2, 0);
    put16(p + 4, (unsigned)m->method);
    put16(p + 6, 0);
    put16(p + 8, DOS_DATE_1980);
    put32(p + 10, m->crc);
    put32(p + 14, big_c ? U32_MAX_FIELD : (uint32_t)m->csize);
    put32(p + 18, big_u ? U32_MAX_FIELD : (uint32_t)m->usize);
    put16(p + 22, (unsigned)nlen);
}

static uint32_t crc_of(const unsigned char *p, size_t n) {
    uLong c = crc32(0L, Z_NULL, 0);
    while (n > 0) {
        uInt k = n > (1u << 30) ? (1u << 30) : (uInt)n;
        c = crc32(c, p, k);
        p += k;
        n -= k;
    }
    return (uint32_t)c;
}

/* Raw deflate (no zlib header: ZIP method 8) of in into a new buffer. */
static unsigned char *deflate_all(const char *fn, const unsigned char *in, size_t n, size_t *out_n) {
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        nd_error_set(ND_ERR_OOM, "%s: zlib could not start a deflate stream", fn);
        return NULL;
    }
    size_t cap = (size_t)deflateBound(&z, (uLong)n) + 64, done = 0;
    if (cap < n) cap = n + n / 1000 + 1024; /* deflateBound's uLong may be narrower */
    unsigned char *out = nd_malloc(cap);
    if (!out) {
        deflateEnd(&z);
        nd_error_set(ND_ERR_OOM, "%s: out of host memory for %zu bytes", fn, cap);
        return NULL;
    }
    size_t fed = 0;
    int r;
    do {
        size_t in_k = n - fed > (1u << 30) ? (1u << 30) : n - fed;
        z.next_in = (Bytef *)(in + fed);
        z.avail_in = (uInt)in_k;
        int flush = fed + in_k == n ? Z_FINISH : Z_NO_FLUSH;
        do {
            if (cap - done == 0) {
                unsigned char *more = nd_realloc(out, cap * 2);
                if (!more) {
                    free(out);
                    deflateEnd(&z);
                    nd_error_set(ND_ERR_OOM, "%s: out of host memory for %zu bytes", fn, cap * 2);
                    return NULL;
                }
                out = more;
                cap *= 2;
            }
            size_t out_k = cap - done > (1u << 30) ? (1u << 30) : cap - done;
            z.next_out = out + done;
            z.avail_out = (uInt)out_k;
            r = deflate(&z, flush);
            done += out_k - z.avail_out;
        } while (z.avail_out == 0 || (flush == Z_FINISH && r != Z_STREAM_END));
        fed += in_k;
    } while (fed < n);
    deflateEnd(&z);
    *out_n = done;
    return out;
}

static int put_bytes(FILE *f, const void *p, size_t n, uint64_t *pos) {
    if (n && fwrite(p, 1, n, f) != n) return -1;
    *pos += n;
    return 0;
}

static int check_names(const char *fn, int n, const char *const *names, nd_array *const *arrays) {
    if (n < 0) return nd_error_set(ND_ERR_ARG, "%s: n = %d is negative (pass the number of arrays)", fn, n);
    if (n > 0 && (!names || !arrays))
        return nd_error_set(ND_ERR_ARG, "%s: %s is NULL (pass %d %s)", fn, !names ? "names" : "arrays",
                            n, !names ? "names" : "arrays");
    if (n > 65535)
        return nd_error_set(ND_ERR_ARG, "%s: n = %d arrays is more than nd writes to one archive "
                            "(65535)", fn, n);
    for (int i = 0; i < n; i++) {
        if (!names[i] || !names[i][0] || strchr(names[i], '/') || strchr(names[i], '\\') ||
            strlen(names[i]) > 1000)
            return nd_error_set(ND_ERR_ARG, "%s: names[%d] %s%s%s is not a usable name (pass a "
                                "non-empty name of at most 1000 bytes without '/' or '\\')", fn, i,
                                names[i] ? "'" : "", names[i] ? names[i] : "NULL", names[i] ? "'" : "");
        for (int j = 0; j < i; j++)
            if (!strcmp(names[i], names[j]))
                return nd_error_set(ND_ERR_ARG, "%s: names[%d] and names[%d] are both '%s' (names "
                                    "must be distinct)", fn, j, i, names[i]);
        char arg[24];
        snprintf(arg, sizeof arg, "arrays[%d]", i);
        if (nd_fe_arg(fn, arg, arrays[i])) return nd_last_status();
    }
    return ND_OK;
}

static nd_status savez(const char *fn, const char *path, int n, const char *const *names,
                       nd_array *const *arrays, int compress) {
    if (!path) return nd_error_set(ND_ERR_ARG, "%s: path is NULL (pass the file to write)", fn);
    nd_status st = check_names(fn, n, names, arrays);
    if (st != ND_OK) return st;
    member_rec *rec = nd_calloc((size_t)(n ? n : 1), sizeof *rec);
    if (!rec) return nd_error_set(ND_ERR_OOM, "%s: out of host memory", fn);
    FILE *f = fopen(path, "wb");
    if (!f) {
        int e = errno;
        free(rec);
        return nd_error_set(ND_ERR_IO, "%s: cannot open '%s' for writing: %s", fn, path, strerror(e));
    }
    uint64_t pos = 0;
    int io_bad = 0;
    unsigned char h[64];
    for (int i = 0; i < n && st == ND_OK && !io_bad; i++) {
        size_t len, clen;
        unsigned char *npy = nd_npy_encode(fn, arrays[i], &len);
        if (!npy) {
            st = nd_last_status();
            break;
        }
        unsigned char *data = npy;
        clen = len;
        if (compress) {
            data = deflate_all(fn, npy, len, &clen);
            if (!data) {
                free(npy);
                st = nd_last_status();
                break;
            }
        }
        member_rec *m = &rec[i];
        m->crc = crc_of(npy, len);
        m->usize = len;
        m->csize = clen;
        m->offset = pos;
        m->method = compress ? 8 : 0;
        int z64 = m->usize >= nd_npz_zip64_from || m->csize >= nd_npz_zip64_from;
        size_t nlen = strlen(names[i]) + 4;
        put32(h, SIG_LOCAL);
        put_entry_fields(h + 4, z64 ? 45 : 20, m, z64, z64, nlen);
        put16(h + 28, z64 ? 20 : 0);
        unsigned char x[20];
        put16(x, 1);
        put16(x + 2, 16);
        put64(x + 4, m->usize);
        put64(x + 12, m->csize);
        if (put_bytes(f, h, 30, &pos) || put_bytes(f, names[i], nlen - 4, &pos) ||
            put_bytes(f, ".npy", 4, &pos) || (z64 && put_bytes(f, x, 20, &pos)) ||
            put_bytes(f, data, clen, &pos))
            io_bad = 1;
        if (data != npy) free(data);
        free(npy);
    }
    uint64_t cd_start = pos;
    for (int i = 0; i < n && st == ND_OK && !io_bad; i++) {
        member_rec *m = &rec[i];
        unsigned char x[28];
        size_t xn = 4;
        int big_u = m->usize >= nd_npz_zip64_from, big_c = m->csize >= nd_npz_zip64_from,
            big_o = m->offset >= nd_npz_zip64_from;
        if (big_u) put64(x + xn, m->usize), xn += 8;
        if (big_c) put64(x + xn, m->csize), xn += 8;
        if (big_o) put64(x + xn, m->offset), xn += 8;
        put16(x, 1);
        put16(x + 2, (unsigned)(xn - 4));
        if (xn == 4) xn = 0;
        size_t nlen = strlen(names[i]) + 4;
        put32(h, SIG_CENTRAL);
        put16(h + 4, xn ? 45 : 20); /* made by: MS-DOS, version 2.0 / 4.5 */
        put_entry_fields(h + 6, xn ? 45 : 20, m, big_c, big_u, nlen);
        put16(h + 30, (unsigned)xn);
        put16(h + 32, 0);
        put16(h + 34, 0);
        put16(h + 36, 0);
        put32(h + 38, 0);
        put32(h + 42, big_o ? U32_MAX_FIELD : (uint32_t)m->offset);
        if (put_bytes(f, h, 46, &pos) || put_bytes(f, names[i], nlen - 4, &pos) ||
            put_bytes(f, ".npy", 4, &pos) || put_bytes(f, x, xn, &pos))
            io_bad = 1;
    }
    if (st == ND_OK && !io_bad) {
        uint64_t cd_size = pos - cd_start;
        int z64 = cd_start >= nd_npz_zip64_from || cd_size >= nd_npz_zip64_from;
        if (z64) {
            unsigned char e[76];
            put32(e, SIG_END64);
            put64(e + 4, 44);
            put16(e + 12, 45);
            put16(e + 14, 45);
            put32(e + 16, 0);
            put32(e + 20, 0);
            put64(e + 24, (uint64_t)n);
            put64(e + 32, (uint64_t)n);
            put64(e + 40, cd_size);
            put64(e + 48, cd_start);
            put32(e + 56, SIG_LOC64);
            put32(e + 60, 0);
            put64(e + 64, pos); /* where the ZIP64 end record starts */
            put32(e + 72, 1);
            if (put_bytes(f, e, 76, &pos)) io_bad = 1;
        }
        put32(h, SIG_END);
        put16(h + 4, 0);
        put16(h + 6, 0);
        put16(h + 8, (unsigned)n);
        put16(h + 10, (unsigned)n);
        put32(h + 12, z64 ? U32_MAX_FIELD : (uint32_t)cd_size);
        put32(h + 16, z64 ? U32_MAX_FIELD : (uint32_t)cd_start);
        put16(h + 20, 0);
        if (!io_bad && put_bytes(f, h, 22, &pos)) io_bad = 1;
    }
    int e = errno;
    if (fclose(f) != 0 && !io_bad) {
        io_bad = 1;
        e = errno;
    }
    free(rec);
    if (st != ND_OK || io_bad) {
        remove(path);
        if (io_bad && st == ND_OK)
            st = nd_error_set(ND_ERR_IO, "%s: writing '%s' failed: %s (the partial file was removed)",
                              fn, path, strerror(e));
    }
    return st;
}

nd_status nd_savez(const char *path, int n, const char *const *names, nd_array *const *arrays) {
    ND_API_GUARD();
    return savez("nd_savez", path, n, names, arrays, 0);
}

nd_status nd_savez_compressed(const char *path, int n, const char *const *names,
                              nd_array *const *arrays) {
    ND_API_GUARD();
    return savez("nd_savez_compressed", path, n, names, arrays, 1);
}

/* ---- reading ---- */

typedef struct {
    const char *fn, *path;
    FILE *f;
    uint64_t size;
} zin;

static int zfail(const zin *z, const char *what) {
    nd_error_set(ND_ERR_IO, "%s: '%s': %s", z->fn, z->path, what);
    return -1;
}

/* Reads n bytes at off (checked against the file's size). */
static int read_at(const zin *z, uint64_t off, void *dst, size_t n) {
    if (off > z->size || n > z->size - off) return -1;
    if (fseeko(z->f, (off_t)off, SEEK_SET) != 0) return -1;
    return n && fread(dst, 1, n, z->f) != n ? -1 : 0;
}

/* Finds the central directory: its offset, size and entry count. */
static int find_directory(const zin *z, uint64_t *cd_off, uint64_t *cd_size, uint64_t *count) {
    if (z->size < 22) return zfail(z, "not a ZIP archive (too short for its end record)");
    size_t tail = z->size < 22 + 65535 ? (size_t)z->size : 22 + 65535;
    unsigned char *t = nd_malloc(tail);
    if (!t) {
        nd_error_set(ND_ERR_OOM, "%s: out of host memory", z->fn);
        return -1;
    }
    if (read_at(z, z->size - tail, t, tail)) {
        free(t);
        return zfail(z, "reading its end record failed");
    }
    size_t at = tail - 22 + 1;
    int found = 0;
    while (at-- > 0)
        if (get32(t + at) == SIG_END && at + 22 + get16(t + at + 20) == tail) {
            found = 1;
            break;
        }
    if (!found) {
        free(t);
        return zfail(z, "not a ZIP archive (no end of central directory record)");
    }
    uint64_t end_pos = z->size - tail + at;
    *count = get16(t + at + 10);
    *cd_size = get32(t + at + 12);
    *cd_off = get32(t + at + 16);
    int disk = get16(t + at + 4) || get16(t + at + 6);
    free(t);
    if (disk) return zfail(z, "archives split over several disks are not supported");
    if (*count == 0xffff || *cd_size == U32_MAX_FIELD || *cd_off == U32_MAX_FIELD) {
        unsigned char loc[20], e[56];
        if (end_pos < 20 || read_at(z, end_pos - 20, loc, 20) || get32(loc) != SIG_LOC64)
            return zfail(z, "its end record points to a ZIP64 record that is not there");
        if (read_at(z, get64(loc + 8), e, 56) || get32(e) != SIG_END64)
            return zfail(z, "its ZIP64 end record is missing or damaged");
        *count = get64(e + 32);
        *cd_size = get64(e + 40);
        *cd_off = get64(e + 48);
    }
    if (*cd_off > z->size || *cd_size > z->size - *cd_off)
        return zfail(z, "its central directory lies outside the file");
    if (*count > *cd_size / 46) return zfail(z, "its central directory is shorter than its entry count");
    return 0;
}

/* Inflates csize bytes at off into a new buffer of exactly usize bytes. */
static unsigned char *inflate_member(const zin *z, const char *what, uint64_t off, uint64_t csize,
                                     uint64_t usize) {
    /* deflate cannot expand by more than 1032:1: a larger usize is a lie */
    if (usize / 1032 > csize + 1) {
        nd_error_set(ND_ERR_IO, "%s: %s: its stated size (%llu bytes) cannot come from %llu "
                     "compressed bytes", z->fn, what, (unsigned long long)usize,
                     (unsigned long long)csize);
        return NULL;
    }
    unsigned char *in = nd_malloc(csize ? (size_t)csize : 1), *out = nd_malloc(usize ? (size_t)usize : 1);
    if (!in || !out) {
        free(in);
        free(out);
        nd_error_set(ND_ERR_OOM, "%s: %s: out of host memory for %llu bytes", z->fn, what,
                     (unsigned long long)(csize + usize));
        return NULL;
    }
    if (read_at(z, off, in, (size_t)csize)) {
        free(in);
        free(out);
        nd_error_set(ND_ERR_IO, "%s: %s: truncated: its %llu compressed bytes are not all in the file",
                     z->fn, what, (unsigned long long)csize);
        return NULL;
    }
    z_stream s;
    memset(&s, 0, sizeof s);
    int r = inflateInit2(&s, -15);
    size_t fed = 0, done = 0;
    while (r == Z_OK) {
        size_t in_k = csize - fed > (1u << 30) ? (1u << 30) : (size_t)(csize - fed);
        size_t out_k = usize - done > (1u << 30) ? (1u << 30) : (size_t)(usize - done);
        s.next_in = in + fed;
        s.avail_in = (uInt)in_k;
        s.next_out = out + done;
        s.avail_out = (uInt)out_k;
        r = inflate(&s, Z_NO_FLUSH);
        fed += in_k - s.avail_in;
        done += out_k - s.avail_out;
        if (r == Z_OK && in_k - s.avail_in == 0 && out_k - s.avail_out == 0) r = Z_BUF_ERROR;
    }
    inflateEnd(&s);
    free(in);
    if (r != Z_STREAM_END || done != usize) {
        free(out);
        nd_error_set(ND_ERR_IO, "%s: %s: its deflate data is damaged or does not give the stated "
                     "%llu bytes", z->fn, what, (unsigned long long)usize);
        return NULL;
    }
    return out;
}

void nd_npz_close(nd_npz *z) {
    ND_API_GUARD();
    if (!z) return;
    for (int i = 0; i < z->n; i++) {
        free(z->names[i]);
        nd_free(z->arrays[i]);
    }
    free(z->names);
    free(z->arrays);
    free(z);
}

/* Reads entry e (its central record at c, the rest of the directory
 * `left` bytes) into z; returns the bytes of the record or 0 on error. */
static size_t read_entry(const zin *in, const unsigned char *c, uint64_t left, nd_npz *z) {
    if (left < 46 || get32(c) != SIG_CENTRAL) {
        zfail(in, "its central directory is damaged");
        return 0;
    }
    unsigned flags = get16(c + 8), method = get16(c + 10);
    uint32_t crc = get32(c + 16);
    uint64_t csize = get32(c + 20), usize = get32(c + 24), off = get32(c + 42);
    size_t nlen = get16(c + 28), xlen = get16(c + 30), clen = get16(c + 32);
    size_t rec = 46 + nlen + xlen + clen;
    if (rec > left) {
        zfail(in, "its central directory is damaged");
        return 0;
    }
    /* ZIP64 extra field: the 0xFFFFFFFF fields, in this order */
    const unsigned char *x = c + 46 + nlen, *xe = x + xlen;
    while (xe - x >= 4) {
        unsigned id = get16(x), sz = get16(x + 2);
        if ((size_t)(xe - x - 4) < sz) break;
        if (id == 1) {
            const unsigned char *p = x + 4, *pe = p + sz;
            if (usize == U32_MAX_FIELD && pe - p >= 8) usize = get64(p), p += 8;
            if (csize == U32_MAX_FIELD && pe - p >= 8) csize = get64(p), p += 8;
            if (off == U32_MAX_FIELD && pe - p >= 8) off = get64(p);
        }
        x += 4 + sz;
    }
    char *name = nd_malloc(nlen + 1);
    if (!name) {
        nd_error_set(ND_ERR_OOM, "%s: out of host memory", in->fn);
        return 0;
    }
    memcpy(name, c + 46, nlen);
    name[nlen] = '\0';
    /* np.load lists only the .npy members as arrays; others are skipped */
    if (nlen < 4 || strlen(name) != nlen || strcmp(name + nlen - 4, ".npy") != 0) {
        free(name);
        return rec;
    }
    size_t wn = nlen + strlen(in->path) + 32;
    char *what = nd_malloc(wn);
    if (!what) {
        free(name);
        nd_error_set(ND_ERR_OOM, "%s: out of host memory", in->fn);
        return 0;
    }
    snprintf(what, wn, "'%s', member '%s'", in->path, name);
    name[nlen - 4] = '\0';
    nd_array *a = NULL;
    unsigned char lh[30];
    if (flags & 1) {
        nd_error_set(ND_ERR_IO, "%s: %s: encrypted members are not supported", in->fn, what);
    } else if (method != 0 && method != 8) {
        nd_error_set(ND_ERR_IO, "%s: %s: compression method %u is not supported (stored and "
                     "deflated are)", in->fn, what, method);
    } else if (read_at(in, off, lh, 30) || get32(lh) != SIG_LOCAL) {
        nd_error_set(ND_ERR_IO, "%s: %s: its local header is missing or damaged", in->fn, what);
    } else {
        uint64_t data = off + 30 + get16(lh + 26) + get16(lh + 28);
        if (data > in->size || csize > in->size - data) {
            nd_error_set(ND_ERR_IO, "%s: %s: truncated: its %llu bytes are not all in the file",
                         in->fn, what, (unsigned long long)csize);
        } else if (method == 0 && csize != usize) {
            nd_error_set(ND_ERR_IO, "%s: %s: stored, but its sizes differ (%llu and %llu bytes)",
                         in->fn, what, (unsigned long long)csize, (unsigned long long)usize);
        } else {
            nd_npy_src src = {.len = usize, .crc_on = 1, .crc = (uint32_t)crc32(0L, Z_NULL, 0)};
            unsigned char *mem = NULL;
            if (method == 8) {
                mem = inflate_member(in, what, data, csize, usize);
                src.mem = mem;
            } else if (fseeko(in->f, (off_t)data, SEEK_SET) == 0) {
                src.f = in->f;
            } else {
                nd_error_set(ND_ERR_IO, "%s: %s: seeking to its data failed", in->fn, what);
            }
            if (src.f || src.mem) a = nd_npy_read(in->fn, what, &src);
            if (a && src.pos != src.len) {
                /* the rest after the array's data still counts toward the CRC */
                unsigned char buf[4096];
                size_t k;
                while ((k = (size_t)(src.len - src.pos)) > 0) {
                    if (k > sizeof buf) k = sizeof buf;
                    if (!src.mem && fread(buf, 1, k, src.f) != k) break;
                    src.crc = (uint32_t)crc32(src.crc, src.mem ? src.mem + src.pos : buf, (uInt)k);
                    src.pos += k;
                }
            }
            if (a && (src.pos != src.len || src.crc != crc)) {
                nd_fe_release(a);
                a = NULL;
                nd_error_set(ND_ERR_IO, "%s: %s: its CRC-32 does not match (the archive is damaged)",
                             in->fn, what);
            }
            free(mem);
        }
    }
    free(what);
    if (!a) {
        free(name);
        return 0;
    }
    z->names[z->n] = name;
    z->arrays[z->n++] = a;
    return rec;
}

nd_npz *nd_load_npz(const char *path) {
    ND_API_GUARD();
    static const char fn[] = "nd_load_npz";
    zin in = {fn, path, NULL, 0};
    in.f = nd_npy_open_read(fn, path, &in.size);
    if (!in.f) return NULL;
    uint64_t cd_off, cd_size, count;
    nd_npz *z = NULL;
    unsigned char *cd = NULL;
    if (find_directory(&in, &cd_off, &cd_size, &count)) goto fail;
    z = nd_calloc(1, sizeof *z);
    cd = nd_malloc(cd_size ? (size_t)cd_size : 1);
    if (z) {
        z->names = nd_calloc(count ? (size_t)count : 1, sizeof *z->names);
        z->arrays = nd_calloc(count ? (size_t)count : 1, sizeof *z->arrays);
    }
    if (!z || !cd || !z->names || !z->arrays) {
        nd_error_set(ND_ERR_OOM, "%s: out of host memory for the directory of '%s'", fn, path);
        goto fail;
    }
    if (read_at(&in, cd_off, cd, (size_t)cd_size)) {
        zfail(&in, "reading its central directory failed");
        goto fail;
    }
    uint64_t at = 0;
    for (uint64_t e = 0; e < count; e++) {
        size_t used = read_entry(&in, cd + at, cd_size - at, z);
        if (!used) goto fail;
        at += used;
    }
    free(cd);
    fclose(in.f);
    return z;
fail:
    free(cd);
    fclose(in.f);
    nd_npz_close(z);
    return NULL;
}

int nd_npz_count(const nd_npz *z) {
    ND_API_UNLOCKED();
    return z ? z->n : -1;
}

const char *nd_npz_name(const nd_npz *z, int i) {
    ND_API_UNLOCKED();
    return z && i >= 0 && i < z->n ? z->names[i] : NULL;
}

nd_array *nd_npz_get(const nd_npz *z, const char *name) {
    ND_API_GUARD();
    static const char fn[] = "nd_npz_get";
    if (!z || !name) {
        nd_error_set(ND_ERR_ARG, "%s: %s is NULL", fn, !z ? "z" : "name");
        return NULL;
    }
    for (int i = 0; i < z->n; i++)
        if (!strcmp(z->names[i], name)) return z->arrays[i];
    char list[512];
    size_t k = 0;
    list[0] = '\0';
    for (int i = 0; i < z->n && k + 8 < sizeof list; i++)
        k += (size_t)snprintf(list + k, sizeof list - k, "%s'%s'", i ? ", " : "", z->names[i]);
    if (k >= sizeof list) snprintf(list + sizeof list - 5, 5, "...");
    nd_error_set(ND_ERR_ARG, "%s: the archive has no array '%s' (it has %s%s)", fn, name,
                 z->n ? "" : "none", list);
    return NULL;
}
