/* ND_LIB_HISTOGRAM on the CPU: counts (int64) or sums of float64 weights per
 * bin of a 1-d input, the bin of each value from common/hist_bins.h.
 *
 * The elements are cut into P consecutive parts, P fixed by the element
 * and bin counts alone (never by the thread count); each part fills its own
 * partial histogram in element order, and bin b of the result is the sum
 * of the partials' bin b in part order. So float weights are summed in one
 * fixed order and the result is the same bits for any number of workers. */
#include <string.h>

#include "backends/cpu/cpu_internal.h"
#include "common/alloc.h"
#include "common/error.h"
#include "common/hist_bins.h"

#define HIST_MAX_PARTS 16
#define HIST_PART_MIN ((int64_t)1 << 15)   /* elements per part, at least */
#define HIST_PARTIAL_MAX ((int64_t)1 << 24) /* P * bins, at most */

typedef struct {
    const nd_kernel_arg *x, *edges, *w;
    int mode, weighted;
    int64_t bins, n, parts;
    nd_hb_uniform_params uni;
    void *partials; /* parts * bins int64 or double; NULL when parts == 1 */
    void *out;
} hist_job;

/* Elements [i0, i1) into h: one loop per bin rule and data dtype, so the
 * rule is not chosen per element. x and w are any 1-d views; the edges are
 * packed (the frontend packs them). */
#define FILL_LOOP(BIN)                                                                                   \
    do {                                                                                                 \
        if (j->weighted) {                                                                               \
            double *hw = h;                                                                              \
            const double *w = j->w->data;                                                                \
            int64_t ws = j->w->strides[0];                                                               \
            for (int64_t i = i0; i < i1; i++) {                                                          \
                int64_t b = BIN;                                                                         \
                if (b >= 0) hw[b] += w[i * ws];                                                          \
            }                                                                                            \
        } else {                                                                                         \
            int64_t *hc = h;                                                                             \
            for (int64_t i = i0; i < i1; i++) {                                                          \
                int64_t b = BIN;                                                                         \
                if (b >= 0) hc[b]++;                                                                     \
            }                                                                                            \
        }                                                                                                \
    } while (0)

static void fill(const hist_job *j, void *h, int64_t i0, int64_t i1) {
    const nd_kernel_arg *x = j->x;
    const int64_t xs = x->strides[0], ne = j->edges->size;
    const int f32 = x->dtype == ND_FLOAT32;
    const float *xf = x->data, *ef = j->edges->data;
    const double *xd = x->data, *ed = j->edges->data;
    const int64_t *xi = x->data;
    switch (j->mode) {
    case ND_HIST_INDEX: FILL_LOOP(nd_hb_index(xi[i * xs], j->bins)); break;
    case ND_HIST_UNIFORM:
        if (f32) FILL_LOOP(nd_hb_uniform_f32(xf[i * xs], &j->uni));
        else FILL_LOOP(nd_hb_uniform_f64(xd[i * xs], &j->uni));
        break;
    default:
        if (f32) FILL_LOOP(nd_hb_edges_f32(xf[i * xs], ef, ne));
        else FILL_LOOP(nd_hb_edges_f64(xd[i * xs], ed, ne));
    }
}

static void fill_parts(void *varg, int64_t begin, int64_t end) {
    const hist_job *j = varg;
    size_t item = j->weighted ? sizeof(double) : sizeof(int64_t);
    for (int64_t p = begin; p < end; p++) {
        void *h = j->parts > 1 ? (char *)j->partials + (size_t)(p * j->bins) * item : j->out;
        fill(j, h, j->n * p / j->parts, j->n * (p + 1) / j->parts);
    }
}

static void merge_parts(void *varg, int64_t begin, int64_t end) {
    const hist_job *j = varg;
    for (int64_t b = begin; b < end; b++) {
        if (j->weighted) {
            const double *h = j->partials;
            double s = h[b];
            for (int64_t p = 1; p < j->parts; p++) s += h[p * j->bins + b];
            ((double *)j->out)[b] = s;
        } else {
            const int64_t *h = j->partials;
            int64_t s = h[b];
            for (int64_t p = 1; p < j->parts; p++) s += h[p * j->bins + b];
            ((int64_t *)j->out)[b] = s;
        }
    }
}

nd_status nd_cpu_lib_histogram(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args) {
    int flags = (int)u->lib_args.v[0].i;
    hist_job j = {&args[0], &args[1], &args[2], flags & ND_HIST_MODE_MASK, (flags & ND_HIST_WEIGHTED) != 0,
                  u->lib_args.v[1].i, args[0].size, 1,
                  nd_hb_uniform_init(u->lib_args.v[2].f, u->lib_args.v[3].f, u->lib_args.v[1].i), NULL, args[3].data};
    const nd_kernel_arg *out = &args[3];
    if (out->size != j.bins || out->ndim != 1 || out->strides[0] != 1)
        return nd_error_set(ND_ERR_STATE, "cpu backend: histogram output of %lld bins is not a packed row (an nd bug)",
                            (long long)j.bins);
    size_t item = j.weighted ? sizeof(double) : sizeof(int64_t);
    j.parts = j.n / HIST_PART_MIN;
    if (j.parts > HIST_MAX_PARTS) j.parts = HIST_MAX_PARTS;
    if (j.bins && j.parts > HIST_PARTIAL_MAX / j.bins) j.parts = HIST_PARTIAL_MAX / j.bins;
    if (j.parts < 1) j.parts = 1;
    memset(j.out, 0, (size_t)j.bins * item);
    if (j.parts > 1) {
        j.partials = nd_calloc((size_t)(j.parts * j.bins), item);
        if (!j.partials) return nd_error_set(ND_ERR_OOM, "cpu backend: out of memory for %lld partial histograms",
                                             (long long)j.parts);
    }
    nd_cpu_parallel_for(st, j.parts, 1, fill_parts, &j);
    if (j.parts > 1) {
        nd_cpu_parallel_for(st, j.bins, 4096, merge_parts, &j);
        free(j.partials);
    }
    return ND_OK;
}

/* ND_LIB_BIN_INDEX: the uniform bin of each float64 value (histogram2d's
 * per-axis index), or the drop value. */
typedef struct {
    const nd_kernel_arg *x, *out;
    int64_t drop;
    nd_hb_uniform_params uni;
} index_job;

static void bin_indices(void *varg, int64_t begin, int64_t end) {
    const index_job *j = varg;
    const double *x = j->x->data;
    int64_t *y = j->out->data, xs = j->x->strides[0], ys = j->out->strides[0];
    for (int64_t i = begin; i < end; i++) {
        int64_t b = nd_hb_uniform_f64(x[i * xs], &j->uni);
        y[i * ys] = b < 0 ? j->drop : b;
    }
}

nd_status nd_cpu_lib_bin_index(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args) {
    index_job j = {&args[0], &args[1], u->lib_args.v[3].i,
                   nd_hb_uniform_init(u->lib_args.v[1].f, u->lib_args.v[2].f, u->lib_args.v[0].i)};
    nd_cpu_parallel_for(st, args[0].size, 1 << 14, bin_indices, &j);
    return ND_OK;
}
