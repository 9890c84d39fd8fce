/* The dense linear algebra routines of common/lib_calls.h (ND_LIB_LA_*):
 * what each takes and writes, shared by the CPU (LAPACK) and CUDA
 * (cuSOLVER) implementations and the frontend (src/frontend/linalg_decomp.c).
 *
 * Every operand is packed (contiguous, row-major as nd stores it) and of
 * one dtype, float32, float64, complex64 or complex128 (an output that is
 * real for complex input, S of an SVD and W of eigh, has the matching real
 * dtype); the leading axes are a batch of matrices
 * that the routine factors one by one. LAPACK and cuSOLVER are
 * column-major: a row-major n x m buffer is the column-major m x n
 * transpose, so each routine's layout is chosen so that neither backend
 * copies more than the library overwrites (the frontend takes transposed
 * views, which cost nothing or fuse into the packing copy). These are plain
 * transposes, never conjugating ones: for complex matrices the routines
 * below are exact as written (A^T is the transpose, ^H the conjugate
 * transpose):
 *
 * LA_CHOLESKY  in A (..., n, n); out L (..., n, n), A = L L^H from A's
 *              lower triangle (the upper one is not read, as NumPy), every
 *              element written: L's strict upper triangle is zero. The
 *              routine copies what its in-place factorisation overwrites
 *              into L itself (CUDA: a transposing pass, for potrf's faster
 *              form: lib_cholesky.c). L may be A's own buffer. A backend
 *              with cholesky_transposed (backends/backend.h) writes L^T
 *              instead, zeros below the diagonal (CUDA: lib_cholesky.c,
 *              whose pass before potrf writes them).
 * LA_LU        in A (..., n, n); out LU (..., n, n): the LU factors of A^T
 *              column-major (getrf on A's buffer), PIV (..., n) int32, its
 *              1-based pivots. det A = det A^T = prod(diag LU) * (-1)^swaps.
 *              A singular matrix is not an error here.
 * LA_SOLVE     in A (..., n, n), B (..., k, n) (the k right-hand sides as
 *              rows: B column-major); out X (..., k, n) with A X = B.
 * LA_QR        in A^T (..., n, m) (A column-major), v[0] = qc, Q's number
 *              of columns (min(m, n) reduced, m complete, 0: no Q); out
 *              QT (..., qc, m) (Q column-major), RAW (..., n, m): geqrf's
 *              result column-major, R = triu(RAW^T[..., :min(m,n), :]).
 * LA_SVD       in A (..., m, n), v[0] = compute_uv, v[1] = full_matrices;
 *              out S (..., k) descending, k = min(m, n); UT (..., cu, m) =
 *              U^H (the frontend conjugates back: for complex dtypes this
 *              is what gesvdj on A^T gives for free); VH (..., cv, n) =
 *              V^H, with cu, cv = m, n (full), k, k (reduced) or 0, 0 (no
 *              vectors).
 * LA_EIGH      in A (..., n, n) (lower triangle read; Hermitian), v[0] =
 *              vectors; out W (..., n) ascending, VT (..., n, n): V^H,
 *              the conjugated eigenvectors as rows (what syevd/heevd on
 *              A^T = conj(A) writes), also without vectors (scratch).
 * LA_EIG       in AC (..., n, n) = A column-major (the frontend packs
 *              A^T: geev's right eigenvectors of the buffer's transpose
 *              would be A's left ones), v[0] = vectors; out VT (..., n, n)
 *              whose rows are geev's VR columns (written also without
 *              vectors: scratch) and W: for a real dtype (..., 2, n), the
 *              real parts then the imaginary parts (LAPACK's WR, WI), with
 *              VT in LAPACK's real layout (a complex pair j, j+1 is VT[j] +-
 *              i VT[j+1]; the frontend expands it); for a complex dtype W
 *              (..., n) and VT the eigenvectors themselves. A NaN or inf in
 *              the input fails it (NumPy refuses those before calling geev).
 *
 * Errors: a singular matrix (solve), one that is not positive definite
 * (cholesky), no convergence (svd, eigh, eig) fail the step with ND_ERR_LINALG
 * and a message naming the public function and, in a batch, the matrix:
 * the call's outputs and what is computed from them carry it to the read
 * or nd_sync. LAPACK returns the status at once; cuSOLVER writes it to
 * device memory, so the CUDA routines read it back (a synchronising copy,
 * which also keeps their plans out of CUDA graphs: nd_lib_reads_back). */
#ifndef ND_COMMON_LIB_LINALG_H
#define ND_COMMON_LIB_LINALG_H

#include <stddef.h>
#include <stdint.h>

#include "nd.h"

/* Which public function a routine serves (v[ND_LA_FN_ARG] of every LA
 * routine), for its error messages. */
typedef enum {
    ND_LA_FN_SOLVE,
    ND_LA_FN_INV,
    ND_LA_FN_CHOLESKY,
    ND_LA_FN_SVD,
    ND_LA_FN_EIGH,
    ND_LA_FN_EIG,
    ND_LA_FN_COUNT
} nd_lib_la_fn;

#define ND_LA_FN_ARG 3

/* The info a routine reports for an input LAPACK refuses to factor
 * because it holds NaN (NumPy: "SVD did not converge"). */
#define ND_LA_INFO_NAN INT64_MAX

/* The ND_ERR_LINALG error of matrix `index` of `batch` (0-based, in the
 * flattened leading axes), with LAPACK's info > 0. Returns ND_ERR_LINALG. */
nd_status nd_lib_la_error(int fn, int64_t index, int64_t batch, int64_t info);

/* NumPy's eigh gives its eigenvalues in ascending order, and so does
 * LAPACK; cuSOLVER's syevd documents the same but returned adjacent
 * eigenvalues of an 8192 x 8192 float32 matrix 1 ulp out of order
 * (bench/results/2026-11-30-h200-session15.md). The order that fixes the
 * n eigenvalues w (float64 when f64, else float32): perm[k] = the index of
 * the eigenvalue that goes to place k, by a stable sort (equal ones keep
 * their order). Returns 1 when w is out of order, 0 when it is ascending
 * already or holds NaN (left as the routine gave it); -1 when out of host
 * memory. */
int nd_lib_eigh_order(const void *w, int f64, int64_t n, int64_t *perm);

/* The real dtype of a routine's dtype (float32 of complex64). */
static inline nd_dtype nd_la_real_dtype(nd_dtype t) {
    return t == ND_COMPLEX64 ? ND_FLOAT32 : t == ND_COMPLEX128 ? ND_FLOAT64 : t;
}
static inline int nd_la_is_complex(nd_dtype t) { return t == ND_COMPLEX64 || t == ND_COMPLEX128; }

#endif
