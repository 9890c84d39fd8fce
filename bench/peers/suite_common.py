"""What every Python peer of the side-by-side suite shares (bench/README.md,
"Side-by-side suite"): sizes, formulas, float64 host references, the timing
rule and the JSON lines. bench/nd_suite.c and bench/nd_suite_*.c are
the same suite for nd; keep the two in step.

A peer describes each workload as four callables and hands them to
Suite.measure:
  prepare()         fresh inputs on the device, synchronised (untimed)
  host_inputs(inp)  the inputs as NumPy arrays for the reference, taken
                    before the run (stencils overwrite theirs); for the
                    workloads that draw inside the timed part, the same
                    draws made again from the same seed or key; None for a
                    statistical check only
  run(*inp)         the timed work: returns the output(s)
  sync(out)         waits until out is computed (device synchronise)
and to_host(out) turns outputs into NumPy arrays for the check.
"""
import argparse
import json
import math
import statistics
import sys
import time
import traceback

import numpy as np

# The default set, and the sorting/indexing/scan workloads run by naming
# them (bench/suite.sh run --workloads LIB: their NumPy runs are long).
DEFAULT_WORKLOADS = ["chain", "black_scholes", "stencil", "small_stencil", "pi",
                     "matmul_chain", "dot", "small_ops", "sum", "scope_read", "shared_matmul"]
LIB_WORKLOADS = ["sort", "argsort", "sort_rows", "cumsum", "gather_map", "mask_select",
                 "histogram"]
# Linear algebra and FFT (bench/suite.sh run --workloads la; nd_suite_la.c).
LA_WORKLOADS = ["cholesky_f32", "cholesky_f64", "solve_f32", "solve_f64", "eigh_f32", "eigh_f64",
                "svd_f32", "svd_f64", "batched_solve", "batched_svd", "fft", "rfft2", "fft_window",
                "einsum3"]
WORKLOADS = DEFAULT_WORKLOADS + LIB_WORKLOADS + LA_WORKLOADS
GROUPS = {"lib": LIB_WORKLOADS, "la": LA_WORKLOADS}

FULL = dict(chain_n=1 << 27, bs_n=1 << 26, stencil_n=16384, stencil_iters=20,
            small_n=1000, small_iters=50, pi_n=1 << 28, matmul_n=8192,
            dot_n=100_000_000, ops_n=1000, ops_iters=1000, sum_n=1 << 28,
            sort_n=1 << 28, argsort_n=1 << 26, rows_r=4096, rows_c=65536, cumsum_n=1 << 28,
            gather_n=1 << 26, mask_n=1 << 28, hist_n=1 << 28, hist_bins=1024,
            scope_n=1 << 24, norm_n=4096,
            # svd at 4096: at 8192 one call takes 6-12 s on the H200 (--set svd_n=8192)
            la_n=8192, svd_n=4096, bsolve_b=100_000, bsolve_n=8, bsvd_b=10_000, bsvd_n=32,
            fft_n=1 << 26, rfft2_n=8192, einsum_n=4096)
SMALL = dict(chain_n=1 << 20, bs_n=1 << 20, stencil_n=1024, stencil_iters=20,
             small_n=200, small_iters=50, pi_n=1 << 22, matmul_n=512,
             dot_n=1_000_000, ops_n=1000, ops_iters=100, sum_n=1 << 22,
             sort_n=1 << 20, argsort_n=1 << 20, rows_r=64, rows_c=4096, cumsum_n=1 << 20,
             gather_n=1 << 20, mask_n=1 << 20, hist_n=1 << 20, hist_bins=1024,
             scope_n=1 << 20, norm_n=256,
             la_n=1024, svd_n=1024, bsolve_b=10_000, bsolve_n=8, bsvd_b=1000, bsvd_n=32,
             fft_n=1 << 22, rfft2_n=2048, einsum_n=1024)
# The sizes --set may change (the linear algebra and FFT ones).
SETTABLE = ("la_n", "svd_n", "bsolve_b", "bsvd_b", "fft_n", "rfft2_n", "einsum_n")

# Tolerances on the error measure each check describes (as nd_suite).
TOL = dict(chain=1e-4, black_scholes=1e-4, stencil=1e-4, small_stencil=1e-10,
           pi=1e-6, matmul_chain=1e-3, dot=1e-12, small_ops=1e-4, sum=1e-4,
           sort=1e-9, argsort=0.0, sort_rows=1e-9, cumsum=1e-2, gather_map=1e-5,
           mask_select=0.0, histogram=1e-4, scope_read=1e-4, shared_matmul=1e-3,
           # negative: -c means c n eps of the workload's dtype and size (tolerance())
           cholesky_f32=-4, cholesky_f64=-4, solve_f32=-4, solve_f64=-4, eigh_f32=-16,
           eigh_f64=-16, svd_f32=-16, svd_f64=-16, batched_solve=1e-5, batched_svd=1e-4, fft=1e-5,
           rfft2=1e-5,
           fft_window=1e-5, einsum3=1e-3)
CHECK_KIND = dict(chain="sampled", black_scholes="sampled", stencil="sampled",
                  small_stencil="full", pi="scalar", matmul_chain="sampled",
                  dot="scalar", small_ops="full", sum="scalar",
                  sort="sorted+sum", argsort="permutation", sort_rows="sorted+sums",
                  cumsum="sampled", gather_map="sampled", mask_select="full",
                  histogram="full", scope_read="scalar", shared_matmul="sampled",
                  **{w: "backward" if w.startswith("batched_") else "sampled" for w in LA_WORKLOADS})
DTYPE = dict(chain="float32", black_scholes="float32", stencil="float32",
             small_stencil="float64", pi="float32", matmul_chain="float32",
             dot="float64", small_ops="float32", sum="float32",
             sort="float32", argsort="int64", sort_rows="float32", cumsum="float32",
             gather_map="float32", mask_select="float32", histogram="counts",
             scope_read="float32", shared_matmul="float32",
             cholesky_f32="float32", cholesky_f64="float64", solve_f32="float32",
             solve_f64="float64", eigh_f32="float32", eigh_f64="float64", svd_f32="float32",
             svd_f64="float64", batched_solve="float32", batched_svd="float32", fft="complex64",
             rfft2="complex64",
             fft_window="complex64", einsum3="float32")
# At most this many timed runs (svd: seconds a call; bench/README.md).
RUNS_CAP = dict(svd_f32=3, svd_f64=3)

# The time budget (bench/README.md): after the checked run and one warm-up,
# up to --runs timed runs (at least MIN_RUNS); stop after 3 once a run took
# over LONG_RUN_S, and after MIN_RUNS once the workload has spent BUDGET_S.
MIN_RUNS = 7
LONG_RUN_S = 10.0
BUDGET_S = 20.0

SAMPLES = 4096
LA_SAMPLES = 256  # entries of a factorisation's residual checked
STENCIL_SAMPLES = 64
MATMUL_ROWS = 16


# ------------------------------------------------------------- formulas
# Written once for NumPy, CuPy, jax.numpy and torch: `xp` is the module.
# Python floats are weak scalars in all four, so float32 stays float32.

def chain(xp, a, b):
    return xp.sin(a) * xp.cos(b) + xp.sqrt(xp.abs(a * b)) * xp.exp(-a * a)


BS_RATE, BS_VOL = 0.02, 0.30
CND_A = (0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429)
RSQRT2PI = 0.39894228040143267794


def _cnd(xp, d):
    k = 1.0 / (1.0 + 0.2316419 * xp.abs(d))
    poly = CND_A[4]
    for c in CND_A[3::-1]:
        poly = c + k * poly
    w = RSQRT2PI * xp.exp(-0.5 * (d * d)) * (k * poly)
    return xp.where(d > 0, 1.0 - w, w)


def black_scholes(xp, S, X, T):
    """Call and put, the formula of bench/gpu_suite.c."""
    vsqrt_t = BS_VOL * xp.sqrt(T)
    d1 = (xp.log(S / X) + (BS_RATE + 0.5 * BS_VOL * BS_VOL) * T) / vsqrt_t
    d2 = d1 - vsqrt_t
    c1, c2 = _cnd(xp, d1), _cnd(xp, d2)
    x_disc = X * xp.exp(-BS_RATE * T)
    return S * c1 - x_disc * c2, x_disc * (1.0 - c2) - S * (1.0 - c1)


def stencil_rhs(u):
    """The right-hand side of u[1:-1, 1:-1] = ...: computed in full before
    the store, as NumPy does."""
    return 0.2 * (u[1:-1, 1:-1] + u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])


def stencil_body(c, north, south, west, east):
    """The same right-hand side on its five views (for cupy.fuse)."""
    return 0.2 * (c + north + south + west + east)


def small_ops_step(xp, x):
    return x * 0.99 + 0.01 * xp.sin(x)


def small_ops_loop(sz, step):
    """small_ops as the eager libraries run it: step applied ops_iters times."""
    def run(x):
        for _ in range(sz["ops_iters"]):
            x = step(x)
        return x
    return run


def scope_read(xp, x, y):
    """nd's scope_read: twelve named values, the sum of z + w read."""
    xy = x * y
    z = xp.sin(xy) + xp.cos(x)
    w = xp.exp(-(y * y)) * xp.sqrt(xp.abs(xy))
    return (z + w).sum()


def numpy_mean_std(x):
    """Column mean and (population) standard deviation, kept 2-d."""
    return x.mean(0, keepdims=True), x.std(0, keepdims=True)


def shared_matmul(x, w1, w2, mean_std=numpy_mean_std):
    """nd's shared_matmul: one normalised z feeding three products."""
    m, s = mean_std(x)
    z = (x - m) / s
    return z @ w1, z @ w2, z.T @ z


def matmul_chain(xp, A, B, C):
    D = A @ B + C
    return (xp.sin(D) + xp.cos(D)).sum(1)


def pi_inside(x, y):
    return x * x + y * y <= 1.0


# The sorting/indexing/scan workloads. Inputs: sort, argsort, sort_rows,
# mask_select and histogram uniform in [0, 1) (argsort float64, the rest
# float32); cumsum uniform in [-1, 1) (a random walk, so a float32 running
# sum stays accurate); gather_map x uniform in [0, 1) and idx int64 uniform
# in [0, n).
def gather_map(xp, x, idx):
    return xp.sin(x[idx]) * 2.0 + 1.0


def mask_select(x):
    return x[x > 0.5]


# The linear algebra and FFT workloads (nd_suite_la.c says the same).
# cholesky, solve, eigh, svd: A = (G + G^T)/2 + I, G = P P^T / n, P uniform
# [-1, 1) (symmetric positive definite, condition number about 5); solve's
# b one vector (n,) uniform [-1, 1). batched_solve: A (B, 8, 8) uniform
# [-1, 1) plus 2 on the diagonal, b (B, 8, 1) uniform [-1, 1) (a stack of
# column vectors: NumPy 2 reads a (B, 8) b as one matrix). batched_svd: A
# (B, 32, 32) uniform [-1, 1), reduced, with vectors. fft, fft_window:
# x complex64 with both parts uniform [-1, 1), w float32 uniform [0, 1);
# rfft2: x float32 uniform [-1, 1); einsum3: three n x n float32 uniform
# [-1, 1). svd reduced (full_matrices=False) with vectors.
def la_kind(name):
    """cholesky, solve, eigh or svd."""
    return name.split("_")[0]


def la_size(sz, name):
    return sz["svd_n"] if la_kind(name) == "svd" else sz["la_n"]


def spd(P, eye):
    """A = (G + G^T)/2 + I with G = P P^T / n; eye the identity of P's
    dtype and device."""
    G = (P @ P.T) / P.shape[0]
    return (G + G.T) * 0.5 + eye


def batch_matrices(P, eye):
    return P + 2.0 * eye


def tolerance(name, sz):
    tol = TOL[name]
    if tol >= 0:
        return tol
    eps = float(np.finfo(np.float32 if DTYPE[name] == "float32" else np.float64).eps)
    return -tol * la_size(sz, name) * eps


# ----------------------------------------------------------- references

def _sample(n, seed, count=SAMPLES):
    return np.random.default_rng(seed).integers(0, n, count)


def _norm_err(got, ref):
    got = np.asarray(got, dtype=np.float64)
    return float(np.linalg.norm(got - ref) / np.linalg.norm(ref))


def _jacobi_ref(g, iters):
    g = g.astype(np.float64, copy=True)
    for _ in range(iters):
        g[1:-1, 1:-1] = stencil_rhs(g)
    return g


def _stencil_point(u0, i, j, iters):
    # A point after `iters` sweeps depends only on start values within
    # `iters` steps; a window of radius iters + 1 with its border held fixed
    # gives it exactly (see stencil_point_ref in nd_suite_stencil.c).
    n = u0.shape[0]
    r = iters + 1
    i0, i1, j0, j1 = max(0, i - r), min(n - 1, i + r), max(0, j - r), min(n - 1, j + r)
    win = _jacobi_ref(u0[i0:i1 + 1, j0:j1 + 1], iters)
    return win[i - i0, j - j0]


class WrongAnswer(Exception):
    pass


def _sorted_and_sums(y, x, axis):
    if not np.all(np.diff(y, axis=axis) >= 0):
        raise WrongAnswer("the output is not sorted")
    got = y.astype(np.float64).sum(axis=axis)
    ref = x.astype(np.float64).sum(axis=axis)
    return float(np.max(np.abs(got - ref) / np.maximum(np.abs(ref), 1e-300)))


def _check_lib(name, sz, hin, hout):
    if name == "sort":
        (y,) = hout
        _expect_dtype(y, name)
        return _sorted_and_sums(y, hin[0], 0)
    if name == "sort_rows":
        (y,) = hout
        _expect_dtype(y, name)
        return _sorted_and_sums(y, hin[0], 1)
    if name == "argsort":
        (idx,) = hout
        if not np.issubdtype(idx.dtype, np.integer):
            raise WrongAnswer(f"indices of dtype {idx.dtype}")
        x = hin[0]
        counts = np.bincount(idx.astype(np.int64), minlength=x.size)
        if counts.size != x.size or counts.min() != 1 or counts.max() != 1:
            raise WrongAnswer("the indices are not a permutation")
        if not np.all(np.diff(x[idx]) >= 0):
            raise WrongAnswer("x[indices] is not sorted")
        return 0.0
    if name == "cumsum":
        (y,) = hout
        _expect_dtype(y, name)
        idx = np.sort(_sample(y.size, 5))
        ref = np.cumsum(hin[0].astype(np.float64))[idx]
        return _norm_err(y[idx], ref)
    if name == "gather_map":
        (y,) = hout
        _expect_dtype(y, name)
        x, ix = hin
        idx = _sample(y.size, 6)
        return _norm_err(y[idx], np.sin(x[ix[idx]].astype(np.float64)) * 2.0 + 1.0)
    if name == "mask_select":
        (y,) = hout
        _expect_dtype(y, name)
        ref = mask_select(hin[0])
        if y.shape != ref.shape:
            raise WrongAnswer(f"{y.size} values selected, expected {ref.size}")
        return float(np.count_nonzero(y != ref))
    if name == "histogram":
        (h,) = hout
        ref, _ = np.histogram(hin[0], bins=sz["hist_bins"], range=(0.0, 1.0))
        h = np.asarray(h, dtype=np.float64).ravel()
        if h.shape != ref.shape:
            raise WrongAnswer(f"{h.size} bins, expected {ref.size}")
        return float(np.max(np.abs(h - ref)) / ref.mean())
    raise ValueError(name)


def _pairs(n, seed, count=LA_SAMPLES):
    rng = np.random.default_rng(seed)
    return rng.integers(0, n, count), rng.integers(0, n, count)


def _orth_err(Q, seed):
    """The largest |Q^T Q - I| over sampled pairs of Q's columns (a quarter
    of them a column with itself)."""
    k, l = _pairs(Q.shape[1], seed)
    l[::4] = k[::4]
    got = np.einsum("ns,ns->s", Q[:, k].astype(np.float64), Q[:, l].astype(np.float64))
    return float(np.max(np.abs(got - (k == l))))


def _fft_err(y, ref):
    return float(np.linalg.norm(y.astype(np.complex128) - ref) / np.linalg.norm(ref))


def _check_la(name, sz, hin, hout):
    for v in hout:
        _expect_dtype(v, name)
    if name in ("fft", "rfft2", "fft_window"):
        (y,) = hout
        if name == "fft":
            return _fft_err(y, np.fft.fft(hin[0].astype(np.complex128)))
        if name == "fft_window":
            x, w = hin
            return _fft_err(y, np.fft.fft(x.astype(np.complex128) * w.astype(np.float64)))
        return _fft_err(y, np.fft.rfft2(hin[0].astype(np.float64)))
    if name == "einsum3":
        (y,) = hout
        A, B, C = (v.astype(np.float64) for v in hin)
        rows = _sample(y.shape[0], 7, 16)
        return _norm_err(y[rows], (A[rows] @ B) @ C)
    if name == "batched_solve":
        (x,) = hout
        A, b = hin
        if x.shape != b.shape:
            raise WrongAnswer(f"solutions of shape {x.shape}, expected {b.shape}")
        m = _sample(A.shape[0], 15)
        A, b, x = (v[m].astype(np.float64) for v in (A, b, x))
        r = np.abs(A @ x - b).max(axis=(1, 2))
        scale = np.abs(A).sum(axis=2).max(axis=1) * np.abs(x).max(axis=(1, 2)) + \
            np.abs(b).max(axis=(1, 2))
        return float(np.max(r / scale))
    if name == "batched_svd":
        U, S, Vh = hout
        (A,) = hin
        b, n = A.shape[0], A.shape[-1]
        if U.shape != A.shape or Vh.shape != A.shape or S.shape != (b, n):
            raise WrongAnswer(f"U, S, Vh of shapes {U.shape}, {S.shape}, {Vh.shape} for A {A.shape}")
        m = _sample(b, 16)
        A, U, S, Vh = (v[m].astype(np.float64) for v in (A, U, S, Vh))
        if not (np.all(S >= 0) and np.all(np.diff(S, axis=1) <= 0)):
            raise WrongAnswer("the singular values are not descending and >= 0")
        # per sampled matrix: |U diag(S) Vh - A|_F / |A|_F, |U^T U - I|, |Vh Vh^T - I| (largest entry)
        rec = np.linalg.norm((U * S[:, None, :]) @ Vh - A, axis=(1, 2)) / np.linalg.norm(A, axis=(1, 2))
        eye = np.eye(n)
        ou = np.abs(np.swapaxes(U, 1, 2) @ U - eye).max(axis=(1, 2))
        ov = np.abs(Vh @ np.swapaxes(Vh, 1, 2) - eye).max(axis=(1, 2))
        return float(max(rec.max(), ou.max(), ov.max()))
    A = hin[0].astype(np.float64)
    n = A.shape[0]
    i, j = _pairs(n, 11)
    kind = la_kind(name)
    if kind == "cholesky":
        (L,) = hout
        j[::8] = i[::8]
        # (L L^T)[i, j] from whole rows: an upper triangle left in L shows
        got = np.einsum("sk,sk->s", L[i].astype(np.float64), L[j].astype(np.float64))
        return _norm_err(got, A[i, j])
    if kind == "solve":
        (x,) = hout
        if x.shape != (n,):
            raise WrongAnswer(f"x of shape {x.shape}, expected ({n},)")
        return _norm_err(A[i] @ x.astype(np.float64), hin[1].astype(np.float64)[i])
    if kind == "eigh":
        w, V = (v.astype(np.float64) for v in hout)
        if not np.all(np.diff(w) >= 0):
            raise WrongAnswer("the eigenvalues are not ascending")
        got = np.einsum("sk,ks->s", A[i], V[:, j])
        return max(_norm_err(got, w[j] * V[i, j]), _orth_err(V, 12))
    if kind == "svd":
        U, S, Vh = (v.astype(np.float64) for v in hout)
        if not (np.all(S >= 0) and np.all(np.diff(S) <= 0)):
            raise WrongAnswer("the singular values are not descending and >= 0")
        got = np.einsum("sc,c,cs->s", U[i], S, Vh[:, j])
        return max(_norm_err(got, A[i, j]), _orth_err(U, 13), _orth_err(Vh.T, 14))
    raise ValueError(name)


def _expect_dtype(arr, name):
    want = DTYPE[name]
    if str(arr.dtype) != want:
        raise WrongAnswer(f"output dtype {arr.dtype}, expected {want}")


def check(name, sz, hin, hout):
    """Error of hout (NumPy arrays) against the float64 reference from hin;
    returns (err, tol, kind). hin None: the statistical check only (for
    random draws that cannot be made again outside the compiled code)."""
    tol, kind = tolerance(name, sz), CHECK_KIND[name]
    if name in LIB_WORKLOADS:
        return _check_lib(name, sz, hin, hout), tol, kind
    if name in LA_WORKLOADS:
        return _check_la(name, sz, hin, hout), tol, kind
    if name == "chain":
        (y,) = hout
        _expect_dtype(y, name)
        idx = _sample(y.size, 1)
        a, b = (v[idx].astype(np.float64) for v in hin)
        return _norm_err(y[idx], chain(np, a, b)), tol, kind
    if name == "black_scholes":
        call, put = hout
        _expect_dtype(call, name)
        _expect_dtype(put, name)
        idx = _sample(call.size, 2)
        S, X, T = (v[idx].astype(np.float64) for v in hin)
        rc, rp = black_scholes(np, S, X, T)
        got = np.concatenate([call[idx], put[idx]])
        return _norm_err(got, np.concatenate([rc, rp])), tol, kind
    if name == "stencil":
        (u,) = hout
        _expect_dtype(u, name)
        (u0,) = hin
        n = u0.shape[0]
        pts = [(0, 0), (1, 1), (n - 2, n - 2), (0, n // 2), (n // 2, 0), (1, n // 2),
               (n // 2, n - 2), (n - 1, n - 1)]
        rng = np.random.default_rng(3)
        pts += [tuple(rng.integers(0, n, 2)) for _ in range(STENCIL_SAMPLES - len(pts))]
        ref = np.array([_stencil_point(u0, i, j, sz["stencil_iters"]) for i, j in pts])
        got = np.array([u[i, j] for i, j in pts])
        return _norm_err(got, ref), tol, kind
    if name == "small_stencil":
        (u,) = hout
        _expect_dtype(u, name)
        return _norm_err(u, _jacobi_ref(hin[0], sz["small_iters"])), tol, kind
    if name == "pi":
        (got,) = hout
        n = sz["pi_n"]
        # a count (integer) or the fraction inside
        frac = float(got) / n if np.issubdtype(got.dtype, np.integer) else float(got)
        sigma6 = 6 * 1.64 / math.sqrt(n)
        if not abs(4 * frac - math.pi) <= sigma6:
            raise WrongAnswer(f"pi estimate {4 * frac:.8f} is statistically implausible")
        if hin is None:
            return abs(4 * frac - math.pi) / math.pi, sigma6 / math.pi, "statistical"
        x, y = (v.astype(np.float64) for v in hin)
        ref = np.count_nonzero(x * x + y * y <= 1.0) / n
        return abs(frac - ref) / ref, tol, kind
    if name == "matmul_chain":
        (s,) = hout
        _expect_dtype(s, name)
        A, B, C = hin
        rows = _sample(s.size, 4, MATMUL_ROWS)
        D = A[rows].astype(np.float64) @ B.astype(np.float64) + C[rows]
        return _norm_err(s[rows], (np.sin(D) + np.cos(D)).sum(1)), tol, kind
    if name == "dot":
        (got,) = hout
        _expect_dtype(got, name)
        n = sz["dot_n"]
        got = float(got)
        # uniform [0, 1) vectors: a.b has mean n/4 and deviation sqrt(7n/144)
        sigma6 = 6 * math.sqrt(7 * n / 144)
        if not abs(got - n / 4) <= sigma6:
            raise WrongAnswer(f"dot {got:.6g} is statistically implausible for n = {n}")
        if hin is None:
            return abs(got - n / 4) / (n / 4), sigma6 / (n / 4), "statistical"
        ref = float(np.dot(hin[0].astype(np.float64), hin[1].astype(np.float64)))
        return abs(got - ref) / ref, tol, kind
    if name == "small_ops":
        (x,) = hout
        _expect_dtype(x, name)
        ref = hin[0].astype(np.float64)
        for _ in range(sz["ops_iters"]):
            ref = small_ops_step(np, ref)
        return _norm_err(x, ref), tol, kind
    if name == "sum":
        (s,) = hout
        _expect_dtype(s, name)
        ref = float(hin[0].astype(np.float64).sum())
        return abs(float(s) - ref) / ref, tol, kind
    if name == "scope_read":
        (s,) = hout
        _expect_dtype(s, name)
        ref = float(scope_read(np, *(v.astype(np.float64) for v in hin)))
        return abs(float(s) - ref) / abs(ref), tol, kind
    if name == "shared_matmul":
        for v in hout:
            _expect_dtype(v, name)
        x, w1, w2 = (v.astype(np.float64) for v in hin)
        m, s = numpy_mean_std(x)
        z = (x - m) / s
        rows = _sample(x.shape[0], 5, MATMUL_ROWS)
        got = np.concatenate([hout[0][rows], hout[1][rows], hout[2][rows]])
        ref = np.concatenate([z[rows] @ w1, z[rows] @ w2, z.T[rows] @ z])
        return _norm_err(got, ref), tol, kind
    raise ValueError(name)


def measures(name, sz):
    """(n, bytes that must move or None, flops), as nd_suite reports them."""
    f = float
    if name == "chain":
        n = sz["chain_n"]; return n, 12 * f(n), 11 * f(n)
    if name == "black_scholes":
        n = sz["bs_n"]; return n, 20 * f(n), 58 * f(n)
    if name == "stencil":
        n, it = sz["stencil_n"], sz["stencil_iters"]
        return n, it * 8 * f(n) * n, it * 5 * f(n - 2) * (n - 2)
    if name == "small_stencil":
        n, it = sz["small_n"], sz["small_iters"]
        return n, it * 16 * f(n) * n, it * 5 * f(n - 2) * (n - 2)
    if name == "pi":
        n = sz["pi_n"]; return n, None, 4 * f(n)
    if name == "matmul_chain":
        n = sz["matmul_n"]; return n, 12 * f(n) * n + 4 * n, 2 * f(n) ** 3 + 5 * f(n) * n
    if name == "dot":
        n = sz["dot_n"]; return n, None, 2 * f(n)
    if name == "small_ops":
        n, it = sz["ops_n"], sz["ops_iters"]; return n, it * 8 * f(n), it * 4 * f(n)
    if name == "sum":
        n = sz["sum_n"]; return n, 4 * f(n), f(n)
    # Sorts are not bandwidth-bound: no floor. cumsum reads and writes;
    # gather_map reads idx, gathers x and writes; mask_select reads and
    # writes the half it keeps; histogram reads.
    if name == "sort":
        return sz["sort_n"], None, 0.0
    if name == "argsort":
        return sz["argsort_n"], None, 0.0
    if name == "sort_rows":
        return sz["rows_r"] * sz["rows_c"], None, 0.0
    if name == "cumsum":
        n = sz["cumsum_n"]; return n, 8 * f(n), f(n)
    if name == "gather_map":
        n = sz["gather_n"]; return n, 16 * f(n), 3 * f(n)
    if name == "mask_select":
        n = sz["mask_n"]; return n, 6 * f(n), f(n)
    if name == "histogram":
        n = sz["hist_n"]; return n, 4 * f(n), 2 * f(n)
    # The linear algebra and FFT workloads are compute-bound: no floor;
    # nominal flop counts (cholesky n^3/3, solve 2n^3/3, eigh 9n^3, svd
    # 12n^3, a transform 5 N log2 N complex, half that real).
    if name in LA_WORKLOADS[:8]:
        n = la_size(sz, name)
        return n, None, dict(cholesky=1 / 3, solve=2 / 3, eigh=9.0, svd=12.0)[la_kind(name)] * f(n) ** 3
    if name == "batched_solve":
        b, n = sz["bsolve_b"], sz["bsolve_n"]; return b, None, b * (2 / 3 * f(n) ** 3 + 2 * f(n) * n)
    if name == "batched_svd":
        b, n = sz["bsvd_b"], sz["bsvd_n"]; return b, None, b * 12 * f(n) ** 3
    if name in ("fft", "fft_window"):
        n = sz["fft_n"]; return n, None, 5 * f(n) * math.log2(n)
    if name == "rfft2":
        n = sz["rfft2_n"]; return n, None, 2.5 * f(n) * n * math.log2(f(n) * n)
    if name == "einsum3":
        n = sz["einsum_n"]; return n, None, 4 * f(n) ** 3
    if name == "scope_read":
        n = sz["scope_n"]; return n, 8 * f(n), 12 * f(n)
    if name == "shared_matmul":
        n = sz["norm_n"]; return n, 24 * f(n) * n, 6 * f(n) ** 3 + 8 * f(n) * n
    raise ValueError(name)


# --------------------------------------------------------------- runner

def emit(obj):
    print(json.dumps(obj), flush=True)


class Suite:
    """Argument parsing, the timing rule and the output of one peer."""

    def __init__(self, description, argv=None):
        p = argparse.ArgumentParser(description=description)
        p.add_argument("workloads", nargs="*", metavar="WORKLOAD",
                       help="workloads to run (default: " + " ".join(DEFAULT_WORKLOADS) + "; also: "
                       + " ".join(LIB_WORKLOADS) + ")")
        p.add_argument("--small", action="store_true", help="shrink every size (a quick check)")
        p.add_argument("--runs", type=int, default=9, help="timed runs (at least 7; default 9)")
        p.add_argument("--set", action="append", default=[], metavar="SIZE=V",
                       help="override a size: " + ", ".join(SETTABLE))
        args = p.parse_args(argv)
        names = [v for w in args.workloads for v in GROUPS.get(w, [w])]
        bad = [w for w in names if w not in WORKLOADS]
        if bad:
            p.error(f"unknown workload(s) {bad}; choose from {WORKLOADS} or a group {list(GROUPS)}")
        self.names = names or DEFAULT_WORKLOADS
        self.small = args.small
        self.runs = max(MIN_RUNS, args.runs)
        self.sz = dict(SMALL if args.small else FULL)
        for item in args.set:
            key, _, value = item.partition("=")
            if key not in SETTABLE or not value.isdigit() or int(value) < 1:
                p.error(f"--set {item}: takes one of {SETTABLE} = a positive size")
            self.sz[key] = int(value)
        self.failures = 0
        self.seed = 20261123
        print(f"{'impl':<16} {'workload':<14} {'median ms':>12} {'min ms':>12} "
              f"{'runs':>5} {'error':>10}", file=sys.stderr)

    def next_seed(self):
        self.seed += 1
        return self.seed

    def meta(self, impl, **info):
        emit({"impl": impl, "meta": dict(info, small=self.small)})

    def fail(self, impl, name, why):
        self.failures += 1
        emit({"impl": impl, "workload": name, "error": why})
        print(f"{impl:<16} {name:<14} FAILED: {why}", file=sys.stderr)

    def guarded(self, impl, name, fn):
        """Runs fn(); any exception becomes an "error" line, never a stop."""
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - every failure is reported
            detail = traceback.format_exception_only(type(e), e)[-1].strip()
            self.fail(impl, name, detail[:500])

    def measure(self, impl, name, prepare, host_inputs, run, sync, to_host, note=None):
        start = time.perf_counter()

        def once(for_check):
            inp = prepare()
            hin = host_inputs(inp) if for_check else None
            t0 = time.perf_counter()
            out = run(*inp)
            sync(out)
            return time.perf_counter() - t0, inp, hin, out

        # 1. the checked run: nothing is timed before the answer is right
        t, inp, hin, out = once(True)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        try:
            err, tol, kind = check(name, self.sz, hin, [to_host(o) for o in outs])
        except WrongAnswer as e:
            return self.fail(impl, name, f"wrong answer: {e}")
        if not err <= tol:
            return self.fail(impl, name, f"wrong answer: error {err:.3g} exceeds the "
                                         f"tolerance {tol:.0e} ({kind} check)")
        del inp, hin, out, outs
        # 2. one more untimed run, unless the checked run was already long
        if t <= LONG_RUN_S:
            once(False)
        # 3. the timed runs
        times = []
        target = min(self.runs, RUNS_CAP.get(name, self.runs))
        while len(times) < target:
            times.append(once(False)[0])
            if len(times) >= 3 and times[-1] > LONG_RUN_S:
                break
            if len(times) >= MIN_RUNS and time.perf_counter() - start > BUDGET_S:
                break
        n, nbytes, flops = measures(name, self.sz)
        med = statistics.median(times)
        line = {"impl": impl, "workload": name, "n": n, "dtype": DTYPE[name],
                "median_s": med, "min_s": min(times), "runs": len(times),
                "err": err, "tol": tol, "check": kind, "bytes": nbytes, "flops": flops}
        if note:
            line["note"] = note
        emit(line)
        rate = f"{nbytes / med * 1e-9:8.1f} GB/s" if nbytes else ""
        print(f"{impl:<16} {name:<14} {med * 1e3:12.4f} {min(times) * 1e3:12.4f} "
              f"{len(times):5d} {err:10.2e} {rate}", file=sys.stderr)

    def exit(self):
        sys.exit(1 if self.failures else 0)
