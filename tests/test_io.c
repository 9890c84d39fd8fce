/* .npy and .npz files: files NumPy 2.4 wrote (their bytes, derived with
 * python3 and kept here so the suite checks the formats without NumPy)
 * load with the right dtype, shape and values, and nd writes the bytes
 * np.save writes; round trips of every dtype; and bad input of every kind
 * fails with ND_ERR_IO naming the path, never a crash.
 * tests/npy_numpy.py checks the same against a live NumPy. */
#include <unistd.h>

#include "common.h"
#include "common/fault.h"
#include "frontend/npy_io.h"

typedef struct {
    const char *name;
    nd_dtype dtype;
    int ndim;
    int64_t shape[ND_MAX_DIMS];
    const char *file; /* np.save's bytes (or format.write_array's, for versions 2 and 3) */
    size_t file_len;
    const char *want; /* the values, C order, little-endian */
    size_t want_len;
    const char *resave; /* np.save of the C-order little-endian array; NULL: file */
    size_t resave_len;
} npy_case;

static const npy_case npy_cases[] = {
    {"bool", ND_BOOL, 1, {3},
        "\223NUMPY\001\000v\000{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }            "
        "                                                \012\001\000\001", 131,
        "\001\000\001", 3,
        NULL, 0},
    {"int8", ND_INT8, 1, {4},
        "\223NUMPY\001\000v\000{'descr': '|i1', 'fortran_order': False, 'shape': (4,), }            "
        "                                                \012\200\177\000\377", 132,
        "\200\177\000\377", 4,
        NULL, 0},
    {"int16", ND_INT16, 2, {2, 2},
        "\223NUMPY\001\000v\000{'descr': '<i2', 'fortran_order': False, 'shape': (2, 2), }          "
        "                                                \012\000\200\377\177\001\000\376\377", 136,
        "\000\200\377\177\001\000\376\377", 8,
        NULL, 0},
    {"int32", ND_INT32, 1, {3},
        "\223NUMPY\001\000v\000{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }            "
        "                                                \012\000\000\000\200\377\377\377\177\007\000"
        "\000\000", 140,
        "\000\000\000\200\377\377\377\177\007\000\000\000", 12,
        NULL, 0},
    {"int64", ND_INT64, 1, {2},
        "\223NUMPY\001\000v\000{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }            "
        "                                                \012\000\000\000\000\000\000\000\200\377\377"
        "\377\377\377\377\377\177", 144,
        "\000\000\000\000\000\000\000\200\377\377\377\377\377\377\377\177", 16,
        NULL, 0},
    {"uint8", ND_UINT8, 1, {3},
        "\223NUMPY\001\000v\000{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }            "
        "                                                \012\000\377\021", 131,
        "\000\377\021", 3,
        NULL, 0},
    {"uint16", ND_UINT16, 1, {2},
        "\223NUMPY\001\000v\000{'descr': '<u2', 'fortran_order': False, 'shape': (2,), }            "
        "                                                \012\000\000\377\377", 132,
        "\000\000\377\377", 4,
        NULL, 0},
    {"uint32", ND_UINT32, 1, {2},
        "\223NUMPY\001\000v\000{'descr': '<u4', 'fortran_order': False, 'shape': (2,), }            "
        "                                                \012\000\000\000\000\377\377\377\377", 136,
        "\000\000\000\000\377\377\377\377", 8,
        NULL, 0},
    {"uint64", ND_UINT64, 1, {2},
        "\223NUMPY\001\000v\000{'descr': '<u8', 'fortran_order': False, 'shape': (2,), }            "
        "                                                \012\000\000\000\000\000\000\000\000\377\377"
        "\377\377\377\377\377\377", 144,
        "\000\000\000\000\000\000\000\000\377\377\377\377\377\377\377\377", 16,
        NULL, 0},
    {"float16", ND_FLOAT16, 1, {5},
        "\223NUMPY\001\000v\000{'descr': '<f2', 'fortran_order': False, 'shape': (5,), }            "
        "                                                \012\000>\000\374\000~\001\000\377{", 138,
        "\000>\000\374\000~\001\000\377{", 10,
        NULL, 0},
    {"float32", ND_FLOAT32, 2, {2, 3},
        "\223NUMPY\001\000v\000{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }          "
        "                                                \012\315\314\314=\000\000\000\200\000\000\200"
        "\177\236\311\177\177\001\000\000\000\000\000 \300", 152,
        "\315\314\314=\000\000\000\200\000\000\200\177\236\311\177\177\001\000\000\000\000\000 \300", 24,
        NULL, 0},
    {"float64", ND_FLOAT64, 1, {4},
        "\223NUMPY\001\000v\000{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }            "
        "                                                \012\030-DT\373!\011@\234u\000\210<\3447\376"
        "\001\000\000\000\000\000\000\000\000\000\000\000\000\000\370\177", 160,
        "\030-DT\373!\011@\234u\000\210<\3447\376\001\000\000\000\000\000\000\000\000\000\000\000\000"
        "\000\370\177", 32,
        NULL, 0},
    {"big-endian int32", ND_INT32, 1, {3},
        "\223NUMPY\001\000v\000{'descr': '>i4', 'fortran_order': False, 'shape': (3,), }            "
        "                                                \012\000\000\000\001\377\377\377\376\177\377"
        "\377\377", 140,
        "\001\000\000\000\376\377\377\377\377\377\377\177", 12,
        "\223NUMPY\001\000v\000{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }            "
        "                                                \012\001\000\000\000\376\377\377\377\377\377"
        "\377\177", 140},
    {"big-endian uint16", ND_UINT16, 2, {2, 2},
        "\223NUMPY\001\000v\000{'descr': '>u2', 'fortran_order': False, 'shape': (2, 2), }          "
        "                                                \012\000\001\000\002\377\377\001\000", 136,
        "\001\000\002\000\377\377\000\001", 8,
        "\223NUMPY\001\000v\000{'descr': '<u2', 'fortran_order': False, 'shape': (2, 2), }          "
        "                                                \012\001\000\002\000\377\377\000\001", 136},
    {"big-endian float64", ND_FLOAT64, 1, {2},
        "\223NUMPY\001\000v\000{'descr': '>f8', 'fortran_order': False, 'shape': (2,), }            "
        "                                                \012@\011!\373TD-\030\377\360\000\000\000\000"
        "\000\000", 144,
        "\030-DT\373!\011@\000\000\000\000\000\000\360\377", 16,
        "\223NUMPY\001\000v\000{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }            "
        "                                                \012\030-DT\373!\011@\000\000\000\000\000\000"
        "\360\377", 144},
    {"big-endian float16", ND_FLOAT16, 1, {2},
        "\223NUMPY\001\000v\000{'descr': '>f2', 'fortran_order': False, 'shape': (2,), }            "
        "                                                \012>\000\300\000", 132,
        "\000>\000\300", 4,
        "\223NUMPY\001\000v\000{'descr': '<f2', 'fortran_order': False, 'shape': (2,), }            "
        "                                                \012\000>\000\300", 132},
    {"big-endian float32 Fortran", ND_FLOAT32, 2, {2, 3},
        "\223NUMPY\001\000v\000{'descr': '>f4', 'fortran_order': True, 'shape': (2, 3), }           "
        "                                                \012\000\000\000\000@@\000\000\077\200\000\000"
        "@\200\000\000@\000\000\000@\240\000\000", 152,
        "\000\000\000\000\000\000\200\077\000\000\000@\000\000@@\000\000\200@\000\000\240@", 24,
        "\223NUMPY\001\000v\000{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }          "
        "                                                \012\000\000\000\000\000\000\200\077\000\000"
        "\000@\000\000@@\000\000\200@\000\000\240@", 152},
    {"Fortran float32 2x3", ND_FLOAT32, 2, {2, 3},
        "\223NUMPY\001\000v\000{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }           "
        "                                                \012\000\000\000\000\000\000@@\000\000\200\077"
        "\000\000\200@\000\000\000@\000\000\240@", 152,
        "\000\000\000\000\000\000\200\077\000\000\000@\000\000@@\000\000\200@\000\000\240@", 24,
        "\223NUMPY\001\000v\000{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }          "
        "                                                \012\000\000\000\000\000\000\200\077\000\000"
        "\000@\000\000@@\000\000\200@\000\000\240@", 152},
    {"Fortran int16 2x3x4", ND_INT16, 3, {2, 3, 4},
        "\223NUMPY\001\000v\000{'descr': '<i2', 'fortran_order': True, 'shape': (2, 3, 4), }        "
        "                                                \012\373\377\007\000\377\377\013\000\003\000"
        "\017\000\374\377\010\000\000\000\014\000\004\000\020\000\375\377\011\000\001\000\015\000\005"
        "\000\021\000\376\377\012\000\002\000\016\000\006\000\022\000", 176,
        "\373\377\374\377\375\377\376\377\377\377\000\000\001\000\002\000\003\000\004\000\005\000\006"
        "\000\007\000\010\000\011\000\012\000\013\000\014\000\015\000\016\000\017\000\020\000\021\000"
        "\022\000", 48,
        "\223NUMPY\001\000v\000{'descr': '<i2', 'fortran_order': False, 'shape': (2, 3, 4), }       "
        "                                                \012\373\377\374\377\375\377\376\377\377\377"
        "\000\000\001\000\002\000\003\000\004\000\005\000\006\000\007\000\010\000\011\000\012\000\013"
        "\000\014\000\015\000\016\000\017\000\020\000\021\000\022\000", 176},
    {"0-d float64", ND_FLOAT64, 0, {0},
        "\223NUMPY\001\000v\000{'descr': '<f8', 'fortran_order': False, 'shape': (), }              "
        "                                                \012\000\000\000\000\000\000\004@", 136,
        "\000\000\000\000\000\000\004@", 8,
        NULL, 0},
    {"0-d bool", ND_BOOL, 0, {0},
        "\223NUMPY\001\000v\000{'descr': '|b1', 'fortran_order': False, 'shape': (), }              "
        "                                                \012\001", 129,
        "\001", 1,
        NULL, 0},
    {"empty (0, 3) float32", ND_FLOAT32, 2, {0, 3},
        "\223NUMPY\001\000v\000{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3), }          "
        "                                                \012", 128,
        "", 0,
        NULL, 0},
    {"empty (0,) int64", ND_INT64, 1, {0},
        "\223NUMPY\001\000v\000{'descr': '<i8', 'fortran_order': False, 'shape': (0,), }            "
        "                                                \012", 128,
        "", 0,
        NULL, 0},
    {"version 2.0", ND_INT16, 1, {3},
        "\223NUMPY\002\000t\000\000\000{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }    "
        "                                                      \012\001\000\002\000\003\000", 134,
        "\001\000\002\000\003\000", 6,
        "\223NUMPY\001\000v\000{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }            "
        "                                                \012\001\000\002\000\003\000", 134},
    {"version 3.0", ND_FLOAT64, 2, {2, 1},
        "\223NUMPY\003\000t\000\000\000{'descr': '<f8', 'fortran_order': False, 'shape': (2, 1), }  "
        "                                                      \012\000\000\000\000\000\000\370\077\000"
        "\000\000\000\000\000\004@", 144,
        "\000\000\000\000\000\000\370\077\000\000\000\000\000\000\004@", 16,
        "\223NUMPY\001\000v\000{'descr': '<f8', 'fortran_order': False, 'shape': (2, 1), }          "
        "                                                \012\000\000\000\000\000\000\370\077\000\000"
        "\000\000\000\000\004@", 144},
    {"bfloat16 as '<V2'", ND_BFLOAT16, 1, {2},
        "\223NUMPY\001\000v\000{'descr': '|V2', 'fortran_order': False, 'shape': (2,), }            "
        "                                                \012\300\077I\300", 132,
        "\300\077I\300", 4,
        "\223NUMPY\001\000v\000{'descr': '<V2', 'fortran_order': False, 'shape': (2,), }            "
        "                                                \012\300\077I\300", 132},
};
/* np.savez(f, a=np.arange(3, dtype=np.int16), b=np.array([[1.5, -2]], np.float32)) */
static const char npz_stored[] =
        "PK\003\004-\000\000\000\000\000\000\000!\000j\317\362Q\377\377\377\377\377\377\377\377\005\000"
        "\024\000a.npy\001\000\020\000\206\000\000\000\000\000\000\000\206\000\000\000\000\000\000\000"
        "\223NUMPY\001\000v\000{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }            "
        "                                                \012\000\000\001\000\002\000PK\003\004-\000"
        "\000\000\000\000\000\000!\000\375\317\245\010\377\377\377\377\377\377\377\377\005\000\024\000"
        "b.npy\001\000\020\000\210\000\000\000\000\000\000\000\210\000\000\000\000\000\000\000\223NU"
        "MPY\001\000v\000{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), }                "
        "                                          \012\000\000\300\077\000\000\000\300PK\001\002-\003"
        "-\000\000\000\000\000\000\000!\000j\317\362Q\206\000\000\000\206\000\000\000\005\000\000\000"
        "\000\000\000\000\000\000\000\000\200\001\000\000\000\000a.npyPK\001\002-\003-\000\000\000\000"
        "\000\000\000!\000\375\317\245\010\210\000\000\000\210\000\000\000\005\000\000\000\000\000\000"
        "\000\000\000\000\000\200\001\275\000\000\000b.npyPK\005\006\000\000\000\000\002\000\002\000"
        "f\000\000\000|\001\000\000\000\000";
#define NPZ_STORED_LEN 504
/* np.savez_compressed(f, the same arrays) */
static const char npz_deflated[] =
        "PK\003\004-\000\000\000\010\000\000\000!\000j\317\362Q\377\377\377\377\377\377\377\377\005\000"
        "\024\000a.npy\001\000\020\000\206\000\000\000\000\000\000\000J\000\000\000\000\000\000\000\233"
        "\354\027\352\033\020\311\310P\306P\255\236\222Z\234\134\244n\245\240n\223i\244\256\243\240\236"
        "\226_TR\224\230\027\237_\224\222\012\022wK\314)N\005\212\027g$\026\244\002\371\032\306:\232"
        ":\012\265\012\024\000.\006\006F\006&\006\000PK\003\004-\000\000\000\010\000\000\000!\000\375"
        "\317\245\010\377\377\377\377\377\377\377\377\005\000\024\000b.npy\001\000\020\000\210\000\000"
        "\000\000\000\000\000M\000\000\000\000\000\000\000\233\354\027\352\033\020\311\310P\306P\255"
        "\236\222Z\234\134\244n\245\240n\223f\242\256\243\240\236\226_TR\224\230\027\237_\224\222\012"
        "\022wK\314)N\005\212\027g$\026\244\002\371\032\206:\012F\232:\012\265\012d\003.\006\206\003"
        "\366\014@\002\000PK\001\002-\003-\000\000\000\010\000\000\000!\000j\317\362QJ\000\000\000\206"
        "\000\000\000\005\000\000\000\000\000\000\000\000\000\000\000\200\001\000\000\000\000a.npyPK"
        "\001\002-\003-\000\000\000\010\000\000\000!\000\375\317\245\010M\000\000\000\210\000\000\000"
        "\005\000\000\000\000\000\000\000\000\000\000\000\200\001\201\000\000\000b.npyPK\005\006\000"
        "\000\000\000\002\000\002\000f\000\000\000\005\001\000\000\000\000";
#define NPZ_DEFLATED_LEN 385

/* A fresh path in the test's temp folder (removed by the test). */
static char tmp_dir[64];
static const char *tmp_path(const char *name) {
    static char path[4][160];
    static int k;
    if (!tmp_dir[0]) {
        snprintf(tmp_dir, sizeof tmp_dir, "/tmp/nd_test_io_XXXXXX");
        cr_assert(mkdtemp(tmp_dir), "mkdtemp");
    }
    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[k], "%s/%s", tmp_dir, name);
    return path[k];
}
static void tmp_clean(void) {
    char cmd[128];
    if (!tmp_dir[0]) return;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_dir);
    cr_expect_eq(system(cmd), 0);
    tmp_dir[0] = '\0';
}

static void write_file(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    cr_assert(f, "open %s", path);
    cr_assert_eq(fwrite(p, 1, n, f), n);
    cr_assert_eq(fclose(f), 0);
}

static unsigned char *read_file(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    cr_assert(f, "open %s", path);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    rewind(f);
    unsigned char *p = malloc((size_t)len + 1);
    cr_assert_eq(fread(p, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    *n = (size_t)len;
    return p;
}

/* a has dtype, shape and exactly the bytes want (C order). */
static void expect_array(nd_array *a, nd_dtype t, int ndim, const int64_t *shape, const void *want,
                         size_t n, const char *what) {
    cr_assert(a, "%s: %s", what, nd_last_error());
    cr_expect_eq(nd_dtype_of(a), t, "%s: dtype %s", what, nd_dtype_name(nd_dtype_of(a)));
    cr_assert_eq(nd_ndim(a), ndim, "%s: ndim %d", what, nd_ndim(a));
    for (int k = 0; k < ndim; k++) cr_expect_eq(nd_shape(a)[k], shape[k], "%s: axis %d", what, k);
    unsigned char *got = malloc(n + 8);
    memset(got, 0xab, n + 8);
    cr_assert_eq(nd_to_host(a, got, n), ND_OK, "%s: %s", what, nd_last_error());
    cr_expect_eq(memcmp(got, want, n), 0, "%s: values differ", what);
    for (size_t i = n; i < n + 8; i++) cr_expect_eq(got[i], 0xab, "%s: wrote past the end", what);
    free(got);
}

NDT_TEST(io, loads_numpy_files_and_saves_their_bytes) {
    for (size_t i = 0; i < sizeof npy_cases / sizeof npy_cases[0]; i++) {
        const npy_case *c = &npy_cases[i];
        const char *in = tmp_path("in.npy");
        write_file(in, c->file, c->file_len);
        nd_array *a = nd_load_npy(in);
        expect_array(a, c->dtype, c->ndim, c->shape, c->want, c->want_len, c->name);
        /* C-contiguous, as nd_from_host makes */
        int64_t stride = 1;
        for (int k = c->ndim - 1; k >= 0; k--) {
            cr_expect_eq(nd_strides(a)[k], stride, "%s: stride of axis %d", c->name, k);
            stride *= c->shape[k];
        }
        const char *out = tmp_path("out.npy");
        cr_assert_eq(nd_save_npy(out, a), ND_OK, "%s: %s", c->name, nd_last_error());
        size_t n;
        unsigned char *got = read_file(out, &n);
        const char *want = c->resave ? c->resave : c->file;
        size_t want_n = c->resave ? c->resave_len : c->file_len;
        cr_expect_eq(n, want_n, "%s: nd_save_npy wrote %zu bytes, np.save %zu", c->name, n, want_n);
        size_t at = 0;
        while (at < n && at < want_n && got[at] == (unsigned char)want[at]) at++;
        cr_expect(n == want_n && at == n, "%s: bytes differ from np.save's at byte %zu", c->name, at);
        free(got);
        nd_free(a);
    }
    tmp_clean();
}

NDT_TEST(io, round_trip_every_dtype_through_views) {
    NDT_RNG(r);
    for (int t = 0; t < NDT_NUM_DTYPES; t++) {
        ref_arr *ra = ndt_rand_bits(&r, (nd_dtype)t, ND_SHAPE(5, 7));
        nd_array *a = ndt_upload(ra);
        /* a transposed, reversed view: written as its values, row-major */
        nd_array *at = nd_transpose(a, NULL);
        nd_array *v = nd_view(at, "::-1, 1:");
        ref_arr *want = ndt_download(v);
        const char *p = tmp_path("rt.npy");
        cr_assert_eq(nd_save_npy(p, v), ND_OK, "%s", nd_last_error());
        nd_array *b = nd_load_npy(p);
        cr_assert(b, "%s", nd_last_error());
        ndt_check(b, want, 0, 0, NULL, "%s round trip", nd_dtype_name((nd_dtype)t));
        nd_free(a);
        nd_free(at);
        nd_free(v);
        nd_free(b);
        ref_free(ra);
        ref_free(want);
    }
    tmp_clean();
}

static void check_numpy_npz(nd_npz *z, const char *what) {
    cr_assert(z, "%s: %s", what, nd_last_error());
    cr_assert_eq(nd_npz_count(z), 2, "%s", what);
    cr_expect_str_eq(nd_npz_name(z, 0), "a");
    cr_expect_str_eq(nd_npz_name(z, 1), "b");
    cr_expect_null(nd_npz_name(z, 2));
    cr_expect_null(nd_npz_name(z, -1));
    const int16_t wa[3] = {0, 1, 2};
    const float wb[2] = {1.5f, -2.0f};
    expect_array(nd_npz_get(z, "a"), ND_INT16, 1, (int64_t[]){3}, wa, sizeof wa, what);
    expect_array(nd_npz_get(z, "b"), ND_FLOAT32, 2, (int64_t[]){1, 2}, wb, sizeof wb, what);
    cr_expect_null(nd_npz_get(z, "c"));
    cr_expect_eq(nd_last_status(), ND_ERR_ARG);
    cr_expect(strstr(nd_last_error(), "no array 'c' (it has 'a', 'b')"), "%s", nd_last_error());
    nd_clear_error();
}

NDT_TEST(io, loads_numpy_npz_stored_and_deflated) {
    const char *p = tmp_path("s.npz");
    write_file(p, npz_stored, NPZ_STORED_LEN);
    nd_npz *z = nd_load_npz(p);
    check_numpy_npz(z, "np.savez");
    /* a handle kept past nd_npz_close stays valid */
    nd_array *kept = nd_retain(nd_npz_get(z, "b"));
    nd_npz_close(z);
    const float wb[2] = {1.5f, -2.0f};
    expect_array(kept, ND_FLOAT32, 2, (int64_t[]){1, 2}, wb, sizeof wb, "kept");
    nd_free(kept);
    p = tmp_path("d.npz");
    write_file(p, npz_deflated, NPZ_DEFLATED_LEN);
    z = nd_load_npz(p);
    check_numpy_npz(z, "np.savez_compressed");
    nd_npz_close(z);
    nd_npz_close(NULL);
    tmp_clean();
}

NDT_TEST(io, npz_round_trip) {
    NDT_RNG(r);
    ref_arr *r0 = ndt_rand_bits(&r, ND_FLOAT64, ND_SHAPE(4, 3));
    ref_arr *r1 = ndt_rand_bits(&r, ND_BFLOAT16, ND_SHAPE(9));
    ref_arr *r2 = ndt_rand_bits(&r, ND_UINT8, ND_SCALAR_SHAPE);
    ref_arr *r3 = ndt_rand_bits(&r, ND_INT32, ND_SHAPE(0, 5));
    ref_arr *r4 = ndt_rand(&r, ND_FLOAT32, ND_SHAPE(300, 40), 0, 4); /* compressible */
    nd_array *arrs[5] = {ndt_upload(r0), ndt_upload(r1), ndt_upload(r2), ndt_upload(r3),
                         ndt_upload(r4)};
    const ref_arr *refs[5] = {r0, r1, r2, r3, r4};
    const char *names[5] = {"x", "weights.bf16", "scalar", "empty", "big"};
    for (int compress = 0; compress < 2; compress++) {
        const char *p = tmp_path("rt.npz");
        nd_status st = compress ? nd_savez_compressed(p, 5, names, arrs) : nd_savez(p, 5, names, arrs);
        cr_assert_eq(st, ND_OK, "%s", nd_last_error());
        nd_npz *z = nd_load_npz(p);
        cr_assert(z, "%s", nd_last_error());
        cr_assert_eq(nd_npz_count(z), 5);
        for (int i = 0; i < 5; i++) {
            cr_expect_str_eq(nd_npz_name(z, i), names[i]);
            ndt_check(nd_npz_get(z, names[i]), refs[i], 0, 0, NULL, "%s (compress %d)", names[i],
                      compress);
        }
        nd_npz_close(z);
    }
    /* every size and offset as a ZIP64 record, as archives past 4 GiB have */
    nd_npz_zip64_from = 0;
    for (int compress = 0; compress < 2; compress++) {
        const char *p = tmp_path("z64.npz");
        nd_status st = compress ? nd_savez_compressed(p, 5, names, arrs) : nd_savez(p, 5, names, arrs);
        cr_assert_eq(st, ND_OK, "%s", nd_last_error());
        size_t n;
        unsigned char *bytes = read_file(p, &n);
        cr_expect(memmem(bytes, n, "PK\006\006", 4) && memmem(bytes, n, "PK\006\007", 4),
                  "no ZIP64 end records");
        free(bytes);
        nd_npz *z = nd_load_npz(p);
        cr_assert(z, "%s", nd_last_error());
        cr_assert_eq(nd_npz_count(z), 5);
        for (int i = 0; i < 5; i++)
            ndt_check(nd_npz_get(z, names[i]), refs[i], 0, 0, NULL, "ZIP64 %s (compress %d)",
                      names[i], compress);
        nd_npz_close(z);
    }
    nd_npz_zip64_from = 0xffffffffu;
    /* an empty archive */
    const char *p = tmp_path("empty.npz");
    cr_assert_eq(nd_savez(p, 0, NULL, NULL), ND_OK, "%s", nd_last_error());
    nd_npz *z = nd_load_npz(p);
    cr_assert(z, "%s", nd_last_error());
    cr_expect_eq(nd_npz_count(z), 0);
    nd_npz_close(z);
    for (int i = 0; i < 5; i++) nd_free(arrs[i]);
    ref_free(r0), ref_free(r1), ref_free(r2), ref_free(r3), ref_free(r4);
    tmp_clean();
}

/* A .npy file with header text h (version 1.0) and n data bytes. */
static size_t make_npy(unsigned char *out, const char *h, const void *data, size_t n) {
    size_t hl = strlen(h);
    memcpy(out, "\223NUMPY\001\000", 8);
    out[8] = (unsigned char)(hl & 255);
    out[9] = (unsigned char)(hl >> 8);
    memcpy(out + 10, h, hl);
    if (n) memcpy(out + 10 + hl, data, n);
    return 10 + hl + n;
}

/* Loading bytes p[0..n) fails with ND_ERR_IO naming the path and `why`. */
static void expect_bad(const void *p, size_t n, const char *why, const char *what) {
    const char *path = tmp_path("bad.npy");
    write_file(path, p, n);
    nd_clear_error();
    nd_array *a = nd_load_npy(path);
    cr_expect_null(a, "%s: loaded", what);
    cr_expect_eq(nd_last_status(), ND_ERR_IO, "%s: status %d (%s)", what, nd_last_status(), nd_last_error());
    cr_expect(strstr(nd_last_error(), "nd_load_npy: '") && strstr(nd_last_error(), path),
              "%s: message names the path: %s", what, nd_last_error());
    if (why) cr_expect(strstr(nd_last_error(), why), "%s: message lacks '%s': %s", what, why, nd_last_error());
    nd_free(a);
    nd_clear_error();
}

NDT_TEST(io, bad_npy_files) {
    unsigned char f[512];
    const float d[6] = {0};
    /* every truncation of a valid file */
    const npy_case *c = &npy_cases[10]; /* float32 (2, 3) */
    for (size_t n = 0; n < c->file_len; n++) expect_bad(c->file, n, "truncated", "truncated file");
    memcpy(f, c->file, c->file_len);
    f[1] = 'X';
    expect_bad(f, c->file_len, "wrong magic", "wrong magic");
    memcpy(f, c->file, c->file_len);
    f[6] = 4;
    expect_bad(f, c->file_len, "format version 4.0 is not supported", "version 4.0");
    struct { const char *h, *why; } bad[] = {
        {"{'descr': '<c32', 'fortran_order': False, 'shape': (3,), }", "complex of long double"},
        {"{'descr': '|O', 'fortran_order': False, 'shape': (3,), }", "Python objects"},
        {"{'descr': [('a', '<f4'), ('b', '<i4')], 'fortran_order': False, 'shape': (3,), }", "structured"},
        {"{'descr': '<U3', 'fortran_order': False, 'shape': (3,), }", "strings"},
        {"{'descr': '<M8[D]', 'fortran_order': False, 'shape': (3,), }", "not one nd reads"},
        {"{'descr': '<m8', 'fortran_order': False, 'shape': (3,), }", "dates/times"},
        {"{'descr': '|V3', 'fortran_order': False, 'shape': (3,), }", "raw records"},
        {"{'descr': '<f16', 'fortran_order': False, 'shape': (3,), }", "not one nd reads"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3), }", "not a tuple"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (-3,), }", "non-negative"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }", "more than 8 axes"},
        {"{'descr': '<f4', 'fortran_order': False, }", "lacks 'shape'"},
        {"{'descr': '<f4', 'fortran_order': 0, 'shape': (3,), }", "True or False"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'x': 1}", "found 'x'"},
        {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", "found 'descr'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), } x", "text after"},
        {"['descr', '<f4']", "not a Python dict"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", "too large"},
        /* the header lies: more elements than the file holds */
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4), }", "needs 32 bytes of data, 24 follow"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4), }", "overflows"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000, 1000), }", "truncated"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_bad(f, make_npy(f, bad[i].h, d, sizeof d), bad[i].why, bad[i].h);
    /* key order, quotes and spacing are free, as for ast.literal_eval */
    size_t n = make_npy(f, "{\"shape\":(2,3,) ,'fortran_order':True,'descr':'<f4'}\n", d, sizeof d);
    const char *p = tmp_path("ok.npy");
    write_file(p, f, n);
    nd_array *a = nd_load_npy(p);
    expect_array(a, ND_FLOAT32, 2, (int64_t[]){2, 3}, d, sizeof d, "free-form header");
    nd_free(a);
    /* not a file */
    cr_expect_null(nd_load_npy("/nonexistent/dir/x.npy"));
    cr_expect_eq(nd_last_status(), ND_ERR_IO);
    cr_expect(strstr(nd_last_error(), "cannot open '/nonexistent/dir/x.npy'"), "%s", nd_last_error());
    nd_clear_error();
    cr_expect_null(nd_load_npy("/tmp"));
    cr_expect_eq(nd_last_status(), ND_ERR_IO);
    nd_clear_error();
    cr_expect_null(nd_load_npy(NULL));
    cr_expect_eq(nd_last_status(), ND_ERR_ARG);
    nd_clear_error();
    tmp_clean();
}

NDT_TEST(io, bad_npz_files) {
    /* every truncation of a valid archive */
    for (size_t n = 0; n < NPZ_DEFLATED_LEN; n++) {
        const char *p = tmp_path("t.npz");
        write_file(p, npz_deflated, n);
        nd_clear_error();
        nd_npz *z = nd_load_npz(p);
        cr_expect_null(z, "truncated to %zu bytes: loaded", n);
        cr_expect_eq(nd_last_status(), ND_ERR_IO, "truncated to %zu: %s", n, nd_last_error());
        cr_expect(strstr(nd_last_error(), p), "%s", nd_last_error());
        nd_npz_close(z);
    }
    /* a flipped data byte of a stored member fails its CRC-32 */
    unsigned char buf[NPZ_STORED_LEN];
    memcpy(buf, npz_stored, NPZ_STORED_LEN);
    const char *at = memmem(buf, NPZ_STORED_LEN, "\223NUMPY", 6);
    cr_assert(at);
    buf[(size_t)(at - (const char *)buf) + 130] ^= 1; /* inside member a's data */
    const char *p = tmp_path("crc.npz");
    write_file(p, buf, NPZ_STORED_LEN);
    cr_expect_null(nd_load_npz(p));
    cr_expect_eq(nd_last_status(), ND_ERR_IO);
    cr_expect(strstr(nd_last_error(), "member 'a.npy'") && strstr(nd_last_error(), "CRC-32"), "%s",
              nd_last_error());
    nd_clear_error();
    /* a .npy is not an archive */
    p = tmp_path("x.npz");
    write_file(p, npy_cases[0].file, npy_cases[0].file_len);
    cr_expect_null(nd_load_npz(p));
    cr_expect_eq(nd_last_status(), ND_ERR_IO);
    cr_expect(strstr(nd_last_error(), "not a ZIP archive"), "%s", nd_last_error());
    nd_clear_error();
    cr_expect_null(nd_load_npz(NULL));
    cr_expect_eq(nd_last_status(), ND_ERR_ARG);
    nd_clear_error();
    tmp_clean();
}

NDT_TEST(io, save_errors) {
    nd_array *a = nd_zeros(ND_FLOAT32, ND_SHAPE(2));
    cr_expect_eq(nd_save_npy("/nonexistent/dir/x.npy", a), ND_ERR_IO);
    cr_expect(strstr(nd_last_error(), "nd_save_npy: cannot open '/nonexistent/dir/x.npy' for writing"),
              "%s", nd_last_error());
    nd_clear_error();
    cr_expect_eq(nd_save_npy(NULL, a), ND_ERR_ARG);
    nd_clear_error();
    cr_expect_eq(nd_save_npy(tmp_path("n.npy"), NULL), ND_ERR_ARG);
    cr_expect(access(tmp_path("n.npy"), F_OK) != 0, "nothing written for a NULL array");
    nd_clear_error();
    const char *p = tmp_path("e.npz");
    nd_array *two[2] = {a, a};
    const char *dup[2] = {"w", "w"}, *slash[1] = {"a/b"}, *empty[1] = {""}, *null_name[1] = {NULL};
    nd_array *null_arr[1] = {NULL};
    const char *ok[1] = {"w"};
    struct { nd_status st; int n; const char *const *names; nd_array *const *arrays; const char *why; } bad[] = {
        {ND_ERR_ARG, 2, dup, two, "names[0] and names[1] are both 'w'"},
        {ND_ERR_ARG, 1, slash, two, "names[0] 'a/b' is not a usable name"},
        {ND_ERR_ARG, 1, empty, two, "names[0] '' is not a usable name"},
        {ND_ERR_ARG, 1, null_name, two, "names[0] NULL"},
        {ND_ERR_ARG, 1, ok, null_arr, "arrays[0]"},
        {ND_ERR_ARG, 1, NULL, two, "names is NULL"},
        {ND_ERR_ARG, -1, ok, two, "n = -1 is negative"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        nd_clear_error();
        cr_expect_eq(nd_savez(p, bad[i].n, bad[i].names, bad[i].arrays), bad[i].st, "case %zu", i);
        cr_expect(strstr(nd_last_error(), bad[i].why), "case %zu: %s", i, nd_last_error());
        cr_expect(access(p, F_OK) != 0, "case %zu: a file was left", i);
    }
    nd_clear_error();
    cr_expect_null(nd_npz_get(NULL, "a"));
    cr_expect_eq(nd_npz_count(NULL), -1);
    nd_clear_error();
    nd_free(a);
    tmp_clean();
}

/* Every host and backend allocation of a load, a save and a print fails in
 * turn: each run either gives the right result or fails with the cause,
 * never a crash or a leak (the ASan build checks both), and the next run
 * works. */
typedef enum { OP_LOAD_NPY, OP_LOAD_NPZ, OP_SAVEZ, OP_PRINT, OP_COUNT } fault_op;

/* What an op made: checked after the faults are off (a check's own
 * allocations must not be the ones failing). */
static nd_array *op_array;
static nd_npz *op_npz;
static char op_text[512];

/* Runs op: 1 done, 0 failed (with the error set). */
static int run_op(fault_op op, nd_array *x, const char *npy, const char *npz) {
    const char *names[1] = {"x"};
    switch (op) {
    case OP_LOAD_NPY: return (op_array = nd_load_npy(npy)) != NULL;
    case OP_LOAD_NPZ: return (op_npz = nd_load_npz(npz)) != NULL;
    case OP_SAVEZ: return nd_savez_compressed(tmp_path("f.npz"), 1, names, &x) == ND_OK;
    default: return nd_to_string(x, op_text, sizeof op_text) >= 0;
    }
}

/* Checks (and releases) what a successful op made: 1 right, -1 wrong. */
static int check_op(fault_op op) {
    int ok = 1;
    nd_array *a = op == OP_LOAD_NPY ? op_array : op == OP_LOAD_NPZ ? nd_npz_get(op_npz, "x") : NULL;
    if (op == OP_LOAD_NPY || op == OP_LOAD_NPZ) {
        int16_t v[1200];
        ok = a && nd_size(a) == 1200 && nd_to_host(a, v, sizeof v) == ND_OK;
        for (int i = 0; ok && i < 1200; i++) ok = v[i] == i;
    } else if (op == OP_PRINT) {
        ok = !strcmp(op_text, "array([[   0,    1,    2, ...,  597,  598,  599],\n"
                              "       [ 600,  601,  602, ..., 1197, 1198, 1199]],\n"
                              "      shape=(2, 600), dtype=int16)");
    }
    nd_free(op_array);
    nd_npz_close(op_npz);
    op_array = NULL;
    op_npz = NULL;
    return ok ? 1 : -1;
}

NDT_TEST(io, allocation_faults) {
    nd_array *x64 = nd_arange(ND_INT64, 0, 1200, 1), *x2d = nd_reshape(x64, ND_SHAPE(2, 600));
    nd_array *x = nd_astype(x2d, ND_INT16);
    char npy[160], npz[160];
    snprintf(npy, sizeof npy, "%s", tmp_path("f.npy"));
    cr_assert_eq(nd_save_npy(npy, x), ND_OK, "%s", nd_last_error());
    snprintf(npz, sizeof npz, "%s", tmp_path("g.npz"));
    const char *names[1] = {"x"};
    cr_assert_eq(nd_savez_compressed(npz, 1, names, &x), ND_OK, "%s", nd_last_error());
    nd_sync();
    const nd_fault_kind kinds[2] = {ND_FAULT_HOST_ALLOC, ND_FAULT_DEVICE_ALLOC};
    for (int op = 0; op < OP_COUNT; op++)
        for (int k = 0; k < 2; k++) {
            nd_fault_arm(kinds[k], 0, 0);
            int r = run_op((fault_op)op, x, npy, npz);
            nd_fault_disarm();
            cr_assert_eq(r, 1, "op %d: %s", op, nd_last_error());
            cr_assert_eq(check_op((fault_op)op), 1, "op %d: wrong result", op);
            int64_t points = nd_fault_count(kinds[k]);
            for (int64_t n = 1; n <= points; n++) {
                nd_clear_error();
                nd_fault_arm(kinds[k], n, 0);
                r = run_op((fault_op)op, x, npy, npz);
                nd_fault_disarm();
                if (r == 1)
                    cr_expect_eq(check_op((fault_op)op), 1, "op %d, %s fault %lld: a wrong result%s%s",
                                 op, nd_fault_kind_name(kinds[k]), (long long)n,
                                 op == OP_PRINT ? ": " : "", op == OP_PRINT ? op_text : "");
                else
                    cr_expect(nd_last_status() != ND_OK, "op %d, fault %lld: failed without an error",
                              op, (long long)n);
                nd_clear_error();
                nd_sync();
                nd_clear_error();
            }
            cr_expect_eq(run_op((fault_op)op, x, npy, npz), 1, "op %d after the faults: %s", op,
                         nd_last_error());
            cr_expect_eq(check_op((fault_op)op), 1, "op %d after the faults: wrong result", op);
        }
    nd_free(x);
    nd_free(x2d);
    nd_free(x64);
    tmp_clean();
}
