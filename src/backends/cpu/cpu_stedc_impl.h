/* The divide-and-conquer tridiagonal eigensolver of cpu_stedc.c for one
 * real type. cpu_stedc.c includes this file once per type, with
 *   R           the element type (float, double)
 *   FN(name)    name with the type's suffix
 *   LA(name)    LAPACK's routine of that type (s or d prefix)
 *   LAE(name)   LAPACKE's *_work function of that type
 *   CB(name)    CBLAS's function of that type
 *   EPS_HALF    LAPACK's dlamch('Epsilon'): the unit roundoff
 *   RSQRT, RABS, RSIGN  sqrt, fabs and copysign in R (as Fortran's, with
 *               no rounding through double)
 * Indices stored for LAPACK (indxq, indx) are 1-based, as LAPACK's. */

/* dlaed2, dlaed4 and dlamrg: Fortran symbols without character arguments. */
void LA(laed2_)(lapack_int *k, const lapack_int *n, const lapack_int *n1, R *d, R *q, const lapack_int *ldq,
                lapack_int *indxq, R *rho, R *z, R *dlamda, R *w, R *q2, lapack_int *indx, lapack_int *indxc,
                lapack_int *indxp, lapack_int *coltyp, lapack_int *info);
void LA(laed4_)(const lapack_int *n, const lapack_int *i, const R *d, const R *z, R *delta, const R *rho, R *dlam,
                lapack_int *info);
void LA(lamrg_)(const lapack_int *n1, const lapack_int *n2, const R *a, const lapack_int *dtrd1,
                const lapack_int *dtrd2, lapack_int *index);

/* dlanst('M'): the largest magnitude of d[0, n) and e[0, n - 1), NaN if
 * any is (LAPACKE has no lanst). */
static R FN(max_abs)(lapack_int n, const R *d, const R *e) {
    R m = 0;
    for (lapack_int i = 0; i < 2 * n - 1; i++) {
        R v = RABS(i < n ? d[i] : e[i - n]);
        if (m < v || v != v) m = v;
    }
    return m;
}

/* One merge's secular equation and vectors (dlaed3's steps, split into
 * parts: roots, the updated z, the vectors' columns, the products). */
typedef struct {
    nd_cpu_state *st;
    int serial;              /* inside a pool part already: steps run in this thread */
    lapack_int k, n, n1, ldq;
    R *d, *q, *dlamda, *w, *z0, *q2, *s12, *s23, *scratch, rho;
    const lapack_int *indx, *ctot;
    int info;                /* a root that did not converge */
} FN(merge_job);

static void FN(run)(FN(merge_job) * m, int parts, void (*fn)(void *, int)) {
    if (m->serial || parts == 1)
        for (int p = 0; p < parts; p++) fn(m, p);
    else
        nd_cpu_run_parts(m->st, parts, fn, m);
}

/* Roots j of the secular equation: d[j] and column j of Q (dlaed4's delta). */
static void FN(roots)(void *arg, int p) {
    FN(merge_job) *m = arg;
    lapack_int b, e;
    stedc_span(m->k, STEDC_ROOTS, p, &b, &e);
    for (lapack_int j = b; j < e; j++) {
        lapack_int j1 = j + 1, info = 0;
        LA(laed4_)(&m->k, &j1, m->dlamda, m->w, m->q + (size_t)j * m->ldq, &m->rho, m->d + j, &info);
        if (info) __atomic_store_n(&m->info, (int)info, __ATOMIC_RELAXED);
    }
}

/* The updated z (Gu and Eisenstat's), rows [b, e): each row's product in
 * dlaed3's order (columns ascending), so its bits do not depend on the
 * split; z0 holds the old z, whose signs it keeps. */
static void FN(update_z)(void *arg, int p) {
    FN(merge_job) *m = arg;
    lapack_int b, e;
    stedc_span(m->k, STEDC_ROWS, p, &b, &e);
    R acc[STEDC_ROWS];
    for (lapack_int i = b; i < e; i++) acc[i - b] = m->q[i + (size_t)i * m->ldq];
    for (lapack_int j = 0; j < m->k; j++) {
        const R *qj = m->q + (size_t)j * m->ldq;
        for (lapack_int i = b; i < e; i++)
            if (i != j) acc[i - b] = acc[i - b] * (qj[i] / (m->dlamda[i] - m->dlamda[j]));
    }
    for (lapack_int i = b; i < e; i++) m->w[i] = RSIGN(RSQRT(-acc[i - b]), m->z0[i]);
}

/* Vectors [b, e) of the rank-one modified system, normalised, rows put
 * back in Q's order (dlaed3's indx). */
static void FN(vectors)(void *arg, int p) {
    FN(merge_job) *m = arg;
    lapack_int b, e;
    stedc_span(m->k, STEDC_ROOTS, p, &b, &e);
    R *s = m->scratch + (size_t)p * m->k;
    for (lapack_int j = b; j < e; j++) {
        R *qj = m->q + (size_t)j * m->ldq;
        for (lapack_int i = 0; i < m->k; i++) s[i] = m->w[i] / qj[i];
        R nrm = CB(nrm2)((int)m->k, s, 1);
        for (lapack_int i = 0; i < m->k; i++) qj[i] = s[m->indx[i] - 1] / nrm;
    }
}

/* Columns [b, e) of the merged vectors: the two halves' products. */
static void FN(products)(void *arg, int p) {
    FN(merge_job) *m = arg;
    lapack_int b, e;
    stedc_span(m->k, STEDC_PANEL, p, &b, &e);
    const lapack_int n1 = m->n1, n2 = m->n - m->n1, n12 = m->ctot[0] + m->ctot[1], n23 = m->ctot[1] + m->ctot[2];
    const int w = (int)(e - b);
    /* this panel's columns of the new vectors' rows, before its products
     * overwrite them (each panel reads and writes its own columns only) */
    LAE(lacpy)(LAPACK_COL_MAJOR, 'A', n23, w, m->q + m->ctot[0] + (size_t)b * m->ldq, m->ldq, m->s23 + (size_t)b * n23,
               n23 ? n23 : 1);
    LAE(lacpy)(LAPACK_COL_MAJOR, 'A', n12, w, m->q + (size_t)b * m->ldq, m->ldq, m->s12 + (size_t)b * n12,
               n12 ? n12 : 1);
    if (n23)
        CB(gemm)(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)n2, w, (int)n23, 1, m->q2 + (size_t)n1 * n12, (int)n2,
                 m->s23 + (size_t)b * n23, (int)n23, 0, m->q + n1 + (size_t)b * m->ldq, (int)m->ldq);
    else
        for (lapack_int j = b; j < e; j++) memset(m->q + n1 + (size_t)j * m->ldq, 0, (size_t)n2 * sizeof(R));
    if (n12)
        CB(gemm)(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)n1, w, (int)n12, 1, m->q2, (int)n1,
                 m->s12 + (size_t)b * n12, (int)n12, 0, m->q + (size_t)b * m->ldq, (int)m->ldq);
    else
        for (lapack_int j = b; j < e; j++) memset(m->q + (size_t)j * m->ldq, 0, (size_t)n1 * sizeof(R));
}

/* A merge of n rows: FN(merge_reals)(n) values and 4n indices of
 * workspace. The sum over a level's merges is at most the top merge's
 * (their n add up to at most the top's; n * (n / STEDC_ROOTS) and n^2
 * grow faster than n), so one workspace for the top serves every level,
 * cut at FN(merge_offset). */
static size_t FN(merge_reals)(lapack_int n) { return 3 * (size_t)n * n + (size_t)n * (n / STEDC_ROOTS + 6); }

/* dlaed1: merges the solved halves [0, n1) and [n1, n) of Q (n x n, ld
 * ldq) and d, joined by rho; indxq sorts each half's d on entry and the
 * whole on return. buf and ibuf: the workspace above. Returns LAPACK's
 * info. */
static lapack_int FN(merge)(nd_cpu_state *st, int serial, lapack_int n, lapack_int n1, R *d, R *q, lapack_int ldq,
                            lapack_int *indxq, R rho, R *buf, lapack_int *ibuf) {
    size_t nn = (size_t)n * n;
    R *z = buf, *dlamda = z + n, *w = dlamda + n, *z0 = w + n, *q2 = z0 + n, *s12 = q2 + nn, *s23 = s12 + nn,
      *scratch = s23 + nn;
    lapack_int *indx = ibuf, *indxc = indx + n, *coltyp = indxc + n, *indxp = coltyp + n, k = 0, info = 0;
    /* z: the last row of Q1 and the first row of Q2 */
    for (lapack_int j = 0; j < n1; j++) z[j] = q[(n1 - 1) + (size_t)j * ldq];
    for (lapack_int j = n1; j < n; j++) z[j] = q[n1 + (size_t)j * ldq];
    LA(laed2_)(&k, &n, &n1, d, q, &ldq, indxq, &rho, z, dlamda, w, q2, indx, indxc, indxp, coltyp, &info);
    if (info == 0 && k > 0) {
        FN(merge_job) m = {st, serial, k, n, n1, ldq, d, q, dlamda, w, z0, q2, s12, s23, scratch, rho, indxc, coltyp, 0};
        FN(run)(&m, stedc_parts(k, STEDC_ROOTS), FN(roots));
        info = m.info;
        if (info == 0 && k == 2) {
            for (lapack_int j = 0; j < 2; j++) {
                R *qj = q + (size_t)j * ldq, a = qj[0], b = qj[1];
                qj[0] = indxc[0] == 1 ? a : b;
                qj[1] = indxc[1] == 1 ? a : b;
            }
        } else if (info == 0 && k > 2) {
            memcpy(z0, w, (size_t)k * sizeof(R));
            FN(run)(&m, stedc_parts(k, STEDC_ROWS), FN(update_z));
            FN(run)(&m, stedc_parts(k, STEDC_ROOTS), FN(vectors));
        }
        if (info == 0) {
            FN(run)(&m, stedc_parts(k, STEDC_PANEL), FN(products));
            lapack_int n_rest = n - k, one = 1, minus_one = -1;
            LA(lamrg_)(&k, &n_rest, d, &one, &minus_one, indxq);
        }
    } else if (info == 0) {
        for (lapack_int i = 0; i < n; i++) indxq[i] = i + 1;
    }
    return info;
}

/* One level's merges, over the pool when there are enough of them. */
typedef struct {
    nd_cpu_state *st;
    const lapack_int *ends; /* each subproblem's end, before this level */
    R *d, *e, *q, *buf;
    lapack_int ldq, *indxq, *ibuf;
    int info;
} FN(level_job);

/* Pair p's slice of the workspace: after the slices of the pairs before
 * it (their rows end where p's begin). */
static size_t FN(merge_offset)(const lapack_int *ends, int pair) {
    size_t off = 0;
    for (int q = 0; q < pair; q++) off += FN(merge_reals)(ends[2 * q + 1] - (q ? ends[2 * q - 1] : 0));
    return off;
}

static lapack_int FN(merge_pair)(FN(level_job) * l, int pair, int serial) {
    lapack_int lo = pair ? l->ends[2 * pair - 1] : 0, mid = l->ends[2 * pair], hi = l->ends[2 * pair + 1];
    return FN(merge)(l->st, serial, hi - lo, mid - lo, l->d + lo, l->q + lo + (size_t)lo * l->ldq, l->ldq,
                     l->indxq + lo, l->e[mid - 1], l->buf + FN(merge_offset)(l->ends, pair), l->ibuf + 4 * lo);
}

static void FN(merge_part)(void *arg, int pair) {
    FN(level_job) *l = arg;
    lapack_int info = FN(merge_pair)(l, pair, 1);
    if (info) __atomic_store_n(&l->info, (int)info, __ATOMIC_RELAXED);
}

typedef struct {
    R *d, *e, *q, *work;
    lapack_int ldq;
    const lapack_int *ends;
    int info;
} FN(leaf_job);

static void FN(leaf)(void *arg, int i) {
    FN(leaf_job) *l = arg;
    lapack_int lo = i ? l->ends[i - 1] : 0, m = l->ends[i] - lo;
    lapack_int info = LAE(steqr)(LAPACK_COL_MAJOR, 'I', m, l->d + lo, l->e + lo, l->q + lo + (size_t)lo * l->ldq,
                                 l->ldq, l->work + (size_t)i * 2 * STEDC_LEAF);
    if (info) __atomic_store_n(&l->info, (int)info, __ATOMIC_RELAXED);
}

/* The merged order (indxq): d and Q's columns gathered into perm (m
 * values, then m x m), then Q's columns put back, a panel a part. */
typedef struct {
    lapack_int m;
    R *d, *q;
    lapack_int ldq;
    const lapack_int *indxq;
    R *perm;
} FN(perm_job);

static void FN(gather_columns)(void *arg, int p) {
    FN(perm_job) *j = arg;
    lapack_int b, e;
    stedc_span(j->m, STEDC_PANEL, p, &b, &e);
    for (lapack_int i = b; i < e; i++) {
        lapack_int c = j->indxq[i] - 1;
        j->perm[i] = j->d[c];
        memcpy(j->perm + j->m + (size_t)i * j->m, j->q + (size_t)c * j->ldq, (size_t)j->m * sizeof(R));
    }
}

static void FN(put_columns)(void *arg, int p) {
    FN(perm_job) *j = arg;
    lapack_int b, e;
    stedc_span(j->m, STEDC_PANEL, p, &b, &e);
    for (lapack_int i = b; i < e; i++)
        memcpy(j->q + (size_t)i * j->ldq, j->perm + j->m + (size_t)i * j->m, (size_t)j->m * sizeof(R));
}

/* dlaed0 (vectors of the tridiagonal itself): m > STEDC_LEAF. buf:
 * FN(merge_reals)(m) values, ibuf: 7m + 2 indices. */
static lapack_int FN(laed0)(nd_cpu_state *st, lapack_int m, R *d, R *e, R *q, lapack_int ldq, R *buf,
                            lapack_int *ibuf) {
    /* Subproblems: halves (the left one the smaller) until each has at
     * most STEDC_LEAF rows, as dlaed0 cuts them. The merges take ibuf's
     * first 4m indices; the leaves' work and the final reordering take
     * buf before and after them. */
    lapack_int *ends = ibuf + 4 * (size_t)m, *indxq = ends + 2 * (size_t)m + 2;
    R *work = buf, *perm = buf;
    lapack_int info = 0;
    lapack_int subs = 1;
    ends[0] = m;
    while (ends[subs - 1] > STEDC_LEAF) {
        for (lapack_int j = subs - 1; j >= 0; j--) {
            ends[2 * j + 1] = (ends[j] + 1) / 2;
            ends[2 * j] = ends[j] / 2;
        }
        subs *= 2;
    }
    for (lapack_int j = 1; j < subs; j++) ends[j] += ends[j - 1];
    for (lapack_int i = 0; i + 1 < subs; i++) { /* the rank-one cuts */
        lapack_int c = ends[i];
        d[c - 1] -= RABS(e[c - 1]);
        d[c] -= RABS(e[c - 1]);
    }
    FN(leaf_job) lj = {d, e, q, work, ldq, ends, 0};
    nd_cpu_run_parts(st, (int)subs, FN(leaf), &lj);
    if ((info = lj.info) != 0) return info;
    for (lapack_int i = 0; i < subs; i++)
        for (lapack_int j = i ? ends[i - 1] : 0, k = 1; j < ends[i]; j++, k++) indxq[j] = k;
    const int workers = nd_cpu_pool_size(st->pool);
    while (subs > 1) {
        FN(level_job) lv = {st, ends, d, e, q, buf, ldq, indxq, ibuf, 0};
        const int pairs = (int)(subs / 2);
        /* a level's merges side by side, each in one thread, when there
         * are enough of them or they are too small to be worth a pool job
         * a step; else one after another, each step over the pool */
        if (pairs >= workers || ends[1] < STEDC_SPREAD_ROWS) {
            nd_cpu_run_parts(st, pairs, FN(merge_part), &lv);
            info = lv.info;
        } else {
            for (int p = 0; p < pairs && info == 0; p++) info = FN(merge_pair)(&lv, p, 0);
        }
        if (info != 0) return info;
        for (lapack_int i = 0; i < pairs; i++) ends[i] = ends[2 * i + 1];
        subs /= 2;
    }
    /* eigenvalues ascending, with their vectors */
    FN(perm_job) pj = {m, d, q, ldq, indxq, perm};
    const int perm_parts = stedc_parts(m, STEDC_PANEL);
    nd_cpu_run_parts(st, perm_parts, FN(gather_columns), &pj);
    nd_cpu_run_parts(st, perm_parts, FN(put_columns), &pj);
    memcpy(d, perm, (size_t)m * sizeof(R));
    return 0;
}

/* dstedc(compz = 'I') of the n x n tridiagonal (d, e) into z (ld n). */
static lapack_int FN(stedc)(nd_cpu_state *st, lapack_int n, R *d, R *e, R *z) {
    if (n <= STEDC_LEAF) {
        R *work = nd_malloc((size_t)(2 * n + 1) * sizeof(R));
        if (!work) return ND_EIGH_PANELS_OOM;
        lapack_int info = LAE(steqr)(LAPACK_COL_MAJOR, 'I', n, d, e, z, n, work);
        free(work);
        return info;
    }
    LAE(laset)(LAPACK_COL_MAJOR, 'A', n, n, 0, 1, z, n);
    R orgnrm = FN(max_abs)(n, d, e);
    if (orgnrm == 0) return 0;
    /* The workspace of the largest block (n at most), from the backend's
     * cache of freed blocks: fresh pages for it every call were a page
     * fault per 4 KiB of a few times n^2 values. */
    size_t rbytes = FN(merge_reals)(n) * sizeof(R), ibytes = (7 * (size_t)n + 2) * sizeof(lapack_int);
    void *rbuf = NULL, *ibuf = NULL;
    if (nd_cpu_host_alloc(st->blocks, rbytes, &rbuf) != ND_OK || nd_cpu_host_alloc(st->blocks, ibytes, &ibuf) != ND_OK) {
        if (rbuf) nd_cpu_host_release(st->blocks, rbuf, rbytes);
        return ND_EIGH_PANELS_OOM;
    }
    lapack_int info = 0;
    for (lapack_int start = 0; start < n && info == 0;) {
        lapack_int finish = start;
        while (finish < n - 1) {
            R tiny = EPS_HALF * RSQRT(RABS(d[finish])) * RSQRT(RABS(d[finish + 1]));
            if (!(RABS(e[finish]) > tiny)) break;
            finish++;
        }
        lapack_int m = finish - start + 1;
        if (m > STEDC_LEAF) {
            R nrm = FN(max_abs)(m, d + start, e + start);
            LAE(lascl)(LAPACK_COL_MAJOR, 'G', 0, 0, nrm, 1, m, 1, d + start, m);
            LAE(lascl)(LAPACK_COL_MAJOR, 'G', 0, 0, nrm, 1, m - 1, 1, e + start, m - 1);
            info = FN(laed0)(st, m, d + start, e + start, z + start + (size_t)start * n, n, rbuf, ibuf);
            if (info == 0) LAE(lascl)(LAPACK_COL_MAJOR, 'G', 0, 0, 1, nrm, m, 1, d + start, m);
        } else if (m > 1) {
            info = LAE(steqr)(LAPACK_COL_MAJOR, 'I', m, d + start, e + start, z + start + (size_t)start * n, n, rbuf);
        }
        start = finish + 1;
    }
    nd_cpu_host_release(st->blocks, rbuf, rbytes);
    nd_cpu_host_release(st->blocks, ibuf, ibytes);
    if (info) return info;
    /* selection sort, as dstedc: the fewest swaps of vectors */
    for (lapack_int i = 0; i + 1 < n; i++) {
        lapack_int k = i;
        R p = d[i];
        for (lapack_int j = i + 1; j < n; j++)
            if (d[j] < p) k = j, p = d[j];
        if (k != i) {
            d[k] = d[i];
            d[i] = p;
            CB(swap)((int)n, z + (size_t)i * n, 1, z + (size_t)k * n, 1);
        }
    }
    return 0;
}
