/* nd_einsum lowered to lazy primitives. Each operand becomes a view with
 * one axis per distinct label (a repeated label's axes merge into one
 * whose stride is their sum: the diagonal; a length-1 axis broadcasting
 * against a longer one is dropped), cast to the result dtype (the cast
 * fuses into whatever reads it). Labels no other operand and not the
 * output need are summed out first. Then the operands are contracted in
 * pairs, in the order einsum_path.c chose: a real matrix product (labels
 * on both sides of a shared summed label, enough work) is a batched
 * MATMUL on transposed/reshaped views; anything else is one broadcast
 * multiply over the pair's labels and a sum over the shared ones, which
 * the scheduler fuses into one kernel that never stores the products. The
 * last operand is transposed into the output order by a view. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/dtype.h"
#include "frontend/compose.h"
#include "frontend/einsum_internal.h"
#include "frontend/reduction.h"
#include "nd/einsum.h"

typedef struct {
    nd_array *a; /* owned; axis d carries label lab[d] */
    int nl;
    int8_t lab[ND_EIN_MAX_LABELS];
} ein_op;

static nd_ein_set op_set(const ein_op *o) {
    nd_ein_set set = 0;
    for (int d = 0; d < o->nl; d++) set |= (nd_ein_set)1 << o->lab[d];
    return set;
}

static void op_release(ein_op *o) {
    if (o->a) nd_fe_release(o->a);
    o->a = NULL;
}

/* Replaces o->a by next (a new reference, or NULL on failure). */
static int op_replace(ein_op *o, nd_array *next) {
    nd_fe_release(o->a);
    o->a = next;
    return next ? 0 : -1;
}

/* x in dtype rt, consuming x's reference. */
static nd_array *in_dtype(const char *fn, nd_array *x, nd_dtype rt) {
    if (!x || x->dtype == rt) return x;
    nd_array *c = nd_fe_astype(fn, x, rt);
    nd_fe_release(x);
    return c;
}

/* Operand k as a view with one axis per label it carries, in rt. */
static int operand_view(const char *fn, const nd_ein_spec *s, int k, nd_array *a, nd_dtype rt, ein_op *o) {
    int64_t shape[ND_MAX_DIMS], strides[ND_MAX_DIMS];
    o->nl = 0;
    for (int d = 0; d < a->ndim; d++) {
        const int l = s->label[k][d];
        if (!(s->set[k] >> l & 1)) continue; /* a broadcast length-1 axis */
        int j = 0;
        while (j < o->nl && o->lab[j] != l) j++;
        if (j == o->nl) {
            o->lab[o->nl] = (int8_t)l, shape[o->nl] = a->shape[d], strides[o->nl++] = 0;
        }
        strides[j] += a->strides[d];
    }
    o->a = in_dtype(fn, nd_fe_restride(fn, a, o->nl, shape, strides, a->offset), rt);
    return o->a ? 0 : -1;
}

/* Sums o over its labels outside keep. */
static int reduce_to(const char *fn, ein_op *o, nd_ein_set keep, nd_dtype rt) {
    uint32_t mask = 0;
    int nl = 0;
    for (int d = 0; d < o->nl; d++) {
        if (keep >> o->lab[d] & 1) o->lab[nl++] = o->lab[d];
        else mask |= 1u << d;
    }
    if (!mask) return 0;
    o->nl = nl;
    /* sum widens bool and small integers; NumPy's einsum keeps the common
     * dtype (wrapping sums agree modulo the width; bool: a nonzero count). */
    return op_replace(o, in_dtype(fn, nd_fe_reduce_mask(fn, ND_REDUCE_SUM, o->a, mask, 0, NULL), rt));
}

/* A view of o with axes in `order` (nlab labels); a label o lacks gets a
 * broadcast axis (stride 0). */
static nd_array *view_in_order(const nd_ein_spec *s, const ein_op *o, int nlab, const int8_t *order) {
    int64_t shape[ND_MAX_DIMS], strides[ND_MAX_DIMS];
    for (int i = 0; i < nlab; i++) {
        shape[i] = s->size[order[i]];
        strides[i] = 0;
        for (int d = 0; d < o->nl; d++)
            if (o->lab[d] == order[i]) strides[i] = o->a->strides[d];
    }
    return nd_fe_view(o->a, nlab, shape, strides, o->a->offset);
}

/* Appends o's labels in `set` to order, in o's axis order. */
static int append_labels(const ein_op *o, nd_ein_set set, int8_t *order, int n) {
    for (int d = 0; d < o->nl; d++)
        if (set >> o->lab[d] & 1) order[n++] = o->lab[d];
    return n;
}

static int64_t product_of(const nd_ein_spec *s, const int8_t *labels, int n) {
    int64_t p = 1;
    for (int i = 0; i < n; i++) p *= s->size[labels[i]];
    return p;
}

/* (batch..., a-only..., b-only...) = sum over con of a * b, as one MATMUL:
 * a viewed (batch..., M, K), b (batch..., K, N). */
static nd_array *matmul_pair(const char *fn, const nd_ein_spec *s, const ein_op *A, const ein_op *B, int nb,
                             const int8_t *batch, int nm, const int8_t *am, int nk, const int8_t *con, int nn,
                             const int8_t *bn) {
    int8_t oa[ND_EIN_MAX_LABELS], ob[ND_EIN_MAX_LABELS];
    memcpy(oa, batch, (size_t)nb), memcpy(oa + nb, am, (size_t)nm), memcpy(oa + nb + nm, con, (size_t)nk);
    memcpy(ob, batch, (size_t)nb), memcpy(ob + nb, con, (size_t)nk), memcpy(ob + nb + nk, bn, (size_t)nn);
    /* Batch axes stay separate (a strided batch needs no copy) unless too
     * many for the matmul's dimensions. */
    int64_t sa[ND_MAX_DIMS], sb[ND_MAX_DIMS], so[ND_MAX_DIMS];
    int nbd = nb;
    if (nb > ND_MAX_DIMS - 2) {
        nbd = 1;
        sa[0] = sb[0] = product_of(s, batch, nb);
    } else {
        for (int i = 0; i < nb; i++) sa[i] = sb[i] = s->size[batch[i]];
    }
    const int64_t m = product_of(s, am, nm), k = product_of(s, con, nk), n = product_of(s, bn, nn);
    sa[nbd] = m, sa[nbd + 1] = k, sb[nbd] = k, sb[nbd + 1] = n;
    nd_array *va = NULL, *vb = NULL, *ra = NULL, *rb = NULL, *mm = NULL, *out = NULL;
    /* A contraction over many axes may exceed ND_MAX_DIMS before the
     * reshape; the views then go through two steps: batch + am, then con. */
    if (nb + nm + nk <= ND_MAX_DIMS && nb + nk + nn <= ND_MAX_DIMS) {
        va = view_in_order(s, A, nb + nm + nk, oa);
        vb = view_in_order(s, B, nb + nk + nn, ob);
    } else {
        nd_error_set(ND_ERR_UNSUPPORTED, "%s: a pairwise contraction over %d axes exceeds %d dimensions", fn,
                     nb + nm + nk > nb + nk + nn ? nb + nm + nk : nb + nk + nn, ND_MAX_DIMS);
        return NULL;
    }
    if (va && vb) ra = nd_fe_reshape(fn, va, nbd + 2, sa);
    if (ra) rb = nd_fe_reshape(fn, vb, nbd + 2, sb);
    if (rb) mm = nd_fe_matmul(fn, ra, rb);
    if (mm) {
        int no = 0;
        for (int i = 0; i < nb; i++) so[no++] = s->size[batch[i]];
        for (int i = 0; i < nm; i++) so[no++] = s->size[am[i]];
        for (int i = 0; i < nn; i++) so[no++] = s->size[bn[i]];
        out = nd_fe_reshape(fn, mm, no, so);
    }
    nd_array *tmp[5] = {va, vb, ra, rb, mm};
    for (int i = 0; i < 5; i++)
        if (tmp[i]) nd_fe_release(tmp[i]);
    return out;
}

/* Contracts A and B (both consumed) into *C, keeping the labels in keep. */
static int contract_pair(const char *fn, const nd_ein_spec *s, nd_dtype rt, ein_op *A, ein_op *B, nd_ein_set keep,
                         ein_op *C) {
    C->a = NULL;
    if (reduce_to(fn, A, keep | op_set(B), rt) || reduce_to(fn, B, keep | op_set(A), rt)) return -1;
    const nd_ein_set a = op_set(A), b = op_set(B);
    const nd_ein_set con = a & b & ~keep, batch = a & b & keep;
    int8_t lb[ND_EIN_MAX_LABELS], lm[ND_EIN_MAX_LABELS], ln[ND_EIN_MAX_LABELS], lk[ND_EIN_MAX_LABELS];
    const int nb = append_labels(A, batch, lb, 0), nm = append_labels(A, a & ~b, lm, 0);
    const int nn = append_labels(B, b & ~a, ln, 0), nk = append_labels(A, con, lk, 0);
    C->nl = 0;
    C->nl = append_labels(A, batch, C->lab, C->nl);
    C->nl = append_labels(A, a & ~b, C->lab, C->nl);
    C->nl = append_labels(B, b & ~a, C->lab, C->nl);
    if (nd_ein_uses_matmul(s, rt, a, b, keep)) {
        C->a = matmul_pair(fn, s, A, B, nb, lb, nm, lm, nk, lk, nn, ln);
        return C->a ? 0 : -1;
    }
    /* One broadcast multiply over (batch, a-only, b-only, con) and a sum
     * over con: fused into one kernel. */
    const int nall = C->nl + nk;
    if (nall > ND_MAX_DIMS) {
        nd_error_set(ND_ERR_UNSUPPORTED, "%s: a %s contraction over %d labels exceeds %d dimensions (nd's matmul "
                     "has no %s yet)", fn, nd_dtype_name(rt), nall, ND_MAX_DIMS, nd_dtype_name(rt));
        return -1;
    }
    int8_t order[ND_EIN_MAX_LABELS];
    memcpy(order, C->lab, (size_t)C->nl), memcpy(order + C->nl, lk, (size_t)nk);
    nd_array *va = view_in_order(s, A, nall, order), *vb = va ? view_in_order(s, B, nall, order) : NULL;
    nd_array *prod = vb ? nd_fe_binary(fn, ND_OP_MUL, va, vb) : NULL;
    if (va) nd_fe_release(va);
    if (vb) nd_fe_release(vb);
    if (!prod || !nk) {
        C->a = prod;
        return prod ? 0 : -1;
    }
    const uint32_t mask = (uint32_t)(((1u << nk) - 1u) << C->nl);
    C->a = in_dtype(fn, nd_fe_reduce_mask(fn, ND_REDUCE_SUM, prod, mask, 0, NULL), rt);
    nd_fe_release(prod);
    return C->a ? 0 : -1;
}

static int check_args(const char *fn, const char *subs, int n, nd_array *const *ops) {
    if (!subs) {
        nd_error_set(ND_ERR_ARG, "%s: subscripts is NULL (give a string such as \"ij,jk->ik\")", fn);
        return -1;
    }
    if (n < 1 || n > ND_EIN_MAX_OPERANDS || !ops) {
        nd_error_set(ND_ERR_ARG, "%s: %d operands%s (give 1..%d)", fn, n, ops ? "" : " in a NULL list",
                     ND_EIN_MAX_OPERANDS);
        return -1;
    }
    for (int k = 0; k < n; k++) {
        char name[32];
        snprintf(name, sizeof name, "operands[%d]", k);
        if (nd_fe_arg(fn, name, ops[k])) return -1;
    }
    return nd_runtime_ensure() == ND_OK ? 0 : -1;
}

static int first_in_output(const nd_ein_spec *s, nd_ein_set set) {
    for (int i = 0; i < s->nout; i++)
        if (set >> s->out[i] & 1) return i;
    return s->nout;
}

static nd_dtype result_dtype(int n, nd_array *const *ops) {
    nd_dtype rt = ops[0]->dtype;
    for (int k = 1; k < n; k++) rt = nd_promote(rt, ops[k]->dtype);
    return rt;
}

static nd_array *einsum_impl(const char *fn, const char *subs, int n, nd_array *const *ops,
                             const nd_einsum_options *opt) {
    nd_ein_spec s;
    nd_ein_path p;
    if (check_args(fn, subs, n, ops) || nd_ein_parse(fn, subs, n, ops, &s) ||
        nd_ein_plan(fn, &s, opt ? (int)opt->optimize : ND_EINSUM_AUTO, &p))
        return NULL;
    const nd_dtype rt = result_dtype(n, ops);
    ein_op list[ND_EIN_MAX_OPERANDS];
    int nlist = 0, failed = 0;
    for (int k = 0; k < n && !failed; k++) {
        failed = operand_view(fn, &s, k, ops[k], rt, &list[k]);
        nlist += !failed;
    }
    /* Labels only one operand has, summed before any pairing. */
    for (int k = 0; k < nlist && !failed; k++)
        failed = reduce_to(fn, &list[k], nd_ein_kept(&s, s.set, n, 1ull << k), rt);
    for (int st = 0; st < p.nsteps && !failed; st++) {
        const int i = p.pair[st][0], j = p.pair[st][1];
        ein_op A = list[i], B = list[j], C;
        /* The result's axes are (batch, A's own, B's own): the operand whose
         * own labels come first in the output goes first, so that the last
         * step writes the output in its order rather than a transpose. */
        const nd_ein_set sa = op_set(&A), sb = op_set(&B);
        if (first_in_output(&s, sb & ~sa) < first_in_output(&s, sa & ~sb)) {
            ein_op t = A;
            A = B, B = t;
        }
        memmove(&list[j], &list[j + 1], sizeof(ein_op) * (size_t)(nlist - j - 1));
        memmove(&list[i], &list[i + 1], sizeof(ein_op) * (size_t)(nlist - i - 2));
        nlist -= 2;
        failed = contract_pair(fn, &s, rt, &A, &B, p.result[st], &C);
        op_release(&A), op_release(&B);
        if (!failed) list[nlist++] = C;
    }
    nd_array *out = NULL;
    if (!failed && reduce_to(fn, &list[0], s.out_set, rt) == 0) {
        int64_t shape[ND_MAX_DIMS], strides[ND_MAX_DIMS];
        for (int i = 0; i < s.nout; i++) {
            shape[i] = s.size[s.out[i]];
            strides[i] = 0;
            for (int d = 0; d < list[0].nl; d++)
                if (list[0].lab[d] == s.out[i]) strides[i] = list[0].a->strides[d];
        }
        out = nd_fe_view(list[0].a, s.nout, shape, strides, list[0].a->offset);
    }
    for (int k = 0; k < nlist; k++) op_release(&list[k]);
    return out;
}

nd_array *nd_einsum(const char *subscripts, int n, nd_array *const *operands) {
    ND_API_GUARD();
    return nd_runtime_track(einsum_impl("nd_einsum", subscripts, n, operands, NULL));
}

nd_array *nd_einsum_ex(const char *subscripts, int n, nd_array *const *operands, const nd_einsum_options *opt) {
    ND_API_GUARD();
    return nd_runtime_track(einsum_impl("nd_einsum_ex", subscripts, n, operands, opt));
}

/* ------------------------------------------------------------ the report */

static void labels_text(const nd_ein_spec *s, nd_ein_set set, const int8_t *order, int norder, char *buf,
                        size_t cap) {
    size_t w = 0;
    int ell = 0;
    for (int i = 0; i < norder && w + 4 < cap; i++) {
        const int l = order[i];
        if (!(set >> l & 1)) continue;
        if (l >= ND_EIN_LETTERS) {
            if (!ell) buf[w++] = '.', buf[w++] = '.', buf[w++] = '.';
            ell = 1;
            continue;
        }
        buf[w++] = (char)(l < 26 ? 'A' + l : 'a' + (l - 26));
    }
    buf[w] = '\0';
    (void)s;
}

typedef struct {
    char *buf;
    size_t cap, w;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...) {
    if (!t->buf || t->w + 1 >= t->cap) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(t->buf + t->w, t->cap - t->w, fmt, ap);
    va_end(ap);
    if (k > 0) t->w = t->w + (size_t)k < t->cap ? t->w + (size_t)k : t->cap - 1;
}

/* NumPy's einsum_path table, with each step's lowering. */
static void write_report(const char *subs, const nd_ein_spec *s, const nd_ein_path *p, nd_dtype rt, text *t) {
    /* Labels in a stable print order: letters as they first appear, then '...'. */
    int8_t order[ND_EIN_MAX_LABELS];
    int norder = 0;
    nd_ein_set seen = 0;
    for (int k = 0; k < s->n; k++)
        for (int d = 0; d < s->ndim[k]; d++) {
            const int l = s->label[k][d];
            if (!(seen >> l & 1)) seen |= (nd_ein_set)1 << l, order[norder++] = (int8_t)l;
        }
    nd_ein_set all = 0, sets[ND_EIN_MAX_OPERANDS];
    int scaling_naive = 0, scaling_opt = 0;
    for (int k = 0; k < s->n; k++) all |= s->set[k];
    scaling_naive = __builtin_popcountll(all);
    for (int k = 0; k < s->n; k++) sets[k] = nd_ein_kept(s, s->set, s->n, 1ull << k);
    nd_ein_set step_all[ND_EIN_MAX_OPERANDS];
    int nsets = s->n;
    for (int st = 0; st < p->nsteps; st++) {
        step_all[st] = sets[p->pair[st][0]] | sets[p->pair[st][1]];
        const int sc = __builtin_popcountll(step_all[st]);
        if (sc > scaling_opt) scaling_opt = sc;
        const int i = p->pair[st][0], j = p->pair[st][1];
        memmove(&sets[j], &sets[j + 1], sizeof(nd_ein_set) * (size_t)(nsets - j - 1));
        memmove(&sets[i], &sets[i + 1], sizeof(nd_ein_set) * (size_t)(nsets - i - 2));
        nsets -= 2;
        sets[nsets++] = p->result[st];
    }
    if (p->nsteps == 0) scaling_opt = scaling_naive;
    put(t, "  Complete contraction:  %s\n", subs);
    put(t, "         Naive scaling:  %d\n", scaling_naive);
    put(t, "     Optimized scaling:  %d\n", scaling_opt);
    put(t, "      Naive FLOP count:  %.3e\n", p->naive_flops);
    put(t, "  Optimized FLOP count:  %.3e\n", p->flops);
    put(t, "   Theoretical speedup:  %.3f\n", p->flops > 0 ? p->naive_flops / p->flops : 1.0);
    put(t, "  Largest intermediate:  %.3e elements\n", p->largest);
    put(t, "--------------------------------------------------------------------------------\n");
    put(t, "scaling   lowering   current                          remaining\n");
    put(t, "--------------------------------------------------------------------------------\n");
    nsets = s->n;
    for (int k = 0; k < s->n; k++) sets[k] = nd_ein_kept(s, s->set, s->n, 1ull << k);
    for (int st = 0; st < p->nsteps; st++) {
        const int i = p->pair[st][0], j = p->pair[st][1];
        char a[72], b[72], r[72], cur[240], rem[600];
        labels_text(s, sets[i], order, norder, a, sizeof a);
        labels_text(s, sets[j], order, norder, b, sizeof b);
        labels_text(s, p->result[st], order, norder, r, sizeof r);
        const int mm = nd_ein_uses_matmul(s, rt, sets[i], sets[j], p->result[st]);
        snprintf(cur, sizeof cur, "%s,%s->%s", a, b, r);
        memmove(&sets[j], &sets[j + 1], sizeof(nd_ein_set) * (size_t)(nsets - j - 1));
        memmove(&sets[i], &sets[i + 1], sizeof(nd_ein_set) * (size_t)(nsets - i - 2));
        nsets -= 2;
        sets[nsets++] = p->result[st];
        size_t w = 0;
        for (int k = 0; k < nsets && w + 80 < sizeof rem; k++) {
            char x[72];
            labels_text(s, sets[k], order, norder, x, sizeof x);
            w += (size_t)snprintf(rem + w, sizeof rem - w, "%s%s", k ? "," : "", x);
        }
        char o[72];
        labels_text(s, s->out_set, s->out, s->nout, o, sizeof o);
        snprintf(rem + w, sizeof rem - w, "->%s", o);
        put(t, "%4d      %-9s  %-32s %s\n", __builtin_popcountll(step_all[st]), mm ? "matmul" : "fused", cur,
            rem);
    }
}

nd_status nd_einsum_path(const char *subscripts, int n, nd_array *const *operands, const nd_einsum_options *opt,
                         int (*path)[2], int *nsteps, double *flops, char *report, size_t report_size) {
    ND_API_GUARD();
    static const char fn[] = "nd_einsum_path";
    nd_ein_spec s;
    nd_ein_path p;
    if (report && report_size) report[0] = '\0';
    if (check_args(fn, subscripts, n, operands) || nd_ein_parse(fn, subscripts, n, operands, &s) ||
        nd_ein_plan(fn, &s, opt ? (int)opt->optimize : ND_EINSUM_AUTO, &p))
        return nd_last_status();
    if (path)
        for (int k = 0; k < p.nsteps; k++) path[k][0] = p.pair[k][0], path[k][1] = p.pair[k][1];
    if (nsteps) *nsteps = p.nsteps;
    if (flops) *flops = p.flops;
    text t = {report, report_size, 0};
    if (report && report_size) write_report(subscripts, &s, &p, result_dtype(n, operands), &t);
    return ND_OK;
}
