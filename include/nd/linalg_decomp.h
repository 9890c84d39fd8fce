/*
 * nd/linalg_decomp.h — numpy.linalg: factorisations, solves and the
 * functions built on them (real and complex dtypes), tensordot and kron.
 * Part of nd.h: include <nd.h>, not this file.
 *
 * Common rules (NumPy 2):
 * - Batches: the last two axes of `a` are the matrices; leading axes are a
 *   batch, each matrix factored on its own (broadcast against b's batch in
 *   nd_linalg_solve).
 * - Dtypes: float32, float64, complex64 and complex128 keep their dtype
 *   (NumPy computes float32 in float64 and rounds; nd uses LAPACK's single
 *   precision routines); bool and integers compute in float64. float16 and
 *   bfloat16 are ND_ERR_DTYPE, as NumPy's linalg refuses float16 (nd_astype
 *   to float32 first). Complex matrices follow NumPy: Hermitian for
 *   cholesky (a = L @ L^H) and eigh, conjugate transposes in svd (a = U @
 *   diag(S) @ Vh with Vh = V^H), qr (Q^H Q = I); singular values,
 *   eigenvalues of eigh and eigvalsh, slogdet's logabsdet, cond, norm and
 *   matrix_rank are real (float32 for complex64), det and slogdet's sign
 *   complex.
 * - Every result is lazy (recorded; the factorisation runs at the flush
 *   that needs it: LAPACK on the CPU, cuSOLVER on CUDA). Only
 *   nd_linalg_lstsq synchronises (its residuals' shape depends on the rank),
 *   and nd_linalg_eig / nd_linalg_eigvals of a real a (their dtype depends
 *   on the eigenvalues, as NumPy's).
 * - Record-time errors: NULL (ND_ERR_ARG), too few dimensions or a matrix
 *   that is not square where one must be, shapes that do not fit
 *   (ND_ERR_SHAPE), bad dtypes (ND_ERR_DTYPE), bad ord/mode (ND_ERR_ARG).
 * - Run-time errors (ND_ERR_LINALG, reported by nd_sync and by reads of the
 *   results and of what is computed from them; the flush's other values are
 *   computed as usual): a singular matrix (solve, inv), one that is not
 *   positive definite (cholesky), an SVD or eigensolver that did not
 *   converge. The message names the function and, in a batch, which matrix
 *   (its index in the flattened leading axes). These routines synchronise
 *   with their device when they run (cuSOLVER reports failures in device
 *   memory), so a flush that holds one runs step by step, outside CUDA
 *   graphs (docs/internals.md, "Dense linear algebra routines").
 */
#ifndef ND_LINALG_DECOMP_H
#define ND_LINALG_DECOMP_H

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* np.linalg.cholesky(a) (upper=False): the lower-triangular L with
 * a = L @ L.T, shape of a (..., n, n); only a's lower triangle is read.
 * On CUDA, L is the transposed view of a buffer holding L^T (column-major
 * L, as PyTorch returns it; no pass after cuSOLVER's potrf): the
 * values are NumPy's, and a consumer needing row-major L copies it.
 * Errors: ND_ERR_LINALG when a matrix is not positive definite. */
ND_API nd_array *nd_linalg_cholesky(nd_array *a);

/* np.linalg.solve(a, b): x with a @ x == b. a (..., n, n); b is a vector
 * (n,) when it is 1-d (x (..., n)), else a stack of matrices (..., n, k)
 * whose batch broadcasts with a's (NumPy 2's rule). Errors: ND_ERR_SHAPE
 * when b's n differs or the batches do not broadcast; ND_ERR_LINALG for a
 * singular matrix. */
ND_API nd_array *nd_linalg_solve(nd_array *a, nd_array *b);

/* np.linalg.inv(a): shape of a (..., n, n). Errors: ND_ERR_LINALG for a
 * singular matrix. */
ND_API nd_array *nd_linalg_inv(nd_array *a);

/* np.linalg.det(a): shape a.shape[:-2] (a 0-d array for one matrix); 0
 * for a singular matrix (no error). From the LU factorisation. */
ND_API nd_array *nd_linalg_det(nd_array *a);

/* np.linalg.slogdet(a): *sign (-1, 0 or 1) and *logabsdet (log|det|, -inf
 * when singular), each of shape a.shape[:-2]. Both or neither are set. */
ND_API nd_status nd_linalg_slogdet(nd_array *a, nd_array **sign, nd_array **logabsdet);

/* np.linalg.qr modes. */
typedef enum {
    ND_QR_REDUCED,  /* Q (..., m, k), R (..., k, n), k = min(m, n) */
    ND_QR_COMPLETE, /* Q (..., m, m), R (..., m, n) */
    ND_QR_R         /* R (..., k, n) only; *q is set to NULL */
} nd_qr_mode;

/* np.linalg.qr(a, mode): a = Q @ R with Q's columns orthonormal and R upper
 * triangular (signs as LAPACK's geqrf gives them, like NumPy). q may be
 * NULL for ND_QR_R. Errors: ND_ERR_ARG for another mode. */
ND_API nd_status nd_linalg_qr(nd_array *a, nd_qr_mode mode, nd_array **q, nd_array **r);

/* np.linalg.svd(a, full_matrices, compute_uv): a = U @ diag(S) @ Vh, S
 * (..., k) descending, k = min(m, n); U (..., m, m) and Vh (..., n, n) when
 * full_matrices, else (..., m, k) and (..., k, n). Without compute_uv only
 * *s is set (u and vh may be NULL). A matrix holding NaN or inf has every
 * singular value NaN on every backend, in a batch or not, and is no error
 * (NumPy raises "SVD did not converge"); its U and Vh are those of a zero
 * matrix (the routine factors such a matrix as zeros, so that no backend's
 * routine fails or makes up values). Errors: ND_ERR_LINALG when it does not
 * converge. */
ND_API nd_status nd_linalg_svd(nd_array *a, bool full_matrices, bool compute_uv, nd_array **u, nd_array **s,
                               nd_array **vh);
/* np.linalg.svdvals(a): S of nd_linalg_svd without vectors. */
ND_API nd_array *nd_linalg_svdvals(nd_array *a);

/* np.linalg.eigh(a) (UPLO='L': only the lower triangle is read): *w
 * (..., n) ascending and *v (..., n, n) with a @ v == v * w (columns are
 * the eigenvectors). Errors: ND_ERR_LINALG when it does not converge. */
ND_API nd_status nd_linalg_eigh(nd_array *a, nd_array **w, nd_array **v);
/* np.linalg.eigvalsh(a): w of nd_linalg_eigh. */
ND_API nd_array *nd_linalg_eigvalsh(nd_array *a);

/* np.linalg.eig(a) (general square matrices, geev): *w (..., n), the
 * eigenvalues in LAPACK's order (not sorted; a complex conjugate pair of a
 * real a is adjacent, positive imaginary part first), and *v (..., n, n)
 * with a @ v == v * w, each column of norm 1 with its largest component
 * real (LAPACK's normalisation, as NumPy).
 * Dtype, NumPy 2's rule: a complex a gives complex64/complex128 results,
 * lazily. A real a gives real results (its dtype) when every eigenvalue of
 * the whole batch is real, else complex ones (complex64 for float32);
 * because the dtype depends on the values, eig of a real a synchronises:
 * it runs the factorisation at the call and reads whether any imaginary
 * part is non-zero (the results stay on the device). To stay lazy, pass a
 * complex a (nd_astype(a, ND_COMPLEX128)): the results are then complex
 * whatever the values.
 * Errors: ND_ERR_LINALG when it does not converge or a holds NaN or inf
 * (NumPy's "Array must not contain infs or NaNs"; the CPU checks, cuSOLVER
 * on CUDA may give NaN instead); for a real a returned by this call (it
 * synchronised), for a complex a at the read. */
ND_API nd_status nd_linalg_eig(nd_array *a, nd_array **w, nd_array **v);
/* np.linalg.eigvals(a): w of nd_linalg_eig, with the same dtype rule (a
 * real a synchronises). */
ND_API nd_array *nd_linalg_eigvals(nd_array *a);

/* ---- composed from the above and lazy ops */

/* np.linalg.pinv(a, rcond): V @ diag(1/S) @ U^H over the singular values
 * above rcond * max(S) (rcond < 0: NumPy's default 1e-15). Shape (..., n,
 * m). */
ND_API nd_array *nd_linalg_pinv(nd_array *a, double rcond);

/* np.linalg.matrix_rank(a, tol): the number of singular values above tol
 * (tol < 0: max(S) * max(m, n) * eps of a's dtype), int64 of shape
 * a.shape[:-2]; a 1-d or 0-d a has rank 1 unless all zero. */
ND_API nd_array *nd_linalg_matrix_rank(nd_array *a, double tol);

/* np.linalg.cond(a) (the 2-norm): max(S) / min(S), shape a.shape[:-2];
 * inf for a singular matrix. */
ND_API nd_array *nd_linalg_cond(nd_array *a);

/* np.linalg.lstsq(a, b, rcond): the x minimising |b - a @ x|, for a (m, n)
 * and b (m,) or (m, k), through the SVD (singular values at or below rcond
 * * max(S) are dropped; rcond < 0: eps * max(m, n), NumPy's default).
 * Outputs (any may be NULL): *x (n,) or (n, k); *residuals, the squared
 * norms of the columns of b - a @ x, shape (1,) or (k,) when the rank is n
 * and m > n, else (0,) (real for complex a and b); *rank, a 0-d int64; *s,
 * the singular values (min(m, n),). Synchronises: it evaluates the rank to give residuals its shape.
 * Errors: ND_ERR_SHAPE when b's rows differ from a's or a is not 2-d. */
ND_API nd_status nd_linalg_lstsq(nd_array *a, nd_array *b, double rcond, nd_array **x, nd_array **residuals,
                                 nd_array **rank, nd_array **s);

/* np.linalg.matrix_power(a, n): a @ a @ ... (n times) by repeated
 * squaring; the identity for n == 0 (dtype of a), inv(a)^|n| for n < 0
 * (ND_ERR_LINALG when singular). Integer a stays integer for n >= 0. */
ND_API nd_array *nd_linalg_matrix_power(nd_array *a, int64_t n);

/* np.linalg.multi_dot(arrays): the product of n >= 2 arrays in the order
 * of fewest multiplications (the classic chain-order dynamic programme);
 * the first may be 1-d (a row vector), the last 1-d (a column vector), the
 * others 2-d. Errors: ND_ERR_ARG for n < 2, ND_ERR_SHAPE otherwise as
 * nd_matmul. */
ND_API nd_array *nd_linalg_multi_dot(int n, nd_array *const *arrays);

/* The norm nd_linalg_norm computes (NumPy's ord argument). */
typedef enum {
    ND_NORM_DEFAULT, /* ord=None: the 2-norm of a flattened (Frobenius for a matrix) */
    ND_NORM_ORD,     /* a numeric ord: vectors p (any double: 0 counts non-zeros, INFINITY max |x|,
                        -INFINITY min |x|); matrices 1, -1, 2, -2, INFINITY, -INFINITY */
    ND_NORM_FRO,     /* 'fro' (matrices) */
    ND_NORM_NUC      /* 'nuc' (matrices): the sum of the singular values */
} nd_norm_kind;

/* np.linalg.norm(a, ord) with axis=None: a 1-d a takes vector norms, a
 * 2-d a matrix norms (the last two axes of a stack are not taken: use
 * ND_NORM_DEFAULT, which flattens any a). Result: a 0-d array of a's
 * float dtype (float64 for integers). Errors: ND_ERR_ARG for an ord the
 * kind or a's ndim does not have ('fro' of a vector, ord 3 of a matrix,
 * ND_NORM_ORD of a 3-d array), ND_ERR_ARG for another kind. */
ND_API nd_array *nd_linalg_norm(nd_array *a, nd_norm_kind kind, double ord);

/* np.tensordot(a, b, axes=naxes): sums over the last naxes axes of a and
 * the first naxes of b; shape a.shape[:-naxes] + b.shape[naxes:]. Errors:
 * ND_ERR_ARG for naxes < 0 or above either ndim, ND_ERR_SHAPE when the
 * summed lengths differ. */
ND_API nd_array *nd_tensordot(nd_array *a, nd_array *b, int naxes);
/* np.tensordot(a, b, axes=(axes_a, axes_b)): sums over a's axes_a[i] paired
 * with b's axes_b[i] (negative axes count from the end). Errors as above,
 * and ND_ERR_ARG for a repeated or out-of-range axis. */
ND_API nd_array *nd_tensordot_axes(nd_array *a, nd_array *b, int n, const int *axes_a, const int *axes_b);

/* np.kron(a, b): the Kronecker product; the lower-dimensional operand gets
 * leading length-1 axes; shape a.shape * b.shape elementwise. Dtype as
 * nd_mul. */
ND_API nd_array *nd_kron(nd_array *a, nd_array *b);

#ifdef __cplusplus
}
#endif
#endif /* ND_LINALG_DECOMP_H */
