#!/usr/bin/env python3
"""JAX: every workload one jax.jit function (bench/README.md, "Side-by-side
suite"); the stencils and small ops loop with lax.fori_loop inside it, so a
run is one dispatch. The stencil grid is donated, JAX's way of updating in
place. Matrix products at "highest" precision (true float32, no TF32);
float64 enabled for the float64 workloads; no preallocation of GPU memory.
Random draws use JAX's default PRNG.

Usage: jax_suite.py [--small] [--runs N] [WORKLOAD ...]
"""
import os
import sys

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax  # noqa: E402
import numpy as np  # noqa: E402

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_default_matmul_precision", "highest")
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

import suite_common as sc  # noqa: E402

IMPL = "jax"
make_key = getattr(jax.random, "key", None) or jax.random.PRNGKey


def main():
    suite = sc.Suite(__doc__)
    sz = suite.sz
    device = jax.devices()[0]
    suite.meta(IMPL, library=f"jax {jax.__version__}", device=str(device.device_kind),
               platform=device.platform)
    keys = {"next": make_key(suite.next_seed())}

    def fresh_key():
        keys["next"], k = jax.random.split(keys["next"])
        return k

    def sync(out):
        jax.block_until_ready(out)

    def to_host(x):
        return np.asarray(x)

    def plain_inputs(*specs):
        """Inputs uniform in [lo, hi), one per (shape, lo, hi[, dtype])."""
        def prepare():
            inp = tuple(jax.random.uniform(fresh_key(), s[0], s[3] if len(s) > 3 else jnp.float32,
                                           minval=s[1], maxval=s[2]) for s in specs)
            jax.block_until_ready(inp)
            return inp
        return prepare

    def same(inp):
        return [np.array(v, copy=True) for v in inp]

    # pi and dot draw inside the jitted function from a key made outside it;
    # the check draws the same values from the same key.
    def keyed():
        return (fresh_key(),)

    def draws(key, n, dtype):
        kx, ky = jax.random.split(key)
        return jax.random.uniform(kx, (n,), dtype), jax.random.uniform(ky, (n,), dtype)

    def redraw(n, dtype):
        again = jax.jit(lambda key: draws(key, n, dtype))
        return lambda inp: [np.asarray(v) for v in again(inp[0])]

    @jax.jit
    def pi_run(key):
        x, y = draws(key, sz["pi_n"], jnp.float32)
        return jnp.count_nonzero(sc.pi_inside(x, y))

    @jax.jit
    def dot_run(key):
        a, b = draws(key, sz["dot_n"], jnp.float64)
        return jnp.dot(a, b)

    def sweeps(iters):
        def body(_, u):
            return u.at[1:-1, 1:-1].set(sc.stencil_rhs(u))
        return jax.jit(lambda u: lax.fori_loop(0, iters, body, u), donate_argnums=0)

    @jax.jit
    def small_ops_run(x):
        return lax.fori_loop(0, sz["ops_iters"], lambda _, x: sc.small_ops_step(jnp, x), x)

    @jax.jit
    def matmul_run(A, B, C):
        D = jnp.matmul(A, B, precision=lax.Precision.HIGHEST) + C
        return (jnp.sin(D) + jnp.cos(D)).sum(1)

    def gather_inputs():
        n = sz["gather_n"]
        inp = (jax.random.uniform(fresh_key(), (n,), jnp.float32),
               jax.random.randint(fresh_key(), (n,), 0, n, dtype=jnp.int64))
        jax.block_until_ready(inp)
        return inp
    @jax.jit
    def shared_run(x, w1, w2):
        z = (x - x.mean(0, keepdims=True)) / x.std(0, keepdims=True)
        mm = lambda a, b: jnp.matmul(a, b, precision=lax.Precision.HIGHEST)  # noqa: E731
        return mm(z, w1), mm(z, w2), mm(z.T, z)

    def uniform(shape, lo, hi, dtype=jnp.float32):
        return jax.random.uniform(fresh_key(), shape, dtype, minval=lo, maxval=hi)

    def la_inputs(name):
        dt = jnp.float32 if name.endswith("f32") else jnp.float64
        n = sc.la_size(sz, name)

        def prepare():
            A = sc.spd(uniform((n, n), -1, 1, dt), jnp.eye(n, dtype=dt))
            inp = (A, uniform((n,), -1, 1, dt)) if sc.la_kind(name) == "solve" else (A,)
            jax.block_until_ready(inp)
            return inp
        return prepare

    def batch_inputs():
        b, n = sz["bsolve_b"], sz["bsolve_n"]
        inp = (sc.batch_matrices(uniform((b, n, n), -1, 1), jnp.eye(n, dtype=jnp.float32)),
               uniform((b, n, 1), -1, 1))
        jax.block_until_ready(inp)
        return inp

    def complex_inputs(window):
        n = sz["fft_n"]

        def prepare():
            x = lax.complex(uniform((n,), -1, 1), uniform((n,), -1, 1))
            inp = (x, uniform((n,), 0, 1)) if window else (x,)
            jax.block_until_ready(inp)
            return inp
        return prepare

    la_runs = {"cholesky": jax.jit(jnp.linalg.cholesky), "solve": jax.jit(jnp.linalg.solve),
               "eigh": jax.jit(lambda a: tuple(jnp.linalg.eigh(a))),
               "svd": jax.jit(lambda a: tuple(jnp.linalg.svd(a, full_matrices=False)))}
    n_st, n_sm, m = sz["stencil_n"], sz["small_n"], sz["matmul_n"]
    work = {
        "chain": (plain_inputs(((sz["chain_n"],), -2, 2), ((sz["chain_n"],), -2, 2)), same,
                  jax.jit(lambda a, b: sc.chain(jnp, a, b))),
        "black_scholes": (plain_inputs(((sz["bs_n"],), 5, 30), ((sz["bs_n"],), 1, 100),
                                       ((sz["bs_n"],), 0.25, 10)), same,
                          jax.jit(lambda S, X, T: sc.black_scholes(jnp, S, X, T))),
        "stencil": (plain_inputs(((n_st, n_st), 0, 1)), same, sweeps(sz["stencil_iters"])),
        "small_stencil": (plain_inputs(((n_sm, n_sm), 0, 1, jnp.float64)), same,
                          sweeps(sz["small_iters"])),
        "pi": (keyed, redraw(sz["pi_n"], jnp.float32), pi_run),
        "matmul_chain": (plain_inputs(*[((m, m), -1, 1)] * 3), same, matmul_run),
        "dot": (keyed, redraw(sz["dot_n"], jnp.float64), dot_run),
        "small_ops": (plain_inputs(((sz["ops_n"],), -1, 1)), same, small_ops_run),
        "sum": (plain_inputs(((sz["sum_n"],), 0, 1)), same, jax.jit(jnp.sum)),
        "sort": (plain_inputs(((sz["sort_n"],), 0, 1)), same, jax.jit(jnp.sort)),
        "argsort": (plain_inputs(((sz["argsort_n"],), 0, 1, jnp.float64)), same,
                    jax.jit(lambda x: jnp.argsort(x, stable=True))),
        "sort_rows": (plain_inputs(((sz["rows_r"], sz["rows_c"]), 0, 1)), same,
                      jax.jit(lambda x: jnp.sort(x, axis=-1))),
        "cumsum": (plain_inputs(((sz["cumsum_n"],), -1, 1)), same, jax.jit(jnp.cumsum)),
        "gather_map": (gather_inputs, same, jax.jit(lambda x, idx: sc.gather_map(jnp, x, idx))),
        # the output length depends on the values: not jittable, eager as a user writes it
        "mask_select": (plain_inputs(((sz["mask_n"],), 0, 1)), same, sc.mask_select),
        "histogram": (plain_inputs(((sz["hist_n"],), 0, 1)), same,
                      jax.jit(lambda x: jnp.histogram(x, bins=sz["hist_bins"], range=(0.0, 1.0))[0])),
        "scope_read": (plain_inputs(((sz["scope_n"],), -2, 2), ((sz["scope_n"],), -2, 2)), same,
                       jax.jit(lambda x, y: sc.scope_read(jnp, x, y))),
        "shared_matmul": (plain_inputs(*[((sz["norm_n"], sz["norm_n"]), -1, 1)] * 3), same,
                          shared_run),
        "batched_solve": (batch_inputs, same, jax.jit(jnp.linalg.solve)),
        "batched_svd": (plain_inputs(((sz["bsvd_b"], sz["bsvd_n"], sz["bsvd_n"]), -1, 1)), same,
                        jax.jit(lambda a: tuple(jnp.linalg.svd(a, full_matrices=False)))),
        "fft": (complex_inputs(False), same, jax.jit(jnp.fft.fft)),
        "rfft2": (plain_inputs(((sz["rfft2_n"],) * 2, -1, 1)), same, jax.jit(jnp.fft.rfft2)),
        "fft_window": (complex_inputs(True), same, jax.jit(lambda x, w: jnp.fft.fft(x * w))),
        "einsum3": (plain_inputs(*[((sz["einsum_n"],) * 2, -1, 1)] * 3), same,
                    jax.jit(lambda A, B, C: jnp.einsum("ij,jk,kl->il", A, B, C,
                                                       precision=lax.Precision.HIGHEST))),
        **{name: (la_inputs(name), same, la_runs[sc.la_kind(name)]) for name in sc.LA_WORKLOADS[:8]},
    }
    for name in suite.names:
        prepare, host, run = work[name]
        suite.guarded(IMPL, name, lambda: suite.measure(IMPL, name, prepare, host, run,
                                                        sync, to_host))
    suite.exit()


if __name__ == "__main__":
    main()
