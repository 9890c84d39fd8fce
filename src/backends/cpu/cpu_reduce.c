/* Reductions at the end of a kernel. The prepared space is ordered
 * [outer kept | reduced | inner kept] (O x R x L elements). With L == 1 each
 * output reduces a contiguous run of R values; with L > 1 rows of L values
 * are accumulated lane-wise (vectorised) and folded at the end. Work items
 * and tiles have fixed sizes, and partials are combined in item order, so
 * the result never depends on the number of threads. Sums and products of
 * floats accumulate in double, of ints in 64-bit wrapping arithmetic. */
#include "backends/cpu/cpu_vectorize.h"
#include "common/alloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/cpu_kernel.h"
#include "common/error.h"

static int is_arg(int kind) { return nd_reduce_is_arg((nd_reduce_kind)kind); }

/* The accumulator's start (common/ops.h's init column) in acc dtype adt. */
static cpu_acc identity(int kind, int adt) {
    cpu_acc a;
    a.idx = -1;
    a.v.u = 0;
    switch (nd_reduce_init_of((nd_reduce_kind)kind)) {
    case ND_RINIT_ZERO:
    case ND_RINIT_FALSE:
    case ND_RINIT_NO_INDEX: break;
    case ND_RINIT_ONE:
        if (adt == ND_FLOAT64) a.v.f = 1.0;
        else a.v.u = 1;
        break;
    case ND_RINIT_TRUE: a.v.u = 1; break;
    case ND_RINIT_HIGHEST:
        if (adt == ND_FLOAT64) a.v.f = INFINITY;
        else if (adt == ND_INT64) a.v.i = INT64_MAX;
        else a.v.u = UINT64_MAX;
        break;
    case ND_RINIT_LOWEST:
        if (adt == ND_FLOAT64) a.v.f = -INFINITY;
        else if (adt == ND_INT64) a.v.i = INT64_MIN;
        else a.v.u = 0;
        break;
    }
    return a;
}

/* b is "better" than a for ARGMIN/ARGMAX: NaN first, then strict order,
 * then the smaller index. */
static int arg_better(int kind, int adt, cpu_acc b, cpu_acc a) {
    if (b.idx < 0) return 0;
    if (a.idx < 0) return 1;
    int mn = kind == ND_REDUCE_ARGMIN;
    if (adt == ND_FLOAT64) {
        int an = a.v.f != a.v.f, bn = b.v.f != b.v.f;
        if (an || bn) return an && bn ? b.idx < a.idx : bn;
        if (b.v.f == a.v.f) return b.idx < a.idx;
        return mn ? b.v.f < a.v.f : b.v.f > a.v.f;
    }
    if (adt == ND_INT64) {
        if (b.v.i == a.v.i) return b.idx < a.idx;
        return mn ? b.v.i < a.v.i : b.v.i > a.v.i;
    }
    if (b.v.u == a.v.u) return b.idx < a.idx;
    return mn ? b.v.u < a.v.u : b.v.u > a.v.u;
}

/* One case per kind and no default: a new row of ND_REDUCE_KINDS fails
 * to build (-Wswitch) until it is combined here. */
static cpu_acc combine(int kind, int adt, cpu_acc a, cpu_acc b) {
    switch ((nd_reduce_kind)kind) {
    case ND_REDUCE_SUM:
        if (adt == ND_FLOAT64) a.v.f += b.v.f;
        else a.v.u += b.v.u;
        return a;
    case ND_REDUCE_PROD:
        if (adt == ND_FLOAT64) a.v.f *= b.v.f;
        else a.v.u *= b.v.u;
        return a;
    case ND_REDUCE_MIN:
    case ND_REDUCE_MAX: {
        int mn = kind == ND_REDUCE_MIN;
        if (adt == ND_FLOAT64) {
            if (a.v.f != a.v.f) return a;
            if (b.v.f != b.v.f) return b;
            return (mn ? b.v.f < a.v.f : b.v.f > a.v.f) ? b : a;
        }
        if (adt == ND_INT64) return (mn ? b.v.i < a.v.i : b.v.i > a.v.i) ? b : a;
        return (mn ? b.v.u < a.v.u : b.v.u > a.v.u) ? b : a;
    }
    case ND_REDUCE_ARGMIN:
    case ND_REDUCE_ARGMAX: return arg_better(kind, adt, b, a) ? b : a;
    case ND_REDUCE_ANY: a.v.u = (a.v.u | b.v.u) != 0; return a;
    case ND_REDUCE_ALL: a.v.u = (a.v.u & b.v.u) != 0; return a;
    }
    return a; /* not reached: kinds are checked when a kernel is prepared */
}

/* ---------------------------------------------------- contiguous segment */

/* NumPy's pairwise summation: runs of at most 128 values in 8 lanes, the
 * halves of a longer run summed apart and added, so the error grows with
 * log2(n / 128) instead of n. */
static double sum_d(const double *v, int64_t n) {
    if (n > 128) {
        int64_t h = n / 2;
        h -= h % 8;
        return sum_d(v, h) + sum_d(v + h, n - h);
    }
    double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; j++) s[j] += v[i + j];
    double t = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
    for (; i < n; i++) t += v[i];
    return t;
}

/* Tile sums and work-item partials of a float sum are added with
 * Neumaier's compensation: with the pairwise tile sums the error stays
 * below NumPy's pairwise bound however many tiles and items there are. */
typedef struct {
    double s, c;
} comp_sum;
static void comp_add(comp_sum *a, double x) {
    double t = a->s + x;
    if (fabs(a->s) >= fabs(x)) a->c += (a->s - t) + x;
    else a->c += (x - t) + a->s;
    a->s = t;
}
/* An infinity or NaN among the terms makes the compensation NaN: the sum
 * alone is then the answer. */
static double comp_result(comp_sum a) { return isfinite(a.c) ? a.s + a.c : a.s; }

static double sum_f(const float *v, int64_t n) {
    double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; j++) s[j] += (double)v[i + j];
    double t = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
    for (; i < n; i++) t += (double)v[i];
    return t;
}
static double prod_d(const double *v, int64_t n) {
    double s[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; j++) s[j] *= v[i + j];
    double t = ((s[0] * s[1]) * (s[2] * s[3])) * ((s[4] * s[5]) * (s[6] * s[7]));
    for (; i < n; i++) t *= v[i];
    return t;
}

/* Reduces v[0..n) (acc dtype) into *acc; v[i] has reduced index ibase + i. */
static void seg_reduce(int kind, int adt, const void *vp, int64_t n, int64_t ibase, cpu_acc *acc) {
    if (n <= 0) return;
    if (adt == ND_BOOL) {
        const uint8_t *v = (const uint8_t *)vp;
        unsigned any = 0, all = 1;
        for (int64_t i = 0; i < n; i++) {
            any |= v[i] != 0;
            all &= v[i] != 0;
        }
        if (kind == ND_REDUCE_ANY) acc->v.u |= any;
        else acc->v.u &= all;
        return;
    }
    if (kind == ND_REDUCE_SUM || kind == ND_REDUCE_PROD) {
        int sum = kind == ND_REDUCE_SUM;
        if (adt == ND_FLOAT64) {
            double t = sum ? sum_d((const double *)vp, n) : prod_d((const double *)vp, n);
            acc->v.f = sum ? acc->v.f + t : acc->v.f * t;
        } else {
            const uint64_t *v = (const uint64_t *)vp;
            uint64_t t = sum ? 0 : 1;
            if (sum)
                for (int64_t i = 0; i < n; i++) t += v[i];
            else
                for (int64_t i = 0; i < n; i++) t *= v[i];
            acc->v.u = sum ? acc->v.u + t : acc->v.u * t;
        }
        return;
    }
    if (kind == ND_REDUCE_MIN || kind == ND_REDUCE_MAX) {
        cpu_acc b = identity(kind, adt);
        int mn = kind == ND_REDUCE_MIN;
        if (adt == ND_FLOAT64) {
            const double *v = (const double *)vp;
            double m = b.v.f;
            if (mn)
                for (int64_t i = 0; i < n; i++) m = (v[i] < m || v[i] != v[i]) ? v[i] : m;
            else
                for (int64_t i = 0; i < n; i++) m = (v[i] > m || v[i] != v[i]) ? v[i] : m;
            b.v.f = m;
        } else if (adt == ND_INT64) {
            const int64_t *v = (const int64_t *)vp;
            int64_t m = b.v.i;
            if (mn)
                for (int64_t i = 0; i < n; i++) m = v[i] < m ? v[i] : m;
            else
                for (int64_t i = 0; i < n; i++) m = v[i] > m ? v[i] : m;
            b.v.i = m;
        } else {
            const uint64_t *v = (const uint64_t *)vp;
            uint64_t m = b.v.u;
            if (mn)
                for (int64_t i = 0; i < n; i++) m = v[i] < m ? v[i] : m;
            else
                for (int64_t i = 0; i < n; i++) m = v[i] > m ? v[i] : m;
            b.v.u = m;
        }
        *acc = combine(kind, adt, *acc, b);
        return;
    }
    if (!is_arg(kind)) { /* a kind without a loop of its own above */
        const cpu_val *v = (const cpu_val *)vp;
        for (int64_t i = 0; i < n; i++) *acc = combine(kind, adt, *acc, (cpu_acc){v[i], ibase + i});
        return;
    }
    /* ARGMIN/ARGMAX: sequential scan, a NaN ends it */
    const cpu_val *v = (const cpu_val *)vp;
    if (adt == ND_FLOAT64 && acc->idx >= 0 && acc->v.f != acc->v.f) return;
    for (int64_t i = 0; i < n; i++) {
        cpu_acc b = {v[i], ibase + i};
        if (arg_better(kind, adt, b, *acc)) {
            *acc = b;
            if (adt == ND_FLOAT64 && b.v.f != b.v.f) return;
        }
    }
}

/* ------------------------------------------------------ lane accumulation */

/* lanes op= v[j] for j < n, lanes stored as contiguous values lv and
 * indices li (so the common kinds vectorise); element j has reduced index
 * row0 + j / row_len. f32 != 0: v is float32 to be summed in double. */
static void lane_accum(int kind, int adt, const void *vp, int f32, int64_t n, int64_t row0,
                       int64_t row_len, cpu_val *lv, int64_t *li) {
    if (kind == ND_REDUCE_SUM && f32) {
        const float *v = (const float *)vp;
        double *a = (double *)lv;
        for (int64_t j = 0; j < n; j++) a[j] += (double)v[j];
        return;
    }
    if ((kind == ND_REDUCE_SUM || kind == ND_REDUCE_PROD) && adt == ND_FLOAT64) {
        const double *v = (const double *)vp;
        double *a = (double *)lv;
        if (kind == ND_REDUCE_SUM)
            for (int64_t j = 0; j < n; j++) a[j] += v[j];
        else
            for (int64_t j = 0; j < n; j++) a[j] *= v[j];
        return;
    }
    if ((kind == ND_REDUCE_SUM || kind == ND_REDUCE_PROD) && adt != ND_BOOL) {
        const uint64_t *v = (const uint64_t *)vp;
        uint64_t *a = (uint64_t *)lv;
        if (kind == ND_REDUCE_SUM)
            for (int64_t j = 0; j < n; j++) a[j] += v[j];
        else
            for (int64_t j = 0; j < n; j++) a[j] *= v[j];
        return;
    }
    if ((kind == ND_REDUCE_MIN || kind == ND_REDUCE_MAX) && adt == ND_FLOAT64) {
        const double *v = (const double *)vp;
        double *a = (double *)lv;
        if (kind == ND_REDUCE_MIN)
            for (int64_t j = 0; j < n; j++) a[j] = (v[j] < a[j] || v[j] != v[j] || a[j] != a[j]) ? (a[j] != a[j] ? a[j] : v[j]) : a[j];
        else
            for (int64_t j = 0; j < n; j++) a[j] = (v[j] > a[j] || v[j] != v[j] || a[j] != a[j]) ? (a[j] != a[j] ? a[j] : v[j]) : a[j];
        return;
    }
    for (int64_t j = 0; j < n; j++) {
        cpu_acc b, a = {lv[j], li[j]};
        b.idx = row0 + j / row_len;
        if (adt == ND_BOOL) b.v.u = ((const uint8_t *)vp)[j] != 0;
        else b.v = ((const cpu_val *)vp)[j];
        a = combine(kind, adt, a, b);
        lv[j] = a.v;
        li[j] = a.idx;
    }
}

/* --------------------------------------------------------------- outputs */

static void write_out(const cpu_prep *p, int64_t o, int64_t l, cpu_acc a) {
    int64_t off = p->rout.off;
    int n = p->ndim;
    for (int d = p->nO - 1; d >= 0; d--) {
        off += p->rout.st[d] * (o % p->shape[d]);
        o /= p->shape[d];
    }
    for (int d = n - 1; d >= p->nO + p->nR; d--) {
        off += p->rout.st[d] * (l % p->shape[d]);
        l /= p->shape[d];
    }
    char *dst = p->rout.base + off * p->rout.esize;
    if (is_arg(p->rkind)) {
        int64_t i = a.idx < 0 ? 0 : a.idx;
        p->acc_to_out(dst, &i, NULL, NULL, 1);
    } else if (p->acc_dtype == ND_BOOL) {
        uint8_t b = a.v.u != 0;
        p->acc_to_out(dst, &b, NULL, NULL, 1);
    } else {
        p->acc_to_out(dst, &a.v, NULL, NULL, 1);
    }
}

nd_status nd_cpu_reduce_setup(cpu_prep *p) {
    int vdt = p->insts[p->rvalue].dtype, kind = p->rkind;
    if (nd_reduce_result_of((nd_reduce_kind)kind) == ND_RRES_BOOL) p->acc_dtype = ND_BOOL;
    else if (nd_dtype_is_float((nd_dtype)vdt)) p->acc_dtype = ND_FLOAT64;
    else if (nd_dtype_kind_of((nd_dtype)vdt) == ND_KIND_UINT) p->acc_dtype = ND_UINT64;
    else p->acc_dtype = ND_INT64;
    p->to_acc = vdt != p->acc_dtype ? nd_cpu_cast_fn(vdt, p->acc_dtype) : NULL;
    p->sum_f32 = kind == ND_REDUCE_SUM && vdt == ND_FLOAT32; /* widened inside the sum loops */
    p->acc_to_out = nd_cpu_cast_fn(is_arg(kind) ? ND_INT64 : p->acc_dtype, p->rout.dtype);
    p->O = p->R = p->L = 1;
    for (int d = 0; d < p->ndim; d++) {
        if (d < p->nO) p->O *= p->shape[d];
        else if (d < p->nO + p->nR) p->R *= p->shape[d];
        else p->L *= p->shape[d];
    }
    p->n_items = 0;
    if (p->O == 0 || p->R == 0 || p->L == 0) return ND_OK;
    int64_t R = p->R, L = p->L;
    p->width = 1;
    p->ncol = 1;
    p->rows_per_tile = 1;
    if (L == 1) {
        if (R > ND_CPU_WORK) {
            p->nch = (R + ND_CPU_WORK - 1) / ND_CPU_WORK;
            p->groups_per_item = 1;
            p->n_items = p->O * p->nch;
        } else {
            p->nch = 1;
            p->groups_per_item = ND_CPU_WORK / R;
            if (p->groups_per_item < 1) p->groups_per_item = 1;
            if (p->groups_per_item > p->O) p->groups_per_item = p->O;
            p->n_items = (p->O + p->groups_per_item - 1) / p->groups_per_item;
        }
    } else {
        p->width = L < ND_CPU_TILE ? L : ND_CPU_TILE;
        p->ncol = (L + p->width - 1) / p->width;
        p->rows_per_tile = L <= ND_CPU_TILE ? ND_CPU_TILE / L : 1;
        int64_t m = p->rows_per_tile;
        p->rows_per_item = (ND_CPU_WORK / p->width) / m * m;
        if (p->rows_per_item < m) p->rows_per_item = m;
        p->nch = (R + p->rows_per_item - 1) / p->rows_per_item;
        p->n_items = p->O * p->ncol * p->nch;
    }
    if (p->nch > 1) {
        p->partials = nd_malloc(sizeof(cpu_acc) * (size_t)(p->n_items * p->width));
        if (!p->partials)
            return nd_error_set(ND_ERR_OOM, "cpu backend: out of memory for reduction partials");
    }
    return ND_OK;
}

size_t nd_cpu_reduce_scratch(const cpu_prep *p) {
    size_t accs = p->L == 1 ? (size_t)p->groups_per_item : (size_t)ND_CPU_TILE;
    return (size_t)ND_CPU_TILE * 8 + sizeof(cpu_acc) * accs;
}

static const void *acc_values(const cpu_prep *p, const void **vals, char *buf, int64_t len) {
    const void *v = vals[p->rvalue];
    if (!p->to_acc || p->sum_f32) return v;
    p->to_acc(buf, v, NULL, NULL, len);
    return buf;
}

void nd_cpu_reduce_item(const cpu_prep *p, char *regs, const void **vals, char *scratch,
                        int64_t item) {
    int kind = p->rkind, adt = p->acc_dtype;
    char *abuf = scratch;
    cpu_acc *accs = (cpu_acc *)(scratch + (size_t)ND_CPU_TILE * 8);
    cpu_acc id = identity(kind, adt);
    int64_t R = p->R, L = p->L;
    if (L == 1) {
        if (p->nch > 1) {
            int64_t o = item / p->nch, c = item % p->nch;
            int64_t r0 = c * ND_CPU_WORK, r1 = r0 + ND_CPU_WORK < R ? r0 + ND_CPU_WORK : R;
            cpu_acc a = id;
            comp_sum cs = {0, 0};
            int csum = kind == ND_REDUCE_SUM && adt == ND_FLOAT64;
            for (int64_t r = r0; r < r1; r += ND_CPU_TILE) {
                int64_t len = r1 - r < ND_CPU_TILE ? r1 - r : ND_CPU_TILE;
                nd_cpu_eval_tile(p, regs, vals, o * R + r, len);
                if (p->sum_f32) comp_add(&cs, sum_f((const float *)vals[p->rvalue], len));
                else if (csum) comp_add(&cs, sum_d((const double *)acc_values(p, vals, abuf, len), len));
                else seg_reduce(kind, adt, acc_values(p, vals, abuf, len), len, r, &a);
            }
            if (csum) a.v.f = comp_result(cs);
            p->partials[item] = a;
            return;
        }
        int64_t o0 = item * p->groups_per_item;
        int64_t o1 = o0 + p->groups_per_item < p->O ? o0 + p->groups_per_item : p->O;
        for (int64_t g = 0; g < o1 - o0; g++) accs[g] = id;
        int64_t f1 = o1 * R;
        for (int64_t f = o0 * R; f < f1; f += ND_CPU_TILE) {
            int64_t len = f1 - f < ND_CPU_TILE ? f1 - f : ND_CPU_TILE;
            nd_cpu_eval_tile(p, regs, vals, f, len);
            const char *v = (const char *)acc_values(p, vals, abuf, len);
            size_t es = p->sum_f32 ? 4 : nd_cpu_dtype_size(adt);
            for (int64_t pos = 0; pos < len;) {
                int64_t g = (f + pos) / R, r = (f + pos) % R;
                int64_t seg = R - r < len - pos ? R - r : len - pos;
                if (p->sum_f32) accs[g - o0].v.f += sum_f((const float *)(v + (size_t)pos * es), seg);
                else seg_reduce(kind, adt, v + (size_t)pos * es, seg, r, &accs[g - o0]);
                pos += seg;
            }
        }
        for (int64_t g = o0; g < o1; g++) write_out(p, g, 0, accs[g - o0]);
        return;
    }
    int64_t ch = item % p->nch, cc = (item / p->nch) % p->ncol, o = item / (p->nch * p->ncol);
    int64_t r0 = ch * p->rows_per_item;
    int64_t r1 = r0 + p->rows_per_item < R ? r0 + p->rows_per_item : R;
    int64_t m = p->rows_per_tile;
    int64_t c0 = cc * p->width, wc = L - c0 < p->width ? L - c0 : p->width;
    int64_t nl = L <= ND_CPU_TILE ? m * L : wc;
    cpu_val *lv = (cpu_val *)accs;
    int64_t *li = (int64_t *)(lv + ND_CPU_TILE);
    for (int64_t j = 0; j < nl; j++) lv[j] = id.v, li[j] = -1;
    for (int64_t r = r0; r < r1; r += m) {
        int64_t mt = r1 - r < m ? r1 - r : m;
        int64_t f = (o * R + r) * L + c0, len = L <= ND_CPU_TILE ? mt * L : wc;
        nd_cpu_eval_tile(p, regs, vals, f, len);
        const void *v = p->sum_f32 ? vals[p->rvalue] : acc_values(p, vals, abuf, len);
        lane_accum(kind, adt, v, p->sum_f32, len, r, L <= ND_CPU_TILE ? L : wc, lv, li);
    }
    int64_t nq = L <= ND_CPU_TILE ? m : 1;
    for (int64_t l = 0; l < wc; l++) {
        cpu_acc a = id;
        for (int64_t q = 0; q < nq; q++) {
            cpu_acc b = {lv[q * wc + l], li[q * wc + l]};
            a = combine(kind, adt, a, b);
        }
        if (p->nch > 1) p->partials[item * p->width + l] = a;
        else write_out(p, o, c0 + l, a);
    }
}

void nd_cpu_reduce_finish(const cpu_prep *p) {
    if (p->nch <= 1 || p->n_items == 0) return;
    int kind = p->rkind, adt = p->acc_dtype;
    cpu_acc id = identity(kind, adt);
    if (p->L == 1) {
        int csum = kind == ND_REDUCE_SUM && adt == ND_FLOAT64;
        for (int64_t o = 0; o < p->O; o++) {
            cpu_acc a = id;
            comp_sum cs = {0, 0};
            for (int64_t c = 0; c < p->nch; c++) {
                if (csum) comp_add(&cs, p->partials[o * p->nch + c].v.f);
                else a = combine(kind, adt, a, p->partials[o * p->nch + c]);
            }
            if (csum) a.v.f = comp_result(cs);
            write_out(p, o, 0, a);
        }
        return;
    }
    for (int64_t o = 0; o < p->O; o++)
        for (int64_t cc = 0; cc < p->ncol; cc++) {
            int64_t c0 = cc * p->width, wc = p->L - c0 < p->width ? p->L - c0 : p->width;
            for (int64_t l = 0; l < wc; l++) {
                cpu_acc a = id;
                for (int64_t ch = 0; ch < p->nch; ch++)
                    a = combine(kind, adt, a, p->partials[((o * p->ncol + cc) * p->nch + ch) * p->width + l]);
                write_out(p, o, c0 + l, a);
            }
        }
}

void nd_cpu_reduce_empty(const cpu_prep *p) {
    if (p->O == 0 || p->L == 0 || !p->rout.base) return;
    cpu_acc id = identity(p->rkind, p->acc_dtype);
    for (int64_t o = 0; o < p->O; o++)
        for (int64_t l = 0; l < p->L; l++) write_out(p, o, l, id);
}
