#!/usr/bin/env python3
"""CuPy on the GPU, two ways (bench/README.md, "Side-by-side suite"):
  cupy       plain CuPy, op by op, as a NumPy user ports code
  cupy-fuse  cupy.fuse around the elementwise parts where it applies: the
             chain, Black-Scholes, the stencil's right-hand side (the store
             into the interior stays a copy: the sweep reads what it
             overwrites) and the small-ops step (the loop stays in Python)
Matrix products stay in float32 (CUPY_TF32=0, CuPy's default).

Usage: cupy_suite.py [--small] [--runs N] [WORKLOAD ...]
"""
import os
import sys

os.environ.setdefault("CUPY_TF32", "0")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cupy as cp  # noqa: E402

import suite_common as sc  # noqa: E402

# cuRAND's Philox, the same family nd draws from (CuPy's default is XORWOW).
PHILOX = getattr(cp.cuda.curand, "CURAND_RNG_PSEUDO_PHILOX4_32_10", 161)


def main():
    suite = sc.Suite(__doc__)
    sz = suite.sz
    dev = cp.cuda.Device()
    name = cp.cuda.runtime.getDeviceProperties(dev.id)["name"]
    name = name.decode() if isinstance(name, bytes) else str(name)
    for impl in ("cupy", "cupy-fuse"):
        suite.meta(impl, library=f"cupy {cp.__version__}", device=name)
    rs = cp.random.RandomState(suite.next_seed(), method=PHILOX)
    draw = cp.random.RandomState(0, method=PHILOX)

    def sync(out=None):
        dev.synchronize()

    def to_host(x):
        return cp.asnumpy(x)

    def plain_inputs(*specs):
        """Inputs uniform in [lo, hi), one per (shape, lo, hi[, dtype])."""
        def prepare():
            inp = tuple(rs.uniform(s[1], s[2], s[0], dtype=s[3] if len(s) > 3 else cp.float32)
                        for s in specs)
            sync()
            return inp
        return prepare

    def same(inp):
        return [cp.asnumpy(v) for v in inp]

    # pi and dot draw inside the timed part; the seed is set outside it and
    # the check draws the same values again from the same seed.
    def seeded():
        seed = suite.next_seed()
        draw.seed(seed)
        return (seed,)

    def redraw(dtype, count, n):
        def host(inp):
            again = cp.random.RandomState(inp[0], method=PHILOX)
            return [cp.asnumpy(again.random_sample(n, dtype=dtype)) for _ in range(count)]
        return host

    def pi_run(seed):
        n = sz["pi_n"]
        x = draw.random_sample(n, dtype=cp.float32)
        y = draw.random_sample(n, dtype=cp.float32)
        return cp.count_nonzero(sc.pi_inside(x, y))

    def dot_run(seed):
        n = sz["dot_n"]
        return cp.dot(draw.random_sample(n, dtype=cp.float64),
                      draw.random_sample(n, dtype=cp.float64))

    def sweeps(iters, body=None):
        def run(u):
            for _ in range(iters):
                if body is None:
                    u[1:-1, 1:-1] = sc.stencil_rhs(u)
                else:
                    u[1:-1, 1:-1] = body(u[1:-1, 1:-1], u[:-2, 1:-1], u[2:, 1:-1],
                                         u[1:-1, :-2], u[1:-1, 2:])
            return u
        return run

    fused_chain = cp.fuse(kernel_name="suite_chain")(lambda a, b: sc.chain(cp, a, b))
    fused_bs = cp.fuse(kernel_name="suite_black_scholes")(
        lambda S, X, T: sc.black_scholes(cp, S, X, T))
    fused_body = cp.fuse(kernel_name="suite_stencil_body")(sc.stencil_body)
    fused_step = cp.fuse(kernel_name="suite_small_ops")(lambda x: sc.small_ops_step(cp, x))

    def gather_inputs():
        n = sz["gather_n"]
        inp = (rs.uniform(0, 1, n, dtype=cp.float32), rs.randint(0, n, n, dtype=cp.int64))
        sync()
        return inp

    def la_inputs(name):
        dt = cp.float32 if name.endswith("f32") else cp.float64
        n = sc.la_size(sz, name)

        def prepare():
            A = sc.spd(rs.uniform(-1, 1, (n, n), dtype=dt), cp.eye(n, dtype=dt))
            inp = (A, rs.uniform(-1, 1, n, dtype=dt)) if sc.la_kind(name) == "solve" else (A,)
            sync()
            return inp
        return prepare

    def batch_inputs():
        b, n = sz["bsolve_b"], sz["bsolve_n"]
        inp = (sc.batch_matrices(rs.uniform(-1, 1, (b, n, n), dtype=cp.float32), cp.eye(n, dtype=cp.float32)),
               rs.uniform(-1, 1, (b, n, 1), dtype=cp.float32))
        sync()
        return inp

    def complex_inputs(window):
        n = sz["fft_n"]

        def prepare():
            x = (rs.uniform(-1, 1, n, dtype=cp.float32)
                 + 1j * rs.uniform(-1, 1, n, dtype=cp.float32)).astype(cp.complex64)
            inp = (x, rs.uniform(0, 1, n, dtype=cp.float32)) if window else (x,)
            sync()
            return inp
        return prepare

    la_runs = {"cholesky": cp.linalg.cholesky, "solve": cp.linalg.solve,
               "eigh": lambda a: tuple(cp.linalg.eigh(a)),
               "svd": lambda a: tuple(cp.linalg.svd(a, full_matrices=False))}
    n_st, n_sm, m = sz["stencil_n"], sz["small_n"], sz["matmul_n"]
    chain_in = plain_inputs((sz["chain_n"], -2, 2), (sz["chain_n"], -2, 2))
    bs_in = plain_inputs((sz["bs_n"], 5, 30), (sz["bs_n"], 1, 100), (sz["bs_n"], 0.25, 10))
    stencil_in = plain_inputs(((n_st, n_st), 0, 1))
    ops_in = plain_inputs((sz["ops_n"], -1, 1))
    work = {
        "cupy": {
            "chain": (chain_in, same, lambda a, b: sc.chain(cp, a, b)),
            "black_scholes": (bs_in, same, lambda S, X, T: sc.black_scholes(cp, S, X, T)),
            "stencil": (stencil_in, same, sweeps(sz["stencil_iters"])),
            "small_stencil": (plain_inputs(((n_sm, n_sm), 0, 1, cp.float64)), same,
                              sweeps(sz["small_iters"])),
            "pi": (seeded, redraw(cp.float32, 2, sz["pi_n"]), pi_run),
            "matmul_chain": (plain_inputs(*[((m, m), -1, 1)] * 3), same,
                             lambda A, B, C: sc.matmul_chain(cp, A, B, C)),
            "dot": (seeded, redraw(cp.float64, 2, sz["dot_n"]), dot_run),
            "small_ops": (ops_in, same, sc.small_ops_loop(sz, lambda x: sc.small_ops_step(cp, x))),
            "sum": (plain_inputs((sz["sum_n"], 0, 1)), same, lambda x: x.sum()),
            "sort": (plain_inputs((sz["sort_n"], 0, 1)), same, cp.sort),
            "argsort": (plain_inputs((sz["argsort_n"], 0, 1, cp.float64)), same, cp.argsort),
            "sort_rows": (plain_inputs(((sz["rows_r"], sz["rows_c"]), 0, 1)), same,
                          lambda x: cp.sort(x, axis=-1)),
            "cumsum": (plain_inputs((sz["cumsum_n"], -1, 1)), same, cp.cumsum),
            "gather_map": (gather_inputs, same, lambda x, idx: sc.gather_map(cp, x, idx)),
            "mask_select": (plain_inputs((sz["mask_n"], 0, 1)), same, sc.mask_select),
            "histogram": (plain_inputs((sz["hist_n"], 0, 1)), same,
                          lambda x: cp.histogram(x, bins=sz["hist_bins"], range=(0.0, 1.0))[0]),
            "scope_read": (plain_inputs((sz["scope_n"], -2, 2), (sz["scope_n"], -2, 2)), same,
                           lambda x, y: sc.scope_read(cp, x, y)),
            "shared_matmul": (plain_inputs(*[((sz["norm_n"], sz["norm_n"]), -1, 1)] * 3), same,
                              sc.shared_matmul),
            "batched_solve": (batch_inputs, same, cp.linalg.solve),
            "batched_svd": (plain_inputs(((sz["bsvd_b"], sz["bsvd_n"], sz["bsvd_n"]), -1, 1)), same,
                            lambda a: tuple(cp.linalg.svd(a, full_matrices=False))),
            "fft": (complex_inputs(False), same, cp.fft.fft),
            "rfft2": (plain_inputs(((sz["rfft2_n"],) * 2, -1, 1)), same, cp.fft.rfft2),
            "fft_window": (complex_inputs(True), same, lambda x, w: cp.fft.fft(x * w)),
            "einsum3": (plain_inputs(*[((sz["einsum_n"],) * 2, -1, 1)] * 3), same,
                        lambda A, B, C: cp.einsum("ij,jk,kl->il", A, B, C)),
            **{name: (la_inputs(name), same, la_runs[sc.la_kind(name)]) for name in sc.LA_WORKLOADS[:8]},
        },
        "cupy-fuse": {
            "chain": (chain_in, same, fused_chain),
            "black_scholes": (bs_in, same, fused_bs),
            "stencil": (stencil_in, same, sweeps(sz["stencil_iters"], fused_body)),
            "small_ops": (ops_in, same, sc.small_ops_loop(sz, fused_step)),
        },
    }
    pool = cp.get_default_memory_pool()
    for impl, table in work.items():
        for name in suite.names:
            if name not in table:
                continue
            prepare, host, run = table[name]
            suite.guarded(impl, name, lambda: suite.measure(impl, name, prepare, host, run,
                                                            sync, to_host))
            pool.free_all_blocks()
    suite.exit()


if __name__ == "__main__":
    main()
