#!/usr/bin/env python3
"""NumPy on the CPU: the side-by-side suite's baseline (bench/README.md,
"Side-by-side suite"). Plain NumPy, op by op with temporaries, as a NumPy
user writes it; matmul and dot go to NumPy's BLAS.

Usage: numpy_suite.py [--small] [--runs N] [WORKLOAD ...]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402

import suite_common as sc  # noqa: E402

IMPL = "numpy"


def main():
    suite = sc.Suite(__doc__)
    sz = suite.sz
    suite.meta(IMPL, library=f"numpy {np.__version__}", device="cpu", threads=os.cpu_count())
    state = {"rng": np.random.default_rng(suite.next_seed())}

    def uniform(shape, lo, hi, dtype=np.float32):
        x = state["rng"].random(shape, dtype=dtype)
        x *= hi - lo
        x += lo
        return x

    def plain_inputs(*specs):
        return lambda: tuple(uniform(*s) for s in specs)

    def same(inp):
        return [np.array(v, copy=True) for v in inp]

    def ident(out):
        return None

    def to_host(x):
        return np.asarray(x)

    # pi and dot draw inside the timed part, from a generator seeded
    # outside it; the check draws the same values from the same seed.
    def seeded():
        seed = suite.next_seed()
        state["draw"] = np.random.default_rng(seed)
        return (seed,)

    def redraw(dtype, count, n):
        def host(inp):
            rng = np.random.default_rng(inp[0])
            return [rng.random(n, dtype=dtype) for _ in range(count)]
        return host

    def pi_run(seed):
        n = sz["pi_n"]
        x = state["draw"].random(n, dtype=np.float32)
        y = state["draw"].random(n, dtype=np.float32)
        return np.count_nonzero(sc.pi_inside(x, y))

    def dot_run(seed):
        n = sz["dot_n"]
        return np.dot(state["draw"].random(n), state["draw"].random(n))

    def sweeps(iters):
        # The right-hand side in one preallocated buffer, summed in
        # stencil_rhs's order (the same bits): NumPy at its best, instead
        # of four fresh grid-sized temporaries per sweep (the 16384^2
        # stencil took 27.6 s a run that way, on one core).
        def run(u):
            t = np.empty_like(u[1:-1, 1:-1])
            for _ in range(iters):
                np.add(u[1:-1, 1:-1], u[:-2, 1:-1], out=t)
                np.add(t, u[2:, 1:-1], out=t)
                np.add(t, u[1:-1, :-2], out=t)
                np.add(t, u[1:-1, 2:], out=t)
                np.multiply(t, 0.2, out=t)
                u[1:-1, 1:-1] = t
            return u
        return run

    def gather_inputs():
        n = sz["gather_n"]
        return uniform(n, 0, 1), state["rng"].integers(0, n, n, dtype=np.int64)

    # NumPy before 2.0 transforms float32 and complex64 in double precision;
    # its result is cast back (inside the timed part) so the dtype matches.
    np2 = int(np.__version__.split(".")[0]) >= 2
    c64 = (lambda y: y) if np2 else (lambda y: y.astype(np.complex64))

    def la_inputs(name):
        dt = np.float32 if name.endswith("f32") else np.float64
        n = sc.la_size(sz, name)

        def prepare():
            A = sc.spd(uniform((n, n), -1, 1, dt), np.eye(n, dtype=dt))
            return (A, uniform(n, -1, 1, dt)) if sc.la_kind(name) == "solve" else (A,)
        return prepare

    def batch_inputs():
        b, n = sz["bsolve_b"], sz["bsolve_n"]
        return (sc.batch_matrices(uniform((b, n, n), -1, 1), np.eye(n, dtype=np.float32)),
                uniform((b, n, 1), -1, 1))

    def complex_inputs(window):
        n = sz["fft_n"]

        def prepare():
            x = (uniform(n, -1, 1) + 1j * uniform(n, -1, 1)).astype(np.complex64)
            return (x, uniform(n, 0, 1)) if window else (x,)
        return prepare

    la_runs = {"cholesky": np.linalg.cholesky, "solve": np.linalg.solve,
               "eigh": lambda a: tuple(np.linalg.eigh(a)),
               "svd": lambda a: tuple(np.linalg.svd(a, full_matrices=False))}
    n_st, n_sm = sz["stencil_n"], sz["small_n"]
    m = sz["matmul_n"]
    work = {
        "chain": (plain_inputs((sz["chain_n"], -2, 2), (sz["chain_n"], -2, 2)), same,
                  lambda a, b: sc.chain(np, a, b)),
        "black_scholes": (plain_inputs((sz["bs_n"], 5, 30), (sz["bs_n"], 1, 100),
                                       (sz["bs_n"], 0.25, 10)), same,
                          lambda S, X, T: sc.black_scholes(np, S, X, T)),
        "stencil": (plain_inputs(((n_st, n_st), 0, 1)), same, sweeps(sz["stencil_iters"])),
        "small_stencil": (plain_inputs(((n_sm, n_sm), 0, 1, np.float64)), same,
                          sweeps(sz["small_iters"])),
        "pi": (seeded, redraw(np.float32, 2, sz["pi_n"]), pi_run),
        "matmul_chain": (plain_inputs(*[((m, m), -1, 1)] * 3), same,
                         lambda A, B, C: sc.matmul_chain(np, A, B, C)),
        "dot": (seeded, redraw(np.float64, 2, sz["dot_n"]), dot_run),
        "small_ops": (plain_inputs((sz["ops_n"], -1, 1)), same,
                      sc.small_ops_loop(sz, lambda x: sc.small_ops_step(np, x))),
        "sum": (plain_inputs((sz["sum_n"], 0, 1)), same, lambda x: x.sum()),
        "sort": (plain_inputs((sz["sort_n"], 0, 1)), same, np.sort),
        "argsort": (plain_inputs((sz["argsort_n"], 0, 1, np.float64)), same,
                    lambda x: np.argsort(x, kind="stable")),
        "sort_rows": (plain_inputs(((sz["rows_r"], sz["rows_c"]), 0, 1)), same,
                      lambda x: np.sort(x, axis=-1)),
        "cumsum": (plain_inputs((sz["cumsum_n"], -1, 1)), same, np.cumsum),
        "gather_map": (gather_inputs, same, lambda x, idx: sc.gather_map(np, x, idx)),
        "mask_select": (plain_inputs((sz["mask_n"], 0, 1)), same, sc.mask_select),
        "histogram": (plain_inputs((sz["hist_n"], 0, 1)), same,
                      lambda x: np.histogram(x, bins=sz["hist_bins"], range=(0.0, 1.0))[0]),
        "scope_read": (plain_inputs((sz["scope_n"], -2, 2), (sz["scope_n"], -2, 2)), same,
                       lambda x, y: sc.scope_read(np, x, y)),
        "shared_matmul": (plain_inputs(*[((sz["norm_n"], sz["norm_n"]), -1, 1)] * 3), same,
                          sc.shared_matmul),
        "batched_solve": (batch_inputs, same, np.linalg.solve),
        "batched_svd": (plain_inputs(((sz["bsvd_b"], sz["bsvd_n"], sz["bsvd_n"]), -1, 1)), same,
                        lambda a: tuple(np.linalg.svd(a, full_matrices=False))),
        "fft": (complex_inputs(False), same, lambda x: c64(np.fft.fft(x))),
        "rfft2": (plain_inputs(((sz["rfft2_n"],) * 2, -1, 1)), same, lambda x: c64(np.fft.rfft2(x))),
        "fft_window": (complex_inputs(True), same, lambda x, w: c64(np.fft.fft(x * w))),
        "einsum3": (plain_inputs(*[((sz["einsum_n"],) * 2, -1, 1)] * 3), same,
                    lambda A, B, C: np.einsum("ij,jk,kl->il", A, B, C, optimize=True)),
    }
    for name in sc.LA_WORKLOADS[:8]:
        work[name] = (la_inputs(name), same, la_runs[sc.la_kind(name)])
    for name in suite.names:
        prepare, host, run = work[name]
        suite.guarded(IMPL, name, lambda: suite.measure(IMPL, name, prepare, host, run,
                                                        ident, to_host))
    suite.exit()


if __name__ == "__main__":
    main()
