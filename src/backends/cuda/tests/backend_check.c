/* Standalone check of the CUDA backend on a real GPU, without the rest of
 * nd (no scheduler, no libuv): builds kernel IR by hand, runs it through
 * the backend and compares with host references (src/common). Build:
 *   src/backends/cuda/tests/run_check.sh   (see there)  */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/cuda_internal.h"
#include "common/philox.h"

static int fails, checks;
#define CHECK(c, ...)                                  \
    do {                                               \
        checks++;                                      \
        if (!(c)) {                                    \
            fails++;                                   \
            printf("FAIL %s:%d: ", __FILE__, __LINE__); \
            printf(__VA_ARGS__);                       \
            printf("\n");                              \
        }                                              \
    } while (0)
#define OK(s) CHECK((s) == ND_OK, "status %d: %s", (int)(s), nd_last_error())

static nd_backend *be;
static uint64_t next_hash = 1000;

static nd_ir_access acc(int slot, nd_dtype t, int64_t off, int ndim, const int64_t *st) {
    nd_ir_access a;
    memset(&a, 0, sizeof a);
    a.slot = slot;
    a.dtype = (uint8_t)t;
    a.offset = off;
    for (int d = 0; d < ndim; d++) a.strides[d] = st[d];
    return a;
}

static void *dev(size_t bytes) {
    void *p = NULL;
    OK(be->alloc(be, 1, bytes, &p));
    return p;
}
static void *up(const void *h, size_t bytes) {
    void *d = dev(bytes);
    OK(be->copy(be, d, 1, h, 0, bytes));
    return d;
}
static void down(void *h, const void *d, size_t bytes) {
    OK(be->copy(be, h, 0, d, 1, bytes));
    OK(be->synchronize(be));
}

/* out = cast<dt>(a * b + p) for float32 a, b; also tests the vector path. */
static void test_elementwise(int64_t n, int misalign) {
    float *a = malloc(sizeof(float) * (n + 1)), *b = malloc(sizeof(float) * (n + 1)), *o = malloc(sizeof(float) * (n + 1));
    for (int64_t i = 0; i < n + 1; i++) {
        a[i] = (float)sin((double)i) * 3.0f;
        b[i] = (float)cos((double)i * 0.7) + 0.1f;
    }
    void *da = up(a, sizeof(float) * (n + 1)), *db = up(b, sizeof(float) * (n + 1)), *dout = dev(sizeof(float) * (n + 1));
    nd_kernel k;
    memset(&k, 0, sizeof k);
    snprintf(k.name, sizeof k.name, "mul_add");
    k.ndim = 1;
    k.shape[0] = n;
    int64_t one[1] = {1};
    nd_ir_access loads[2] = {acc(0, ND_FLOAT32, misalign, 1, one), acc(1, ND_FLOAT32, 0, 1, one)};
    uint8_t pd[1] = {ND_FLOAT32};
    nd_ir_inst ins[5] = {{ND_IR_LOAD, ND_FLOAT32, 0, 0, 0, 0, 0, 0}, {ND_IR_LOAD, ND_FLOAT32, 0, 1, 0, 0, 0, 0},
                         {ND_IR_PARAM, ND_FLOAT32, 0, 0, 0, 0, 0, 0}, {ND_OP_MUL, ND_FLOAT32, 0, 0, 1, 0, 0, 0},
                         {ND_OP_ADD, ND_FLOAT32, 0, 3, 2, 0, 0, 0}};
    nd_ir_store st = {acc(2, ND_FLOAT32, 0, 1, one), 4};
    k.n_slots = 3;
    k.n_params = 1;
    k.param_dtypes = pd;
    k.n_loads = 2;
    k.loads = loads;
    k.n_insts = 5;
    k.insts = ins;
    k.n_stores = 1;
    k.stores = &st;
    k.hash = next_hash++;
    void *slots[3] = {da, db, dout};
    nd_scalar_bits p[1];
    p[0].f = 0.25;
    OK(be->run_kernel(be, &k, slots, p));
    down(o, dout, sizeof(float) * n);
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
        /* The generator may contract a*b + p into one FMA (kernel_ir.h:
         * only ND_IR_EXACT operations round on their own): either
         * rounding is right. */
        volatile float m = a[i + misalign] * b[i];
        float e = m + 0.25f, fused = fmaf(a[i + misalign], b[i], 0.25f);
        if (memcmp(&e, &o[i], 4) && memcmp(&fused, &o[i], 4)) {
            if (!bad) printf("  elementwise[%lld] = %.9g, want %.9g\n", (long long)i, o[i], e);
            bad++;
        }
    }
    CHECK(bad == 0, "elementwise n=%lld misalign=%d: %d mismatches", (long long)n, misalign, bad);
    be->release(be, 1, da, sizeof(float) * (n + 1));
    be->release(be, 1, db, sizeof(float) * (n + 1));
    be->release(be, 1, dout, sizeof(float) * (n + 1));
    free(a);
    free(b);
    free(o);
}

/* Casting float64 values to every dtype matches nd_convert_element. */
static void test_casts(void) {
    enum { N = 4096 };
    double *src = malloc(sizeof(double) * N);
    for (int i = 0; i < N; i++) {
        uint64_t r = nd_philox4x32_10(7, (uint64_t)i, 0).x[0];
        double v = ((double)r / 4294967296.0 - 0.5) * pow(2.0, (double)(i % 80) - 20);
        if (i % 97 == 0) v = NAN;
        if (i % 101 == 0) v = INFINITY;
        if (i % 103 == 0) v = -0.0;
        if (i % 7 == 0) v = floor(v) + 0.5;
        src[i] = v;
    }
    void *ds = up(src, sizeof(double) * N);
    for (int from = 0; from <= ND_FLOAT64; from++) { /* the real dtypes: complex casts are test_ops's */
        /* First cast f64 -> from on the host, then from -> to on the device. */
        unsigned char *mid = malloc(8 * N);
        int fs = (int)(from == ND_BOOL || from == ND_INT8 || from == ND_UINT8 ? 1
                       : from == ND_INT16 || from == ND_UINT16 || from == ND_FLOAT16 || from == ND_BFLOAT16 ? 2
                       : from == ND_INT32 || from == ND_UINT32 || from == ND_FLOAT32 ? 4 : 8);
        for (int i = 0; i < N; i++) nd_convert_element(mid + i * fs, (nd_dtype)from, &src[i], ND_FLOAT64);
        void *dm = up(mid, (size_t)fs * N);
        for (int to = 0; to <= ND_FLOAT64; to++) {
            int ts = (int)(to == ND_BOOL || to == ND_INT8 || to == ND_UINT8 ? 1
                           : to == ND_INT16 || to == ND_UINT16 || to == ND_FLOAT16 || to == ND_BFLOAT16 ? 2
                           : to == ND_INT32 || to == ND_UINT32 || to == ND_FLOAT32 ? 4 : 8);
            nd_kernel k;
            memset(&k, 0, sizeof k);
            snprintf(k.name, sizeof k.name, "cast_%d_%d", from, to);
            k.ndim = 1;
            k.shape[0] = N;
            int64_t one[1] = {1};
            nd_ir_access ld = acc(0, (nd_dtype)from, 0, 1, one);
            nd_ir_inst ins[2] = {{ND_IR_LOAD, (uint8_t)from, 0, 0, 0, 0, 0, 0}, {ND_OP_CAST, (uint8_t)to, 0, 0, 0, 0, 0, 0}};
            nd_ir_store st = {acc(1, (nd_dtype)to, 0, 1, one), 1};
            k.n_slots = 2;
            k.n_loads = 1;
            k.loads = &ld;
            k.n_insts = 2;
            k.insts = ins;
            k.n_stores = 1;
            k.stores = &st;
            k.hash = next_hash++;
            void *dout = dev((size_t)ts * N);
            void *slots[2] = {dm, dout};
            OK(be->run_kernel(be, &k, slots, NULL));
            unsigned char *got = malloc((size_t)ts * N), want[8];
            down(got, dout, (size_t)ts * N);
            int bad = 0;
            for (int i = 0; i < N; i++) {
                nd_convert_element(want, (nd_dtype)to, mid + i * fs, (nd_dtype)from);
                int same = memcmp(want, got + i * ts, (size_t)ts) == 0;
                /* NaN payloads may differ; any NaN is fine. */
                if (!same && (to == ND_FLOAT32 || to == ND_FLOAT64 || to == ND_FLOAT16 || to == ND_BFLOAT16)) {
                    double w = nd_load_double(want, (nd_dtype)to), g = nd_load_double(got + i * ts, (nd_dtype)to);
                    same = isnan(w) && isnan(g);
                }
                if (!same) {
                    if (bad < 2) printf("  cast %d->%d [%d] src %.17g: got %.17g want %.17g\n", from, to, i,
                                        nd_load_double(mid + i * fs, (nd_dtype)from),
                                        nd_load_double(got + i * ts, (nd_dtype)to), nd_load_double(want, (nd_dtype)to));
                    bad++;
                }
            }
            CHECK(bad == 0, "cast %d -> %d: %d mismatches", from, to, bad);
            free(got);
            be->release(be, 1, dout, (size_t)ts * N);
        }
        be->release(be, 1, dm, (size_t)fs * N);
        free(mid);
    }
    be->release(be, 1, ds, sizeof(double) * N);
    free(src);
}

/* Random draws through an index map (offset, strides over `shape`):
 * philox.h's mapping shares one call among W consecutive indices, which the
 * generated code exploits for groups of points (codegen_rng.c) and must not
 * get wrong for offsets, reversal, transposition or rows W does not divide.
 * value(index) as the GPU computes it: float16/bfloat16 round the float32
 * draw. */
static const uint64_t RNG_SEED = 0x123456789abcdefull, RNG_STREAM = 3;

static double rng_want(nd_dtype t, int normal, uint64_t i) {
    if (t == ND_FLOAT64)
        return normal ? nd_philox_normal_f64(RNG_SEED, RNG_STREAM, i) : nd_philox_uniform_f64(RNG_SEED, RNG_STREAM, i);
    float f = normal ? nd_philox_normal_f32(RNG_SEED, RNG_STREAM, i) : nd_philox_uniform_f32(RNG_SEED, RNG_STREAM, i);
    unsigned char b[4];
    nd_convert_element(b, t, &f, ND_FLOAT32);
    double d;
    nd_convert_element(&d, ND_FLOAT64, b, t);
    return d;
}

/* Draw index of row-major point `flat`, and the point's multi-index. */
static int64_t rng_index(const nd_ir_access *m, int ndim, const int64_t *shape, int64_t flat, int64_t *ix) {
    int64_t x = m->offset;
    for (int d = ndim - 1; d >= 0; d--) {
        ix[d] = flat % shape[d];
        flat /= shape[d];
    }
    for (int d = 0; d < ndim; d++) x += m->strides[d] * ix[d];
    return x;
}

/* A kernel whose body is one draw at index map idx: stored (axes == 0,
 * contiguous output) or summed over `axes`. */
static nd_kernel rng_kernel(int ndim, const int64_t *shape, nd_ir_access *idx, nd_ir_inst *ins, nd_ir_store *st,
                            uint8_t *pd, nd_dtype t, int normal, uint32_t axes) {
    nd_kernel k;
    memset(&k, 0, sizeof k);
    snprintf(k.name, sizeof k.name, "%s%s", axes ? "sum_" : "", normal ? "normal" : "uniform");
    k.ndim = ndim;
    memcpy(k.shape, shape, sizeof(int64_t) * (size_t)ndim);
    int64_t cst[ND_MAX_DIMS] = {0}, s = 1;
    for (int d = ndim - 1; d >= 0; d--)
        if (!(axes >> d & 1u)) {
            cst[d] = s;
            s *= shape[d];
        }
    pd[0] = pd[1] = ND_UINT64;
    ins[0] = (nd_ir_inst){ND_IR_INDEX, ND_INT64, 0, 0, 0, 0, 0, 0};
    ins[1] = (nd_ir_inst){(uint8_t)(normal ? ND_IR_RAND_NORMAL : ND_IR_RAND_UNIFORM), (uint8_t)t, 0, 0, 0, 1, 0, 0};
    k.n_slots = 1;
    k.n_params = 2;
    k.param_dtypes = pd;
    k.n_indices = 1;
    k.indices = idx;
    k.n_insts = 2;
    k.insts = ins;
    if (axes) {
        k.has_reduce = 1;
        k.reduce.kind = ND_REDUCE_SUM;
        k.reduce.axes = axes;
        k.reduce.value = 1;
        k.reduce.out_dtype = (uint8_t)t;
        k.reduce.out = acc(0, t, 0, ndim, cst);
    } else {
        *st = (nd_ir_store){acc(0, t, 0, ndim, cst), 1};
        k.n_stores = 1;
        k.stores = st;
    }
    k.hash = next_hash++;
    return k;
}

static size_t rng_size(nd_dtype t) { return t == ND_FLOAT64 ? 8 : t == ND_FLOAT32 ? 4 : 2; }

/* Runs k with the RNG seed and stream into a fresh output of `bytes`;
 * returns the output on the host (malloc'd). */
static unsigned char *rng_run(const nd_kernel *k, size_t bytes) {
    void *d = dev(bytes);
    void *slots[1] = {d};
    nd_scalar_bits p[2];
    p[0].u = RNG_SEED;
    p[1].u = RNG_STREAM;
    OK(be->run_kernel(be, k, slots, p));
    unsigned char *h = malloc(bytes);
    down(h, d, bytes);
    be->release(be, 1, d, bytes);
    return h;
}

static void test_rng(int ndim, const int64_t *shape, int64_t off, const int64_t *strides, nd_dtype t, int normal) {
    nd_ir_access idx = acc(0, ND_INT64, off, ndim, strides);
    nd_ir_inst ins[2];
    nd_ir_store st;
    uint8_t pd[2];
    nd_kernel k = rng_kernel(ndim, shape, &idx, ins, &st, pd, t, normal, 0);
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    size_t es = rng_size(t);
    unsigned char *h = rng_run(&k, es * (size_t)n);
    int bad = 0;
    double maxerr = 0, tol = t == ND_FLOAT16 ? 2e-3 : t == ND_BFLOAT16 ? 1e-2 : 1e-5;
    for (int64_t i = 0; i < n; i++) {
        int64_t ix[ND_MAX_DIMS];
        uint64_t x = (uint64_t)rng_index(&idx, ndim, shape, i, ix);
        double got, want = rng_want(t, normal, x);
        nd_convert_element(&got, ND_FLOAT64, h + es * (size_t)i, t);
        double err = fabs(got - want);
        if (err > maxerr) maxerr = err;
        if (normal ? err > tol * (1 + fabs(want)) : got != want) {
            if (bad < 3) printf("  rng element %lld (index %llu): %.9g, want %.9g\n", (long long)i, (unsigned long long)x, got, want);
            bad++;
        }
    }
    CHECK(bad == 0, "rng %s dtype %d %dd offset %lld: %d mismatches (max err %g)", k.name, t, ndim, (long long)off, bad, maxerr);
    free(h);
}

/* Sums of draws over `axes` (the draws inlined into a reduction, as in
 * Monte Carlo pi) against float64 sums of philox.h's values. */
static void test_rng_sum(int ndim, const int64_t *shape, uint32_t axes, int64_t off, const int64_t *strides, nd_dtype t,
                         int normal) {
    nd_ir_access idx = acc(0, ND_INT64, off, ndim, strides);
    nd_ir_inst ins[2];
    uint8_t pd[2];
    nd_kernel k = rng_kernel(ndim, shape, &idx, ins, NULL, pd, t, normal, axes);
    int64_t n = 1, n_out = 1, ost[ND_MAX_DIMS];
    for (int d = 0; d < ndim; d++) {
        n *= shape[d];
        if (!(axes >> d & 1u)) n_out *= shape[d];
        ost[d] = k.reduce.out.strides[d];
    }
    size_t es = rng_size(t);
    unsigned char *h = rng_run(&k, es * (size_t)n_out);
    double *sum = calloc((size_t)n_out, sizeof(double)), *mag = calloc((size_t)n_out, sizeof(double));
    for (int64_t i = 0; i < n; i++) {
        int64_t ix[ND_MAX_DIMS], o = 0;
        double w = rng_want(t, normal, (uint64_t)rng_index(&idx, ndim, shape, i, ix));
        for (int q = 0; q < ndim; q++) o += ost[q] * ix[q];
        sum[o] += w;
        mag[o] += fabs(w);
    }
    int bad = 0;
    for (int64_t o = 0; o < n_out; o++) {
        double got;
        nd_convert_element(&got, ND_FLOAT64, h + es * (size_t)o, t);
        if (!(fabs(got - sum[o]) <= (t == ND_FLOAT64 ? 1e-12 : 3e-6) * (mag[o] + 1))) {
            if (bad < 3) printf("  rng sum output %lld: %.12g, want %.12g\n", (long long)o, got, sum[o]);
            bad++;
        }
    }
    CHECK(bad == 0, "rng %s dtype %d %dd axes %u offset %lld: %d of %lld outputs wrong", k.name, t, ndim, axes,
          (long long)off, bad, (long long)n_out);
    free(h);
    free(sum);
    free(mag);
}

static void test_rngs(void) {
    const nd_dtype dts[4] = {ND_FLOAT16, ND_BFLOAT16, ND_FLOAT32, ND_FLOAT64};
    for (int q = 0; q < 4; q++)
        for (int normal = 0; normal < 2; normal++) {
            nd_dtype t = dts[q];
            int64_t n1[1] = {100003}, up[1] = {1}, down1[1] = {-1}, by3[1] = {3};
            test_rng(1, n1, 0, up, t, normal);          /* fresh: the vector variant */
            test_rng(1, n1, 1, up, t, normal);          /* odd start */
            test_rng(1, n1, 100002, down1, t, normal);  /* reversed */
            test_rng(1, n1, 2, by3, t, normal);         /* strided */
            int64_t s2[2] = {333, 7}, rm[2] = {7, 1}, tr[2] = {1, 333};
            test_rng(2, s2, 5, rm, t, normal);          /* rows of 7 */
            test_rng(2, s2, 0, tr, t, normal);          /* transposed */
            int64_t s3[2] = {40, 64}, rm3[2] = {64, 1}, bc[2] = {0, 1};
            test_rng(2, s3, 3, rm3, t, normal);         /* rows of 64 from 3 */
            test_rng(2, s3, 9, bc, t, normal);          /* one row broadcast */
            if (q < 2) continue;
            int64_t big[1] = {1 << 22};
            test_rng_sum(1, big, 1, 0, up, t, normal);     /* Monte Carlo pi's shape */
            test_rng_sum(1, n1, 1, 3, up, t, normal);      /* odd start, a partial group */
            test_rng_sum(1, n1, 1, 100002, down1, t, normal);
            int64_t s4[2] = {37, 53}, rm4[2] = {53, 1}, tr4[2] = {1, 37};
            test_rng_sum(2, s4, 2, 0, rm4, t, normal);     /* rows */
            test_rng_sum(2, s4, 1, 0, rm4, t, normal);     /* columns */
            test_rng_sum(2, s4, 2, 0, tr4, t, normal);
            test_rng_sum(2, s4, 1, 0, tr4, t, normal);
            int64_t s5[2] = {300, 64}, rm5[2] = {64, 1};
            test_rng_sum(2, s5, 1, 0, rm5, t, normal);     /* columns, neighbouring outputs */
            int64_t s6[2] = {5000, 8}, rm6[2] = {8, 1};
            test_rng_sum(2, s6, 2, 0, rm6, t, normal);     /* short rows */
            int64_t s7[3] = {6, 40, 12}, rm7[3] = {480, 12, 1};
            test_rng_sum(3, s7, 6, 0, rm7, t, normal);     /* two reduced axes */
        }
}

/* Reduce a float32 (A,B,C) array over `axes` with `kind`; compare with a
 * double-precision (or exact) host reference; run twice for determinism. */
static void test_reduce(int kind, uint32_t axes, int64_t A, int64_t B, int64_t Cc, nd_dtype t) {
    int64_t n = A * B * Cc, shape[3] = {A, B, Cc};
    size_t es = t == ND_FLOAT32 ? 4 : 8;
    unsigned char *h = malloc(es * n);
    for (int64_t i = 0; i < n; i++) {
        uint32_t r = nd_philox4x32_10(11, (uint64_t)i, 1).x[0];
        if (t == ND_FLOAT32) {
            float v = (float)(r % 1000) / 100.0f - 5.0f;
            if (kind >= ND_REDUCE_ARGMIN && kind <= ND_REDUCE_ARGMAX) v = (float)(r % 50); /* ties */
            if (kind == ND_REDUCE_PROD) v = 1.0f + (float)((int)(r % 101) - 50) / 4096.0f; /* stays finite */
            memcpy(h + 4 * i, &v, 4);
        } else {
            int64_t v = kind == ND_REDUCE_PROD ? (int64_t)(r % 3) - 1 : (int64_t)(r % 2001) - 1000;
            memcpy(h + 8 * i, &v, 8);
        }
    }
    if (t == ND_FLOAT32 && (kind == ND_REDUCE_MAX || kind == ND_REDUCE_ARGMIN)) {
        float nanv = NAN;
        memcpy(h + 4 * (n / 2), &nanv, 4);
        memcpy(h + 4 * (n / 3), &nanv, 4);
    }
    void *din = up(h, es * n);
    nd_kernel k;
    memset(&k, 0, sizeof k);
    snprintf(k.name, sizeof k.name, "%s", nd_reduce_label((nd_reduce_kind)kind));
    k.ndim = 3;
    memcpy(k.shape, shape, sizeof shape);
    int64_t rm[3] = {B * Cc, Cc, 1};
    nd_ir_access ld = acc(0, t, 0, 3, rm);
    int is_arg = kind == ND_REDUCE_ARGMIN || kind == ND_REDUCE_ARGMAX, is_bool = kind >= ND_REDUCE_ANY;
    nd_ir_inst ins[2] = {{ND_IR_LOAD, (uint8_t)t, 0, 0, 0, 0, 0, 0}, {ND_OP_GT, ND_BOOL, 0, 0, 0, 0, 0, 0}};
    /* ANY/ALL reduce (x > x) == false, or its negation via NE... keep simple: x != 0 */
    ins[1].op = ND_OP_NE;
    ins[1].b = 0;
    nd_dtype od = is_arg ? ND_INT64 : is_bool ? ND_BOOL : t;
    int64_t ost[3] = {0, 0, 0}, stride = 1, n_out = 1, n_red = 1;
    for (int d = 2; d >= 0; d--) {
        if (axes >> d & 1) n_red *= shape[d];
        else {
            ost[d] = stride;
            stride *= shape[d];
            n_out *= shape[d];
        }
    }
    k.n_slots = 2;
    k.n_loads = 1;
    k.loads = &ld;
    k.n_insts = is_bool ? 2 : 1;
    k.insts = ins;
    k.has_reduce = 1;
    k.reduce.kind = (uint8_t)kind;
    k.reduce.axes = axes;
    k.reduce.value = is_bool ? 1 : 0;
    k.reduce.out_dtype = (uint8_t)od;
    k.reduce.out = acc(1, od, 0, 3, ost);
    k.hash = next_hash++;
    if (is_bool) {
        /* x != x: false except NaN; for integer data, ANY/ALL of x != 0 */
        ins[1].b = 0;
        ins[1].op = ND_OP_NE;
        /* compare with constant zero is not in IR without params: use x != x + ... keep NE(x,x)=false */
    }
    size_t os = od == ND_BOOL ? 1 : 8 > es && !is_arg ? es : 8;
    void *dout = dev(os * n_out);
    void *slots[2] = {din, dout};
    OK(be->run_kernel(be, &k, slots, NULL));
    unsigned char *g1 = malloc(os * n_out), *g2 = malloc(os * n_out);
    down(g1, dout, os * n_out);
    OK(be->run_kernel(be, &k, slots, NULL));
    down(g2, dout, os * n_out);
    CHECK(memcmp(g1, g2, os * n_out) == 0, "reduce %s axes %u: two runs differ", k.name, axes);
    int bad = 0;
    double maxrel = 0;
    for (int64_t o = 0; o < n_out; o++) {
        /* kept multi-index from o */
        int64_t kidx[3] = {0, 0, 0}, rem = o;
        for (int d = 2; d >= 0; d--)
            if (!(axes >> d & 1)) {
                kidx[d] = rem % shape[d];
                rem /= shape[d];
            }
        double accd = kind == ND_REDUCE_PROD ? 1 : 0, best = 0;
        int64_t besti = -1, acci = kind == ND_REDUCE_PROD ? 1 : 0;
        int anyv = 0, allv = 1, first = 1, nan_seen = 0;
        for (int64_t r = 0; r < n_red; r++) {
            int64_t idx[3], rr = r;
            for (int d = 2; d >= 0; d--) {
                if (axes >> d & 1) {
                    idx[d] = rr % shape[d];
                    rr /= shape[d];
                } else idx[d] = kidx[d];
            }
            int64_t flat = idx[0] * B * Cc + idx[1] * Cc + idx[2];
            double v;
            int64_t vi = 0;
            if (t == ND_FLOAT32) {
                float f;
                memcpy(&f, h + 4 * flat, 4);
                v = f;
            } else {
                memcpy(&vi, h + 8 * flat, 8);
                v = (double)vi;
            }
            int bv = v != v;
            anyv |= bv;
            allv &= bv;
            accd = kind == ND_REDUCE_PROD ? accd * v : accd + v;
            acci = kind == ND_REDUCE_PROD ? acci * vi : acci + vi;
            if (kind == ND_REDUCE_MIN || kind == ND_REDUCE_MAX || is_arg) {
                int mx = kind == ND_REDUCE_MAX || kind == ND_REDUCE_ARGMAX;
                if (nan_seen) continue;
                if (isnan(v)) {
                    nan_seen = 1;
                    best = v;
                    besti = r;
                } else if (first || (mx ? v > best : v < best)) {
                    best = v;
                    besti = r;
                }
                first = 0;
            }
        }
        double got, want;
        if (is_arg) {
            int64_t gi;
            memcpy(&gi, g1 + 8 * o, 8);
            got = (double)gi;
            want = (double)besti;
        } else if (is_bool) {
            got = g1[o];
            want = kind == ND_REDUCE_ANY ? anyv : allv;
        } else if (t == ND_FLOAT32) {
            float f;
            memcpy(&f, g1 + 4 * o, 4);
            got = f;
            want = (kind == ND_REDUCE_MIN || kind == ND_REDUCE_MAX) ? best : accd;
        } else {
            int64_t gi;
            memcpy(&gi, g1 + 8 * o, 8);
            got = (double)gi;
            want = (kind == ND_REDUCE_MIN || kind == ND_REDUCE_MAX) ? best : (double)acci;
        }
        double rel = fabs(got - want) / (1 + fabs(want));
        int same = (isnan(got) && isnan(want)) || rel <= (t == ND_FLOAT32 && kind == ND_REDUCE_SUM ? 1e-4 : t == ND_FLOAT32 && kind == ND_REDUCE_PROD ? 2e-3 : 0);
        if (!same) {
            if (bad < 3) printf("  reduce %s axes %u out %lld: got %.9g want %.9g\n", k.name, axes, (long long)o, got, want);
            bad++;
        }
        if (rel > maxrel && !isnan(rel)) maxrel = rel;
    }
    CHECK(bad == 0, "reduce %s dtype %d axes %u shape (%lld,%lld,%lld): %d bad of %lld (max rel %g)", k.name, t, axes,
          (long long)A, (long long)B, (long long)Cc, bad, (long long)n_out, maxrel);
    be->release(be, 1, din, es * n);
    be->release(be, 1, dout, os * n_out);
    free(h);
    free(g1);
    free(g2);
}

static void test_matmul(nd_dtype t, int64_t m, int64_t n, int64_t kk, int ta, int tb, int nb) {
    size_t es = t == ND_FLOAT64 || t == ND_INT64 ? 8 : t == ND_FLOAT16 || t == ND_BFLOAT16 ? 2 : 4;
    int64_t asz = m * kk, bsz = kk * n, csz = m * n;
    unsigned char *a = malloc(es * asz * nb), *b = malloc(es * bsz * nb), *c = malloc(es * csz * nb);
    for (int64_t i = 0; i < asz * nb; i++) nd_store_double(a + es * i, t, (double)((i * 7) % 13) - 6);
    for (int64_t i = 0; i < bsz * nb; i++) nd_store_double(b + es * i, t, (double)((i * 5) % 11) - 5);
    void *da = up(a, es * asz * nb), *db = up(b, es * bsz * nb), *dc = dev(es * csz * nb);
    nd_matmul_desc mm;
    memset(&mm, 0, sizeof mm);
    mm.dtype = t;
    mm.m = m;
    mm.n = n;
    mm.k = kk;
    mm.batch_ndim = 1;
    mm.batch_shape[0] = nb;
    mm.a_slot = 0;
    mm.b_slot = 1;
    mm.c_slot = 2;
    mm.a_batch[0] = asz;
    mm.b_batch[0] = bsz;
    mm.c_batch[0] = csz;
    /* A stored (m,k) row-major or, transposed, (k,m) row-major viewed as A. */
    if (ta) { mm.a_rs = 1; mm.a_cs = m; } else { mm.a_rs = kk; mm.a_cs = 1; }
    if (tb) { mm.b_rs = 1; mm.b_cs = kk; } else { mm.b_rs = n; mm.b_cs = 1; }
    mm.c_rs = n;
    mm.c_cs = 1;
    void *slots[3] = {da, db, dc};
    OK(be->run_matmul(be, &mm, slots));
    down(c, dc, es * csz * nb);
    int bad = 0;
    for (int bi = 0; bi < nb; bi++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double s = 0;
                for (int64_t p = 0; p < kk; p++)
                    s += nd_load_double(a + es * (bi * asz + i * mm.a_rs + p * mm.a_cs), t) *
                         nd_load_double(b + es * (bi * bsz + p * mm.b_rs + j * mm.b_cs), t);
                double g = nd_load_double(c + es * (bi * csz + i * n + j), t);
                double tol = t == ND_FLOAT16 || t == ND_BFLOAT16 ? 0.02 * (1 + fabs(s)) : 1e-6 * (1 + fabs(s));
                if (fabs(g - s) > tol) {
                    if (bad < 3) printf("  matmul[%d,%lld,%lld] got %g want %g\n", bi, (long long)i, (long long)j, g, s);
                    bad++;
                }
            }
    CHECK(bad == 0, "matmul dtype %d m%lld n%lld k%lld ta%d tb%d nb%d: %d bad", t, (long long)m, (long long)n,
          (long long)kk, ta, tb, nb, bad);
    be->release(be, 1, da, es * asz * nb);
    be->release(be, 1, db, es * bsz * nb);
    be->release(be, 1, dc, es * csz * nb);
    free(a);
    free(b);
    free(c);
}

/* Achieved bandwidth of a 3-array elementwise kernel and a full sum. */
static void bench(void) {
    const int64_t n = (int64_t)1 << 26;
    void *a = dev(4 * n), *b = dev(4 * n), *c = dev(4 * n);
    OK(cudaMemsetAsync(a, 0, 4 * n, ((nd_cuda *)be->impl)->stream) == cudaSuccess ? ND_OK : ND_ERR_BACKEND);
    OK(cudaMemsetAsync(b, 0, 4 * n, ((nd_cuda *)be->impl)->stream) == cudaSuccess ? ND_OK : ND_ERR_BACKEND);
    int64_t one[1] = {1}, zero[1] = {0};
    nd_ir_access loads[2] = {acc(0, ND_FLOAT32, 0, 1, one), acc(1, ND_FLOAT32, 0, 1, one)};
    nd_ir_inst ins[3] = {{ND_IR_LOAD, ND_FLOAT32, 0, 0, 0, 0, 0, 0}, {ND_IR_LOAD, ND_FLOAT32, 0, 1, 0, 0, 0, 0},
                         {ND_OP_ADD, ND_FLOAT32, 0, 0, 1, 0, 0, 0}};
    nd_ir_store st = {acc(2, ND_FLOAT32, 0, 1, one), 2};
    nd_kernel k;
    memset(&k, 0, sizeof k);
    snprintf(k.name, sizeof k.name, "bench_add");
    k.ndim = 1;
    k.shape[0] = n;
    k.n_slots = 3;
    k.n_loads = 2;
    k.loads = loads;
    k.n_insts = 3;
    k.insts = ins;
    k.n_stores = 1;
    k.stores = &st;
    k.hash = next_hash++;
    nd_kernel r = k;
    snprintf(r.name, sizeof r.name, "bench_sum");
    r.n_loads = 1;
    r.n_insts = 1;
    r.n_stores = 0;
    r.has_reduce = 1;
    r.reduce.kind = ND_REDUCE_SUM;
    r.reduce.axes = 1;
    r.reduce.value = 0;
    r.reduce.out_dtype = ND_FLOAT32;
    r.reduce.out = acc(2, ND_FLOAT32, 0, 1, zero);
    r.hash = next_hash++;
    void *slots[3] = {a, b, c};
    cudaStream_t s = ((nd_cuda *)be->impl)->stream;
    for (int pass = 0; pass < 2; pass++) {
        const nd_kernel *kk = pass ? &r : &k;
        OK(be->run_kernel(be, kk, slots, NULL));
        OK(be->synchronize(be));
        cudaEvent_t e0, e1;
        cudaEventCreate(&e0);
        cudaEventCreate(&e1);
        cudaEventRecord(e0, s);
        for (int i = 0; i < 20; i++) be->run_kernel(be, kk, slots, NULL);
        cudaEventRecord(e1, s);
        OK(be->synchronize(be));
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        double bytes = (pass ? 4.0 : 12.0) * (double)n * 20;
        printf("  bench %s: %.3f ms per launch, %.0f GB/s\n", kk->name, ms / 20, bytes / (ms * 1e-3) / 1e9);
        cudaEventDestroy(e0);
        cudaEventDestroy(e1);
    }
    be->release(be, 1, a, 4 * n);
    be->release(be, 1, b, 4 * n);
    be->release(be, 1, c, 4 * n);
}

/* ------------------------------------------------------ pinned host cache */

static int is_pinned(const void *p) {
    struct cudaPointerAttributes attr;
    int yes = cudaPointerGetAttributes(&attr, p) == cudaSuccess && attr.type == cudaMemoryTypeHost;
    (void)cudaGetLastError();
    return yes;
}

static uint32_t pattern(size_t i, uint32_t salt) { return (uint32_t)(i * 2654435761u) ^ salt; }

/* Copies host words to a fresh device buffer and back into a pageable
 * buffer; the number of words that differ from pattern(salt). */
static size_t device_mismatches(nd_backend *b, const uint32_t *h, size_t n, uint32_t salt) {
    void *d = NULL;
    uint32_t *back = malloc(n * 4);
    OK(b->alloc(b, 1, n * 4, &d));
    OK(b->copy(b, d, 1, h, 0, n * 4));
    OK(b->copy(b, back, 0, d, 1, n * 4));
    OK(b->synchronize(b));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) bad += back[i] != pattern(i, salt);
    b->release(b, 1, d, n * 4);
    free(back);
    return bad;
}

/* What nd_from_host does (src/frontend/host_io.c): host memory from the
 * backend, filled by memcpy; here from a fresh pattern. */
static uint32_t *import(nd_backend *b, size_t bytes, uint32_t salt) {
    uint32_t *src = malloc(bytes), *h = NULL;
    for (size_t i = 0; i < bytes / 4; i++) src[i] = pattern(i, salt);
    OK(b->alloc(b, 0, bytes, (void **)&h));
    if (h) memcpy(h, src, bytes);
    free(src);
    return h;
}

/* The pinned host cache of backend.c on the default bound. */
static void test_pinned_cache(void) {
    nd_cuda *cu = be->impl;
    const size_t big = (size_t)64 << 20, n = big / 4;
    uint32_t *h1 = import(be, big, 1);
    CHECK(h1 && is_pinned(h1), "a %zu-byte host buffer is not pinned", big);
    if (!h1) return;

    /* Released while a copy from it may still run; the same size gets the
     * same block back, and overwriting it waits for that copy. */
    void *d = dev(big);
    OK(be->copy(be, d, 1, h1, 0, big));
    be->release(be, 0, h1, big);
    CHECK(cu->n_pinned_cached == 1 && cu->pinned_cached == big, "after release: %u blocks, %zu bytes cached",
          cu->n_pinned_cached, cu->pinned_cached);
    uint32_t *h2 = NULL;
    OK(be->alloc(be, 0, big, (void **)&h2));
    CHECK(h2 == h1, "same-size host alloc after release got %p, not the cached block %p", (void *)h2, (void *)h1);
    CHECK(cu->n_pinned_cached == 0 && cu->pinned_cached == 0, "reused block still counted as cached");
    memset(h2, 0xEE, big);
    uint32_t *back = malloc(big);
    down(back, d, big);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) bad += back[i] != pattern(i, 1);
    CHECK(bad == 0, "the copy enqueued before the release saw %zu words overwritten by the reuse", bad);
    free(back);
    be->release(be, 1, d, big);
    be->release(be, 0, h2, big);

    /* Imported again into the reused block: the device gets the new data. */
    uint64_t hits = cu->pinned_hits;
    uint32_t *h3 = import(be, big, 2);
    CHECK(h3 == h1 && cu->pinned_hits == hits + 1, "second import did not reuse the block");
    CHECK(device_mismatches(be, h3, n, 2) == 0, "data imported into a reused pinned block is wrong");
    be->release(be, 0, h3, big);

    /* Up to a quarter smaller takes the block; much smaller or larger does not. */
    size_t smaller = big - big / 5, small = (size_t)2 << 20;
    uint32_t *h4 = import(be, smaller, 3);
    CHECK(h4 == h1, "a request %zu bytes below the %zu-byte block did not reuse it", big - smaller, big);
    CHECK(h4 && device_mismatches(be, h4, smaller / 4, 3) == 0, "data in a larger reused block is wrong");
    be->release(be, 0, h4, smaller);
    CHECK(cu->pinned_cached == big, "a block reused for fewer bytes is cached as %zu, not its %zu",
          cu->pinned_cached, big);
    uint32_t *h5 = import(be, small, 4);
    CHECK(h5 && h5 != h1 && is_pinned(h5), "a %zu-byte request took the %zu-byte block", small, big);
    CHECK(cu->n_pinned_cached == 1 && cu->pinned_cached == big, "the big block left the cache for a small request");
    CHECK(h5 && device_mismatches(be, h5, small / 4, 4) == 0, "data in a new small pinned block is wrong");
    uint32_t *h6 = import(be, big + 64, 5);
    CHECK(h6 && h6 != h1, "a request larger than the cached block got it");
    be->release(be, 0, h5, small);
    be->release(be, 0, h6, big + 64);
    CHECK(cu->n_pinned_cached == 3, "%u blocks cached, expected 3", cu->n_pinned_cached);

    /* Small host buffers are plain malloc, never cached. */
    void *tiny = NULL;
    OK(be->alloc(be, 0, 4096, &tiny));
    CHECK(tiny && !is_pinned(tiny), "a 4 KiB host buffer is pinned");
    be->release(be, 0, tiny, 4096);
    CHECK(cu->n_pinned_cached == 3, "a small host buffer entered the pinned cache");
}

static nd_backend *backend_with_pinned_cache(const char *setting, nd_status *st) {
    nd_backend_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.cache_dir = getenv("CHECK_CACHE_DIR");
    setenv("ND_PINNED_CACHE", setting, 1);
    nd_backend *b = NULL;
    *st = nd_cuda_backend_create(&cfg, &b);
    unsetenv("ND_PINNED_CACHE");
    return b;
}

/* ND_PINNED_CACHE: the bound evicts the least recently released block,
 * a block over the bound is not kept, 0 keeps nothing, bad values fail. */
static void test_pinned_bound(void) {
    const size_t mib = (size_t)1 << 20;
    nd_status st;
    nd_backend *b = backend_with_pinned_cache("96m", &st);
    OK(st);
    if (b) {
        nd_cuda *cu = b->impl;
        CHECK(cu->pinned_cache_max == 96 * mib, "ND_PINNED_CACHE=96m gave %zu", cu->pinned_cache_max);
        uint32_t *a = import(b, 64 * mib, 6), *c = import(b, 64 * mib, 7), *huge = import(b, 128 * mib, 8);
        b->release(b, 0, a, 64 * mib);
        b->release(b, 0, c, 64 * mib);
        CHECK(cu->n_pinned_cached == 1 && cu->pinned_cached == 64 * mib, "96 MiB bound: %u blocks, %zu bytes cached",
              cu->n_pinned_cached, cu->pinned_cached);
        b->release(b, 0, huge, 128 * mib);
        CHECK(cu->n_pinned_cached == 1, "a 128 MiB block was kept under a 96 MiB bound");
        uint32_t *again = NULL;
        OK(b->alloc(b, 0, 64 * mib, (void **)&again));
        CHECK(again == c, "the most recently released block was not the one kept");
        b->release(b, 0, again, 64 * mib);
        b->destroy(b); /* frees the cached block */
    }
    b = backend_with_pinned_cache("0", &st);
    OK(st);
    if (b) {
        nd_cuda *cu = b->impl;
        uint32_t *a = import(b, 64 * mib, 9);
        CHECK(a && is_pinned(a), "ND_PINNED_CACHE=0 stopped pinning");
        CHECK(a && device_mismatches(b, a, 16 * mib, 9) == 0, "pinned data wrong with the cache off");
        b->release(b, 0, a, 64 * mib);
        CHECK(cu->n_pinned_cached == 0 && cu->n_pinned == 0, "ND_PINNED_CACHE=0 kept a block");
        b->destroy(b);
    }
    b = backend_with_pinned_cache("12q", &st);
    CHECK(st == ND_ERR_ARG && !b, "ND_PINNED_CACHE=12q gave %d", (int)st);
    CHECK(strstr(nd_last_error(), "ND_PINNED_CACHE") != NULL, "message does not name the variable: %s",
          nd_last_error());
    if (b) b->destroy(b);
    nd_clear_error();
}

int main(int argc, char **argv) {
    nd_log_set_level(argc > 1 ? atoi(argv[1]) : 1);
    nd_backend_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.cache_dir = getenv("CHECK_CACHE_DIR");
    nd_status s = nd_cuda_backend_create(&cfg, &be);
    if (s) {
        printf("backend create: %s\n", nd_last_error());
        return 2;
    }
    test_elementwise(1000003, 0);
    test_elementwise(1000003, 1);
    test_elementwise(5, 0);
    test_casts();
    test_rngs();
    for (int kind = 0; kind < ND_NUM_REDUCE_KINDS; kind++) {
        test_reduce(kind, 4, 3, 5, 1000, ND_FLOAT32);    /* inner, ROWS */
        test_reduce(kind, 1, 1000, 3, 7, ND_FLOAT32);    /* outer, COLS split */
        test_reduce(kind, 7, 20, 300, 301, ND_FLOAT32);  /* all */
        test_reduce(kind, 2, 4, 999, 33, ND_FLOAT32);    /* middle */
        test_reduce(kind, 5, 17, 9, 500, ND_FLOAT32);    /* outer+inner */
        test_reduce(kind, 4, 3000, 4, 5, ND_FLOAT32);    /* tiny rows -> COLS */
        if (kind <= ND_REDUCE_MAX) test_reduce(kind, 7, 10, 100, 1000, ND_INT64);
    }
    test_matmul(ND_FLOAT32, 33, 17, 65, 0, 0, 1);
    test_matmul(ND_FLOAT32, 33, 17, 65, 1, 0, 3);
    test_matmul(ND_FLOAT32, 33, 17, 65, 0, 1, 2);
    test_matmul(ND_FLOAT64, 64, 64, 64, 1, 1, 2);
    test_matmul(ND_FLOAT16, 40, 24, 32, 0, 0, 2);
    test_matmul(ND_BFLOAT16, 40, 24, 32, 0, 1, 1);
    test_matmul(ND_INT32, 13, 9, 21, 1, 0, 2);
    test_matmul(ND_INT64, 13, 9, 21, 0, 0, 1);
    test_matmul(ND_FLOAT32, 1, 17, 65, 0, 0, 1);
    test_matmul(ND_FLOAT32, 17, 1, 65, 0, 0, 1);
    test_pinned_cache();
    test_pinned_bound();
    bench();
    /* Out of memory is reported, not fatal. */
    void *huge = NULL;
    s = be->alloc(be, 1, (size_t)1 << 50, &huge);
    CHECK(s == ND_ERR_OOM, "huge alloc gave %d", (int)s);
    printf("  OOM message: %s\n", nd_last_error());
    be->destroy(be);
    printf("%d checks, %d failed\n", checks, fails);
    return fails != 0;
}
