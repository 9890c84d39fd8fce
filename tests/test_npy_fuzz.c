/* Fuzzing the .npy header parser and the .npy/.npz readers with random
 * mutations of valid files (byte changes, bit flips, insertions,
 * deletions, truncations, header tokens spliced in). Every input lives in
 * a buffer of exactly its size, so under the ASan build (scripts/test.sh)
 * any read past the input is caught. Each outcome must be consistent: a
 * parsed header describes a shape nd can hold and lies inside the input;
 * "need more" asks for more than was given; a failure says why. Seeds:
 * ND_TEST_SEED as for every suite. */
#include <unistd.h>

#include "common.h"
#include "common/dtype.h"
#include "frontend/npy_format.h"
#include "frontend/npy_io.h"

#define MAX_IN 1024

static const char *tokens[] = {"(", ")", ",", "9", "99999999999999999999", "'", "\"", "{", "}", " ",
                               "True", "False", "'descr'", "'shape'", "'fortran_order'", ":",
                               "'<f4'", "'>i8'", "'|V2'", "'<c16'", "[", "]", "\\", "\n", "\0", "-1"};

/* A few valid files: headers np.save writes, and variants NumPy accepts. */
static size_t seed_file(int which, unsigned char *out) {
    static const nd_dtype dts[] = {ND_FLOAT32, ND_INT64, ND_BOOL, ND_UINT16, ND_FLOAT16, ND_BFLOAT16};
    static const char *custom[] = {
        "{'descr': '>f8', 'fortran_order': True, 'shape': (2, 2), }",
        "{\"shape\": (3,), \"descr\": \"<i2\", \"fortran_order\": False}",
        "{'descr':'|u1','fortran_order':False,'shape':()}",
    };
    if (which < 6) {
        int64_t shape[3] = {2, 3, 1};
        int ndim = which % 4;
        size_t n = nd_npy_build(dts[which], ndim, shape, out);
        size_t bytes = nd_dtype_size(dts[which]) * (size_t)(ndim > 0 ? 2 : 1) * (ndim > 1 ? 3 : 1);
        memset(out + n, 0x3c, bytes);
        return n + bytes;
    }
    const char *h = custom[(which - 6) % 3];
    size_t hl = strlen(h);
    int v2 = which == 7; /* a version 2.0 preamble */
    memcpy(out, "\223NUMPY", 6);
    out[6] = v2 ? 2 : 1;
    out[7] = 0;
    size_t at = 8;
    out[at++] = (unsigned char)hl;
    out[at++] = (unsigned char)(hl >> 8);
    if (v2) out[at++] = 0, out[at++] = 0;
    memcpy(out + at, h, hl);
    memset(out + at + hl, 0x41, 32);
    return at + hl + 32;
}

static size_t mutate(ndt_rng *r, unsigned char *p, size_t n) {
    int rounds = 1 + (int)ndt_int(r, 0, 3);
    for (int k = 0; k < rounds; k++) {
        size_t at = n ? (size_t)ndt_int(r, 0, (int64_t)n - 1) : 0;
        switch (ndt_int(r, 0, 6)) {
        case 0: if (n) p[at] = (unsigned char)ndt_next(r); break;
        case 1: if (n) p[at] ^= (unsigned char)(1u << ndt_int(r, 0, 7)); break;
        case 2: /* insert a byte */
            if (n < MAX_IN) {
                memmove(p + at + 1, p + at, n - at);
                p[at] = (unsigned char)ndt_next(r);
                n++;
            }
            break;
        case 3: /* delete a byte */
            if (n) {
                memmove(p + at, p + at + 1, n - at - 1);
                n--;
            }
            break;
        case 4: n = n ? (size_t)ndt_int(r, 0, (int64_t)n) : 0; break; /* truncate */
        default: { /* splice a token in place of the bytes at `at` */
            const char *t = tokens[ndt_int(r, 0, sizeof tokens / sizeof tokens[0] - 1)];
            size_t tl = strlen(t) ? strlen(t) : 1;
            if (at + tl <= MAX_IN) {
                memcpy(p + at, t, tl);
                if (at + tl > n) n = at + tl;
            }
        }
        }
    }
    return n;
}

NDT_TEST(npy_fuzz, header_parser) {
    NDT_RNG(r);
    unsigned char buf[MAX_IN + 64];
    int outcomes[3] = {0};
    for (int it = 0; it < 60000; it++) {
        size_t n = seed_file(it % 9, buf);
        n = mutate(&r, buf, n);
        unsigned char *in = malloc(n ? n : 1);
        memcpy(in, buf, n);
        nd_npy_info info;
        size_t need = 0;
        char why[256] = "";
        int got = nd_npy_parse(in, n, &info, &need, why, sizeof why);
        outcomes[got + 1]++;
        if (got == 0) {
            cr_assert(nd_dtype_valid((int)info.dtype));
            cr_assert(info.ndim >= 0 && info.ndim <= ND_MAX_DIMS);
            size_t bytes = nd_dtype_size(info.dtype);
            for (int k = 0; k < info.ndim; k++) {
                cr_assert_geq(info.shape[k], 0);
                bytes *= (size_t)info.shape[k];
            }
            cr_assert_eq(bytes, info.data_bytes);
            cr_assert_leq(info.data_offset, n);
        } else if (got == 1) {
            cr_assert_gt(need, n, "asks for %zu bytes with %zu given", need, n);
        } else {
            cr_assert_eq(got, -1);
            cr_assert(why[0], "a failure without a reason");
        }
        free(in);
    }
    /* the mutations reach every outcome */
    cr_expect(outcomes[0] > 1000 && outcomes[1] > 100 && outcomes[2] > 1000,
              "outcomes: %d failed, %d parsed, %d short", outcomes[0], outcomes[2], outcomes[1]);
}

NDT_TEST(npy_fuzz, reader_from_memory) {
    NDT_RNG(r);
    unsigned char buf[MAX_IN + 64];
    int loaded = 0;
    for (int it = 0; it < 4000; it++) {
        size_t n = mutate(&r, buf, seed_file(it % 9, buf));
        unsigned char *in = malloc(n ? n : 1);
        memcpy(in, buf, n);
        nd_npy_src src = {.mem = in, .len = n};
        nd_array *a = nd_npy_read("fuzz", "'mem'", &src);
        if (a) {
            loaded++;
            size_t bytes = nd_dtype_size(nd_dtype_of(a)) * (size_t)nd_size(a);
            unsigned char *out = malloc(bytes ? bytes : 1);
            cr_assert_eq(nd_to_host(a, out, bytes), ND_OK, "%s", nd_last_error());
            free(out);
            nd_free(a);
        } else {
            nd_status st = nd_last_status();
            cr_assert(st == ND_ERR_IO || st == ND_ERR_OOM || st == ND_ERR_ARG || st == ND_ERR_SHAPE,
                      "status %d: %s", st, nd_last_error());
            nd_clear_error();
        }
        free(in);
    }
    cr_expect_gt(loaded, 100, "only %d mutated files loaded", loaded);
}

NDT_TEST(npy_fuzz, npz_reader) {
    NDT_RNG(r);
    char dir[] = "/tmp/nd_test_fuzz_XXXXXX";
    cr_assert(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/f.npz", dir);
    nd_array *arrs[2] = {nd_arange(ND_INT16, 0, 5, 1), nd_ones(ND_FLOAT32, ND_SHAPE(2, 2))};
    const char *names[2] = {"a", "b"};
    for (int compress = 0; compress < 2; compress++) {
        cr_assert_eq((compress ? nd_savez_compressed : nd_savez)(path, 2, names, arrs), ND_OK);
        FILE *f = fopen(path, "rb");
        unsigned char orig[4096];
        size_t on = fread(orig, 1, sizeof orig, f);
        fclose(f);
        cr_assert_lt(on, sizeof orig);
        for (int it = 0; it < 300; it++) {
            unsigned char m[4096 + 64];
            memcpy(m, orig, on);
            size_t n = on;
            int flips = 1 + (int)ndt_int(&r, 0, 2);
            for (int k = 0; k < flips; k++) {
                size_t at = (size_t)ndt_int(&r, 0, (int64_t)n - 1);
                if (ndt_int(&r, 0, 3) == 0) n = at; /* truncate */
                else m[at] = (unsigned char)ndt_next(&r);
                if (!n) break;
            }
            f = fopen(path, "wb");
            fwrite(m, 1, n, f);
            fclose(f);
            nd_npz *z = nd_load_npz(path);
            if (!z) {
                cr_assert(nd_last_status() == ND_ERR_IO || nd_last_status() == ND_ERR_OOM ||
                          nd_last_status() == ND_ERR_SHAPE || nd_last_status() == ND_ERR_ARG,
                          "%s", nd_last_error());
                nd_clear_error();
            }
            nd_npz_close(z);
        }
    }
    nd_free(arrs[0]);
    nd_free(arrs[1]);
    remove(path);
    rmdir(dir);
}
