/* Checks the CUDA code generator on a machine without a GPU (see
 * emulate_check.sh): kernel IR with random draws is generated, compiled by
 * NVRTC for sm_90 (no device needed), then compiled as C++ against
 * emulate_shim.h, loaded and run on the host with the backend's launch
 * geometry (backend.c) through emulate_harness.h, and compared with
 * common/philox.h: every uniform draw bit for bit, normal draws, sums and
 * counts within rounding. Usage:
 *   emulate_check WORKDIR [v][n][g][l] (v: print each kernel's geometry,
 *                                      n: skip NVRTC, g: gathers only,
 *                                      l: loop regions only) */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvrtc.h>

#include "backends/cuda/cuda_internal.h"
#include "common/dtype.h"
#include "common/lib_calls.h"
#include "common/philox.h"
#include "common/strbuf.h"
#include "common/ufunc_loop.h"
#include "emulate_harness.h"

static int fails, checks, nvrtc_on = 1, verbose = 0;
static const char *workdir;
#define CHECK(c, ...)                                                                                        \
    do {                                                                                                     \
        checks++;                                                                                            \
        if (!(c)) {                                                                                          \
            fails++;                                                                                         \
            printf("FAIL: ");                                                                                \
            printf(__VA_ARGS__);                                                                             \
            printf("\n");                                                                                    \
        }                                                                                                    \
    } while (0)

static int test_no;
static int last_vec; /* the vector width of the kernel emulate() generated last */
/* The bad-index record of kernels that gather (struct ndk_bad). */
static nd_ir_fail gather_bad_rec;
static void *gather_bad = &gather_bad_rec;

typedef int (*launch_fn)(const char *name, unsigned grid, int sync, const unsigned long long *w);

/* Generates k, checks it with NVRTC, builds it for the host and runs it
 * over slots as backend.c launches it (vec: the vector variant). Returns 0
 * on failure. */
static int emulate(const nd_kernel *k, void **slots, const nd_scalar_bits *params, int vec) {
    nd_cuda_kinfo info;
    if (nd_cuda_kernel_info(k, &info)) {
        printf("kinfo: %s\n", nd_last_error());
        return 0;
    }
    last_vec = info.vec;
    char *src;
    if (nd_cuda_codegen(k, &info, &src)) {
        printf("codegen: %s\n", nd_last_error());
        return 0;
    }
    char path[256];
    snprintf(path, sizeof path, "%s/t%03d_%s.cu", workdir, test_no, k->name);
    FILE *f = fopen(path, "w");
    fputs(src, f);
    fclose(f);
    if (nvrtc_on && !emu_nvrtc_compiles(src, path, "-I" ND_EMU_CUDA_INCLUDE)) {
        fails++;
        free(src);
        return 0;
    }
    nd_strbuf cpp = {0};
    nd_strbuf_printf(&cpp, "%s\n", src);
    nd_strbuf_printf(&cpp, "extern \"C\" int emu_launch(const char *name, unsigned grid, int sync, const unsigned "
                           "long long *w) {\n"
                           "  ndk_args A; memcpy(&A, w, sizeof A);\n");
    nd_strbuf_printf(&cpp, "  if (!strcmp(name, \"%s\")) { emu_grid(grid, sync, [&] { %s(A); }); return 1; }\n",
                     info.name, info.name);
    if (info.vec)
        nd_strbuf_printf(&cpp, "  if (!strcmp(name, \"%s\")) { emu_grid(grid, sync, [&] { %s(A); }); return 1; }\n",
                         info.name_vec, info.name_vec);
    if (k->has_reduce && (info.splits > 1 || info.persist))
        nd_strbuf_printf(&cpp, "  if (!strcmp(name, \"%s\")) { emu_grid(grid, sync, [&] { %s(A); }); return 1; }\n",
                         info.name_pass2, info.name_pass2);
    nd_strbuf_printf(&cpp, "  return 0;\n}\n");
    free(src);
    char stem[300];
    snprintf(stem, sizeof stem, "t%03d_%s", test_no, k->name);
    void *h = cpp.failed ? NULL : emu_build(cpp.buf, workdir, stem, "-I" ND_EMU_CUDA_INCLUDE);
    nd_strbuf_free(&cpp);
    if (!h) {
        fails++;
        return 0;
    }
    launch_fn run = (launch_fn)dlsym(h, "emu_launch");
    unsigned long long w[ND_CUDA_MAX_WORDS];
    for (int i = 0; i < k->n_slots; i++) w[i] = (unsigned long long)(uintptr_t)slots[i];
    for (int j = 0; j < k->n_params; j++) {
        if (k->param_dtypes[j] == ND_FLOAT32) {
            float x = (float)params[j].f;
            uint32_t b;
            memcpy(&b, &x, 4);
            w[k->n_slots + j] = b;
        } else
            memcpy(&w[k->n_slots + j], &params[j], 8);
    }
    nd_cuda_fill_round_keys(&info, (uint64_t *)w);
    if (info.bad_word >= 0) w[info.bad_word] = (unsigned long long)(uintptr_t)gather_bad;
    void *partials = NULL;
    int ok = 1;
    if (!k->has_reduce) {
        nd_cuda_kinfo own;
        const nd_cuda_kinfo *li = nd_cuda_launch_info(&info, k, &own, (uint64_t *)w);
        if (vec && li->vec)
            ok = run(li->name_vec, emu_grid_for(li->n / li->vec), 0, w);
        else
            ok = run(li->name, emu_grid_for(li->items), li->march > 0, w); /* march: __syncthreads */
    } else if (info.persist) {
        /* the backend's grid on a device of 4 SMs (nd_cuda_persist_grid) */
        unsigned g = nd_cuda_persist_grid(&info, 4);
        partials = g > 1 ? calloc(g, 16) : NULL;
        w[k->n_slots + k->n_params] = (unsigned long long)(uintptr_t)partials;
        w[info.splits_word] = g;
        ok = run(info.name, g, 1, w);
        if (ok && g > 1) ok = run(info.name_pass2, 1, 1, w);
    } else {
        if (info.splits > 1) partials = calloc((size_t)info.groups, 16);
        w[k->n_slots + k->n_params] = (unsigned long long)(uintptr_t)partials;
        unsigned grid;
        if (info.strategy == ND_CUDA_REDUCE_ROWS) {
            int64_t rpb = 256 / info.tpr;
            grid = (unsigned)((info.groups + rpb - 1) / rpb);
        } else
            grid = emu_grid_for(info.items);
        ok = run(info.name, grid, info.strategy == ND_CUDA_REDUCE_ROWS, w);
        if (ok && info.splits > 1) {
            unsigned g2 =
                info.pass2_tree ? (unsigned)(info.n_out < 65535 ? info.n_out : 65535) : emu_grid_for(info.n_out);
            ok = run(info.name_pass2, g2, info.pass2_tree, w);
        }
    }
    if (verbose)
        printf("  [%s] strategy %d group %d axis %d kept %d vec %d vec_group %d splits %lld chunk %lld persist %d\n",
               k->name, info.strategy, info.group, info.group_axis, info.group_kept, info.vec, info.vec_group,
               (long long)info.splits, (long long)info.chunk, info.persist);
    free(partials);
    dlclose(h);
    return ok;
}

/* ---------------------------------------------------------------- tests */

static const uint64_t SEED = 0x0123456789abcdefull, STREAM = 5;

static double want_draw(nd_dtype t, int normal, uint64_t i) {
    if (t == ND_FLOAT64)
        return normal ? nd_philox_normal_f64(SEED, STREAM, i) : nd_philox_uniform_f64(SEED, STREAM, i);
    float v = normal ? nd_philox_normal_f32(SEED, STREAM, i) : nd_philox_uniform_f32(SEED, STREAM, i);
    if (t == ND_FLOAT32) return v;
    unsigned char b[2];
    nd_convert_element(b, t, &v, ND_FLOAT32);
    float back;
    nd_convert_element(&back, ND_FLOAT32, b, t);
    return back;
}

static size_t esz(nd_dtype t) { return t == ND_FLOAT64 ? 8 : t == ND_FLOAT32 ? 4 : 2; }

static double get(const void *p, nd_dtype t, int64_t i) {
    double d;
    nd_convert_element(&d, ND_FLOAT64, (const char *)p + esz(t) * i, t);
    return d;
}

/* Index map value at a row-major point of shape. */
static int64_t map_at(const nd_ir_access *m, int ndim, const int64_t *shape, int64_t flat, int64_t *idx) {
    int64_t x = m->offset;
    for (int d = ndim - 1; d >= 0; d--) {
        idx[d] = flat % shape[d];
        flat /= shape[d];
    }
    for (int d = 0; d < ndim; d++) x += m->strides[d] * idx[d];
    return x;
}

/* A kernel over `shape` whose body is one draw at index map (off, st):
 * the caller adds the store or the reduction. */
static void draw_kernel(nd_kernel *k, int ndim, const int64_t *shape, nd_ir_access *idx, int64_t off,
                        const int64_t *st, nd_ir_inst *ins, uint8_t *pd, nd_dtype t, int normal) {
    memset(k, 0, sizeof *k);
    k->ndim = ndim;
    memcpy(k->shape, shape, sizeof(int64_t) * ndim);
    memset(idx, 0, sizeof *idx);
    idx->offset = off;
    memcpy(idx->strides, st, sizeof(int64_t) * ndim);
    pd[0] = pd[1] = ND_UINT64;
    ins[0] = (nd_ir_inst){ND_IR_INDEX, ND_INT64, 0, 0, 0, 0, 0, 0};
    ins[1] = (nd_ir_inst){(uint8_t)(normal ? ND_IR_RAND_NORMAL : ND_IR_RAND_UNIFORM), (uint8_t)t, 0, 0, 0, 1, 0, 0};
    k->n_slots = 1;
    k->n_params = 2;
    k->param_dtypes = pd;
    k->n_indices = 1;
    k->indices = idx;
    k->n_insts = 2;
    k->insts = ins;
}

/* out[row-major] = draw(map(i)); every path (scalar, vector). */
static void test_elem(int ndim, const int64_t *shape, int64_t off, const int64_t *st, nd_dtype t,
                      int normal) {
    test_no++;
    int64_t n = 1, cst[ND_MAX_DIMS];
    for (int d = ndim - 1; d >= 0; d--) {
        cst[d] = n;
        n *= shape[d];
    }
    nd_kernel k;
    nd_ir_access idx;
    nd_ir_inst ins[2];
    uint8_t pd[2];
    draw_kernel(&k, ndim, shape, &idx, off, st, ins, pd, t, normal);
    snprintf(k.name, sizeof k.name, "%s_%s_%dd", normal ? "normal" : "uniform", nd_dtype_name(t), ndim);
    nd_ir_store sto;
    memset(&sto, 0, sizeof sto);
    sto.at.slot = 0;
    sto.at.dtype = (uint8_t)t;
    memcpy(sto.at.strides, cst, sizeof(int64_t) * ndim);
    sto.value = 1;
    k.n_stores = 1;
    k.stores = &sto;
    k.hash = 0x1000 + test_no;
    nd_scalar_bits p[2];
    p[0].u = SEED;
    p[1].u = STREAM;
    for (int vec = 0; vec < 2; vec++) {
        void *out = calloc((size_t)n + 16, esz(t));
        void *slots[1] = {out};
        if (!emulate(&k, slots, p, vec)) {
            CHECK(0, "test %d %s: emulation failed", test_no, k.name);
            free(out);
            return;
        }
        int bad = 0;
        double maxerr = 0;
        for (int64_t i = 0; i < n; i++) {
            int64_t ix[ND_MAX_DIMS];
            int64_t x = map_at(&idx, ndim, shape, i, ix);
            double w = want_draw(t, normal, (uint64_t)x), g = get(out, t, i), e = fabs(g - w);
            if (e > maxerr) maxerr = e;
            if (normal ? !(e <= 1e-5 * (1 + fabs(w)) *
                                    (t == ND_FLOAT16    ? 200
                                     : t == ND_BFLOAT16 ? 2000
                                                        : 1))
                       : g != w) {
                if (bad < 3)
                    printf("   t%d %s vec %d elem %lld (index %lld): %.9g want %.9g\n", test_no, k.name, vec,
                           (long long)i, (long long)x, g, w);
                bad++;
            }
        }
        CHECK(bad == 0, "test %d %s off %lld vec %d: %d of %lld wrong", test_no, k.name, (long long)off, vec,
              bad, (long long)n);
        free(out);
    }
}

/* The IR's range parameter of the pair form: r | t << 32. The pair form's
 * emulated kernels take any r <= 2^16 (r = 46341 rejects half the words, so
 * the redraw runs), which nd_random_integers would draw one a word. */
static uint64_t pair_param(uint64_t r) { return r | (uint64_t)nd_philox_pair_threshold(r) << 32; }

/* out[row-major] = integer draw in [0, range) at map(i) (wide 0, uint32:
 * one word; 1, uint64: two; 2, uint16: the pair form), every path; exact
 * against nd_philox_integer_words / nd_philox_integer_pair (the ranges
 * reject about half the first draws, so the retry loop runs). */
static void test_int_elem(int ndim, const int64_t *shape, int64_t off, const int64_t *st, int wide,
                          uint64_t range) {
    test_no++;
    nd_dtype t = wide == 2 ? ND_UINT16 : wide ? ND_UINT64 : ND_UINT32;
    int64_t n = 1, cst[ND_MAX_DIMS];
    for (int d = ndim - 1; d >= 0; d--) {
        cst[d] = n;
        n *= shape[d];
    }
    nd_kernel k;
    nd_ir_access idx;
    nd_ir_inst ins[2];
    uint8_t pd[3];
    draw_kernel(&k, ndim, shape, &idx, off, st, ins, pd, t, 0);
    ins[1].op = ND_IR_RAND_INTEGER;
    ins[1].d = 2;
    pd[2] = ND_UINT64;
    k.n_params = 3;
    snprintf(k.name, sizeof k.name, "integers_%s_%dd", nd_dtype_name(t), ndim);
    nd_ir_store sto;
    memset(&sto, 0, sizeof sto);
    sto.at.dtype = (uint8_t)t;
    memcpy(sto.at.strides, cst, sizeof(int64_t) * ndim);
    sto.value = 1;
    k.n_stores = 1;
    k.stores = &sto;
    k.hash = 0x1000 + test_no;
    nd_scalar_bits p[3];
    p[0].u = SEED;
    p[1].u = STREAM;
    p[2].u = wide == 2 ? pair_param(range) : range;
    for (int vec = 0; vec < 2; vec++) {
        uint64_t *out = calloc((size_t)n + 16, 8);
        void *slots[1] = {out};
        if (!emulate(&k, slots, p, vec)) {
            CHECK(0, "test %d %s: emulation failed", test_no, k.name);
            free(out);
            return;
        }
        int bad = 0;
        for (int64_t i = 0; i < n; i++) {
            int64_t ix[ND_MAX_DIMS];
            uint64_t x = (uint64_t)map_at(&idx, ndim, shape, i, ix);
            uint64_t w = wide == 2 ? nd_philox_integer_pair(range, SEED, STREAM, x)
                                   : nd_philox_integer_words(wide, range, SEED, STREAM, x);
            uint64_t g = wide == 2 ? ((const uint16_t *)out)[i] : wide ? out[i] : ((const uint32_t *)out)[i];
            if (g != w && bad++ < 3)
                printf("   t%d %s vec %d elem %lld (index %lld): %llu want %llu\n", test_no, k.name, vec, (long long)i,
                       (long long)x, (unsigned long long)g, (unsigned long long)w);
        }
        CHECK(bad == 0, "test %d %s off %lld vec %d: %d of %lld wrong", test_no, k.name, (long long)off, vec, bad,
              (long long)n);
        free(out);
    }
}

/* SUM, ARGMAX, MAX or MIN of draw(map(i)) over `axes`; output contiguous over kept axes. */
static void test_reduce(int ndim, const int64_t *shape, uint32_t axes, int64_t off, const int64_t *st,
                        nd_dtype t, int normal, int kind) {
    test_no++;
    int64_t n = 1, ost[ND_MAX_DIMS] = {0}, s = 1, n_out = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    for (int d = ndim - 1; d >= 0; d--)
        if (!(axes >> d & 1)) {
            ost[d] = s;
            s *= shape[d];
            n_out *= shape[d];
        }
    nd_kernel k;
    nd_ir_access idx;
    nd_ir_inst ins[2];
    uint8_t pd[2];
    draw_kernel(&k, ndim, shape, &idx, off, st, ins, pd, t, normal);
    snprintf(k.name, sizeof k.name, "%s_%s_%s_%dd_ax%u", nd_reduce_label((nd_reduce_kind)kind),
             normal ? "normal" : "uniform", nd_dtype_name(t), ndim, axes);
    nd_dtype od = kind == ND_REDUCE_ARGMAX ? ND_INT64 : t;
    k.has_reduce = 1;
    k.reduce.kind = (uint8_t)kind;
    k.reduce.axes = axes;
    k.reduce.value = 1;
    k.reduce.out_dtype = (uint8_t)od;
    k.reduce.out.slot = 0;
    k.reduce.out.dtype = (uint8_t)od;
    memcpy(k.reduce.out.strides, ost, sizeof ost);
    k.hash = 0x2000 + test_no;
    nd_scalar_bits p[2];
    p[0].u = SEED;
    p[1].u = STREAM;
    void *out = calloc((size_t)n_out, 8);
    void *slots[1] = {out};
    if (!emulate(&k, slots, p, 0)) {
        CHECK(0, "test %d %s: emulation failed", test_no, k.name);
        free(out);
        return;
    }
    double *sum = calloc((size_t)n_out, sizeof(double)), *mag = calloc((size_t)n_out, sizeof(double)),
           *best = calloc((size_t)n_out, sizeof(double)), *least = calloc((size_t)n_out, sizeof(double));
    int64_t *arg = calloc((size_t)n_out, sizeof(int64_t)), *cnt = calloc((size_t)n_out, sizeof(int64_t));
    for (int64_t i = 0; i < n; i++) {
        int64_t ix[ND_MAX_DIMS];
        int64_t x = map_at(&idx, ndim, shape, i, ix), o = 0, r = 0;
        for (int d = 0; d < ndim; d++) {
            o += ost[d] * ix[d];
            if (axes >> d & 1) r = r * shape[d] + ix[d];
        }
        double w = want_draw(t, normal, (uint64_t)x);
        sum[o] += w;
        mag[o] += fabs(w);
        if (cnt[o] == 0 || w < least[o]) least[o] = w;
        if (cnt[o]++ == 0 || w > best[o]) {
            best[o] = w;
            arg[o] = r;
        }
    }
    int bad = 0;
    for (int64_t o = 0; o < n_out; o++) {
        if (kind == ND_REDUCE_ARGMAX) {
            int64_t g;
            memcpy(&g, (char *)out + 8 * o, 8);
            if (g != arg[o]) {
                if (bad < 3)
                    printf("   t%d %s out %lld: argmax %lld want %lld\n", test_no, k.name, (long long)o,
                           (long long)g, (long long)arg[o]);
                bad++;
            }
        } else if (kind == ND_REDUCE_MAX || kind == ND_REDUCE_MIN) {
            /* An extreme is one of the draws: exact. */
            double g = get(out, t, o), want = kind == ND_REDUCE_MAX ? best[o] : least[o];
            if (g != want) {
                if (bad < 3)
                    printf("   t%d %s out %lld: %.17g want %.17g\n", test_no, k.name, (long long)o, g, want);
                bad++;
            }
        } else {
            double g = get(out, t, o), tol = (t == ND_FLOAT64 ? 1e-12 : 3e-6) * (mag[o] + 1);
            if (!(fabs(g - sum[o]) <= tol)) {
                if (bad < 3)
                    printf("   t%d %s out %lld: %.9g want %.9g\n", test_no, k.name, (long long)o, g, sum[o]);
                bad++;
            }
        }
    }
    CHECK(bad == 0, "test %d %s off %lld: %d of %lld outputs wrong", test_no, k.name, (long long)off, bad,
          (long long)n_out);
    free(out);
    free(sum);
    free(mag);
    free(best);
    free(least);
    free(arg);
    free(cnt);
}

/* SUM (uint64) of the pair form's draws in [0, range) at map(i) over
 * `axes`: exact against nd_philox_integer_pair. The groups of eight points
 * a call (FIXED), runtime residues, columns and single points. */
static void test_int_reduce(int ndim, const int64_t *shape, uint32_t axes, int64_t off, const int64_t *st,
                            uint64_t range) {
    test_no++;
    int64_t n = 1, ost[ND_MAX_DIMS] = {0}, s = 1, n_out = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    for (int d = ndim - 1; d >= 0; d--)
        if (!(axes >> d & 1)) {
            ost[d] = s;
            s *= shape[d];
            n_out *= shape[d];
        }
    nd_kernel k;
    nd_ir_access idx;
    nd_ir_inst ins[3];
    uint8_t pd[3];
    draw_kernel(&k, ndim, shape, &idx, off, st, ins, pd, ND_UINT16, 0);
    ins[1].op = ND_IR_RAND_INTEGER;
    ins[1].d = 2;
    ins[2] = (nd_ir_inst){ND_OP_CAST, ND_UINT64, 0, 1, 0, 0, 0, 0};
    pd[2] = ND_UINT64;
    k.n_params = 3;
    k.n_insts = 3;
    snprintf(k.name, sizeof k.name, "sum_integers_pair_%dd_ax%u", ndim, axes);
    k.has_reduce = 1;
    k.reduce.kind = ND_REDUCE_SUM;
    k.reduce.axes = axes;
    k.reduce.value = 2;
    k.reduce.out_dtype = ND_UINT64;
    k.reduce.out.slot = 0;
    k.reduce.out.dtype = ND_UINT64;
    memcpy(k.reduce.out.strides, ost, sizeof ost);
    k.hash = 0x3000 + test_no;
    nd_scalar_bits p[3];
    p[0].u = SEED;
    p[1].u = STREAM;
    p[2].u = pair_param(range);
    uint64_t *out = calloc((size_t)n_out, 8), *want = calloc((size_t)n_out, 8);
    void *slots[1] = {out};
    if (!emulate(&k, slots, p, 0)) {
        CHECK(0, "test %d %s: emulation failed", test_no, k.name);
        free(out);
        free(want);
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t ix[ND_MAX_DIMS];
        int64_t x = map_at(&idx, ndim, shape, i, ix), o = 0;
        for (int d = 0; d < ndim; d++) o += ost[d] * ix[d];
        want[o] += nd_philox_integer_pair(range, SEED, STREAM, (uint64_t)x);
    }
    int bad = 0;
    for (int64_t o = 0; o < n_out; o++)
        if (out[o] != want[o] && bad++ < 3)
            printf("   t%d %s out %lld: %llu want %llu\n", test_no, k.name, (long long)o, (unsigned long long)out[o],
                   (unsigned long long)want[o]);
    CHECK(bad == 0, "test %d %s off %lld: %d of %lld outputs wrong", test_no, k.name, (long long)off, bad,
          (long long)n_out);
    free(out);
    free(want);
}

/* k: a full sum over n points (a 1-d index space) of ins's last value,
 * ins computing generated values (random draws of the points' index, no
 * loads), the sum in out_dtype into slot 0: the shape pi and the generate
 * + dot share. idx, pd and ins stay the caller's. */
static void generated_sum(nd_kernel *k, nd_ir_access *idx, const char *name, int64_t n, uint8_t *pd, int n_params,
                          nd_ir_inst *ins, int n_insts, nd_dtype out_dtype, uint64_t hash) {
    memset(k, 0, sizeof *k);
    snprintf(k->name, sizeof k->name, "%s", name);
    k->ndim = 1;
    k->shape[0] = n;
    memset(idx, 0, sizeof *idx);
    idx->strides[0] = 1;
    k->n_slots = 1;
    k->n_params = n_params;
    k->param_dtypes = pd;
    k->n_indices = 1;
    k->indices = idx;
    k->n_insts = n_insts;
    k->insts = ins;
    k->has_reduce = 1;
    k->reduce.kind = ND_REDUCE_SUM;
    k->reduce.axes = 1;
    k->reduce.value = n_insts - 1;
    k->reduce.out_dtype = (uint8_t)out_dtype;
    k->reduce.out.slot = 0;
    k->reduce.out.dtype = (uint8_t)out_dtype;
    k->hash = hash;
}

/* pi: count of x*x + y*y <= 1 over n points, x and y float32 uniform draws
 * of streams 0 and 1, the bools cast to `count` (int64, or float64 as
 * examples/pi.c) and summed: threads count them in integers
 * (codegen_reduce.c). */
static void test_pi(int64_t n, nd_dtype count) {
    test_no++;
    nd_kernel k;
    nd_ir_access idx;
    uint8_t pd[4] = {ND_UINT64, ND_UINT64, ND_UINT64, ND_FLOAT32};
    nd_ir_inst ins[] = {
        {ND_IR_INDEX, ND_INT64, 0, 0, 0, 0, 0, 0},          {ND_IR_RAND_UNIFORM, ND_FLOAT32, 0, 0, 0, 1, 0, 0},
        {ND_IR_RAND_UNIFORM, ND_FLOAT32, 0, 0, 0, 2, 0, 0}, {ND_OP_MUL, ND_FLOAT32, 0, 1, 1, 0, 0, 0},
        {ND_OP_MUL, ND_FLOAT32, 0, 2, 2, 0, 0, 0},          {ND_OP_ADD, ND_FLOAT32, 0, 3, 4, 0, 0, 0},
        {ND_IR_PARAM, ND_FLOAT32, 0, 3, 0, 0, 0, 0},        {ND_OP_LE, ND_BOOL, 0, 5, 6, 0, 0, 0},
        {ND_OP_CAST, (uint8_t)count, 0, 7, 0, 0, 0, 0},
    };
    generated_sum(&k, &idx, "pi", n, pd, 4, ins, 9, count, 0x3000 + test_no);
    nd_scalar_bits p[4];
    p[0].u = SEED;
    p[1].u = 0;
    p[2].u = 1;
    p[3].f = 1.0;
    union { int64_t i; double d; } out;
    if (count == ND_FLOAT64) out.d = -1.0; /* poison */
    else out.i = -1;
    void *slots[1] = {&out};
    if (!emulate(&k, slots, p, 0)) {
        CHECK(0, "pi emulation failed");
        return;
    }
    const double got = count == ND_FLOAT64 ? out.d : (double)out.i; /* counts < 2^53: exact either way */
    int64_t want = 0;
    for (int64_t i = 0; i < n; i++) {
        float x = nd_philox_uniform_f32(SEED, 0, (uint64_t)i),
              y = nd_philox_uniform_f32(SEED, 1, (uint64_t)i);
        float xx = x * x, yy = y * y, r = xx + yy;
        want += r <= 1.0f;
    }
    CHECK(got == (double)want, "pi n=%lld (%s): %.17g inside, want %lld", (long long)n, nd_dtype_name(count), got,
          (long long)want);
}

/* The distinct last arguments (the c3 ^ k1 word) of src's ndk_philox_r
 * calls. */
static int distinct_high_words(const char *src) {
    int seen[64], n = 0;
    for (const char *c = strstr(src, "ndk_philox_r(A, "); c; c = strstr(c + 1, "ndk_philox_r(A, ")) {
        const char *close = strchr(c, ')'), *comma = close;
        while (comma > c && *comma != ',') comma--;
        int w = atoi(comma + 1), known = 0;
        for (int i = 0; i < n; i++) known |= seen[i] == w;
        if (!known && n < 64) seen[n++] = w;
    }
    return n;
}

/* out[i] = u_0(i) + u_1(i) + ... + u_{D-1}(i) in float64, draw d of seed
 * parameter d % S and stream parameter S + d % P, the streams with high
 * words set (the first round's stream half the host computes for each
 * (seed, stream) pair, codegen_rng.c). Exact against common/philox.h, and
 * the calls take the form `want`: ndk_philox_r up to ND_CUDA_MAX_STREAMS
 * pairs, then ndk_philox_k (keys, no first round: more pairs), then
 * ndk_philox (more than ND_CUDA_MAX_SEEDS seeds).
 *
 * flag: the draws are flagged ND_IR_ONE_HIGH_WORD, so each seed's calls
 * take one c3 ^ k1 word (the source is checked for one a seed, against
 * one a pair without the flag); same_high: the streams have one high word
 * (else each its own). With the flag and different high words the
 * promise is broken, and the draws must then differ from philox.h's: the
 * shared word is really what the calls use. */
static void test_streams_as(int D, int S, int P, const char *want, int flag, int same_high) {
    test_no++;
    enum { MAXD = 12 };
    const int64_t n = 1003;
    nd_kernel k;
    nd_ir_access idx;
    nd_ir_inst ins[2 * MAXD + 1];
    uint8_t pd[2 * MAXD];
    nd_scalar_bits p[2 * MAXD];
    memset(&k, 0, sizeof k);
    snprintf(k.name, sizeof k.name, "streams_%d_%d_%d_%d%d", D, S, P, flag, same_high);
    k.ndim = 1;
    k.shape[0] = n;
    memset(&idx, 0, sizeof idx);
    idx.strides[0] = 1;
    for (int i = 0; i < S + P; i++) pd[i] = ND_UINT64;
    for (int i = 0; i < S; i++) p[i].u = SEED + 0x1000193ull * (uint64_t)i;
    for (int i = 0; i < P; i++)
        p[S + i].u = (uint64_t)(same_high ? 7 : i + 1) << 32 | (uint32_t)(0x9E3779B9u * (unsigned)(i + 3));
    ins[0] = (nd_ir_inst){ND_IR_INDEX, ND_INT64, 0, 0, 0, 0, 0, 0};
    for (int d = 0; d < D; d++)
        ins[1 + d] = (nd_ir_inst){ND_IR_RAND_UNIFORM, ND_FLOAT64, flag ? ND_IR_ONE_HIGH_WORD : 0, 0,
                                  (uint32_t)(d % S), (uint32_t)(S + d % P), 0, 0};
    int last = 1;
    for (int d = 1; d < D; d++) {
        ins[D + d] = (nd_ir_inst){ND_OP_ADD, ND_FLOAT64, 0, (uint32_t)last, (uint32_t)(1 + d), 0, 0, 0};
        last = D + d;
    }
    k.n_slots = 1;
    k.n_params = S + P;
    k.param_dtypes = pd;
    k.n_indices = 1;
    k.indices = &idx;
    k.n_insts = 2 * D;
    k.insts = ins;
    nd_ir_store sto;
    memset(&sto, 0, sizeof sto);
    sto.at.slot = 0;
    sto.at.dtype = ND_FLOAT64;
    sto.at.strides[0] = 1;
    sto.value = (uint32_t)last;
    k.n_stores = 1;
    k.stores = &sto;
    k.hash = 0x5000 + test_no;
    nd_cuda_kinfo info;
    char *src = NULL;
    CHECK(nd_cuda_kernel_info(&k, &info) == ND_OK && nd_cuda_codegen(&k, &info, &src) == ND_OK && strstr(src, want),
          "test %d %s: the calls are not %s", test_no, k.name, want);
    if (src && strstr(want, "ndk_philox_r")) {
        int pairs = 0; /* distinct (d % S, d % P) */
        for (int d = 0; d < D; d++) {
            int first = 1;
            for (int e = 0; e < d && first; e++) first = e % S != d % S || e % P != d % P;
            pairs += first;
        }
        const int words = distinct_high_words(src);
        CHECK(words == (flag ? S : pairs), "test %d %s: the calls take %d c3 ^ k1 words, want %d", test_no, k.name,
              words, flag ? S : pairs);
    }
    free(src);
    const int broken = flag && !same_high;
    for (int vec = 0; vec < 2; vec++) {
        double *out = malloc((size_t)(n + 16) * sizeof *out);
        for (int64_t i = 0; i < n + 16; i++) out[i] = -1.0; /* poison */
        void *slots[1] = {out};
        if (!emulate(&k, slots, p, vec)) {
            CHECK(0, "test %d %s: emulation failed", test_no, k.name);
            free(out);
            return;
        }
        int bad = 0;
        for (int64_t i = 0; i < n; i++) {
            double w = 0;
            for (int d = 0; d < D; d++) {
                double u = nd_philox_uniform_f64(p[d % S].u, p[S + d % P].u, (uint64_t)i);
                w = d ? w + u : u;
            }
            if (memcmp(&w, &out[i], sizeof w) != 0 && bad++ < 3 && !broken)
                printf("   t%d %s vec %d elem %lld: %.17g want %.17g\n", test_no, k.name, vec, (long long)i, out[i], w);
        }
        if (broken)
            CHECK(bad > 0, "test %d %s vec %d: streams of other high words under ND_IR_ONE_HIGH_WORD gave "
                  "philox.h's draws: the calls do not take the shared word", test_no, k.name, vec);
        else
            CHECK(bad == 0, "test %d %s vec %d: %d of %lld wrong", test_no, k.name, vec, bad, (long long)n);
        free(out);
    }
}

static void test_streams(int D, int S, int P, const char *want) { test_streams_as(D, S, P, want, 0, 0); }

/* The tree of a block (emit_tree_fold) over 256 values: lane t takes lane
 * t + st for st = 128 .. 1. */
static double tree256(double *a) {
    for (int st = 128; st > 0; st >>= 1)
        for (int t = 0; t < st; t++) a[t] += a[t + st];
    return a[0];
}

/* The generate + dot: sum(x * y) over n points, x and y float64 uniform
 * draws of streams 0 and 1, a full reduction of generated values (a
 * persist kernel, codegen.c). Within 1e-12 of the float64 sum, and bit for
 * bit the order the kernel documents (codegen_reduce.c's emit_persist) on
 * the emulated grid: block b's thread t sums its pairs in order, the
 * block's tree, then pass 2's threads fold partials t, t + 256, ... and
 * the same tree. With ND_CUDA_PERSIST=0 (persist 0) it is a split
 * reduction under another cache key, within 1e-12 of the float64 sum. */
static void test_dot(int64_t n, int persist) {
    test_no++;
    nd_kernel k;
    nd_ir_access idx;
    uint8_t pd[3] = {ND_UINT64, ND_UINT64, ND_UINT64};
    nd_ir_inst ins[] = {
        {ND_IR_INDEX, ND_INT64, 0, 0, 0, 0, 0, 0},
        {ND_IR_RAND_UNIFORM, ND_FLOAT64, 0, 0, 0, 1, 0, 0},
        {ND_IR_RAND_UNIFORM, ND_FLOAT64, 0, 0, 0, 2, 0, 0},
        {ND_OP_MUL, ND_FLOAT64, 0, 1, 2, 0, 0, 0},
    };
    generated_sum(&k, &idx, "dot", n, pd, 3, ins, 4, ND_FLOAT64, 0x4000 + test_no);
    nd_cuda_kinfo info;
    const uint64_t key = nd_cuda_kernel_key(&k);
    if (!persist) setenv("ND_CUDA_PERSIST", "0", 1);
    CHECK(nd_cuda_kernel_info(&k, &info) == ND_OK && info.persist == persist && info.group == 2,
          "dot n=%lld: persist %d, want %d (groups of %d)", (long long)n, info.persist, persist, info.group);
    CHECK((nd_cuda_kernel_key(&k) == key) == persist, "dot n=%lld: ND_CUDA_PERSIST=0 %s the cache key",
          (long long)n, persist ? "changed" : "kept");
    nd_scalar_bits p[3];
    p[0].u = SEED;
    p[1].u = 0;
    p[2].u = 1;
    double out = -1.0; /* poison */
    void *slots[1] = {&out};
    int ok = emulate(&k, slots, p, 0);
    unsetenv("ND_CUDA_PERSIST");
    if (!ok) {
        CHECK(0, "dot emulation failed");
        return;
    }
    const unsigned g = nd_cuda_persist_grid(&info, 4);
    const int64_t P = (int64_t)g * 256, pairs = n / 2;
    double *th = calloc((size_t)P, sizeof(double)), ref = 0;
    for (int64_t c = 0; c < pairs; c++) /* thread c % P's pairs in order */
        for (int e = 0; e < 2; e++) {
            double v = nd_philox_uniform_f64(SEED, 0, (uint64_t)(2 * c + e)) *
                       nd_philox_uniform_f64(SEED, 1, (uint64_t)(2 * c + e));
            th[c % P] += v;
            ref += v;
        }
    if (n % 2) { /* the last point, by the grid's first thread */
        double v = nd_philox_uniform_f64(SEED, 0, (uint64_t)(n - 1)) * nd_philox_uniform_f64(SEED, 1, (uint64_t)(n - 1));
        th[0] += v;
        ref += v;
    }
    double *part = calloc(g, sizeof(double)), fold[256];
    for (unsigned b = 0; b < g; b++) part[b] = tree256(th + (int64_t)b * 256);
    double want = part[0];
    if (g > 1) {
        for (int t = 0; t < 256; t++) {
            fold[t] = 0;
            for (unsigned sp = (unsigned)t; sp < g; sp += 256) fold[t] += part[sp];
        }
        want = tree256(fold);
    }
    CHECK(fabs(out - ref) <= 1e-12 * ref, "dot n=%lld: %.17g, float64 sum %.17g", (long long)n, out, ref);
    CHECK(!persist || memcmp(&out, &want, 8) == 0, "dot n=%lld (grid %u): %.17g, not the documented order's %.17g", (long long)n,
          g, out, want);
    free(th);
    free(part);
}

/* A stencil sweep over the interior of a (rows+2h) x (cols+2h) float32 grid
 * (h = the widest neighbour offset) into a second grid: its n neighbours
 * (row, column offsets) summed in order and scaled. Large enough for the
 * row-walking kernels: with neighbours that share columns a thread walks a
 * strip of rows (emit_elementwise_march: want_march), else several rows
 * are unrolled (emit_elementwise_unrolled); with and without a partial last
 * strip or block of rows. Compared bit for bit with the same sums on the
 * host, and every border point of the output must keep its poison. */
static void test_stencil(int64_t rows, int64_t cols, int n, const int64_t (*nb)[2], int want_march) {
    test_no++;
    int64_t h = 0;
    for (int j = 0; j < n; j++)
        for (int d = 0; d < 2; d++) h = nb[j][d] > h ? nb[j][d] : -nb[j][d] > h ? -nb[j][d] : h;
    int64_t W = cols + 2 * h, H = rows + 2 * h;
    nd_kernel k;
    memset(&k, 0, sizeof k);
    snprintf(k.name, sizeof k.name, "stencil");
    k.ndim = 2;
    k.shape[0] = rows;
    k.shape[1] = cols;
    nd_ir_access loads[16], st;
    nd_ir_inst ins[40];
    memset(loads, 0, sizeof loads);
    memset(ins, 0, sizeof ins);
    memset(&st, 0, sizeof st);
    for (int j = 0; j < n; j++) {
        loads[j].slot = 0;
        loads[j].dtype = ND_FLOAT32;
        loads[j].offset = (h + nb[j][0]) * W + h + nb[j][1];
        loads[j].strides[0] = W;
        loads[j].strides[1] = 1;
        ins[j] = (nd_ir_inst){ND_IR_LOAD, ND_FLOAT32, 0, j, 0, 0, 0, 0};
    }
    int ni = n, acc = 0;
    for (int j = 1; j < n; j++, ni++) {
        ins[ni] = (nd_ir_inst){ND_OP_ADD, ND_FLOAT32, 0, acc, j, 0, 0, 0};
        acc = ni;
    }
    ins[ni++] = (nd_ir_inst){ND_IR_PARAM, ND_FLOAT32, 0, 0, 0, 0, 0, 0};
    ins[ni] = (nd_ir_inst){ND_OP_MUL, ND_FLOAT32, 0, ni - 1, acc, 0, 0, 0};
    ni++;
    st.slot = 1;
    st.dtype = ND_FLOAT32;
    st.offset = h * W + h;
    st.strides[0] = W;
    st.strides[1] = 1;
    uint8_t pd[1] = {ND_FLOAT32};
    nd_ir_store store = {st, ni - 1};
    k.n_slots = 2;
    k.n_params = 1;
    k.param_dtypes = pd;
    k.n_loads = n;
    k.loads = loads;
    k.n_insts = ni;
    k.insts = ins;
    k.n_stores = 1;
    k.stores = &store;
    k.hash = 0x4000 + test_no;
    nd_cuda_kinfo info;
    int ok = nd_cuda_kernel_info(&k, &info) == ND_OK;
    CHECK(ok && (want_march ? info.march > 0 : info.unroll > 1 && info.march == 0),
          "stencil %lldx%lld (%d points): not the %s kernel", (long long)rows, (long long)cols, n,
          want_march ? "march" : "row-unrolled");
    float *u = malloc(sizeof(float) * (size_t)(W * H)), *out = malloc(sizeof(float) * (size_t)(W * H));
    uint64_t x = 12345 + (uint64_t)test_no;
    for (int64_t i = 0; i < W * H; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        u[i] = (float)(x >> 40) * 0x1p-24f;
        out[i] = -1.0f;
    }
    nd_scalar_bits p[1];
    p[0].f = 0.2;
    void *slots[2] = {u, out};
    if (!emulate(&k, slots, p, 0)) {
        CHECK(0, "stencil emulation failed");
    } else {
        int64_t bad = 0;
        for (int64_t i = 0; i < H; i++)
            for (int64_t j = 0; j < W; j++) {
                const float *c = u + i * W + j;
                float want = -1.0f;
                if (i >= h && i < H - h && j >= h && j < W - h) {
                    float sum = c[nb[0][0] * W + nb[0][1]];
                    for (int q = 1; q < n; q++) sum = sum + c[nb[q][0] * W + nb[q][1]];
                    want = 0.2f * sum;
                }
                bad += memcmp(&want, &out[i * W + j], sizeof want) != 0;
            }
        CHECK(bad == 0, "stencil %lldx%lld (%d points): %lld points differ", (long long)rows, (long long)cols, n,
              (long long)bad);
    }
    free(u);
    free(out);
}

/* The kernel's reduction: the sum over axis 1 of a 2-d kernel of value,
 * into slot (one element a row). */
static void set_row_sum(nd_kernel *k, nd_dtype dt, int32_t value, int slot) {
    k->has_reduce = 1;
    k->reduce.kind = ND_REDUCE_SUM;
    k->reduce.out_dtype = (uint8_t)dt;
    k->reduce.axes = 2u;
    k->reduce.value = value;
    k->reduce.out = (nd_ir_access){slot, (uint8_t)dt, {0}, 0, {1, 0}};
}

/* A user function (common/ufunc_loop.h) inlined into an elementwise kernel
 * (x broadcast against a column x0, s a parameter) and into a reduction
 * (float64 rows summed): NVRTC compiles the pasted __device__ function, and
 * the host build's results match the same C expression. */
static void test_ufunc(int reduce) {
    test_no++;
    nd_ufunc_loop l;
    memset(&l, 0, sizeof l);
    snprintf(l.name, sizeof l.name, reduce ? "wave" : "gaussian");
    if (nd_ufunc_parse_signature("emulate", reduce ? "double(double x, int32_t k, bool neg)"
                                                   : "float(float x, float x0, float s)", &l)) {
        CHECK(0, "signature: %s", nd_last_error());
        return;
    }
    l.body = reduce ? "double v = sin(x * k);\nreturn neg ? -v : v;"
                    : "return expf(-0.5f*(x-x0)*(x-x0)/(s*s)) / (2.5066283f*s);";
    const nd_ufunc_loop *u = nd_ufunc_loop_register("emulate", &l);
    CHECK(u != NULL, "register");
    if (!u) return;
    const int64_t R = 37, C = 53;
    nd_kernel k;
    memset(&k, 0, sizeof k);
    snprintf(k.name, sizeof k.name, "%s", l.name);
    k.ndim = 2;
    k.shape[0] = R;
    k.shape[1] = C;
    nd_ir_access loads[3], st;
    memset(loads, 0, sizeof loads);
    memset(&st, 0, sizeof st);
    nd_ir_inst ins[8];
    memset(ins, 0, sizeof ins);
    uint8_t pd[1] = {ND_FLOAT32};
    nd_ir_store store;
    memset(&store, 0, sizeof store);
    float *xf = malloc(sizeof(float) * R * C), *x0 = malloc(sizeof(float) * R), *of = malloc(sizeof(float) * R * C);
    double *xd = malloc(sizeof(double) * R * C), *od = malloc(sizeof(double) * R);
    int32_t *kk = malloc(sizeof(int32_t) * C);
    unsigned char *neg = malloc(R);
    uint64_t rs = 99 + (uint64_t)test_no;
    for (int64_t i = 0; i < R * C; i++) {
        rs = rs * 6364136223846793005ull + 1442695040888963407ull;
        xf[i] = (float)(rs >> 40) * 0x1p-24f * 8.0f - 4.0f;
        xd[i] = (double)xf[i];
        of[i] = -1.0f;
    }
    xf[0] = NAN;
    xf[1] = INFINITY;
    for (int64_t i = 0; i < R; i++) {
        x0[i] = (float)i / (float)R * 4.0f - 2.0f;
        neg[i] = (unsigned char)(i % 3 == 0);
        od[i] = -1.0;
    }
    for (int64_t j = 0; j < C; j++) kk[j] = (int32_t)(j % 7) - 3;
    nd_scalar_bits p[1];
    p[0].f = 0.75;
    if (!reduce) {
        loads[0] = (nd_ir_access){0, ND_FLOAT32, {0}, 0, {C, 1}};
        loads[1] = (nd_ir_access){1, ND_FLOAT32, {0}, 0, {1, 0}};
        ins[0] = (nd_ir_inst){ND_IR_LOAD, ND_FLOAT32, 0, 0, 0, 0, 0, 0};
        ins[1] = (nd_ir_inst){ND_IR_LOAD, ND_FLOAT32, 0, 1, 0, 0, 0, 0};
        ins[2] = (nd_ir_inst){ND_IR_PARAM, ND_FLOAT32, 0, 0, 0, 0, 0, 0};
        ins[3] = (nd_ir_inst){ND_IR_UFUNC, ND_FLOAT32, 0, 0, 1, 2, -1, u->id};
        st = (nd_ir_access){2, ND_FLOAT32, {0}, 0, {C, 1}};
        store = (nd_ir_store){st, 3};
        k.n_slots = 3;
        k.n_params = 1;
        k.param_dtypes = pd;
        k.n_loads = 2;
        k.n_insts = 4;
        k.n_stores = 1;
        k.stores = &store;
    } else {
        loads[0] = (nd_ir_access){0, ND_FLOAT64, {0}, 0, {C, 1}};
        loads[1] = (nd_ir_access){1, ND_INT32, {0}, 0, {0, 1}};
        loads[2] = (nd_ir_access){2, ND_BOOL, {0}, 0, {1, 0}};
        ins[0] = (nd_ir_inst){ND_IR_LOAD, ND_FLOAT64, 0, 0, 0, 0, 0, 0};
        ins[1] = (nd_ir_inst){ND_IR_LOAD, ND_INT32, 0, 1, 0, 0, 0, 0};
        ins[2] = (nd_ir_inst){ND_IR_LOAD, ND_BOOL, 0, 2, 0, 0, 0, 0};
        ins[3] = (nd_ir_inst){ND_IR_UFUNC, ND_FLOAT64, 0, 0, 1, 2, -1, u->id};
        k.n_slots = 4;
        k.n_loads = 3;
        k.n_insts = 4;
        set_row_sum(&k, ND_FLOAT64, 3, 3);
    }
    k.loads = loads;
    k.insts = ins;
    k.hash = 0x5000 + test_no;
    void *slots_e[3] = {xf, x0, of}, *slots_r[4] = {xd, kk, neg, od};
    for (int vec = 0; vec < (reduce ? 1 : 2); vec++) {
        if (!emulate(&k, reduce ? slots_r : slots_e, p, vec)) {
            CHECK(0, "%s emulation failed", l.name);
            break;
        }
        int64_t bad = 0;
        for (int64_t i = 0; i < R; i++) {
            double acc = 0;
            for (int64_t j = 0; j < C; j++) {
                if (reduce) {
                    double v = sin(xd[i * C + j] * kk[j]);
                    acc += neg[i] ? -v : v;
                    continue;
                }
                float x = xf[i * C + j], c = x0[i], s = 0.75f;
                float want = expf(-0.5f * (x - c) * (x - c) / (s * s)) / (2.5066283f * s), got = of[i * C + j];
                int ok = isnan(want) ? isnan(got) : fabsf(got - want) <= 4e-6f * fabsf(want) + 1e-37f;
                bad += !ok;
            }
            if (reduce) bad += !(fabs(od[i] - acc) <= 1e-12 * (1 + fabs(acc)));
        }
        CHECK(bad == 0, "%s (vector variant %d): %lld values differ", l.name, vec, (long long)bad);
    }
    free(xf);
    free(x0);
    free(of);
    free(xd);
    free(od);
    free(kk);
    free(neg);
}

/* A loop region (kernel_ir.h's ND_IR_LOOP): x = x * w + a * sin(x), count
 * rounds, over R x C float32 points, w broadcast along rows; stored
 * (scalar and vector variants) or summed along rows (reduce); flat: the
 * same points as one axis of 1961, w one value (the vector variant
 * groups several points, each with its own carried value). The host
 * computes the same rounds in float32; the generated code may contract
 * a multiply and an add, so values agree within a few ulps a round. A
 * kernel whose store reads a value inside the region is refused. */
static void set_body(nd_kernel *k, int n_slots, nd_ir_access *loads, int n_loads, nd_ir_inst *insts, int n_insts,
                     nd_ir_store *store);

static void test_loop(int reduce, int64_t count, int flat) {
    test_no++;
    const int64_t R = 37, C = 53;
    nd_kernel k;
    memset(&k, 0, sizeof k);
    snprintf(k.name, sizeof k.name, "loop");
    k.ndim = flat ? 1 : 2;
    k.shape[0] = flat ? R * C : R;
    k.shape[1] = flat ? 0 : C;
    nd_ir_access loads[2];
    loads[0] = (nd_ir_access){0, ND_FLOAT32, {0}, 0, {flat ? 1 : C, flat ? 0 : 1}};
    loads[1] = (nd_ir_access){1, ND_FLOAT32, {0}, 0, {0, flat ? 0 : 1}};
    nd_ir_inst ins[10] = {
        {ND_IR_LOAD, ND_FLOAT32, 0, 0, -1, -1, -1, 0},
        {ND_IR_LOAD, ND_FLOAT32, 0, 1, -1, -1, -1, 0},
        {ND_IR_PARAM, ND_INT64, 0, 0, -1, -1, -1, 0},
        {ND_IR_PARAM, ND_FLOAT32, 0, 1, -1, -1, -1, 0},
        {ND_IR_LOOP, ND_FLOAT32, 0, 2, 0, -1, 0, 0},
        {ND_OP_SIN, ND_FLOAT32, 0, 4, -1, -1, -1, 0},
        {ND_OP_MUL, ND_FLOAT32, 0, 5, 3, -1, -1, 0},
        {ND_OP_MUL, ND_FLOAT32, 0, 4, 1, -1, -1, 0},
        {ND_OP_ADD, ND_FLOAT32, 0, 7, 6, -1, -1, 0},
        {ND_IR_LOOP_END, ND_FLOAT32, 0, 4, 8, -1, -1, 0},
    };
    uint8_t pd[2] = {ND_INT64, ND_FLOAT32};
    nd_ir_store store = {{2, ND_FLOAT32, {0}, 0, {flat ? 1 : C, flat ? 0 : 1}}, 9};
    set_body(&k, 3, loads, 2, ins, 10, &store);
    k.n_params = 2;
    k.param_dtypes = pd;
    if (reduce) {
        k.n_stores = 0;
        k.stores = NULL;
        set_row_sum(&k, ND_FLOAT32, 9, 2);
    }
    k.hash = 0x6000 + test_no;
    float *x = malloc(sizeof(float) * R * C), *w = malloc(sizeof(float) * C), *out = malloc(sizeof(float) * R * C);
    double *want = malloc(sizeof(double) * R * C);
    uint64_t rs = 7 + (uint64_t)test_no;
    for (int64_t i = 0; i < R * C; i++) {
        rs = rs * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = (float)(rs >> 40) * 0x1p-24f * 6.0f - 3.0f;
    }
    x[0] = NAN;
    for (int64_t j = 0; j < C; j++) w[j] = 0.5f + 0.49f * (float)j / (float)C;
    for (int64_t i = 0; i < R * C; i++) {
        float v = x[i];
        for (int64_t r = 0; r < count; r++) v = v * w[flat ? 0 : i % C] + 0.01f * sinf(v);
        want[i] = v;
    }
    nd_scalar_bits p[2];
    p[0].i = count;
    p[1].f = 0.01;
    void *slots[3] = {x, w, out};
    for (int vec = 0; vec < (reduce ? 1 : 2); vec++) {
        for (int64_t i = 0; i < R * C; i++) out[i] = -7.0f; /* poison: an unwritten point shows */
        if (!emulate(&k, slots, p, vec)) {
            CHECK(0, "loop emulation failed (reduce %d, vector %d)", reduce, vec);
            break;
        }
        int64_t bad = 0;
        for (int64_t i = 0; i < R && reduce; i++) {
            double acc = 0, mag = 0;
            for (int64_t j = 1; j < C; j++) acc += want[i * C + j], mag += fabs(want[i * C + j]);
            if (i == 0) bad += !isnan(out[0]); /* the NaN reaches the sum */
            else bad += !(fabs(out[i] - acc) <= 1e-5 * (1 + mag) + 1e-6 * (double)count);
        }
        for (int64_t i = 0; i < R * C && !reduce; i++) {
            double g = out[i], e = want[i];
            bad += isnan(e) ? !isnan(g) : !(fabs(g - e) <= 1e-6 * (double)count * (1 + fabs(e)));
        }
        CHECK(bad == 0, "loop of %lld rounds (reduce %d, vector variant %d): %lld values differ", (long long)count,
              reduce, vec, (long long)bad);
    }
    if (!reduce) {
        /* the store reads the region's multiply: refused by the generator */
        store.value = 7;
        nd_cuda_kinfo info;
        char *src = NULL;
        CHECK(nd_cuda_kernel_info(&k, &info) != ND_OK || nd_cuda_codegen(&k, &info, &src) != ND_OK,
              "a store of a value inside a loop region must be refused");
        free(src);
    }
    free(x);
    free(w);
    free(out);
    free(want);
}

/* k's body: n_slots buffers, its loads, instructions and one store. */
static void set_body(nd_kernel *k, int n_slots, nd_ir_access *loads, int n_loads, nd_ir_inst *insts, int n_insts,
                     nd_ir_store *store) {
    k->n_slots = n_slots;
    k->n_loads = n_loads;
    k->loads = loads;
    k->n_insts = n_insts;
    k->insts = insts;
    k->n_stores = 1;
    k->stores = store;
}

/* Component views (nd_real/nd_imag): a complex buffer read as its parts
 * (part dtype, offset 2c + part, strides twice the complex view's) and
 * as whole elements in one kernel, the imaginary parts written back in
 * place: im' = re * im + imag(z). Elements outside the view and every
 * real part must keep their bits. */
static void test_parts(nd_dtype ct, int ndim, const int64_t *shape, int64_t coff, const int64_t *cst,
                       int64_t n_complex) {
    test_no++;
    nd_dtype pt = ct == ND_COMPLEX64 ? ND_FLOAT32 : ND_FLOAT64;
    nd_kernel k;
    memset(&k, 0, sizeof k);
    k.ndim = ndim;
    memcpy(k.shape, shape, sizeof(int64_t) * ndim);
    nd_ir_access ld[3];
    memset(ld, 0, sizeof ld);
    for (int j = 0; j < 3; j++) {
        ld[j].dtype = (uint8_t)(j < 2 ? pt : ct);
        ld[j].offset = j < 2 ? 2 * coff + j : coff;
        for (int d = 0; d < ndim; d++) ld[j].strides[d] = shape[d] == 1 ? 0 : j < 2 ? 2 * cst[d] : cst[d];
    }
    nd_ir_inst ins[6] = {
        {ND_IR_LOAD, (uint8_t)pt, 0, 0, -1, -1, -1, 0}, {ND_IR_LOAD, (uint8_t)pt, 0, 1, -1, -1, -1, 0},
        {ND_IR_LOAD, (uint8_t)ct, 0, 2, -1, -1, -1, 0}, {ND_OP_IMAG, (uint8_t)pt, 0, 2, -1, -1, -1, 0},
        {ND_OP_MUL, (uint8_t)pt, 0, 0, 1, -1, -1, 0},   {ND_OP_ADD, (uint8_t)pt, 0, 4, 3, -1, -1, 0}};
    nd_ir_store sto;
    memset(&sto, 0, sizeof sto);
    sto.at = ld[1];
    sto.value = 5;
    set_body(&k, 1, ld, 3, ins, 6, &sto);
    snprintf(k.name, sizeof k.name, "parts_%s_%dd", nd_dtype_name(ct), ndim);
    k.hash = 0x5000 + test_no;
    size_t ps = pt == ND_FLOAT32 ? 4 : 8;
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    unsigned char *buf = malloc((size_t)n_complex * 2 * ps), *want = malloc((size_t)n_complex * 2 * ps);
    for (int64_t i = 0; i < 2 * n_complex; i++) {
        double v = (double)((i * 37) % 101) / 8.0 - 6.0;
        if (pt == ND_FLOAT32) {
            float f = (float)v;
            memcpy(buf + i * 4, &f, 4);
        } else {
            memcpy(buf + i * 8, &v, 8);
        }
    }
    memcpy(want, buf, (size_t)n_complex * 2 * ps);
    for (int64_t i = 0; i < n; i++) {
        int64_t ix[ND_MAX_DIMS], x = map_at(&ld[2], ndim, shape, i, ix);
        if (pt == ND_FLOAT32) {
            float re, im;
            memcpy(&re, want + 2 * x * 4, 4);
            memcpy(&im, want + (2 * x + 1) * 4, 4);
            float r = re * im;
            r = r + im;
            memcpy(want + (2 * x + 1) * 4, &r, 4);
        } else {
            double re, im;
            memcpy(&re, want + 2 * x * 8, 8);
            memcpy(&im, want + (2 * x + 1) * 8, 8);
            double r = re * im;
            r = r + im;
            memcpy(want + (2 * x + 1) * 8, &r, 8);
        }
    }
    void *slots[1] = {buf};
    if (!emulate(&k, slots, NULL, 0)) {
        CHECK(0, "test %d %s: emulation failed", test_no, k.name);
    } else {
        int bad = 0;
        for (int64_t i = 0; i < 2 * n_complex; i++)
            if (memcmp(buf + i * (int64_t)ps, want + i * (int64_t)ps, ps)) {
                if (bad < 3)
                    printf("   t%d %s part %lld: %.9g want %.9g\n", test_no, k.name, (long long)i, get(buf, pt, i),
                           get(want, pt, i));
                bad++;
            }
        CHECK(bad == 0, "test %d %s: %d of %lld parts wrong", test_no, k.name, bad, (long long)(2 * n_complex));
    }
    free(buf);
    free(want);
}

/* out = z * w, z complex, w real (cast to complex as NumPy promotes it),
 * over n elements from offset off: the vector variant for complex64 (two
 * elements to a 16-byte word), the scalar loop for both. Against NumPy's
 * textbook product (wr - zi * 0, zr * 0 + zi * w) on the host, NaN for
 * NaN; the output poisoned first, so an element left unwritten shows. */
static void test_cmul(nd_dtype ct, int64_t n, int64_t off) {
    test_no++;
    const int f32 = ct == ND_COMPLEX64;
    nd_dtype pt = f32 ? ND_FLOAT32 : ND_FLOAT64;
    const size_t ps = f32 ? 4 : 8;
    nd_kernel k;
    memset(&k, 0, sizeof k);
    k.ndim = 1;
    k.shape[0] = n;
    nd_ir_access ld[2];
    memset(ld, 0, sizeof ld);
    ld[0] = (nd_ir_access){0, (uint8_t)ct, {0}, off, {1}};
    ld[1] = (nd_ir_access){1, (uint8_t)pt, {0}, off, {1}};
    nd_ir_inst ins[4] = {{ND_IR_LOAD, (uint8_t)ct, 0, 0, -1, -1, -1, 0},
                         {ND_IR_LOAD, (uint8_t)pt, 0, 1, -1, -1, -1, 0},
                         {ND_OP_CAST, (uint8_t)ct, 0, 1, -1, -1, -1, 0},
                         {ND_OP_MUL, (uint8_t)ct, 0, 0, 2, -1, -1, 0}};
    nd_ir_store sto;
    memset(&sto, 0, sizeof sto);
    sto.at = (nd_ir_access){2, (uint8_t)ct, {0}, off, {1}};
    sto.value = 3;
    set_body(&k, 3, ld, 2, ins, 4, &sto);
    snprintf(k.name, sizeof k.name, "cmul_%s_%lld", nd_dtype_name(ct), (long long)off);
    k.hash = 0x6000 + test_no;
    const int64_t len = off + n;
    unsigned char *z = malloc((size_t)len * 2 * ps), *w = malloc((size_t)len * ps), *out = malloc((size_t)len * 2 * ps);
    uint64_t rs = 7 + (uint64_t)test_no;
    for (int64_t i = 0; i < len; i++)
        for (int part = 0; part < 3; part++) {
            rs = rs * 6364136223846793005ull + 1442695040888963407ull;
            double v = ((double)(rs >> 11) * 0x1p-53 * 2 - 1) * 100;
            if (i == off + 3 && part == 0) v = NAN;
            if (i == off + 4 && part == 1) v = INFINITY;
            if (i == off + 5 && part == 2) v = -INFINITY;
            unsigned char *at = part < 2 ? z + (2 * i + part) * ps : w + i * ps;
            if (f32) {
                float x = (float)v;
                memcpy(at, &x, 4);
            } else {
                memcpy(at, &v, 8);
            }
        }
    for (int vec = 0; vec < 2; vec++) {
        memset(out, 0xff, (size_t)len * 2 * ps); /* NaN poison */
        void *slots[3] = {z, w, out};
        if (!emulate(&k, slots, NULL, vec)) {
            CHECK(0, "test %d %s: emulation failed", test_no, k.name);
            break;
        }
        int bad = 0;
        for (int64_t i = off; i < len; i++) {
            double zr = get(z, pt, 2 * i), zi = get(z, pt, 2 * i + 1), x = get(w, pt, i), wr, wi;
            if (f32) {
                float a = (float)zr, b = (float)zi, c = (float)x, t1 = a * c, t2 = b * 0.0f, t3 = a * 0.0f, t4 = b * c;
                wr = (double)(t1 - t2);
                wi = (double)(t3 + t4);
            } else {
                double t1 = zr * x, t2 = zi * 0.0, t3 = zr * 0.0, t4 = zi * x;
                wr = t1 - t2;
                wi = t3 + t4;
            }
            double gr = get(out, pt, 2 * i), gi = get(out, pt, 2 * i + 1);
            int ok = (isnan(wr) ? isnan(gr) : gr == wr) && (isnan(wi) ? isnan(gi) : gi == wi);
            if (!ok && bad < 3)
                printf("   t%d %s vec %d elem %lld: (%.9g, %.9g) want (%.9g, %.9g)\n", test_no, k.name, vec,
                       (long long)i, gr, gi, wr, wi);
            bad += !ok;
        }
        CHECK(bad == 0, "test %d %s vec %d: %d of %lld wrong", test_no, k.name, vec, bad, (long long)n);
        CHECK(last_vec == (f32 ? 2 : 0), "test %d %s: vector width %d", test_no, k.name, last_vec);
    }
    free(z);
    free(w);
    free(out);
}

/* ND_IR_GATHER: out[r, m] = 2 * src[r, wrap(ix[r, m])] over (R, M), the
 * source (R, C) read along axis 1 (base strides {C, 0}, indexed stride 1),
 * or (reduce) the sum over m; one index `bad` (>= 0: its flat position)
 * out of range must be filed in the record and never read through. */
static void test_gather(int64_t R, int64_t M, int64_t C, int reduce, int64_t bad, nd_dtype t) {
    test_no++;
    int64_t n = R * M;
    nd_kernel k;
    memset(&k, 0, sizeof k);
    k.ndim = 2;
    k.shape[0] = R;
    k.shape[1] = M;
    nd_ir_access loads[2];
    memset(loads, 0, sizeof loads);
    loads[0].slot = 1; /* the index, int64 (R, M) */
    loads[0].dtype = ND_INT64;
    loads[0].strides[0] = M;
    loads[0].strides[1] = 1;
    loads[1].slot = 0; /* the source's base: row r, element 0 */
    loads[1].dtype = (uint8_t)t;
    loads[1].strides[0] = C;
    nd_ir_gather g = {1, ND_INDEX_FN_TAKE_ALONG_AXIS, 1, 1, 0, {1}, {C}, {-1, -1, -1, -1, -1}, 0};
    nd_ir_inst ins[3] = {{ND_IR_LOAD, ND_INT64, 0, 0, -1, -1, -1, 0},
                         {ND_IR_GATHER, (uint8_t)t, 0, 0, 0, -1, -1, 0},
                         {ND_OP_ADD, (uint8_t)t, 0, 1, 1, -1, -1, 0}};
    k.n_loads = 2;
    k.loads = loads;
    k.n_gathers = 1;
    k.gathers = &g;
    k.n_insts = 3;
    k.insts = ins;
    k.n_slots = 3;
    nd_ir_store sto;
    memset(&sto, 0, sizeof sto);
    if (reduce) {
        set_row_sum(&k, t, 2, 2);
    } else {
        sto.at.slot = 2;
        sto.at.dtype = (uint8_t)t;
        sto.at.strides[0] = M;
        sto.at.strides[1] = 1;
        sto.value = 2;
        k.n_stores = 1;
        k.stores = &sto;
    }
    snprintf(k.name, sizeof k.name, "take_add%s_%s", reduce ? "_sum" : "", nd_dtype_name(t));
    k.hash = 0x6000 + test_no;
    double *src = malloc(sizeof *src * (size_t)(R * C));
    float *srcf = malloc(sizeof *srcf * (size_t)(R * C));
    int64_t *ix = malloc(sizeof *ix * (size_t)n);
    for (int64_t i = 0; i < R * C; i++) src[i] = (double)((i * 37) % 1001) - 500, srcf[i] = (float)src[i];
    for (int64_t i = 0; i < n; i++) ix[i] = (i * 7919) % (2 * C) - C; /* [-C, C): negatives wrap */
    if (bad >= 0) ix[bad] = C + 3;
    void *out = calloc((size_t)n + 16, 8);
    void *slots[3] = {t == ND_FLOAT64 ? (void *)src : (void *)srcf, ix, out};
    memset(&gather_bad_rec, 0, sizeof gather_bad_rec);
    if (!emulate(&k, slots, NULL, 0)) {
        CHECK(0, "test %d %s: emulation failed", test_no, k.name);
    } else {
        int wrong = 0;
        for (int64_t r = 0; r < R; r++) {
            double acc = 0;
            for (int64_t m = 0; m < M; m++) {
                int64_t v = ix[r * M + m], w = v < 0 ? v + C : v;
                double want = w >= 0 && w < C ? 2 * src[r * C + w] : 0;
                acc += want;
                if (reduce) continue;
                double got = t == ND_FLOAT64 ? ((double *)out)[r * M + m] : ((float *)out)[r * M + m];
                if (got != want && wrong++ < 3)
                    printf("   t%d %s (%lld, %lld): %g want %g\n", test_no, k.name, (long long)r, (long long)m, got, want);
            }
            if (!reduce) continue;
            double got = t == ND_FLOAT64 ? ((double *)out)[r] : ((float *)out)[r];
            if (fabs(got - acc) > 1e-3 * (1 + fabs(acc)) && wrong++ < 3)
                printf("   t%d %s row %lld: %g want %g\n", test_no, k.name, (long long)r, got, acc);
        }
        CHECK(wrong == 0, "test %d %s: %d wrong", test_no, k.name, wrong);
        if (bad >= 0)
            CHECK(gather_bad_rec.set == 1 && gather_bad_rec.gather == 0 && gather_bad_rec.index == C + 3,
                  "test %d %s: bad index record %d %d %lld", test_no, k.name, gather_bad_rec.set, gather_bad_rec.gather,
                  (long long)gather_bad_rec.index);
        else
            CHECK(gather_bad_rec.set == 0, "test %d %s: a bad index filed where there is none", test_no, k.name);
    }
    free(src);
    free(srcf);
    free(ix);
    free(out);
}

/* ND_IR_GATHER of two index arrays: out[m] = 3 * src[wrap(i[m]), wrap(j[m])]
 * over M points of a (R, C) source; index `bad` of j (>= 0: its position)
 * out of range must be filed with axis 1 and never read through. */
static void test_gather2(int64_t R, int64_t C, int64_t M, int64_t bad) {
    test_no++;
    nd_kernel k;
    memset(&k, 0, sizeof k);
    k.ndim = 1;
    k.shape[0] = M;
    nd_ir_access loads[3];
    memset(loads, 0, sizeof loads);
    loads[0].slot = 1; /* i */
    loads[0].dtype = ND_INT64;
    loads[0].strides[0] = 1;
    loads[1].slot = 2; /* j */
    loads[1].dtype = ND_INT64;
    loads[1].strides[0] = 1;
    loads[2].slot = 0; /* the source's base */
    loads[2].dtype = ND_FLOAT64;
    nd_ir_gather g = {2, ND_INDEX_FN_INDEX, 0 | 1 << 4, 2, 0, {C, 1}, {R, C}, {-1, -1, -1, -1, -1}, 0};
    nd_ir_inst ins[4] = {{ND_IR_LOAD, ND_INT64, 0, 0, -1, -1, -1, 0},
                         {ND_IR_LOAD, ND_INT64, 0, 1, -1, -1, -1, 0},
                         {ND_IR_GATHER, ND_FLOAT64, 0, 0, 0, 1, -1, 0},
                         {ND_OP_ADD, ND_FLOAT64, 0, 2, 2, -1, -1, 0}};
    ins[3].op = ND_OP_ADD;
    k.n_loads = 3;
    k.loads = loads;
    k.n_gathers = 1;
    k.gathers = &g;
    k.n_insts = 4;
    k.insts = ins;
    k.n_slots = 4;
    nd_ir_store sto;
    memset(&sto, 0, sizeof sto);
    sto.at.slot = 3;
    sto.at.dtype = ND_FLOAT64;
    sto.at.strides[0] = 1;
    sto.value = 3;
    k.n_stores = 1;
    k.stores = &sto;
    snprintf(k.name, sizeof k.name, "index2_add");
    k.hash = 0x7000 + test_no;
    double *src = malloc(sizeof *src * (size_t)(R * C)), *out = calloc((size_t)M + 16, sizeof *out);
    int64_t *iv = malloc(sizeof *iv * (size_t)M), *jv = malloc(sizeof *jv * (size_t)M);
    for (int64_t i = 0; i < R * C; i++) src[i] = (double)((i * 37) % 1001) - 500;
    for (int64_t m = 0; m < M; m++) {
        iv[m] = (m * 31) % (2 * R) - R;
        jv[m] = (m * 7919) % (2 * C) - C;
    }
    if (bad >= 0) jv[bad] = C + 3;
    void *slots[4] = {src, iv, jv, out};
    memset(&gather_bad_rec, 0, sizeof gather_bad_rec);
    if (!emulate(&k, slots, NULL, 0)) {
        CHECK(0, "test %d %s: emulation failed", test_no, k.name);
    } else {
        int wrong = 0;
        for (int64_t m = 0; m < M; m++) {
            int64_t a = iv[m] < 0 ? iv[m] + R : iv[m], b = jv[m] < 0 ? jv[m] + C : jv[m];
            double want = a >= 0 && a < R && b >= 0 && b < C ? 2 * src[a * C + b] : 0;
            if (out[m] != want && wrong++ < 3)
                printf("   t%d %s (%lld): %g want %g\n", test_no, k.name, (long long)m, out[m], want);
        }
        CHECK(wrong == 0, "test %d %s: %d wrong", test_no, k.name, wrong);
        if (bad >= 0)
            CHECK(gather_bad_rec.set == 1 && gather_bad_rec.gather == 0 && gather_bad_rec.axis == 1 &&
                      gather_bad_rec.index == C + 3,
                  "test %d %s: bad index record %d %d %d %lld", test_no, k.name, gather_bad_rec.set,
                  gather_bad_rec.gather, gather_bad_rec.axis, (long long)gather_bad_rec.index);
        else
            CHECK(gather_bad_rec.set == 0, "test %d %s: a bad index filed where there is none", test_no, k.name);
    }
    free(src);
    free(out);
    free(iv);
    free(jv);
}

/* ND_IR_GATHER of K > 3 index arrays (ndk_gatherk: indices 3.. are the
 * gather's more[]): out[m] = 2 * src[wrap(i0[m]), .., wrap(i{K-1}[m])] over
 * M points of an (S0, .., S{K-1}) source; index `bad` (>= 0: its position)
 * of array bad_axis out of range must be filed with that axis and never
 * read through. */
static void test_gatherk(int K, const int64_t *S, int64_t M, int64_t bad, int bad_axis) {
    test_no++;
    nd_kernel k;
    memset(&k, 0, sizeof k);
    k.ndim = 1;
    k.shape[0] = M;
    nd_ir_access loads[ND_IR_GATHER_MAX_AXES + 1];
    memset(loads, 0, sizeof loads);
    for (int q = 0; q < K; q++) {
        loads[q].slot = 1 + q; /* i_q */
        loads[q].dtype = ND_INT64;
        loads[q].strides[0] = 1;
    }
    loads[K].slot = 0; /* the source's base */
    loads[K].dtype = ND_FLOAT64;
    nd_ir_gather g;
    memset(&g, 0, sizeof g);
    g.load = K;
    g.fn = ND_INDEX_FN_INDEX;
    g.n_axes = K;
    for (int q = 0; q < K; q++) {
        g.axes |= (int64_t)q << (4 * q);
        g.size[q] = S[q];
    }
    g.stride[K - 1] = 1;
    for (int q = K - 2; q >= 0; q--) g.stride[q] = g.stride[q + 1] * S[q + 1];
    for (int q = 0; q < ND_IR_GATHER_MAX_AXES - 3; q++) g.more[q] = q + 3 < K ? q + 3 : -1;
    /* K loads (values 0..K-1), the gather (K), the doubling (K + 1) */
    nd_ir_inst ins[ND_IR_GATHER_MAX_AXES + 2];
    for (int q = 0; q < K; q++) ins[q] = (nd_ir_inst){ND_IR_LOAD, ND_INT64, 0, q, -1, -1, -1, 0};
    ins[K] = (nd_ir_inst){ND_IR_GATHER, ND_FLOAT64, 0, 0, 0, 1, 2, 0};
    ins[K + 1] = (nd_ir_inst){ND_OP_ADD, ND_FLOAT64, 0, K, K, -1, -1, 0};
    k.n_loads = K + 1;
    k.loads = loads;
    k.n_gathers = 1;
    k.gathers = &g;
    k.n_insts = K + 2;
    k.insts = ins;
    k.n_slots = K + 2;
    nd_ir_store sto;
    memset(&sto, 0, sizeof sto);
    sto.at.slot = K + 1;
    sto.at.dtype = ND_FLOAT64;
    sto.at.strides[0] = 1;
    sto.value = K + 1;
    k.n_stores = 1;
    k.stores = &sto;
    snprintf(k.name, sizeof k.name, "index%d_add", K);
    k.hash = 0x7000 + test_no;
    int64_t n = 1;
    for (int q = 0; q < K; q++) n *= S[q];
    double *src = malloc(sizeof *src * (size_t)n), *out = calloc((size_t)M + 16, sizeof *out);
    int64_t *iv[ND_IR_GATHER_MAX_AXES];
    for (int64_t i = 0; i < n; i++) src[i] = (double)((i * 37) % 1001) - 500;
    for (int q = 0; q < K; q++) {
        iv[q] = malloc(sizeof *iv[q] * (size_t)M);
        for (int64_t m = 0; m < M; m++) iv[q][m] = (m * (31 + 7919 * q) + q) % (2 * S[q]) - S[q];
    }
    const int64_t bad_value = bad_axis % 2 ? S[bad_axis] : -S[bad_axis] - 2;
    if (bad >= 0) iv[bad_axis][bad] = bad_value;
    void *slots[ND_IR_GATHER_MAX_AXES + 2];
    slots[0] = src;
    for (int q = 0; q < K; q++) slots[1 + q] = iv[q];
    slots[K + 1] = out;
    memset(&gather_bad_rec, 0, sizeof gather_bad_rec);
    if (!emulate(&k, slots, NULL, 0)) {
        CHECK(0, "test %d %s: emulation failed", test_no, k.name);
    } else {
        int wrong = 0;
        for (int64_t m = 0; m < M; m++) {
            int64_t off = 0, ok = 1;
            for (int q = 0; q < K; q++) {
                int64_t w = iv[q][m] < 0 ? iv[q][m] + S[q] : iv[q][m];
                ok &= w >= 0 && w < S[q];
                off += w * g.stride[q];
            }
            double want = ok ? 2 * src[off] : 0;
            if (out[m] != want && wrong++ < 3)
                printf("   t%d %s (%lld): %g want %g\n", test_no, k.name, (long long)m, out[m], want);
        }
        CHECK(wrong == 0, "test %d %s: %d wrong", test_no, k.name, wrong);
        if (bad >= 0)
            CHECK(gather_bad_rec.set == 1 && gather_bad_rec.gather == 0 && gather_bad_rec.axis == bad_axis &&
                      gather_bad_rec.index == bad_value,
                  "test %d %s: bad index record %d %d %d %lld", test_no, k.name, gather_bad_rec.set,
                  gather_bad_rec.gather, gather_bad_rec.axis, (long long)gather_bad_rec.index);
        else
            CHECK(gather_bad_rec.set == 0, "test %d %s: a bad index filed where there is none", test_no, k.name);
    }
    free(src);
    free(out);
    for (int q = 0; q < K; q++) free(iv[q]);
}

/* The vector variant's rule (codegen.c): its width from the kernel's
 * accesses, and whether a launch takes it, which is also where the kernel
 * cache compiles it (kernel_cache.c). */
static void test_vec_rule(void) {
    nd_kernel k;
    nd_ir_access ld[2], st;
    memset(&k, 0, sizeof k);
    memset(ld, 0, sizeof ld);
    memset(&st, 0, sizeof st);
    k.ndim = 1;
    k.shape[0] = 1000;
    ld[0].dtype = ND_FLOAT32;
    ld[0].strides[0] = 1;
    ld[1].dtype = ND_FLOAT64;
    ld[1].strides[0] = 0; /* a broadcast element: allowed, not counted */
    st.dtype = ND_FLOAT32;
    st.strides[0] = 1;
    nd_ir_store sto = {st, 0};
    k.n_loads = 2;
    k.loads = ld;
    k.n_stores = 1;
    k.stores = &sto;
    CHECK(nd_cuda_vec_width(&k) == 4, "vec rule: float32 unit-stride gives width %d, want 4", nd_cuda_vec_width(&k));
    ld[1].strides[0] = 1;
    CHECK(nd_cuda_vec_width(&k) == 2, "vec rule: a float64 load gives width %d, want 2", nd_cuda_vec_width(&k));
    ld[1].strides[0] = 2;
    CHECK(nd_cuda_vec_width(&k) == 0, "vec rule: a stride-2 load must rule it out");
    ld[1].strides[0] = 1;
    ld[1].dtype = ND_COMPLEX128;
    CHECK(nd_cuda_vec_width(&k) == 0, "vec rule: complex128 must rule it out");
    ld[1].dtype = ND_INT8;
    k.ndim = 2;
    k.shape[1] = 3;
    CHECK(nd_cuda_vec_width(&k) == 0, "vec rule: a 2-d space must rule it out");
    /* 132 multiprocessors x 256 threads = 33792 vector items */
    CHECK(!nd_cuda_vec_fills(1000, 4, 132), "vec rule: 1000 points must not take the vector kernel");
    CHECK(nd_cuda_vec_fills(4 * 33792, 4, 132), "vec rule: 4 x 33792 points take it");
    CHECK(!nd_cuda_vec_fills(4 * 33792 - 1, 4, 132), "vec rule: one point fewer does not");
    CHECK(!nd_cuda_vec_fills((int64_t)1 << 40, 0, 132), "vec rule: width 0 never does");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s WORKDIR [v][n][g][l]\n", argv[0]);
        return 2;
    }
    workdir = argv[1];
    /* nd's files call NVRTC through the table the loader fills (cuda_loader.h). */
    if (nd_cuda_load_nvrtc() != ND_OK) {
        fprintf(stderr, "emulate_check: %s\n", nd_last_error());
        return 2;
    }
    if (argc > 2 && strchr(argv[2], 'v')) verbose = 1;
    if (argc > 2 && strchr(argv[2], 'n')) nvrtc_on = 0;
    if (argc > 2 && strchr(argv[2], 'l')) { /* l: the loop kernels only */
        test_loop(0, 1, 0);
        test_loop(0, 300, 0);
        test_loop(1, 300, 0);
        test_loop(0, 300, 1);
        printf("%d checks, %d failures\n", checks, fails);
        return fails != 0;
    }
    test_vec_rule();
    test_gather(37, 1001, 513, 0, -1, ND_FLOAT32);
    test_gather(37, 1001, 513, 0, 5000, ND_FLOAT32);
    test_gather(1, 100003, 70001, 0, -1, ND_FLOAT64); /* one long row */
    test_gather(37, 1001, 513, 1, -1, ND_FLOAT32);
    test_gather(3, 4099, 77, 1, 4100, ND_FLOAT64);
    test_gather2(29, 61, 5003, -1);
    test_gather2(29, 61, 5003, 2500);
    test_gatherk(4, (const int64_t[]){5, 7, 3, 11}, 4001, -1, 0);
    test_gatherk(4, (const int64_t[]){5, 7, 3, 11}, 4001, 1999, 3);
    /* five, six and eight index arrays (any number nd_index takes) */
    test_gatherk(5, (const int64_t[]){5, 7, 3, 11, 2}, 4001, -1, 0);
    test_gatherk(5, (const int64_t[]){5, 7, 3, 11, 2}, 4001, 3000, 4);
    test_gatherk(6, (const int64_t[]){3, 4, 3, 5, 2, 3}, 3001, 17, 1);
    test_gatherk(8, (const int64_t[]){3, 2, 4, 3, 2, 3, 2, 5}, 2999, -1, 0);
    test_gatherk(8, (const int64_t[]){3, 2, 4, 3, 2, 3, 2, 5}, 2999, 1500, 7);
    if (argc > 2 && strchr(argv[2], 'g')) { /* g: the gather kernels only */
        printf("%d checks, %d failures\n", checks, fails);
        return fails != 0;
    }
    const nd_dtype dts[4] = {ND_FLOAT16, ND_BFLOAT16, ND_FLOAT32, ND_FLOAT64};
    /* a light 2-d kernel over 2^23+ points: rows unrolled, a partial last block of rows or none */
    static const int64_t five[5][2] = {{0, 0}, {-1, 0}, {1, 0}, {0, -1}, {0, 1}};
    static const int64_t row3[3][2] = {{0, -1}, {0, 0}, {0, 1}};
    static const int64_t cross[4][2] = {{-1, 0}, {1, 0}, {0, -1}, {0, 1}}; /* north, south: a gap between */
    static const int64_t star9[9][2] = {{0, 0}, {-2, 0}, {-1, 0}, {1, 0}, {2, 0}, {0, -2}, {0, -1}, {0, 1}, {0, 2}};
    static const int64_t tall[3][2] = {{-3, 0}, {0, 0}, {3, 0}}; /* nothing shared between columns */
    static const int64_t box9[9][2] = {{-1, -1}, {-1, 0}, {-1, 1}, {0, -1}, {0, 0}, {0, 1}, {1, -1}, {1, 0}, {1, 1}};
    test_stencil(4099, 2050, 5, five, 1);  /* march: a partial last strip and block of columns */
    test_stencil(4128, 2048, 5, five, 1);  /* whole strips and blocks */
    test_stencil(4099, 2050, 4, cross, 1); /* a window with a gap row */
    test_stencil(4100, 2049, 9, star9, 1); /* two columns apart */
    test_stencil(4099, 2050, 9, box9, 1);  /* three rows passed on */
    test_stencil(4099, 2050, 3, row3, 1);  /* along rows only */
    test_stencil(998, 998, 5, five, 1);    /* mid-size: strips of ND_CUDA_MARCH_ROWS_MID rows */
    test_stencil(601, 513, 9, box9, 1);    /* mid-size, partial strip and block of columns */
    test_stencil(4101, 2048, 3, tall, 0);  /* row-unrolled; span 7 > ND_CUDA_MARCH_MAX_SPAN: two groups */
    test_stencil(4104, 2050, 3, tall, 0);
    /* elementwise: fresh 1-d (vector variant and grouped scalar), offsets, reversed, strided */
    for (int d = 0; d < 4; d++)
        for (int normal = 0; normal < 2; normal++) {
            int64_t sh1[1] = {1003}, s1[1] = {1}, sr[1] = {-1}, s3[1] = {3};
            test_elem(1, sh1, 0, s1, dts[d], normal);
            test_elem(1, sh1, 1, s1, dts[d], normal);
            test_elem(1, sh1, 1002, sr, dts[d], normal);
            test_elem(1, sh1, 2, s3, dts[d], normal);
        }
    for (int d = 2; d < 4; d++)
        for (int normal = 0; normal < 2; normal++) {
            int64_t sh2[2] = {37, 53}, rm[2] = {53, 1}, tr[2] = {1, 37}, sh2b[2] = {36, 52}, rm2[2] = {55, 1},
                    rr[2] = {-52, 1};
            test_elem(2, sh2, 0, rm, dts[d], normal);            /* rows of 53: runtime residue */
            test_elem(2, sh2, 0, tr, dts[d], normal);            /* transposed */
            test_elem(2, sh2b, 57, rm2, dts[d], normal);         /* a window of a wider array */
            test_elem(2, sh2b, 35 * 52 + 1, rr, dts[d], normal); /* reversed rows */
            int64_t sh2c[2] = {9, 64}, rmc[2] = {64, 1};
            test_elem(2, sh2c, 3, rmc, dts[d], normal); /* fixed residue 3 */
            int64_t bc[2] = {0, 1};
            test_elem(2, sh2c, 5, bc, dts[d], normal); /* broadcast rows */
        }
    /* complex times real: complex64's vector variant (an odd length: a tail), complex128's scalar loop */
    test_cmul(ND_COMPLEX64, 1003, 0);
    test_cmul(ND_COMPLEX64, 1003, 1);
    test_cmul(ND_COMPLEX128, 1003, 0);
    /* integers: fresh, offset, reversed, strided, rows with a runtime residue, transposed */
    for (int wide = 0; wide < 2; wide++) {
        const uint64_t range = wide ? ((uint64_t)1 << 63) + 1 : ((uint64_t)1 << 31) + 1;
        int64_t sh1[1] = {1003}, s1[1] = {1}, sr[1] = {-1}, s3[1] = {3};
        test_int_elem(1, sh1, 0, s1, wide, range);
        test_int_elem(1, sh1, 1, s1, wide, range);
        test_int_elem(1, sh1, 1002, sr, wide, range);
        test_int_elem(1, sh1, 2, s3, wide, range);
        test_int_elem(1, sh1, 0, s1, wide, wide ? 10 : (uint64_t)1 << 32);
        int64_t sh2[2] = {37, 53}, rm[2] = {53, 1}, tr[2] = {1, 37};
        test_int_elem(2, sh2, 0, rm, wide, range);
        test_int_elem(2, sh2, 0, tr, wide, range);
    }
    /* the pair form: half the words rejected (46341), none (2^16), a few (2001) */
    {
        int64_t sh1[1] = {1003}, s1[1] = {1}, sr[1] = {-1}, s3[1] = {3}, s2[1] = {2};
        int64_t sh2[2] = {37, 53}, rm[2] = {53, 1}, tr[2] = {1, 37}, sh2c[2] = {9, 64}, rmc[2] = {64, 1};
        test_int_elem(1, sh1, 0, s1, 2, 46341);
        test_int_elem(1, sh1, 1, s1, 2, 46341);
        test_int_elem(1, sh1, 1002, sr, 2, 46341);
        test_int_elem(1, sh1, 2, s3, 2, 46341);
        test_int_elem(1, sh1, 1, s2, 2, 46341);
        test_int_elem(1, sh1, 0, s1, 2, 65536);
        test_int_elem(1, sh1, 5, s1, 2, 2001);
        test_int_elem(2, sh2, 0, rm, 2, 46341);
        test_int_elem(2, sh2, 0, tr, 2, 46341);
        test_int_elem(2, sh2c, 3, rmc, 2, 46341);
        int64_t n1[1] = {100003}, sh3[2] = {300, 64}, rm3[2] = {64, 1}, tr3[2] = {1, 300};
        test_int_reduce(1, n1, 1, 0, s1, 46341);
        test_int_reduce(1, n1, 1, 3, s1, 2001);
        test_int_reduce(1, n1, 1, 100002, sr, 46341);
        test_int_reduce(2, sh2, 2, 0, rm, 46341); /* ROWS, runtime residue */
        test_int_reduce(2, sh2, 1, 0, rm, 46341); /* COLS over rows */
        test_int_reduce(2, sh3, 1, 0, rm3, 46341); /* COLS, kept group */
        test_int_reduce(2, sh3, 2, 0, rm3, 46341); /* ROWS fixed */
        test_int_reduce(2, sh3, 1, 0, tr3, 46341); /* COLS along reduced */
        test_int_reduce(1, n1, 1, 0, s1, 65536);
    }
    /* reductions */
    for (int d = 2; d < 4; d++)
        for (int normal = 0; normal < 2; normal++) {
            int64_t n1[1] = {100003}, s1[1] = {1};
            test_reduce(1, n1, 1, 0, s1, dts[d], normal, ND_REDUCE_SUM);
            test_reduce(1, n1, 1, 3, s1, dts[d], normal, ND_REDUCE_SUM);
            int64_t sr[1] = {-1};
            test_reduce(1, n1, 1, 100002, sr, dts[d], normal, ND_REDUCE_SUM);
            int64_t sh2[2] = {37, 53}, rm[2] = {53, 1}, tr[2] = {1, 37};
            test_reduce(2, sh2, 2, 0, rm, dts[d], normal, ND_REDUCE_SUM); /* ROWS, runtime residue */
            test_reduce(2, sh2, 1, 0, rm, dts[d], normal, ND_REDUCE_SUM); /* COLS over rows */
            test_reduce(2, sh2, 2, 0, tr, dts[d], normal, ND_REDUCE_SUM);
            test_reduce(2, sh2, 1, 0, tr, dts[d], normal, ND_REDUCE_SUM);
            int64_t sh3[2] = {300, 64}, rm3[2] = {64, 1}, tr3[2] = {1, 300};
            test_reduce(2, sh3, 1, 0, rm3, dts[d], normal, ND_REDUCE_SUM); /* COLS, kept group */
            test_reduce(2, sh3, 2, 0, rm3, dts[d], normal, ND_REDUCE_SUM); /* ROWS fixed */
            test_reduce(2, sh3, 1, 0, tr3, dts[d], normal, ND_REDUCE_SUM); /* COLS along reduced */
            int64_t sh4[2] = {5000, 8}, rm4[2] = {8, 1};
            test_reduce(2, sh4, 2, 0, rm4, dts[d], normal,
                        ND_REDUCE_SUM); /* COLS, inner reduced (n_red <= 16) */
            int64_t sh5[3] = {6, 40, 12}, rm5[3] = {480, 12, 1};
            test_reduce(3, sh5, 6, 0, rm5, dts[d], normal, ND_REDUCE_SUM); /* two reduced axes, 12 % 4 == 0 */
            int64_t sh6[3] = {6, 40, 13}, rm6[3] = {520, 13, 1};
            test_reduce(3, sh6, 6, 0, rm6, dts[d], normal, ND_REDUCE_SUM); /* two reduced axes, no grouping */
            test_reduce(3, sh6, 5, 0, rm6, dts[d], normal, ND_REDUCE_SUM);
            test_reduce(2, sh2, 2, 0, rm, dts[d], normal, ND_REDUCE_ARGMAX);
            test_reduce(1, n1, 1, 3, s1, dts[d], normal, ND_REDUCE_ARGMAX);
            test_reduce(2, sh2, 2, 0, rm, dts[d], normal, ND_REDUCE_MAX);
            test_reduce(1, n1, 1, 3, s1, dts[d], normal, ND_REDUCE_MIN);
        }
    {
        int64_t sh1[1] = {1003}, s1[1] = {1}, sh2[2] = {37, 53}, rm[2] = {53, 1};
        test_elem(1, sh1, (1LL << 34) + 3, s1, ND_FLOAT32, 0);
        test_elem(2, sh2, (1LL << 34) + 1, rm, ND_FLOAT64, 0);
        int64_t n1[1] = {100003};
        test_reduce(1, n1, 1, (1LL << 33) + 1, s1, ND_FLOAT32, 0, ND_REDUCE_SUM);
        /* axes (0, 2), more than 1024 outputs of more than 256 points a
         * lane: split, with a second pass (the geometry of the 512x1024x512
         * benchmark) */
        int64_t sh7[3] = {2, 1025, 32800}, rm7[3] = {1025 * 32800, 32800, 1};
        test_reduce(3, sh7, 5, 0, rm7, ND_FLOAT32, 0, ND_REDUCE_SUM);
    }
    for (int c = 0; c < 2; c++) {
        nd_dtype ct = c ? ND_COMPLEX128 : ND_COMPLEX64;
        int64_t sh1[1] = {1003}, s1[1] = {1}, sr[1] = {-2};
        test_parts(ct, 1, sh1, 0, s1, 1003);       /* contiguous */
        test_parts(ct, 1, sh1, 2005, sr, 2006);    /* reversed, every other */
        int64_t sh2[2] = {37, 53}, tr[2] = {1, 37}, win[2] = {60, 1};
        test_parts(ct, 2, sh2, 0, tr, 37 * 53);    /* transposed */
        test_parts(ct, 2, sh2, 61, win, 40 * 60);  /* a window of a wider array */
    }
    test_ufunc(0);
    test_ufunc(1);
    test_loop(0, 1, 0);
    test_loop(0, 300, 0);
    test_loop(1, 300, 0);
    test_loop(0, 300, 1);
    test_streams(3, 1, 3, "ndk_philox_r(A");  /* three streams of one seed */
    test_streams(6, 2, 3, "ndk_philox_r(A");  /* six (seed, stream) pairs, streams shared between seeds */
    test_streams(4, 1, 2, "ndk_philox_r(A");  /* two draws each of two streams: two pairs */
    test_streams(9, 1, 9, "ndk_philox_k(A");  /* nine pairs: more than ND_CUDA_MAX_STREAMS */
    test_streams(5, 5, 5, "ndk_philox(A.w");  /* five seeds: more than ND_CUDA_MAX_SEEDS */
    /* ND_IR_ONE_HIGH_WORD: one c3 ^ k1 word a seed */
    test_streams_as(3, 1, 3, "ndk_philox_r(A", 1, 1); /* three streams of one seed */
    test_streams_as(6, 2, 3, "ndk_philox_r(A", 1, 1); /* two seeds, streams shared between them */
    test_streams_as(9, 1, 9, "ndk_philox_k(A", 1, 1); /* nine pairs: the flag changes nothing */
    test_streams_as(3, 1, 3, "ndk_philox_r(A", 1, 0); /* the promise broken: the draws must differ */
    test_pi(1 << 20, ND_INT64);
    test_pi((1 << 20) + 3, ND_INT64);
    test_pi((1 << 20) + 3, ND_FLOAT64);
    test_dot(1001, 1);    /* one block: it writes the output */
    test_dot(1000003, 1); /* 32 blocks (4 SMs x 8), a last odd point */
    test_dot(1000003, 0); /* ND_CUDA_PERSIST=0: split, a second pass */
    {
        /* a full reduction over two axes, one block and five */
        int64_t sh2[2] = {37, 53}, rm[2] = {53, 1}, sh3[2] = {300, 64}, rm3[2] = {64, 1};
        test_reduce(2, sh2, 3, 0, rm, ND_FLOAT64, 0, ND_REDUCE_SUM);
        test_reduce(2, sh3, 3, 0, rm3, ND_FLOAT32, 0, ND_REDUCE_SUM);
        test_reduce(2, sh3, 3, 0, rm3, ND_FLOAT32, 0, ND_REDUCE_ARGMAX);
    }
    printf("%d checks, %d failures\n", checks, fails);
    return fails != 0;
}
