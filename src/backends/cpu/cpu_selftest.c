/* Self-test of the CPU backend alone: builds nd_kernel structs by hand and
 * checks elementwise chains, casts, float16, strided/broadcast access,
 * reductions over inner/outer/interleaved/all axes (1 vs 2 threads
 * bit-identical), Philox against common/philox.h (independent of tiling and
 * threads), float32 math accuracy, loop regions (run and refused),
 * matmul against naive loops and the
 * tridiagonal eigensolver (nd_cpu_stedc: bits independent of the thread
 * count, values against LAPACK's).
 * `cpu_selftest bench` also times the lead's reference expressions. */
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "backends/backend.h"
#include "backends/cpu/cpu_internal.h"
#include "common/alloc.h"
#include "common/philox.h"
#include "common/dtype.h"

static int fails = 0;
#define CHECK(c, ...) do { if (!(c)) { fails++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }

/* kernel builder */
typedef struct { nd_kernel k; nd_ir_access loads[16], idx[4]; nd_ir_inst in[64]; nd_ir_store st[4]; uint8_t pd[8]; } kb;
static void kb_init(kb *b, int ndim, const int64_t *shape) {
    memset(b, 0, sizeof *b);
    b->k.ndim = ndim; for (int d = 0; d < ndim; d++) b->k.shape[d] = shape[d];
    b->k.loads = b->loads; b->k.indices = b->idx; b->k.insts = b->in; b->k.stores = b->st; b->k.param_dtypes = b->pd;
    b->k.n_slots = 8; strcpy(b->k.name, "test");
}
static int kb_load(kb *b, int slot, int dt, int64_t off, const int64_t *strides) {
    nd_ir_access *a = &b->loads[b->k.n_loads];
    a->slot = slot; a->dtype = dt; a->offset = off;
    for (int d = 0; d < b->k.ndim; d++) a->strides[d] = strides[d];
    nd_ir_inst *i = &b->in[b->k.n_insts]; i->op = ND_IR_LOAD; i->dtype = dt; i->a = b->k.n_loads++;
    return b->k.n_insts++;
}
static int kb_op(kb *b, int op, int dt, int a, int bb, int c) {
    nd_ir_inst *i = &b->in[b->k.n_insts]; i->op = op; i->dtype = dt; i->a = a; i->b = bb; i->c = c; return b->k.n_insts++;
}
static int kb_param(kb *b, int dt, int pdt) { b->pd[b->k.n_params] = pdt; return kb_op(b, ND_IR_PARAM, dt, b->k.n_params++, 0, 0); }
static int kb_index(kb *b, int64_t off, const int64_t *strides) {
    nd_ir_access *a = &b->idx[b->k.n_indices]; a->offset = off; a->dtype = ND_INT64;
    for (int d = 0; d < b->k.ndim; d++) a->strides[d] = strides[d];
    return kb_op(b, ND_IR_INDEX, ND_INT64, b->k.n_indices++, 0, 0);
}
static void kb_store(kb *b, int slot, int dt, int64_t off, const int64_t *strides, int v) {
    nd_ir_store *s = &b->st[b->k.n_stores++]; s->at.slot = slot; s->at.dtype = dt; s->at.offset = off;
    for (int d = 0; d < b->k.ndim; d++) s->at.strides[d] = strides[d];
    s->value = v;
}
static void kb_reduce(kb *b, int kind, int odt, uint32_t axes, int v, int slot, int64_t off, const int64_t *strides) {
    b->k.has_reduce = 1; b->k.reduce.kind = kind; b->k.reduce.out_dtype = odt; b->k.reduce.axes = axes; b->k.reduce.value = v;
    b->k.reduce.out.slot = slot; b->k.reduce.out.dtype = odt; b->k.reduce.out.offset = off;
    for (int d = 0; d < b->k.ndim; d++) b->k.reduce.out.strides[d] = strides[d];
}

static nd_backend *be1, *be2;

static float frand(uint64_t *s) { *s = *s * 6364136223846793005ull + 1442695040888963407ull; return (float)((*s >> 40) * 0x1p-24) * 2 - 1; }

static double ulp_err_f(float got, double ref) {
    if (isnan(ref)) return isnan(got) ? 0 : 1e9;
    if (isinf(ref)) return got == ref ? 0 : 1e9;
    float rf = (float)ref;
    double u = fabs(nextafterf(rf, INFINITY) - rf);
    if (rf == 0) u = 0x1p-149;
    return fabs(got - ref) / u;
}

static void test_philox(void) {
    nd_philox4x32 r = nd_philox4x32_10(0, 0, 0);
    CHECK(r.x[0] == 0x6627e8d5 && r.x[1] == 0xe169c58d && r.x[2] == 0xbc57ac4c && r.x[3] == 0x9b00dbd8, "philox kat0 %08x", r.x[0]);
    r = nd_philox4x32_10(~0ull, ~0ull, ~0ull);
    CHECK(r.x[0] == 0x408f276d && r.x[1] == 0x41c83b0e && r.x[2] == 0xa20bc7c6 && r.x[3] == 0x6d5451fd, "philox kat1 %08x", r.x[0]);
    r = nd_philox4x32_10(0x299f31d0a4093822ull, 0x85a308d3243f6a88ull, 0x0370734413198a2eull);
    CHECK(r.x[0] == 0xd16cfe09 && r.x[1] == 0x94fdcceb && r.x[2] == 0x5001e420 && r.x[3] == 0x24126ea1, "philox kat2 %08x", r.x[0]);
}

static void test_elementwise(nd_backend *be) {
    int64_t N = (1 << 20) + 37;
    float *a = nd_malloc(N * 4), *b = nd_malloc(N * 4), *c = nd_malloc(N * 4), *d = nd_malloc(N * 4), *y = nd_malloc(N * 4);
    uint64_t s = 1;
    for (int64_t i = 0; i < N; i++) { a[i] = frand(&s); b[i] = frand(&s); c[i] = frand(&s); d[i] = frand(&s); }
    kb B; int64_t sh[1] = {N}, one[1] = {1};
    kb_init(&B, 1, sh);
    int la = kb_load(&B, 0, ND_FLOAT32, 0, one), lb = kb_load(&B, 1, ND_FLOAT32, 0, one);
    int lc = kb_load(&B, 2, ND_FLOAT32, 0, one), ld = kb_load(&B, 3, ND_FLOAT32, 0, one);
    int h = kb_param(&B, ND_FLOAT32, ND_FLOAT64);
    int ab = kb_op(&B, ND_OP_MUL, ND_FLOAT32, la, lb, 0), cd = kb_op(&B, ND_OP_MUL, ND_FLOAT32, lc, ld, 0);
    int s1 = kb_op(&B, ND_OP_ADD, ND_FLOAT32, ab, cd, 0), ha = kb_op(&B, ND_OP_MUL, ND_FLOAT32, h, la, 0);
    int r = kb_op(&B, ND_OP_SUB, ND_FLOAT32, s1, ha, 0);
    kb_store(&B, 4, ND_FLOAT32, 0, one, r);
    void *slots[8] = {a, b, c, d, y};
    nd_scalar_bits p[1]; p[0].f = 0.5;
    CHECK(be->run_kernel(be, &B.k, slots, p) == ND_OK, "run");
    int bad = 0;
    for (int64_t i = 0; i < N; i++) { float e = (a[i] * b[i] + c[i] * d[i]) - 0.5f * a[i]; if (e != y[i]) bad++; }
    CHECK(bad == 0, "axpy mismatches %d", bad);
    free(a); free(b); free(c); free(d); free(y);
}

static void test_math(nd_backend *be) {
    const int N = 200000;
    float *x = nd_malloc(N * 4), *y = nd_malloc(N * 4);
    uint64_t s = 7;
    for (int i = 0; i < N; i++) {
        float v = frand(&s);
        int kind = i % 6;
        x[i] = kind == 0 ? v * 10 : kind == 1 ? v * 1000 : kind == 2 ? v * 1e6f : kind == 3 ? v * 100 : kind == 4 ? ldexpf(fabsf(v), (int)(i % 200) - 140) : v * 3;
    }
    float sp[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e30f, -1e30f, 88.7f, 88.73f, -87.5f, -103.9f, -104.5f, 1e-40f, 3.4e38f, 9.0f, 9.2f, 0.39999f, 0.40001f};
    for (unsigned i = 0; i < sizeof sp / 4; i++) x[i] = sp[i];
    int ops[] = {ND_OP_SIN, ND_OP_COS, ND_OP_EXP, ND_OP_LOG, ND_OP_TANH, ND_OP_SQRT};
    double (*ref[])(double) = {sin, cos, exp, log, tanh, sqrt};
    const char *nm[] = {"sin", "cos", "exp", "log", "tanh", "sqrt"};
    for (int o = 0; o < 6; o++) {
        kb B; int64_t sh[1] = {N}, one[1] = {1};
        kb_init(&B, 1, sh);
        int l = kb_load(&B, 0, ND_FLOAT32, 0, one);
        int r = kb_op(&B, ops[o], ND_FLOAT32, l, 0, 0);
        kb_store(&B, 1, ND_FLOAT32, 0, one, r);
        void *slots[8] = {x, y};
        be->run_kernel(be, &B.k, slots, NULL);
        double worst = 0; int wi = 0;
        for (int i = 0; i < N; i++) {
            double rr = ref[o]((double)x[i]);
            double e = ulp_err_f(y[i], rr);
            if (e > worst) { worst = e; wi = i; }
        }
        printf("  %-5s max err %.2f ulp (x=%g got %.9g ref %.9g)\n", nm[o], worst, x[wi], y[wi], ref[o](x[wi]));
        CHECK(worst <= 4, "%s ulp %g", nm[o], worst);
    }
    free(x); free(y);
}

static void test_casts_and_halfs(nd_backend *be) {
    double src[] = {NAN, 300.0, -1.0, -300.5, 1e20, -1e20, 2.5, -2.5, 65519.0, 65520.0, 1.0 + 0x1p-11 + 0x1p-40};
    int n = sizeof src / 8;
    int8_t i8[16]; uint8_t u8[16]; int64_t i64[16]; uint16_t h[16]; uint8_t bl[16];
    struct { int dt; void *dst; } outs[] = {{ND_INT8, i8}, {ND_UINT8, u8}, {ND_INT64, i64}, {ND_FLOAT16, h}, {ND_BOOL, bl}};
    for (int o = 0; o < 5; o++) {
        kb B; int64_t sh[1] = {n}, one[1] = {1};
        kb_init(&B, 1, sh);
        int l = kb_load(&B, 0, ND_FLOAT64, 0, one);
        int r = kb_op(&B, ND_OP_CAST, outs[o].dt, l, 0, 0);
        kb_store(&B, 1, outs[o].dt, 0, one, r);
        void *slots[8] = {src, outs[o].dst};
        CHECK(be->run_kernel(be, &B.k, slots, NULL) == ND_OK, "cast run");
    }
    /* float -> int: through int64, wrapping; NaN/out of range -> bits 2^63 */
    CHECK(i8[0] == 0 && i8[1] == 44 && i8[2] == -1 && i8[3] == -44 && i8[6] == 2 && i8[7] == -2, "i8 casts %d %d %d %d", i8[0], i8[1], i8[2], i8[3]);
    CHECK(u8[0] == 0 && u8[1] == 44 && u8[2] == 255, "u8 casts %d %d %d", u8[0], u8[1], u8[2]);
    CHECK(i64[0] == INT64_MIN && i64[4] == INT64_MIN && i64[5] == INT64_MIN && i64[3] == -300, "i64 casts");
    for (int i = 0; i < n; i++) {
        int8_t e8; uint8_t eu; int64_t e64;
        nd_convert_element(&e8, ND_INT8, &src[i], ND_FLOAT64);
        nd_convert_element(&eu, ND_UINT8, &src[i], ND_FLOAT64);
        nd_convert_element(&e64, ND_INT64, &src[i], ND_FLOAT64);
        CHECK(e8 == i8[i] && eu == u8[i] && e64 == i64[i], "cast %g disagrees with nd_convert_element", src[i]);
    }
    CHECK(h[8] == 0x7bff && h[9] == 0x7c00, "f16 overflow %04x %04x", h[8], h[9]);
    CHECK(h[10] == 0x3c01, "f16 round-to-odd %04x", h[10]);
    CHECK(bl[0] == 1 && bl[1] == 1 && bl[6] == 1, "bool");
    /* float16 add rounds after the op */
    uint16_t a[3] = {0x3c00, 0x3c00, 0x7bff}, b[3] = {0x1000, 0x3c00, 0x7bff}, c[3];
    kb B; int64_t sh[1] = {3}, one[1] = {1};
    kb_init(&B, 1, sh);
    int la = kb_load(&B, 0, ND_FLOAT16, 0, one), lb = kb_load(&B, 1, ND_FLOAT16, 0, one);
    kb_store(&B, 2, ND_FLOAT16, 0, one, kb_op(&B, ND_OP_ADD, ND_FLOAT16, la, lb, 0));
    void *slots[8] = {a, b, c};
    be->run_kernel(be, &B.k, slots, NULL);
    CHECK(c[0] == 0x3c00 && c[1] == 0x4000 && c[2] == 0x7c00, "f16 add %04x %04x %04x", c[0], c[1], c[2]);
    /* int ops: wrap, floor division without traps, pow */
    int32_t x[6] = {INT32_MAX, INT32_MIN, 7, -7, 2, -1}, yv[6] = {1, -1, 0, 2, -3, -3}, z[6], w[6], q[6];
    kb_init(&B, 1, (int64_t[]){6});
    la = kb_load(&B, 0, ND_INT32, 0, one); lb = kb_load(&B, 1, ND_INT32, 0, one);
    kb_store(&B, 2, ND_INT32, 0, one, kb_op(&B, ND_OP_ADD, ND_INT32, la, lb, 0));
    kb_store(&B, 3, ND_INT32, 0, one, kb_op(&B, ND_OP_DIV, ND_INT32, la, lb, 0));
    kb_store(&B, 4, ND_INT32, 0, one, kb_op(&B, ND_OP_POW, ND_INT32, la, lb, 0));
    void *s2[8] = {x, yv, z, w, q};
    be->run_kernel(be, &B.k, s2, NULL);
    /* integer DIV is NumPy's floor division: MIN // -1 = MIN, 7 // 0 = 0, -7 // 2 = -4 */
    CHECK(z[0] == INT32_MIN && w[1] == INT32_MIN && w[2] == 0 && w[3] == -4 && q[3] == 49 && q[4] == 0 && q[5] == -1, "int ops %d %d %d %d %d %d %d", z[0], w[1], w[2], w[3], q[3], q[4], q[5]);
}

/* broadcast (N,3) + (3,), transposed load, where, comparisons */
static void test_strided(nd_backend *be) {
    int64_t N = 5000;
    float *a = nd_malloc(N * 3 * 4), bias[3] = {1, 2, 3}, *y = nd_malloc(N * 3 * 4), *t = nd_malloc(N * 3 * 4);
    for (int64_t i = 0; i < N * 3; i++) a[i] = (float)i;
    kb B; int64_t sh[2] = {N, 3};
    kb_init(&B, 2, sh);
    int la = kb_load(&B, 0, ND_FLOAT32, 0, (int64_t[]){3, 1});
    int lb = kb_load(&B, 1, ND_FLOAT32, 0, (int64_t[]){0, 1});
    int lt = kb_load(&B, 0, ND_FLOAT32, 0, (int64_t[]){1, N}); /* a viewed as (3,N) transposed: a[j*N + i] */
    int s = kb_op(&B, ND_OP_ADD, ND_FLOAT32, la, lb, 0);
    int cmp = kb_op(&B, ND_OP_GT, ND_BOOL, s, lt, 0);
    int w = kb_op(&B, ND_OP_WHERE, ND_FLOAT32, cmp, s, lt);
    kb_store(&B, 2, ND_FLOAT32, 0, (int64_t[]){3, 1}, s);
    kb_store(&B, 3, ND_FLOAT32, 0, (int64_t[]){1, N}, w); /* transposed store */
    void *slots[8] = {a, bias, y, t};
    be->run_kernel(be, &B.k, slots, NULL);
    int bad = 0;
    for (int64_t i = 0; i < N; i++) for (int j = 0; j < 3; j++) {
        float sv = a[i * 3 + j] + bias[j], tv = a[j * N + i];
        if (y[i * 3 + j] != sv) bad++;
        if (t[j * N + i] != (sv > tv ? sv : tv)) bad++;
    }
    CHECK(bad == 0, "strided mismatches %d", bad);
    free(a); free(y); free(t);
}

static void run_reduce(nd_backend *be, int kind, int dt, int odt, int64_t M, int64_t N, uint32_t axes, void *in, void *out) {
    kb B; int64_t sh[2] = {M, N};
    kb_init(&B, 2, sh);
    int l = kb_load(&B, 0, dt, 0, (int64_t[]){N, 1});
    int64_t os[2] = {(axes & 2) ? 1 : 0, 0};
    if (!(axes & 1)) os[0] = (axes & 2) ? 1 : N;
    if (!(axes & 2)) os[1] = 1;
    if (!(axes & 1) && !(axes & 2)) { os[0] = N; os[1] = 1; }
    if ((axes & 1) && !(axes & 2)) { os[0] = 0; os[1] = 1; }
    if (!(axes & 1) && (axes & 2)) { os[0] = 1; os[1] = 0; }
    if ((axes & 3) == 3) { os[0] = 0; os[1] = 0; }
    kb_reduce(&B, kind, odt, axes, l, 1, 0, os);
    void *slots[8] = {in, out};
    CHECK(be->run_kernel(be, &B.k, slots, NULL) == ND_OK, "reduce run");
}

static void test_reduce(void) {
    int64_t shapes[][2] = {{1000, 1000}, {3, 200000}, {200000, 3}, {7, 5}, {1, 100000}, {100000, 1}, {2000, 3000}};
    for (unsigned si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        int64_t M = shapes[si][0], N = shapes[si][1];
        float *x = nd_malloc(M * N * 4);
        uint64_t s = 3;
        for (int64_t i = 0; i < M * N; i++) x[i] = frand(&s);
        float *o1 = nd_malloc((M + N) * 4 + 16), *o2 = nd_malloc((M + N) * 4 + 16);
        for (uint32_t axes = 1; axes <= 3; axes++) {
            run_reduce(be1, ND_REDUCE_SUM, ND_FLOAT32, ND_FLOAT32, M, N, axes, x, o1);
            run_reduce(be2, ND_REDUCE_SUM, ND_FLOAT32, ND_FLOAT32, M, N, axes, x, o2);
            int64_t no = axes == 1 ? N : axes == 2 ? M : 1;
            CHECK(memcmp(o1, o2, no * 4) == 0, "sum %lldx%lld axes %u differs 1 vs 2 threads", (long long)M, (long long)N, axes);
            double maxe = 0;
            for (int64_t o = 0; o < no; o++) {
                double ref = 0;
                if (axes == 1) for (int64_t i = 0; i < M; i++) ref += x[i * N + o];
                else if (axes == 2) for (int64_t j = 0; j < N; j++) ref += x[o * N + j];
                else for (int64_t i = 0; i < M * N; i++) ref += x[i];
                double e = fabs(o1[o] - ref) / (fabs(ref) + 1e-3);
                if (e > maxe) maxe = e;
            }
            CHECK(maxe < 1e-6, "sum %lldx%lld axes %u rel err %g", (long long)M, (long long)N, axes, maxe);
            /* argmax / min */
            int64_t a1[200000 + 16];
            run_reduce(be2, ND_REDUCE_ARGMAX, ND_FLOAT32, ND_INT64, M, N, axes, x, a1);
            int bad = 0;
            for (int64_t o = 0; o < no; o++) {
                int64_t best = 0; float bv = -INFINITY; int64_t cnt = axes == 1 ? M : axes == 2 ? N : M * N;
                for (int64_t r = 0; r < cnt; r++) {
                    float v = axes == 1 ? x[r * N + o] : axes == 2 ? x[o * N + r] : x[r];
                    if (v > bv) { bv = v; best = r; }
                }
                if (a1[o] != best) bad++;
            }
            CHECK(bad == 0, "argmax %lldx%lld axes %u: %d bad", (long long)M, (long long)N, axes, bad);
            run_reduce(be2, ND_REDUCE_MIN, ND_FLOAT32, ND_FLOAT32, M, N, axes, x, o2);
            bad = 0;
            for (int64_t o = 0; o < no; o++) {
                float bv = INFINITY; int64_t cnt = axes == 1 ? M : axes == 2 ? N : M * N;
                for (int64_t r = 0; r < cnt; r++) { float v = axes == 1 ? x[r * N + o] : axes == 2 ? x[o * N + r] : x[r]; if (v < bv) bv = v; }
                if (o2[o] != bv) bad++;
            }
            CHECK(bad == 0, "min %lldx%lld axes %u: %d bad", (long long)M, (long long)N, axes, bad);
        }
        free(x); free(o1); free(o2);
    }
    /* NaN handling: first NaN wins for argmin; min propagates */
    float v[10] = {3, 1, NAN, 0, NAN, -5, 1, 1, 1, 1};
    int64_t ai; float mv;
    run_reduce(be1, ND_REDUCE_ARGMIN, ND_FLOAT32, ND_INT64, 1, 10, 3, v, &ai);
    run_reduce(be1, ND_REDUCE_MIN, ND_FLOAT32, ND_FLOAT32, 1, 10, 3, v, &mv);
    CHECK(ai == 2 && isnan(mv), "nan argmin %lld", (long long)ai);
    /* ints, any/all, empty */
    int32_t iv[6] = {INT32_MAX, 1, 5, -2, 7, 0}; int32_t isum; uint8_t bv[4] = {0, 0, 1, 0}, anyv, allv;
    run_reduce(be1, ND_REDUCE_SUM, ND_INT32, ND_INT32, 2, 3, 3, iv, &isum);
    CHECK(isum == (int32_t)((uint32_t)INT32_MAX + 11u), "int sum wrap %d", isum);
    run_reduce(be1, ND_REDUCE_ANY, ND_BOOL, ND_BOOL, 2, 2, 3, bv, &anyv);
    run_reduce(be1, ND_REDUCE_ALL, ND_BOOL, ND_BOOL, 2, 2, 3, bv, &allv);
    CHECK(anyv == 1 && allv == 0, "any/all");
    float es[4] = {9, 9, 9, 9};
    run_reduce(be1, ND_REDUCE_SUM, ND_FLOAT32, ND_FLOAT32, 4, 0, 2, es, es);
    CHECK(es[0] == 0 && es[3] == 0, "empty sum %g", es[0]);
    float pr = 9;
    run_reduce(be1, ND_REDUCE_PROD, ND_FLOAT32, ND_FLOAT32, 0, 5, 3, es, &pr);
    CHECK(pr == 1, "empty prod %g", pr);
}

/* (A,B,C) reduce axes 0 and 2 (interleaved), with an elementwise store
 * alongside; f16 input summed; int argmin on outer axis */
static void test_reduce3d(void) {
    int64_t A = 37, Bn = 11, C = 300;
    float *x = nd_malloc(A * Bn * C * 4), *y = nd_malloc(A * Bn * C * 4), out1[11], out2[11];
    uint64_t s = 9;
    for (int64_t i = 0; i < A * Bn * C; i++) x[i] = frand(&s);
    for (int t = 0; t < 2; t++) {
        kb B; kb_init(&B, 3, (int64_t[]){A, Bn, C});
        int l = kb_load(&B, 0, ND_FLOAT32, 0, (int64_t[]){Bn * C, C, 1});
        int sq = kb_op(&B, ND_OP_SQUARE, ND_FLOAT32, l, 0, 0);
        kb_store(&B, 2, ND_FLOAT32, 0, (int64_t[]){Bn * C, C, 1}, sq);
        kb_reduce(&B, ND_REDUCE_SUM, ND_FLOAT32, 5, sq, 1, 0, (int64_t[]){0, 1, 0});
        void *slots[8] = {x, t ? out2 : out1, y};
        (t ? be2 : be1)->run_kernel(t ? be2 : be1, &B.k, slots, NULL);
    }
    CHECK(memcmp(out1, out2, sizeof out1) == 0, "3d reduce threads");
    double maxe = 0; int bad = 0;
    for (int64_t b = 0; b < Bn; b++) {
        double ref = 0;
        for (int64_t a = 0; a < A; a++) for (int64_t c = 0; c < C; c++) ref += (double)(x[(a * Bn + b) * C + c] * x[(a * Bn + b) * C + c]);
        double e = fabs(out1[b] - ref) / ref; if (e > maxe) maxe = e;
    }
    for (int64_t i = 0; i < A * Bn * C; i++) bad += y[i] != x[i] * x[i];
    CHECK(maxe < 1e-6 && bad == 0, "3d reduce err %g bad %d", maxe, bad);
    /* int16 argmin over axis 0 of (1000, 40): L = 40 lanes */
    int16_t *iv = nd_malloc(1000 * 40 * 2); int64_t am[40];
    for (int i = 0; i < 40000; i++) iv[i] = (int16_t)((i * 7919) % 2001 - 1000);
    run_reduce(be2, ND_REDUCE_ARGMIN, ND_INT16, ND_INT64, 1000, 40, 1, iv, am);
    bad = 0;
    for (int j = 0; j < 40; j++) { int best = 0; for (int i = 1; i < 1000; i++) if (iv[i * 40 + j] < iv[best * 40 + j]) best = i; bad += am[j] != best; }
    CHECK(bad == 0, "int16 argmin lanes %d", bad);
    /* uint32 max and prod wrap */
    uint32_t uv[5] = {3, 4000000000u, 2, 7, 1}, um, up;
    run_reduce(be1, ND_REDUCE_MAX, ND_UINT32, ND_UINT32, 1, 5, 3, uv, &um);
    run_reduce(be1, ND_REDUCE_PROD, ND_UINT32, ND_UINT32, 1, 5, 3, uv, &up);
    CHECK(um == 4000000000u && up == (uint32_t)(3ull * 4000000000ull * 14ull), "uint max/prod %u %u", um, up);
    /* float16 sum */
    uint16_t hv[1000]; uint16_t hs;
    for (int i = 0; i < 1000; i++) hv[i] = nd_float_to_half(0.25f);
    run_reduce(be1, ND_REDUCE_SUM, ND_FLOAT16, ND_FLOAT16, 1, 1000, 3, hv, &hs);
    CHECK(nd_half_to_float(hs) == 250.0f, "f16 sum %g", nd_half_to_float(hs));
    free(x); free(y); free(iv);
}

static void test_rng(void) {
    int64_t N = 300001;
    float *u1 = nd_malloc(N * 4), *u2 = nd_malloc(N * 4), *u3 = nd_malloc(N * 4);
    double *d1 = nd_malloc(N * 8);
    for (int kind = 0; kind < 2; kind++) {
        for (int variant = 0; variant < 3; variant++) {
            kb B;
            nd_backend *be = variant == 1 ? be2 : be1;
            float *dst = variant == 0 ? u1 : variant == 1 ? u2 : u3;
            if (variant < 2) kb_init(&B, 1, (int64_t[]){N}); else kb_init(&B, 2, (int64_t[]){N / 7, 7});
            int ix = variant < 2 ? kb_index(&B, 5, (int64_t[]){1}) : kb_index(&B, 5, (int64_t[]){7, 1});
            int seed = kb_param(&B, ND_UINT64, ND_UINT64), stream = kb_param(&B, ND_UINT64, ND_UINT64);
            int r = kb_op(&B, kind ? ND_IR_RAND_NORMAL : ND_IR_RAND_UNIFORM, ND_FLOAT32, ix, B.in[seed].a, B.in[stream].a);
            if (variant < 2) kb_store(&B, 0, ND_FLOAT32, 0, (int64_t[]){1}, r); else kb_store(&B, 0, ND_FLOAT32, 0, (int64_t[]){7, 1}, r);
            void *slots[8] = {dst};
            nd_scalar_bits p[2]; p[0].u = 1234; p[1].u = 9;
            CHECK(be->run_kernel(be, &B.k, slots, p) == ND_OK, "rng run");
        }
        int64_t n3 = N / 7 * 7;
        CHECK(memcmp(u1, u2, N * 4) == 0, "rng 1 vs 2 threads");
        CHECK(memcmp(u1, u3, n3 * 4) == 0, "rng tiling");
        double maxe = 0, mean = 0, var = 0;
        for (int64_t i = 0; i < N; i++) {
            double ref = kind ? nd_philox_normal_f32(1234, 9, i + 5) : nd_philox_uniform_f32(1234, 9, i + 5);
            double e = fabs(u1[i] - ref) / (fabs(ref) + 1e-6);
            if (e > maxe) maxe = e;
            mean += u1[i]; var += u1[i] * (double)u1[i];
        }
        mean /= N; var = var / N - mean * mean;
        printf("  rng %s: max rel diff vs reference %.3g, mean %.4f var %.4f\n", kind ? "normal" : "uniform", maxe, mean, var);
        CHECK(kind ? maxe < 1e-5 : maxe == 0, "rng vs reference %g", maxe);
    }
    /* float64 uniform */
    kb B; kb_init(&B, 1, (int64_t[]){N});
    int ix = kb_index(&B, 0, (int64_t[]){1});
    int seed = kb_param(&B, ND_UINT64, ND_UINT64), stream = kb_param(&B, ND_UINT64, ND_UINT64);
    int r = kb_op(&B, ND_IR_RAND_UNIFORM, ND_FLOAT64, ix, B.in[seed].a, B.in[stream].a);
    kb_store(&B, 0, ND_FLOAT64, 0, (int64_t[]){1}, r);
    void *slots[8] = {d1};
    nd_scalar_bits p[2]; p[0].u = 77; p[1].u = 0;
    be2->run_kernel(be2, &B.k, slots, p);
    int bad = 0;
    for (int64_t i = 0; i < N; i++) bad += d1[i] != nd_philox_uniform_f64(77, 0, i);
    CHECK(bad == 0, "f64 uniform %d", bad);
    B.in[r].op = ND_IR_RAND_NORMAL;
    be2->run_kernel(be2, &B.k, slots, p);
    double me = 0;
    for (int64_t i = 0; i < N; i++) { double ref = nd_philox_normal_f64(77, 0, i), e = fabs(d1[i] - ref) / (fabs(ref) + 1e-12); if (e > me) me = e; }
    printf("  rng normal f64: max rel diff vs reference %.3g\n", me);
    CHECK(me < 1e-13, "f64 normal %g", me);
    free(u1); free(u2); free(u3); free(d1);
}

static void test_matmul(nd_backend *be) {
    int dts[] = {ND_FLOAT32, ND_FLOAT64, ND_INT32, ND_FLOAT16, ND_BOOL};
    for (int di = 0; di < 5; di++) for (int tr = 0; tr < 3; tr++) {
        int dt = dts[di];
        int64_t m = 37, n = 29, k = tr == 2 ? 0 : 41;
        double *A = nd_malloc(8 * m * (k + 1)), *Bm = nd_malloc(8 * (k + 1) * n), *C = nd_malloc(8 * m * n);
        char *a = nd_malloc(8 * m * (k + 1)), *b = nd_malloc(8 * (k + 1) * n), *c = nd_malloc(8 * m * n * 2);
        uint64_t s = 5;
        for (int64_t i = 0; i < m * k; i++) { A[i] = dt == ND_BOOL ? (frand(&s) > 0.6) : round(frand(&s) * 8); }
        for (int64_t i = 0; i < k * n; i++) { Bm[i] = dt == ND_BOOL ? (frand(&s) > 0.6) : round(frand(&s) * 8); }
        /* a stored transposed when tr == 1 */
        for (int64_t i = 0; i < m; i++) for (int64_t p = 0; p < k; p++) {
            int64_t off = tr == 1 ? p * m + i : i * k + p;
            nd_store_double(a + off * nd_dtype_size(dt), dt, A[i * k + p]);
        }
        for (int64_t i = 0; i < k * n; i++) nd_store_double(b + i * nd_dtype_size(dt), dt, Bm[i]);
        memset(c, 0x55, 8 * m * n * 2);
        nd_matmul_desc d; memset(&d, 0, sizeof d);
        d.dtype = dt; d.m = m; d.n = n; d.k = k; d.a_slot = 0; d.b_slot = 1; d.c_slot = 2;
        d.a_rs = tr == 1 ? 1 : k; d.a_cs = tr == 1 ? m : 1; d.b_rs = n; d.b_cs = 1; d.c_rs = 2 * n; d.c_cs = 2; /* strided C */
        void *slots[3] = {a, b, c};
        CHECK(be->run_matmul(be, &d, slots) == ND_OK, "matmul run");
        int bad = 0;
        for (int64_t i = 0; i < m; i++) for (int64_t j = 0; j < n; j++) {
            double ref = 0;
            for (int64_t p = 0; p < k; p++) ref += A[i * k + p] * Bm[p * n + j];
            if (dt == ND_BOOL) ref = ref != 0;
            double got = nd_load_double(c + (i * 2 * n + j * 2) * nd_dtype_size(dt), dt);
            if (fabs(got - ref) > 1e-9 * (1 + fabs(ref)) && !(dt == ND_FLOAT16 && fabs(got - ref) <= fabs(ref) * 1e-3)) bad++;
        }
        CHECK(bad == 0, "matmul dt %d tr %d: %d bad", dt, tr, bad);
        free(A); free(Bm); free(C); free(a); free(b); free(c);
    }
}

static void bench(void) {
    int64_t N = 1 << 24;
    float *a = aligned_alloc(64, N * 4), *b = aligned_alloc(64, N * 4), *c = aligned_alloc(64, N * 4), *d = aligned_alloc(64, N * 4), *y = aligned_alloc(64, N * 4);
    uint64_t s = 1;
    for (int64_t i = 0; i < N; i++) { a[i] = frand(&s); b[i] = frand(&s); c[i] = frand(&s); d[i] = frand(&s); y[i] = 0; }
    double t0, tm = 1e9;
    for (int r = 0; r < 7; r++) { t0 = now(); memcpy(y, a, N * 4); double e = now() - t0; if (e < tm) tm = e; }
    printf("  memcpy 64MB: %.2f ms (%.1f GB/s)\n", tm * 1e3, 2 * N * 4 / tm / 1e9);
    nd_backend *bes[2] = {be1, be2};
    for (int bi = 0; bi < 2; bi++) {
        kb B; int64_t sh[1] = {N}, one[1] = {1};
        kb_init(&B, 1, sh);
        int la = kb_load(&B, 0, ND_FLOAT32, 0, one), lb = kb_load(&B, 1, ND_FLOAT32, 0, one);
        int lc = kb_load(&B, 2, ND_FLOAT32, 0, one), ld = kb_load(&B, 3, ND_FLOAT32, 0, one);
        int h = kb_param(&B, ND_FLOAT32, ND_FLOAT64);
        int ab = kb_op(&B, ND_OP_MUL, ND_FLOAT32, la, lb, 0), cd = kb_op(&B, ND_OP_MUL, ND_FLOAT32, lc, ld, 0);
        int s1 = kb_op(&B, ND_OP_ADD, ND_FLOAT32, ab, cd, 0), ha = kb_op(&B, ND_OP_MUL, ND_FLOAT32, h, la, 0);
        kb_store(&B, 4, ND_FLOAT32, 0, one, kb_op(&B, ND_OP_SUB, ND_FLOAT32, s1, ha, 0));
        void *slots[8] = {a, b, c, d, y};
        nd_scalar_bits p[1]; p[0].f = 0.5;
        bes[bi]->run_kernel(bes[bi], &B.k, slots, p);
        double t1 = 1e9;
        for (int r = 0; r < 7; r++) { t0 = now(); bes[bi]->run_kernel(bes[bi], &B.k, slots, p); double e = now() - t0; if (e < t1) t1 = e; }
        printf("  [%d thr] a*b+c*d-0.5a: %.2f ms  (floor 5 arrays at memcpy bw: %.2f ms, ratio %.2f)\n", bi + 1, t1 * 1e3, tm * 2.5 * 1e3, t1 / (tm * 2.5));
        /* sin(a)*cos(b) + sqrt(abs(a*b))*exp(-a*a) */
        kb_init(&B, 1, sh);
        la = kb_load(&B, 0, ND_FLOAT32, 0, one); lb = kb_load(&B, 1, ND_FLOAT32, 0, one);
        int sa = kb_op(&B, ND_OP_SIN, ND_FLOAT32, la, 0, 0), cb = kb_op(&B, ND_OP_COS, ND_FLOAT32, lb, 0, 0);
        int m1 = kb_op(&B, ND_OP_MUL, ND_FLOAT32, sa, cb, 0);
        int abv = kb_op(&B, ND_OP_MUL, ND_FLOAT32, la, lb, 0);
        int sq = kb_op(&B, ND_OP_SQRT, ND_FLOAT32, kb_op(&B, ND_OP_ABS, ND_FLOAT32, abv, 0, 0), 0, 0);
        int aa = kb_op(&B, ND_OP_MUL, ND_FLOAT32, la, la, 0);
        int ex = kb_op(&B, ND_OP_EXP, ND_FLOAT32, kb_op(&B, ND_OP_NEG, ND_FLOAT32, aa, 0, 0), 0, 0);
        kb_store(&B, 4, ND_FLOAT32, 0, one, kb_op(&B, ND_OP_ADD, ND_FLOAT32, m1, kb_op(&B, ND_OP_MUL, ND_FLOAT32, sq, ex, 0), 0));
        bes[bi]->run_kernel(bes[bi], &B.k, slots, p);
        t1 = 1e9;
        for (int r = 0; r < 7; r++) { t0 = now(); bes[bi]->run_kernel(bes[bi], &B.k, slots, p); double e = now() - t0; if (e < t1) t1 = e; }
        printf("  [%d thr] sin*cos+sqrt*exp: %.2f ms\n", bi + 1, t1 * 1e3);
        /* sum of 2^24 */
        kb_init(&B, 1, sh);
        la = kb_load(&B, 0, ND_FLOAT32, 0, one);
        float out;
        kb_reduce(&B, ND_REDUCE_SUM, ND_FLOAT32, 1, la, 5, 0, (int64_t[]){0});
        slots[5] = &out;
        t1 = 1e9;
        for (int r = 0; r < 7; r++) { t0 = now(); bes[bi]->run_kernel(bes[bi], &B.k, slots, p); double e = now() - t0; if (e < t1) t1 = e; }
        printf("  [%d thr] sum 2^24 f32: %.2f ms\n", bi + 1, t1 * 1e3);
        for (int kind = 0; kind < 2; kind++) {
            kb_init(&B, 1, sh);
            int ix = kb_index(&B, 0, one);
            int sd = kb_param(&B, ND_UINT64, ND_UINT64), sm = kb_param(&B, ND_UINT64, ND_UINT64);
            kb_store(&B, 4, ND_FLOAT32, 0, one, kb_op(&B, kind ? ND_IR_RAND_NORMAL : ND_IR_RAND_UNIFORM, ND_FLOAT32, ix, B.in[sd].a, B.in[sm].a));
            nd_scalar_bits rp[2]; rp[0].u = 1; rp[1].u = 2;
            t1 = 1e9;
            for (int r = 0; r < 5; r++) { t0 = now(); bes[bi]->run_kernel(bes[bi], &B.k, slots, rp); double e = now() - t0; if (e < t1) t1 = e; }
            printf("  [%d thr] random %s 2^24 f32: %.2f ms\n", bi + 1, kind ? "normal" : "uniform", t1 * 1e3);
        }
    }
    /* tiny kernel latency */
    float ta[16] = {0}, tb[16];
    kb B; kb_init(&B, 1, (int64_t[]){16});
    int l = kb_load(&B, 0, ND_FLOAT32, 0, (int64_t[]){1});
    kb_store(&B, 1, ND_FLOAT32, 0, (int64_t[]){1}, kb_op(&B, ND_OP_ADD, ND_FLOAT32, l, l, 0));
    void *sl[8] = {ta, tb};
    t0 = now();
    for (int r = 0; r < 100000; r++) be2->run_kernel(be2, &B.k, sl, NULL);
    printf("  tiny kernel: %.2f us\n", (now() - t0) / 100000 * 1e6);
    free(a); free(b); free(c); free(d); free(y);
}

/* OpenBLAS's kernels: which core replaces a fallback (a table of cases),
 * then, where the process has a DYNAMIC_ARCH OpenBLAS on an AVX2 CPU, a
 * real switch to Haswell's kernels and back, matmul right after each. */
static void test_blas_core(nd_backend *be) {
    const nd_cpu_blas_features avx512 = {1, 1, 0}, avx2 = {1, 0, 0}, amd = {1, 0, 1}, sse = {0, 0, 0};
    struct { const char *core; nd_cpu_blas_features f; const char *want; } cases[] = {
        {"Prescott", avx512, "SkylakeX"}, {"Prescott", avx2, "Haswell"}, {"Prescott", amd, "Zen"},
        {"Nehalem", avx512, "SkylakeX"},  {"Prescott", sse, NULL},       {"Cooperlake", avx512, NULL},
        {"Haswell", avx512, NULL},        {"SkylakeX", avx2, NULL},      {"Zen", amd, NULL},
        {"SAPPHIRERAPIDS", avx512, NULL}, {NULL, avx512, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *got = nd_cpu_blas_core_better(cases[i].core, cases[i].f);
        CHECK(got == cases[i].want || (got && cases[i].want && !strcmp(got, cases[i].want)),
              "better core for %s: %s, want %s", cases[i].core ? cases[i].core : "(none)", got ? got : "(keep)",
              cases[i].want ? cases[i].want : "(keep)");
    }
    const char *now_core = nd_cpu_blas_corename();
    if (!now_core || !nd_cpu_blas_symbol("gotoblas_dynamic_init") || !nd_cpu_blas_features_here().avx2_fma) {
        printf("blas core switch: not checked (no DYNAMIC_ARCH OpenBLAS or no AVX2 here)\n");
        return;
    }
    char was[64];
    snprintf(was, sizeof was, "%s", now_core);
    const char *user_core = getenv("OPENBLAS_CORETYPE");
    if (!user_core)
        CHECK(nd_cpu_blas_core_better(was, nd_cpu_blas_features_here()) == NULL,
              "the backend's start left OpenBLAS on a fallback core (%s)", was);
    CHECK(nd_cpu_blas_core_switch("Haswell") == 0, "switch to Haswell: core %s", nd_cpu_blas_corename());
    const char *user = getenv("OPENBLAS_CORETYPE");
    CHECK(user ? !strcmp(user, user_core) : !user_core, "OPENBLAS_CORETYPE changed: %s", user ? user : "(unset)");
    test_matmul(be);
    /* as an OpenBLAS that does not know the CPU: the fix picks the better core */
    if (!getenv("OPENBLAS_CORETYPE")) {
        CHECK(nd_cpu_blas_core_switch("Prescott") == 0, "switch to Prescott: core %s", nd_cpu_blas_corename());
        const char *want = nd_cpu_blas_core_better("Prescott", nd_cpu_blas_features_here());
        CHECK(nd_cpu_blas_core_fix() == 1 && strcasestr(nd_cpu_blas_corename(), want),
              "fix from Prescott: core %s, want %s", nd_cpu_blas_corename(), want);
        test_matmul(be);
    }
    CHECK(nd_cpu_blas_core_switch(was) == 0, "switch back to %s: core %s", was, nd_cpu_blas_corename());
    test_matmul(be);
}

/* nd_cpu_stedc (cpu_stedc.c) on 1, 2 and 7 threads: the same bits whatever
 * the count (with one worker every merge runs whole; with seven the top
 * merges of 256 rows or more spread their roots, rows and panels), and
 * against LAPACK's stedc: the eigenvalues, T Z = Z diag(w) and Z^T Z = I to
 * rounding (bounds 3-10x the errors measured on
 * these inputs). Three tridiagonals of 700 rows: random, a cluster of nearly
 * equal eigenvalues (heavy deflation) and one that splits in two. */
static void stedc_case(int f64, int kind, nd_backend *const *bes, int n_bes) {
    const int64_t n = 700;
    const size_t es = f64 ? 8 : 4;
    double *d0 = malloc(8 * n), *e0 = malloc(8 * n), *z64 = malloc(8 * n * n), *w64 = malloc(8 * n);
    void *d[3], *e[3], *z[3];
    uint64_t seed = 0x5eed0000u + (uint64_t)(kind * 2 + f64);
    for (int64_t i = 0; i < n; i++) {
        d0[i] = kind == 1 ? 1.0 + 1e-9 * frand(&seed) : 2.0 * frand(&seed);
        e0[i] = kind == 1 ? 1e-4 * frand(&seed) : frand(&seed);
    }
    if (kind == 2) e0[n / 2 - 1] = 0.0; /* rows [0, 350) and [350, 700) apart */
    e0[n - 1] = 0.0;
    for (int b = 0; b < n_bes; b++) {
        d[b] = malloc(es * n), e[b] = malloc(es * n), z[b] = malloc(es * n * n);
        for (int64_t i = 0; i < n; i++) {
            if (f64) ((double *)d[b])[i] = d0[i], ((double *)e[b])[i] = e0[i];
            else ((float *)d[b])[i] = (float)d0[i], ((float *)e[b])[i] = (float)e0[i];
        }
        memset(z[b], 0xa5, es * n * n); /* poison: every element must be written */
        int info = nd_cpu_stedc((nd_cpu_state *)bes[b]->impl, f64, n, d[b], e[b], z[b]);
        CHECK(info == 0, "stedc %s case %d on backend %d: info %d", f64 ? "f64" : "f32", kind, b, info);
    }
    for (int b = 1; b < n_bes; b++) {
        CHECK(!memcmp(d[0], d[b], es * n), "stedc %s case %d: eigenvalues' bits differ with the thread count (backend %d)",
              f64 ? "f64" : "f32", kind, b);
        CHECK(!memcmp(z[0], z[b], es * n * n), "stedc %s case %d: eigenvectors' bits differ with the thread count (backend %d)",
              f64 ? "f64" : "f32", kind, b);
    }
    /* the reference: LAPACK's stedc in float64 on the same (rounded) input */
    double *dr = malloc(8 * n), *er = malloc(8 * n), *t = malloc(8 * n * n), *r = malloc(8 * n * n);
    for (int64_t i = 0; i < n; i++) {
        dr[i] = f64 ? d0[i] : (double)(float)d0[i];
        er[i] = f64 ? e0[i] : (double)(float)e0[i];
    }
    double tnorm = 0;
    for (int64_t i = 0; i < n; i++) tnorm = fmax(tnorm, fabs(dr[i]) + 2 * fabs(er[i]));
    memset(t, 0, 8 * n * n);
    for (int64_t i = 0; i < n; i++) {
        t[i * n + i] = dr[i];
        if (i + 1 < n) t[i * n + i + 1] = t[(i + 1) * n + i] = er[i];
    }
    CHECK(LAPACKE_dstedc(LAPACK_COL_MAJOR, 'I', (lapack_int)n, dr, er, z64, (lapack_int)n) == 0, "LAPACK's dstedc failed");
    for (int64_t i = 0; i < n * n; i++) z64[i] = f64 ? ((double *)z[0])[i] : ((float *)z[0])[i];
    for (int64_t i = 0; i < n; i++) w64[i] = f64 ? ((double *)d[0])[i] : ((float *)d[0])[i];
    const double eps = f64 ? 0x1p-52 : 0x1p-23;
    double werr = 0, res = 0, orth = 0;
    for (int64_t i = 0; i < n; i++) werr = fmax(werr, fabs(w64[i] - dr[i]));
    /* T Z - Z diag(w), column by column */
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0, t, (int)n, z64, (int)n, 0.0, r,
                (int)n);
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++) res = fmax(res, fabs(r[j * n + i] - w64[j] * z64[j * n + i]));
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0, z64, (int)n, z64, (int)n, 0.0, r,
                (int)n);
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++) orth = fmax(orth, fabs(r[j * n + i] - (i == j)));
    CHECK(werr <= 20 * eps * tnorm, "stedc %s case %d: eigenvalues %.3g from LAPACK's (|T| %.3g)", f64 ? "f64" : "f32",
          kind, werr, tnorm);
    CHECK(res <= 50 * eps * tnorm, "stedc %s case %d: |T Z - Z W| %.3g", f64 ? "f64" : "f32", kind, res);
    CHECK(orth <= 100 * eps, "stedc %s case %d: |Z^T Z - I| %.3g", f64 ? "f64" : "f32", kind, orth);
    for (int b = 0; b < n_bes; b++) free(d[b]), free(e[b]), free(z[b]);
    free(d0), free(e0), free(z64), free(w64), free(dr), free(er), free(t), free(r);
}

static void test_stedc(void) {
    nd_backend_config c7 = {0};
    c7.num_threads = 7;
    nd_backend *be7 = NULL;
    if (nd_cpu_backend_create(&c7, &be7) != ND_OK) {
        CHECK(0, "create a backend of 7 threads");
        return;
    }
    nd_backend *bes[3] = {be1, be2, be7};
    for (int f64 = 0; f64 <= 1; f64++)
        for (int kind = 0; kind < 3; kind++) stedc_case(f64, kind, bes, 3);
    be7->destroy(be7);
}

/* A loop region (kernel_ir.h's ND_IR_LOOP): y = y * 0.5 + 1, `count`
 * rounds, against the same float32 steps here; and loops whose structure
 * nd_kernel_check_loops refuses, refused (ND_ERR_BACKEND) before running. */
static void test_loops(nd_backend *be) {
    enum { N = 1000 };
    float x[N], y[N];
    uint64_t s = 3;
    for (int i = 0; i < N; i++) x[i] = frand(&s) * 4;
    int64_t sh[1] = {N}, one[1] = {1};
    for (int64_t count = 1; count <= 7; count += 6) {
        kb B;
        kb_init(&B, 1, sh);
        int l = kb_load(&B, 0, ND_FLOAT32, 0, one);
        int c = kb_param(&B, ND_INT64, ND_INT64), h = kb_param(&B, ND_FLOAT32, ND_FLOAT64);
        int o = kb_param(&B, ND_FLOAT32, ND_FLOAT64);
        int L = kb_op(&B, ND_IR_LOOP, ND_FLOAT32, c, l, 0);
        int m = kb_op(&B, ND_OP_MUL, ND_FLOAT32, L, h, 0), a = kb_op(&B, ND_OP_ADD, ND_FLOAT32, m, o, 0);
        int E = kb_op(&B, ND_IR_LOOP_END, ND_FLOAT32, L, a, 0);
        kb_store(&B, 1, ND_FLOAT32, 0, one, E);
        for (int i = 0; i < N; i++) y[i] = -7.0f;
        void *slots[8] = {x, y};
        nd_scalar_bits p[3];
        p[0].i = count; p[1].f = 0.5; p[2].f = 1.0;
        CHECK(be->run_kernel(be, &B.k, slots, p) == ND_OK, "loop run: %s", nd_last_error());
        int bad = 0;
        for (int i = 0; i < N; i++) {
            float w = x[i];
            for (int64_t r = 0; r < count; r++) { float t = w * 0.5f; w = t + 1.0f; }
            bad += y[i] != w;
        }
        CHECK(bad == 0, "loop of %lld rounds: %d mismatches", (long long)count, bad);
    }
    /* 0: an end with no loop; 1: a loop never closed; 2: a value of the
     * region stored after it */
    for (int t = 0; t < 3; t++) {
        kb B;
        kb_init(&B, 1, sh);
        int l = kb_load(&B, 0, ND_FLOAT32, 0, one), c = kb_param(&B, ND_INT64, ND_INT64);
        int L = t == 0 ? l : kb_op(&B, ND_IR_LOOP, ND_FLOAT32, c, l, 0);
        int m = kb_op(&B, ND_OP_NEG, ND_FLOAT32, L, 0, 0);
        int E = t == 1 ? m : kb_op(&B, ND_IR_LOOP_END, ND_FLOAT32, L, m, 0);
        kb_store(&B, 1, ND_FLOAT32, 0, one, t == 2 ? m : E);
        for (int i = 0; i < N; i++) y[i] = -7.0f;
        void *slots[8] = {x, y};
        nd_scalar_bits p[1];
        p[0].i = 2;
        CHECK(be->run_kernel(be, &B.k, slots, p) == ND_ERR_BACKEND, "malformed loop %d: %s", t, nd_last_error());
        CHECK(y[0] == -7.0f && y[N - 1] == -7.0f, "malformed loop %d wrote its output", t);
        nd_clear_error();
    }
}

int main(int argc, char **argv) {
    nd_backend_config c1 = {0}, c2 = {0};
    c1.num_threads = 1; c2.num_threads = 2;
    if (nd_cpu_backend_create(&c1, &be1) != ND_OK || nd_cpu_backend_create(&c2, &be2) != ND_OK) { printf("create failed\n"); return 1; }
    test_philox();
    test_elementwise(be1); test_elementwise(be2);
    test_math(be2);
    test_casts_and_halfs(be1);
    test_strided(be1); test_strided(be2);
    test_loops(be1); test_loops(be2);
    test_reduce();
    test_reduce3d();
    test_rng();
    test_matmul(be1);
    test_blas_core(be1);
    test_stedc();
    if (argc > 1 && !strcmp(argv[1], "bench")) bench();
    be1->destroy(be1); be2->destroy(be2);
    printf(fails ? "%d FAILURES\n" : "all passed\n", fails);
    return fails != 0;
}
