/* The FFT passes (fft_plan.h) for one precision: fft_kernels.c includes
 * this file once with T = float and once with T = double, SUF naming the
 * instances. Complex values are interleaved pairs of T.
 *
 * Pass (ip, l1, ido) of a length n = l1 * ip * ido: for every k < l1 and
 * i < ido, the ip inputs cc[i + ido * (m + ip * k)] (m < ip) go through
 * one DFT of length ip, and output m' is multiplied by the twiddle
 * exp(sign 2 pi i m' l1 i / n) and stored at ch[i + ido * (k + l1 * m')]:
 * a Stockham decimation in frequency whose last pass leaves the result in
 * natural order. */
#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define C CAT(cplx, SUF)

typedef struct {
    T r, i;
} C;

/* x * w, or x * conj(w) for the backward sign (twiddles are stored for the
 * forward sign). */
static inline C CAT(rot, SUF)(C x, C w, int sign) {
    C y;
    if (sign < 0) {
        y.r = x.r * w.r - x.i * w.i;
        y.i = x.r * w.i + x.i * w.r;
    } else {
        y.r = x.r * w.r + x.i * w.i;
        y.i = x.i * w.r - x.r * w.i;
    }
    return y;
}
#define ROT CAT(rot, SUF)

#define CC(i, m, k) cc[(i) + ido * ((m) + ip * (k))]
#define CH(i, k, m) ch[(i) + ido * ((k) + l1 * (m))]
#define TW(m, i) tw[((m) - 1) * (ido - 1) + (i) - 1]
/* Stores butterfly output m (twiddled unless i == 0). */
#define OUT(m, v) CH(i, k, m) = (i == 0 || (m) == 0) ? (v) : ROT((v), TW((m), i), sign)

static void CAT(pass2, SUF)(int64_t ido, int64_t l1, const C *cc, C *ch, const C *tw, int sign) {
    const int64_t ip = 2;
    for (int64_t k = 0; k < l1; k++)
        for (int64_t i = 0; i < ido; i++) {
            C a0 = CC(i, 0, k), a1 = CC(i, 1, k);
            C b0 = {a0.r + a1.r, a0.i + a1.i}, b1 = {a0.r - a1.r, a0.i - a1.i};
            OUT(0, b0);
            OUT(1, b1);
        }
}

static void CAT(pass3, SUF)(int64_t ido, int64_t l1, const C *cc, C *ch, const C *tw, int sign) {
    const int64_t ip = 3;
    const T h = (T)0.86602540378443864676372317075294L * (T)(-sign); /* sin(2 pi / 3), forward sign */
    for (int64_t k = 0; k < l1; k++)
        for (int64_t i = 0; i < ido; i++) {
            C a0 = CC(i, 0, k), a1 = CC(i, 1, k), a2 = CC(i, 2, k);
            C t1 = {a1.r + a2.r, a1.i + a2.i}, t2 = {a1.r - a2.r, a1.i - a2.i};
            C b0 = {a0.r + t1.r, a0.i + t1.i};
            C m = {a0.r - (T)0.5 * t1.r, a0.i - (T)0.5 * t1.i};
            /* (-i * h) * t2 for the forward sign */
            C s = {h * t2.i, -h * t2.r};
            C b1 = {m.r + s.r, m.i + s.i}, b2 = {m.r - s.r, m.i - s.i};
            OUT(0, b0);
            OUT(1, b1);
            OUT(2, b2);
        }
}

static void CAT(pass4, SUF)(int64_t ido, int64_t l1, const C *cc, C *ch, const C *tw, int sign) {
    const int64_t ip = 4;
    for (int64_t k = 0; k < l1; k++)
        for (int64_t i = 0; i < ido; i++) {
            C a0 = CC(i, 0, k), a1 = CC(i, 1, k), a2 = CC(i, 2, k), a3 = CC(i, 3, k);
            C s02 = {a0.r + a2.r, a0.i + a2.i}, d02 = {a0.r - a2.r, a0.i - a2.i};
            C s13 = {a1.r + a3.r, a1.i + a3.i}, d13 = {a1.r - a3.r, a1.i - a3.i};
            /* sign * i * d13 */
            C r = sign < 0 ? (C){d13.i, -d13.r} : (C){-d13.i, d13.r};
            C b0 = {s02.r + s13.r, s02.i + s13.i}, b2 = {s02.r - s13.r, s02.i - s13.i};
            C b1 = {d02.r + r.r, d02.i + r.i}, b3 = {d02.r - r.r, d02.i - r.i};
            OUT(0, b0);
            OUT(1, b1);
            OUT(2, b2);
            OUT(3, b3);
        }
}

static void CAT(pass5, SUF)(int64_t ido, int64_t l1, const C *cc, C *ch, const C *tw, int sign) {
    const int64_t ip = 5;
    const T c1 = (T)0.30901699437494742410229341718281906L, c2 = (T)-0.80901699437494742410229341718281906L;
    const T s1 = (T)0.95105651629515357211643933337938214L * (T)(-sign),
            s2 = (T)0.58778525229247312916870595463907277L * (T)(-sign);
    for (int64_t k = 0; k < l1; k++)
        for (int64_t i = 0; i < ido; i++) {
            C a0 = CC(i, 0, k), a1 = CC(i, 1, k), a2 = CC(i, 2, k), a3 = CC(i, 3, k), a4 = CC(i, 4, k);
            C t1 = {a1.r + a4.r, a1.i + a4.i}, t2 = {a2.r + a3.r, a2.i + a3.i};
            C t3 = {a1.r - a4.r, a1.i - a4.i}, t4 = {a2.r - a3.r, a2.i - a3.i};
            C b0 = {a0.r + t1.r + t2.r, a0.i + t1.i + t2.i};
            C m1 = {a0.r + c1 * t1.r + c2 * t2.r, a0.i + c1 * t1.i + c2 * t2.i};
            C m2 = {a0.r + c2 * t1.r + c1 * t2.r, a0.i + c2 * t1.i + c1 * t2.i};
            /* -i * (s1 t3 + s2 t4) and -i * (s2 t3 - s1 t4), with the sign in s1, s2 */
            C n1 = {s1 * t3.i + s2 * t4.i, -(s1 * t3.r + s2 * t4.r)};
            C n2 = {s2 * t3.i - s1 * t4.i, -(s2 * t3.r - s1 * t4.r)};
            C b1 = {m1.r + n1.r, m1.i + n1.i}, b4 = {m1.r - n1.r, m1.i - n1.i};
            C b2 = {m2.r + n2.r, m2.i + n2.i}, b3 = {m2.r - n2.r, m2.i - n2.i};
            OUT(0, b0);
            OUT(1, b1);
            OUT(2, b2);
            OUT(3, b3);
            OUT(4, b4);
        }
}

/* An odd prime radix: inputs m and ip - m paired, so that outputs m' and
 * ip - m' share one pass over cos and sin (roots: exp(-2 pi i j / ip)). */
static void CAT(passg, SUF)(int64_t ido, int64_t l1, int64_t ip, const C *cc, C *ch, const C *tw,
                            const C *roots, int sign) {
    C sp[ND_FFT_MAX_RADIX / 2 + 1], sm[ND_FFT_MAX_RADIX / 2 + 1];
    const int64_t h = (ip - 1) / 2;
    for (int64_t k = 0; k < l1; k++)
        for (int64_t i = 0; i < ido; i++) {
            C a0 = CC(i, 0, k), b0 = a0;
            for (int64_t m = 1; m <= h; m++) {
                C x = CC(i, m, k), y = CC(i, ip - m, k);
                sp[m] = (C){x.r + y.r, x.i + y.i};
                sm[m] = (C){x.r - y.r, x.i - y.i};
                b0.r += sp[m].r;
                b0.i += sp[m].i;
            }
            OUT(0, b0);
            for (int64_t q = 1; q <= h; q++) {
                C a = a0, b = {0, 0};
                int64_t j = 0;
                for (int64_t m = 1; m <= h; m++) {
                    j += q;
                    if (j >= ip) j -= ip;
                    T cs = roots[j].r, sn = -roots[j].i * (T)sign; /* sin(sign 2 pi j / ip) */
                    a.r += cs * sp[m].r;
                    a.i += cs * sp[m].i;
                    b.r += sn * sm[m].r;
                    b.i += sn * sm[m].i;
                }
                /* outputs q and ip - q: a +- i b */
                C bq = {a.r - b.i, a.i + b.r}, bp = {a.r + b.i, a.i - b.r};
                OUT(q, bq);
                OUT(ip - q, bp);
            }
        }
}
#undef CC
#undef CH
#undef TW
#undef OUT

static void CAT(complex_passes, SUF)(const nd_fft_plan *p, C *data, C *scratch, int sign) {
    C *in = data, *out = scratch;
    const C *tab = p->tw;
    for (int k = 0; k < p->npass; k++) {
        const nd_fft_pass *ps = &p->pass[k];
        const C *tw = tab + ps->tw;
        switch (ps->ip) {
        case 2: CAT(pass2, SUF)(ps->ido, ps->l1, in, out, tw, sign); break;
        case 3: CAT(pass3, SUF)(ps->ido, ps->l1, in, out, tw, sign); break;
        case 4: CAT(pass4, SUF)(ps->ido, ps->l1, in, out, tw, sign); break;
        case 5: CAT(pass5, SUF)(ps->ido, ps->l1, in, out, tw, sign); break;
        default: CAT(passg, SUF)(ps->ido, ps->l1, ps->ip, in, out, tw, tab + ps->roots, sign); break;
        }
        C *t = in;
        in = out;
        out = t;
    }
    if (in != data) memcpy(data, in, (size_t)p->n * sizeof(C));
}

/* Bluestein (fft_plan.h): the backward transform is the conjugate of the
 * forward one of the conjugate input. */
static void CAT(bluestein, SUF)(const nd_fft_plan *p, C *data, C *scratch, int sign) {
    const int64_t n = p->n, m = p->m;
    const C *w = p->chirp, *kern = p->kernel;
    C *a = scratch, *sub_scratch = scratch + m;
    for (int64_t j = 0; j < n; j++) {
        C x = data[j];
        if (sign > 0) x.i = -x.i;
        a[j] = ROT(x, w[j], -1);
    }
    memset(a + n, 0, (size_t)(m - n) * sizeof(C));
    CAT(nd_fft_exec, SUF)(p->sub, (T *)a, (T *)sub_scratch, -1);
    for (int64_t j = 0; j < m; j++) a[j] = ROT(a[j], kern[j], -1);
    CAT(nd_fft_exec, SUF)(p->sub, (T *)a, (T *)sub_scratch, 1);
    for (int64_t k = 0; k < n; k++) {
        C y = ROT(a[k], w[k], -1);
        if (sign > 0) y.i = -y.i;
        data[k] = y;
    }
}

void CAT(nd_fft_exec, SUF)(const nd_fft_plan *p, T *data, T *scratch, int sign) {
    if (p->sub) CAT(bluestein, SUF)(p, (C *)data, (C *)scratch, sign);
    else CAT(complex_passes, SUF)(p, (C *)data, (C *)scratch, sign);
}

/* Real transforms of n = 2h (fft_plan.h): z[j] = x[2j] + i x[2j+1] has
 * Z = E + iO, E and O the transforms of the even and odd samples, and
 * X[k] = E[k] + exp(-2 pi i k / n) O[k]. */
void CAT(nd_fft_r2c, SUF)(const nd_fft_plan *p, T *data, T *out, T *scratch) {
    const int64_t h = p->n / 2;
    const C *w = p->tw;
    C *z = (C *)data, *x = (C *)out;
    CAT(nd_fft_exec, SUF)(p->sub, data, scratch, -1);
    x[0] = (C){z[0].r + z[0].i, 0};
    x[h] = (C){z[0].r - z[0].i, 0};
    for (int64_t k = 1; k < h; k++) {
        C a = z[k], b = {z[h - k].r, -z[h - k].i}; /* Z[k], conj(Z[h - k]) */
        C e = {(a.r + b.r) / 2, (a.i + b.i) / 2};
        C o = {(a.i - b.i) / 2, -(a.r - b.r) / 2}; /* (a - b) / 2i */
        C t = ROT(o, w[k], -1);
        x[k] = (C){e.r + t.r, e.i + t.i};
    }
}

/* The inverse: Z[k] = (X[k] + conj(X[h-k])) + i exp(2 pi i k / n) (X[k] -
 * conj(X[h-k])), k < h, transformed backward with the plan of h, holds
 * n x[2j] + i n x[2j+1]. */
void CAT(nd_fft_c2r, SUF)(const nd_fft_plan *p, const T *in, T *data, T *scratch) {
    const int64_t h = p->n / 2;
    const C *w = p->tw, *x = (const C *)in;
    C *z = (C *)data;
    T x0 = x[0].r, xh = x[h].r; /* Im x[0], Im x[h] ignored */
    z[0] = (C){x0 + xh, x0 - xh};
    for (int64_t k = 1; k < h; k++) {
        C a = x[k], b = {x[h - k].r, -x[h - k].i};
        C s = {a.r + b.r, a.i + b.i}, d = {a.r - b.r, a.i - b.i};
        C t = ROT(d, w[k], 1); /* exp(+2 pi i k / n) d */
        z[k] = (C){s.r - t.i, s.i + t.r};
    }
    CAT(nd_fft_exec, SUF)(p->sub, data, scratch, 1);
}

#undef ROT
#undef C
#undef CAT
#undef CAT_
