/* ND_LIB_FFT on the CPU (common/lib_fft.h) with nd's own FFT
 * (fft_plan.h). The last axis goes from the input into the output line by
 * line; each further axis of a multi-axis call is then transformed in
 * place in the output, along its (strided) lines. The lines of a pass are
 * spread over the pool in ranges, each range with its own line buffer and
 * scratch; every line is transformed alone by the same plan, so the bits
 * do not depend on the thread count. */
#include <string.h>

#include "backends/cpu/cpu_internal.h"
#include "backends/cpu/fft_plan.h"
#include "common/alloc.h"
#include "common/error.h"
#include "common/lib_fft.h"

typedef struct {
    const nd_kernel_arg *in, *out;
    int kind, sign, f64;
    int axis;       /* this pass's axis (of out; the first pass: the last axis of both) */
    int64_t n;      /* the transform's length */
    const nd_fft_plan *plan; /* the complex plan of n, or the real one (even n, R2C and C2R) */
    int oom;
} fft_job;

/* The element offset of line l of view a along axis ax: l counts the
 * positions of the other axes in row-major order. */
static int64_t line_offset(const nd_kernel_arg *a, int ax, int64_t l) {
    int64_t off = 0;
    for (int d = a->ndim - 1; d >= 0 && l > 0; d--) {
        if (d == ax) continue;
        off += (l % a->shape[d]) * a->strides[d];
        l /= a->shape[d];
    }
    return off;
}

#define FFT_LINES(SUF, T)                                                                                        \
    static void lines_##SUF(fft_job *j, int64_t begin, int64_t end, T *buf, T *scratch) {                       \
        const nd_kernel_arg *in = j->in, *out = j->out;                                                          \
        const int64_t n = j->n;                                                                                  \
        const int ax = j->axis;                                                                                  \
        const int first = ax == out->ndim - 1;                                                                   \
        const int64_t is = in->strides[in->ndim - 1], os = out->strides[ax];                                     \
        const int64_t m = in->shape[in->ndim - 1]; /* input elements along the last axis */                      \
        for (int64_t l = begin; l < end; l++) {                                                                  \
            T *y = (T *)out->data + 2 * line_offset(out, ax, l);                                                   \
            if (!first) { /* a further axis, in place in the (complex) output */                               \
                for (int64_t k = 0; k < n; k++) buf[2 * k] = y[2 * k * os], buf[2 * k + 1] = y[2 * k * os + 1];  \
                nd_fft_exec_##SUF(j->plan, buf, scratch, j->sign);                                               \
                for (int64_t k = 0; k < n; k++) y[2 * k * os] = buf[2 * k], y[2 * k * os + 1] = buf[2 * k + 1];  \
                continue;                                                                                        \
            }                                                                                                    \
            const int64_t ioff = line_offset(in, in->ndim - 1, l);                                               \
            switch (j->kind) {                                                                                   \
            case ND_LIB_FFT_C2C: {                                                                               \
                const T *x = (const T *)in->data + 2 * ioff;                                                     \
                for (int64_t k = 0; k < n; k++) buf[2 * k] = x[2 * k * is], buf[2 * k + 1] = x[2 * k * is + 1];  \
                nd_fft_exec_##SUF(j->plan, buf, scratch, j->sign);                                               \
                for (int64_t k = 0; k < n; k++) y[2 * k * os] = buf[2 * k], y[2 * k * os + 1] = buf[2 * k + 1];  \
                break;                                                                                           \
            }                                                                                                    \
            case ND_LIB_FFT_R2C: {                                                                               \
                const T *x = (const T *)in->data + ioff;                                                         \
                if (j->plan->real) { /* the half-length transform (fft_plan.h) */                                \
                    T *res = buf + n + 2;                                                                        \
                    for (int64_t k = 0; k < n; k++) buf[k] = x[k * is];                                          \
                    nd_fft_r2c_##SUF(j->plan, buf, res, scratch);                                                \
                    for (int64_t k = 0; k <= n / 2; k++) y[2 * k * os] = res[2 * k], y[2 * k * os + 1] = res[2 * k + 1]; \
                    break;                                                                                       \
                }                                                                                                \
                for (int64_t k = 0; k < n; k++) buf[2 * k] = x[k * is], buf[2 * k + 1] = 0;                      \
                nd_fft_exec_##SUF(j->plan, buf, scratch, -1);                                                    \
                for (int64_t k = 0; k <= n / 2; k++) y[2 * k * os] = buf[2 * k], y[2 * k * os + 1] = buf[2 * k + 1]; \
                break;                                                                                           \
            }                                                                                                    \
            case ND_LIB_FFT_C2R: {                                                                               \
                /* The Hermitian sequence the input is half of: element 0 and (even n) n / 2 real. */           \
                const T *x = (const T *)in->data + 2 * ioff;                                                     \
                T *r = (T *)out->data + line_offset(out, ax, l);                                                 \
                if (j->plan->real) {                                                                             \
                    T *half = buf + n + 2;                                                                       \
                    for (int64_t k = 0; k <= n / 2; k++) {                                                       \
                        half[2 * k] = k < m ? x[2 * k * is] : 0;                                                 \
                        half[2 * k + 1] = k < m ? x[2 * k * is + 1] : 0;                                         \
                    }                                                                                            \
                    nd_fft_c2r_##SUF(j->plan, half, buf, scratch);                                               \
                    for (int64_t k = 0; k < n; k++) r[k * os] = buf[k];                                          \
                    break;                                                                                       \
                }                                                                                                \
                for (int64_t k = 0; k <= n / 2; k++) {                                                           \
                    buf[2 * k] = k < m ? x[2 * k * is] : 0;                                                      \
                    buf[2 * k + 1] = k < m && k != 0 && 2 * k != n ? x[2 * k * is + 1] : 0;                      \
                }                                                                                                \
                for (int64_t k = n / 2 + 1; k < n; k++) buf[2 * k] = buf[2 * (n - k)], buf[2 * k + 1] = -buf[2 * (n - k) + 1]; \
                nd_fft_exec_##SUF(j->plan, buf, scratch, 1);                                                     \
                for (int64_t k = 0; k < n; k++) r[k * os] = buf[2 * k];                                          \
                break;                                                                                           \
            }                                                                                                    \
            }                                                                                                    \
        }                                                                                                        \
    }
FFT_LINES(f, float)
FFT_LINES(d, double)

static void run_range(void *varg, int64_t begin, int64_t end) {
    fft_job *j = varg;
    size_t es = j->f64 ? sizeof(double) : sizeof(float);
    /* the line (n + 2 complex: a real line and its half spectrum side by side), then the scratch */
    int64_t line = 2 * (j->n + 2), elems = line + 2 * nd_fft_scratch_elems(j->plan);
    void *mem = nd_malloc((size_t)elems * es);
    if (!mem) {
        __atomic_store_n(&j->oom, 1, __ATOMIC_RELAXED);
        return;
    }
    if (j->f64) lines_d(j, begin, end, mem, (double *)mem + line);
    else lines_f(j, begin, end, mem, (float *)mem + line);
    free(mem);
}

static nd_fft_cache *cache_of(nd_cpu_state *st) { return st->fft_plans; }

nd_status nd_cpu_lib_fft(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args) {
    const nd_kernel_arg *in = &args[0], *out = &args[1];
    fft_job j = {in, out, (int)u->lib_args.v[ND_LIB_FFT_KIND].i, (int)u->lib_args.v[ND_LIB_FFT_SIGN].i, 0, 0, 0,
                 NULL, 0};
    int rank = (int)u->lib_args.v[ND_LIB_FFT_RANK].i;
    nd_dtype real = j.kind == ND_LIB_FFT_C2R ? (nd_dtype)out->dtype : (nd_dtype)in->dtype;
    if (real == ND_COMPLEX128 || real == ND_FLOAT64) j.f64 = 1;
    else if (real != ND_COMPLEX64 && real != ND_FLOAT32) goto unsupported;
    if (out->ndim < rank || rank < 1 || rank > ND_LIB_FFT_MAX_RANK || (j.kind == ND_LIB_FFT_C2R && rank != 1))
        goto unsupported;
    if (out->size == 0) return ND_OK;
    for (int p = 0; p < rank; p++) {
        j.axis = out->ndim - 1 - p;
        j.n = p == 0 && j.kind == ND_LIB_FFT_R2C ? in->shape[in->ndim - 1] : out->shape[j.axis];
        if (p > 0 && j.kind == ND_LIB_FFT_R2C) j.kind = ND_LIB_FFT_C2C; /* rfftn: the other axes forward */
        int half = j.kind != ND_LIB_FFT_C2C && j.n % 2 == 0;
        j.plan = half ? nd_fft_rplan_get(cache_of(st), j.n, j.f64) : nd_fft_plan_get(cache_of(st), j.n, j.f64);
        if (!j.plan) return nd_error_set(ND_ERR_OOM, "cpu backend: out of host memory for an FFT plan of length %lld",
                                         (long long)j.n);
        int64_t lines = out->size / out->shape[j.axis];
        int64_t grain = j.n >= (1 << 15) ? 1 : ((int64_t)1 << 15) / j.n;
        nd_cpu_parallel_for(st, lines, grain, run_range, &j);
        if (j.oom) return nd_error_set(ND_ERR_OOM, "cpu backend: out of host memory for the lines of an FFT of "
                                       "length %lld", (long long)j.n);
    }
    return ND_OK;
unsupported:
    return nd_error_set(ND_ERR_UNSUPPORTED, "cpu backend: fft of %s into %s over %d axes (kind %d)",
                        nd_dtype_name((nd_dtype)in->dtype), nd_dtype_name((nd_dtype)out->dtype), rank, j.kind);
}
