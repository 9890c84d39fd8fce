/* Runs Cholesky's pack pass (chol_source.c, included as CHOL_SOURCE) on
 * the host through emulate_shim.h, with lib_cholesky.c's launch geometry
 * (32 x 8 threads, one block per mirrored tile pair in groups of
 * NDK_GROUP x NDK_GROUP tiles, the batch along grid y, capped to show the
 * walk), a block's threads as fibers meeting at __syncthreads: pack,
 * then a column-major lower Cholesky standing in for potrf (it reads and
 * writes only the column-major lower triangle, as potrf does). C must then
 * be L^T (zeros below the diagonal, written by pack), L a row-major
 * Cholesky of A's lower triangle in long double, and the status words
 * (garbage before) zero, for the four dtypes, n across tile edges,
 * batches, out of place (C full of NaN first: every element must be
 * written) and in place. A's upper triangle is NaN: it must never be
 * read. */
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "emulate_shim.h"
/* Blocks run one after another: a block's shared array is one static,
 * shared by its threads. */
#include CHOL_SOURCE

typedef std::complex<long double> cl;
static int fails, checks;

template <class T> static cl get(const T &v) { return cl((long double)v, 0); }
template <> cl get<ndk_c64>(const ndk_c64 &v) { return cl(v.re, v.im); }
template <> cl get<ndk_c128>(const ndk_c128 &v) { return cl(v.re, v.im); }
template <class T> static void put(T &d, cl v) { d = (T)v.real(); }
template <> void put<ndk_c64>(ndk_c64 &d, cl v) { d.re = (float)v.real(), d.im = (float)v.imag(); }
template <> void put<ndk_c128>(ndk_c128 &d, cl v) { d.re = (double)v.real(), d.im = (double)v.imag(); }
template <class T> static bool is_cplx() { return sizeof(T) == 2 * sizeof(float) || sizeof(T) == 16; }

/* Lower Cholesky of the Hermitian matrix given by M's lower triangle, M
 * column-major (M(i, j) at i + j n), in place on that triangle. */
template <class T> static void potrf_lower_colmajor(T *m, long n) {
    for (long j = 0; j < n; j++) {
        cl d = get(m[j + j * n]);
        for (long k = 0; k < j; k++) d -= get(m[j + k * n]) * std::conj(get(m[j + k * n]));
        cl l = std::sqrt(cl(d.real(), 0));
        put(m[j + j * n], l);
        for (long i = j + 1; i < n; i++) {
            cl s = get(m[i + j * n]);
            for (long k = 0; k < j; k++) s -= get(m[i + k * n]) * std::conj(get(m[j + k * n]));
            put(m[i + j * n], s / l);
        }
    }
}

/* side: 0 pack writes the zeros (nd's default); 1 and 2 pack leaves them
 * to the zeros kernel (ND_CUDA_CHOL_SIDE_ZEROS=1, which runs it beside
 * potrf), run here before (1) or after (2) the stand-in potrf: either
 * order must give L^T, so the two never touch the same element. */
template <class T> static void run(const char *name, long n, long batch, bool in_place, unsigned grid_y_cap, bool cx,
                                   double tol, int side) {
    long nn = n * n;
    /* A and the reference depend on T, n and batch only: built once for the
     * four modes (the n^3 product in long double complex was most of the
     * check's minute on a 2-core VM). */
    static long made_n = -1, made_batch = -1;
    static std::vector<T> a_made;
    static std::vector<cl> want;
    if (made_n != n || made_batch != batch) {
        made_n = n, made_batch = batch;
        a_made.assign(batch * nn, T());
        want.assign(batch * nn, cl(0, 0));
        srand((unsigned)(n * 131 + batch));
        for (long b = 0; b < batch; b++) {
            /* A = B B^H + n I (Hermitian positive definite), upper triangle NaN */
            std::vector<cl> bm(nn), am(nn);
            for (auto &x : bm) x = cl(rand() / (long double)RAND_MAX - 0.5L, cx ? rand() / (long double)RAND_MAX - 0.5L : 0);
            for (long i = 0; i < n; i++)
                for (long j = 0; j <= i; j++) { /* the lower triangle: the upper one is NaN */
                    cl s = i == j ? cl(n, 0) : cl(0, 0);
                    for (long k = 0; k < n; k++) s += bm[i * n + k] * std::conj(bm[j * n + k]);
                    am[i * n + j] = s;
                }
            for (long i = 0; i < n; i++)
                for (long j = 0; j < n; j++) put(a_made[b * nn + i * n + j], j > i ? cl(NAN, NAN) : am[i * n + j]);
            /* the reference, row-major: L[i][j] = (A[i][j] - sum L[i][k] conj(L[j][k])) / L[j][j] */
            cl *l = &want[b * nn];
            for (long j = 0; j < n; j++) {
                cl d = get(a_made[b * nn + j * n + j]);
                for (long k = 0; k < j; k++) d -= l[j * n + k] * std::conj(l[j * n + k]);
                l[j * n + j] = std::sqrt(cl(d.real(), 0));
                for (long i = j + 1; i < n; i++) {
                    cl s = get(a_made[b * nn + i * n + j]);
                    for (long k = 0; k < j; k++) s -= l[i * n + k] * std::conj(l[j * n + k]);
                    l[i * n + j] = s / l[j * n + j];
                }
            }
        }
    }
    std::vector<T> a(a_made), c(batch * nn);
    T *cp = in_place ? a.data() : c.data();
    if (!in_place)
        for (auto &x : c) put(x, cl(NAN, NAN));
    long nt = (n + 31) / 32, ng = (nt + NDK_GROUP - 1) / NDK_GROUP; /* lib_cholesky.c's launch */
    emu_dim3 grid = {(unsigned)(ng * (ng + 1) / 2 * NDK_GROUP * NDK_GROUP),
                     (unsigned)(batch < (long)grid_y_cap ? batch : grid_y_cap), 1};
    const T *ap = a.data();
    int ni = (int)n;
    long long nb = batch, ninfo = batch + 1;
    std::vector<int> info(ninfo, -7);
    int *ip = info.data();
    /* lib_cholesky.c's choice: one matrix with its zeros takes pack1 */
    if (batch == 1 && side == 0) emu_launch(grid, {32, 8, 1}, 1, [&] { ndk_chol_pack1<T>(ap, cp, ni, ip, ninfo); });
    else emu_launch(grid, {32, 8, 1}, 1, [&] { ndk_chol_pack<T>(ap, cp, ni, nb, ip, ninfo, side == 0); });
    if (side == 1) emu_launch(grid, {32, 8, 1}, 0, [&] { ndk_chol_zeros<T>(cp, ni, nb); });
    for (long b = 0; b < batch; b++) potrf_lower_colmajor(cp + b * nn, n);
    if (side == 2) emu_launch(grid, {32, 8, 1}, 0, [&] { ndk_chol_zeros<T>(cp, ni, nb); });
    for (long i = 0; i < ninfo; i++)
        if (info[i] != 0) {
            printf("FAIL: %s n=%ld batch=%ld: status word %ld is %d after pack, want 0\n", name, n, batch, i, info[i]);
            fails++, checks++;
            return;
        }
    long bad = -1;
    for (long i = 0; i < batch * nn && bad < 0; i++) {
        cl g = get(cp[i]);
        long r = (i % nn) / n, col = i % n, w = i - r * n - col + col * n + r; /* L^T[r][col] = L[col][r] */
        bool ok = col < r ? (g == cl(0, 0)) : std::abs(g - want[w]) <= tol * (1 + std::abs(want[w]));
        if (!ok) bad = i;
    }
    checks++;
    if (bad >= 0) {
        fails++;
        cl g = get(cp[bad]);
        long r = (bad % nn) / n, col = bad % n;
        cl w = col < r ? cl(0, 0) : want[bad - r * n - col + col * n + r];
        printf("FAIL: %s n=%ld batch=%ld %s, zeros %s: element %ld is %Lg%+Lgi, want %Lg%+Lgi\n", name, n, batch,
               in_place ? "in place" : "out of place", side == 0 ? "by pack" : side == 1 ? "before potrf" : "after potrf",
               bad, g.real(), g.imag(), w.real(), w.imag());
    }
}

/* Called by chol_check.c, which builds this file (emulate_harness.h). */
extern "C" int emu_main(void) {
    /* n = 257 and 300: tile groups past the first (NDK_GROUP 8: 256 a group
     * side), a partial one at the edge; 1100 matrices over 4 block rows:
     * more status words (1101) than those rows' threads (1024) */
    static const long cases[][3] = {{1, 1, 4}, {5, 3, 2}, {31, 1, 4}, {32, 2, 4}, {33, 2, 1}, {65, 1, 4}, {100, 1, 4},
                                    {8, 9, 4}, {257, 1, 1}, {300, 2, 1}, {1, 1100, 4}};
    for (auto &k : cases)
        for (int mode = 0; mode < 4; mode++) { /* in place, out of place, then the side zeros out of place */
            int ip = mode == 0, side = mode < 2 ? 0 : mode - 1;
            run<float>("float32", k[0], k[1], ip, (unsigned)k[2], false, 1e-4, side);
            run<double>("float64", k[0], k[1], ip, (unsigned)k[2], false, 1e-12, side);
            run<ndk_c64>("complex64", k[0], k[1], ip, (unsigned)k[2], true, 1e-4, side);
            run<ndk_c128>("complex128", k[0], k[1], ip, (unsigned)k[2], true, 1e-12, side);
        }
    printf("Cholesky pack on the host (tile groups of %d): %d of %d cases passed\n", NDK_GROUP, checks - fails, checks);
    return fails != 0;
}
