/* nd_einsum's contraction order. The cost of contracting two operands is
 * numpy.einsum_path's: the number of index combinations of their joint
 * labels, doubled when the step sums some label away. Small problems are
 * searched exactly by a dynamic programme over operand subsets (every
 * contraction tree, not only left-deep ones: O(3^n), so up to 12
 * operands), larger ones greedily as numpy's 'greedy' does. No order may
 * make an intermediate of more than ND_MAX_DIMS dimensions. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "frontend/einsum_internal.h"

/* OPTIMAL searches every tree up to this many operands; AUTO up to 8. */
#define OPTIMAL_MAX 12
#define AUTO_OPTIMAL_MAX 8
/* Below this many multiply-adds a contraction stays one fused kernel: a
 * library call and its materialised operands cost more than they save. */
#define MATMUL_MIN_FLOPS 32768.0

double nd_ein_volume(const nd_ein_spec *s, nd_ein_set set) {
    double v = 1;
    for (int l = 0; l < ND_EIN_MAX_LABELS; l++)
        if (set >> l & 1) v *= (double)s->size[l];
    return v;
}

nd_ein_set nd_ein_kept(const nd_ein_spec *s, const nd_ein_set *sets, int nsets, uint64_t members) {
    nd_ein_set in = 0, outside = s->out_set;
    for (int k = 0; k < nsets; k++) {
        if (members >> k & 1) in |= sets[k];
        else outside |= sets[k];
    }
    return in & outside;
}

static int popcount64(uint64_t x) { return __builtin_popcountll(x); }

int nd_ein_uses_matmul(const nd_ein_spec *s, nd_dtype dt, nd_ein_set a, nd_ein_set b, nd_ein_set keep) {
    a &= keep | b, b &= keep | a;
    const nd_ein_set con = a & b & ~keep, am = a & ~b, bn = b & ~a;
    (void)dt; /* every dtype has a matmul (complex: c/zgemm) */
    if (!con) return 0;
    if (popcount64(a | b) > ND_MAX_DIMS) return 1; /* too many axes for one broadcast */
    const double m = nd_ein_volume(s, am), n = nd_ein_volume(s, bn), k = nd_ein_volume(s, con);
    const double batch = nd_ein_volume(s, a & b & keep);
    return m >= 2 && n >= 2 && k >= 1 && batch * m * n * k >= MATMUL_MIN_FLOPS;
}

static double step_flops(const nd_ein_spec *s, nd_ein_set a, nd_ein_set b, nd_ein_set result) {
    const nd_ein_set all = a | b;
    return nd_ein_volume(s, all) * ((all & ~result) ? 2.0 : 1.0);
}

/* Records a step contracting the operand groups t and r (member masks) in
 * list positions, as numpy lists them. */
typedef struct {
    uint64_t list[ND_EIN_MAX_OPERANDS];
    int nlist;
} group_list;

static void add_step(const nd_ein_spec *s, group_list *g, nd_ein_path *p, uint64_t t, uint64_t r) {
    int it = -1, ir = -1;
    for (int i = 0; i < g->nlist; i++) {
        if (g->list[i] == t) it = i;
        if (g->list[i] == r) ir = i;
    }
    const int lo = it < ir ? it : ir, hi = it < ir ? ir : it;
    const int k = p->nsteps++;
    p->pair[k][0] = lo, p->pair[k][1] = hi;
    memmove(&g->list[hi], &g->list[hi + 1], sizeof(uint64_t) * (size_t)(g->nlist - hi - 1));
    memmove(&g->list[lo], &g->list[lo + 1], sizeof(uint64_t) * (size_t)(g->nlist - lo - 2));
    g->nlist -= 2;
    g->list[g->nlist++] = t | r;
    const nd_ein_set kt = nd_ein_kept(s, s->set, s->n, t), kr = nd_ein_kept(s, s->set, s->n, r);
    p->result[k] = nd_ein_kept(s, s->set, s->n, t | r);
    p->flops += step_flops(s, kt, kr, p->result[k]);
    const double v = nd_ein_volume(s, p->result[k]);
    if (v > p->largest) p->largest = v;
}

/* ---- exact search over subsets */
typedef struct {
    double *cost;
    uint32_t *split;
} dp_tables;

static void emit_tree(const nd_ein_spec *s, const dp_tables *d, uint32_t set, group_list *g, nd_ein_path *p) {
    if ((set & (set - 1)) == 0) return;
    const uint32_t t = d->split[set], r = set ^ t;
    emit_tree(s, d, t, g, p);
    emit_tree(s, d, r, g, p);
    add_step(s, g, p, t, r);
}

static int plan_optimal(const char *fn, const nd_ein_spec *s, nd_ein_path *p, group_list *g) {
    const int n = s->n;
    const uint32_t full = (uint32_t)((1u << n) - 1u);
    dp_tables d;
    d.cost = nd_malloc(sizeof(double) << n);
    d.split = nd_malloc(sizeof(uint32_t) << n);
    nd_ein_set *kept = nd_malloc(sizeof(nd_ein_set) << n);
    if (!d.cost || !d.split || !kept) {
        free(d.cost), free(d.split), free(kept);
        nd_error_set(ND_ERR_OOM, "%s: out of host memory planning the contraction order", fn);
        return -1;
    }
    for (uint32_t set = 1; set <= full; set++) {
        kept[set] = nd_ein_kept(s, s->set, n, set);
        d.cost[set] = (set & (set - 1)) == 0 ? 0.0 : INFINITY;
        d.split[set] = 0;
    }
    /* Subsets in increasing order: every proper subset comes first. */
    for (uint32_t set = 1; set <= full; set++) {
        if ((set & (set - 1)) == 0) continue;
        if (popcount64(kept[set]) > ND_MAX_DIMS) continue;
        const uint32_t low = set & (~set + 1u);
        for (uint32_t t = (set - 1) & set; t; t = (t - 1) & set) {
            if (!(t & low)) continue; /* each split once: t holds the lowest member */
            const uint32_t r = set ^ t;
            const double c = d.cost[t] + d.cost[r];
            if (!(c < INFINITY)) continue;
            const double total = c + step_flops(s, kept[t], kept[r], kept[set]);
            if (total < d.cost[set]) d.cost[set] = total, d.split[set] = t;
        }
    }
    int ok = d.cost[full] < INFINITY;
    if (ok) emit_tree(s, &d, full, g, p);
    free(d.cost), free(d.split), free(kept);
    if (!ok) {
        nd_error_set(ND_ERR_SHAPE, "%s: every contraction order needs an intermediate of more than %d dimensions",
                     fn, ND_MAX_DIMS);
        return -1;
    }
    return 0;
}

/* ---- greedy: the pair whose result is smallest against its inputs,
 * among pairs that share a label (any pair when none do). */
static int plan_greedy(const char *fn, const nd_ein_spec *s, nd_ein_path *p, group_list *g) {
    while (g->nlist > 1) {
        int bi = -1, bj = -1, best_shares = 0;
        double best_score = INFINITY, best_flops = INFINITY;
        for (int i = 0; i < g->nlist; i++)
            for (int j = i + 1; j < g->nlist; j++) {
                const nd_ein_set a = nd_ein_kept(s, s->set, s->n, g->list[i]);
                const nd_ein_set b = nd_ein_kept(s, s->set, s->n, g->list[j]);
                const nd_ein_set c = nd_ein_kept(s, s->set, s->n, g->list[i] | g->list[j]);
                if (popcount64(c) > ND_MAX_DIMS) continue;
                const int shares = (a & b) != 0;
                const double score = nd_ein_volume(s, c) - nd_ein_volume(s, a) - nd_ein_volume(s, b);
                const double f = step_flops(s, a, b, c);
                if (bi >= 0 && (shares < best_shares ||
                                (shares == best_shares && (score > best_score ||
                                                           (score == best_score && f >= best_flops)))))
                    continue;
                bi = i, bj = j, best_shares = shares, best_score = score, best_flops = f;
            }
        if (bi < 0) {
            nd_error_set(ND_ERR_SHAPE, "%s: every next contraction needs an intermediate of more than %d "
                         "dimensions", fn, ND_MAX_DIMS);
            return -1;
        }
        add_step(s, g, p, g->list[bi], g->list[bj]);
    }
    return 0;
}

static int plan_left(const char *fn, const nd_ein_spec *s, nd_ein_path *p, group_list *g) {
    uint64_t acc = 1;
    for (int k = 1; k < s->n; k++) {
        if (popcount64(nd_ein_kept(s, s->set, s->n, acc | (1ull << k))) > ND_MAX_DIMS) {
            nd_error_set(ND_ERR_SHAPE, "%s: contracting left to right, the result of the first %d operands would "
                         "have more than %d dimensions (use ND_EINSUM_AUTO)", fn, k + 1, ND_MAX_DIMS);
            return -1;
        }
        add_step(s, g, p, acc, 1ull << k);
        acc |= 1ull << k;
    }
    return 0;
}

int nd_ein_plan(const char *fn, const nd_ein_spec *s, int optimize, nd_ein_path *p) {
    memset(p, 0, sizeof *p);
    group_list g = {.nlist = s->n};
    for (int k = 0; k < s->n; k++) g.list[k] = 1ull << k;
    nd_ein_set all = 0;
    for (int k = 0; k < s->n; k++) all |= s->set[k];
    p->naive_flops = nd_ein_volume(s, all) * ((s->n > 1 ? s->n - 1 : 1) + (all & ~s->out_set ? 1 : 0));
    if (s->n == 1) {
        p->flops = nd_ein_volume(s, all) * (all & ~s->out_set ? 2.0 : 1.0);
        p->largest = nd_ein_volume(s, s->out_set);
        return 0;
    }
    switch (optimize) {
    case ND_EINSUM_LEFT: return plan_left(fn, s, p, &g);
    case ND_EINSUM_GREEDY: return plan_greedy(fn, s, p, &g);
    case ND_EINSUM_OPTIMAL:
        return s->n <= OPTIMAL_MAX ? plan_optimal(fn, s, p, &g) : plan_greedy(fn, s, p, &g);
    default:
        return s->n <= AUTO_OPTIMAL_MAX ? plan_optimal(fn, s, p, &g) : plan_greedy(fn, s, p, &g);
    }
}
