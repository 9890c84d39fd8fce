#!/usr/bin/env python3
"""PyTorch on the GPU, three ways (bench/README.md, "Side-by-side suite"):
  torch            eager, op by op
  torch-compile    torch.compile (default mode, Inductor). Whole functions,
                   except the loops (stencils, small ops): there the step is
                   compiled and Python loops over it, as users write training
                   loops; unrolling 1000 steps would compile for minutes. A
                   workload it cannot compile is an "error" line.
                   Its random numbers come from Inductor's own generator, so
                   pi and dot are checked statistically (the draws cannot be
                   made again outside the compiled code).
  torch-cudagraph  the eager loop of small_stencil (and small_ops) captured
                   by hand with torch.cuda.CUDAGraph and replayed
Matrix products in true float32 (TF32 off, PyTorch's default).

Usage: torch_suite.py [--small] [--runs N] [WORKLOAD ...]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402

import suite_common as sc  # noqa: E402

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.set_float32_matmul_precision("highest")
DEV = torch.device("cuda")


def main():
    suite = sc.Suite(__doc__)
    sz = suite.sz
    name = torch.cuda.get_device_name(DEV)
    for impl in ("torch", "torch-compile", "torch-cudagraph"):
        suite.meta(impl, library=f"torch {torch.__version__}", device=name)
    gen = torch.Generator(device=DEV)
    gen.manual_seed(suite.next_seed())
    draw = torch.Generator(device=DEV)

    def sync(out=None):
        torch.cuda.synchronize(DEV)

    def to_host(x):
        return x.detach().cpu().numpy()

    def uniform(shape, lo, hi, dtype=torch.float32):
        return torch.empty(shape, device=DEV, dtype=dtype).uniform_(lo, hi, generator=gen)

    def plain_inputs(*specs):
        """Inputs uniform in [lo, hi), one per (shape, lo, hi[, dtype])."""
        def prepare():
            inp = tuple(uniform(*s) for s in specs)
            sync()
            return inp
        return prepare

    def same(inp):
        return [to_host(v) for v in inp]

    # Eager pi and dot draw inside the timed part from a generator seeded
    # outside it; the check draws the same values from the same seed.
    def seeded():
        seed = suite.next_seed()
        draw.manual_seed(seed)
        return (seed,)

    def redraw(dtype, n):
        def host(inp):
            again = torch.Generator(device=DEV)
            again.manual_seed(inp[0])
            return [to_host(torch.rand(n, generator=again, device=DEV, dtype=dtype))
                    for _ in range(2)]
        return host

    def pi_run(seed):
        n = sz["pi_n"]
        x = torch.rand(n, generator=draw, device=DEV, dtype=torch.float32)
        y = torch.rand(n, generator=draw, device=DEV, dtype=torch.float32)
        return sc.pi_inside(x, y).sum()

    def dot_run(seed):
        n = sz["dot_n"]
        return torch.dot(torch.rand(n, generator=draw, device=DEV, dtype=torch.float64),
                         torch.rand(n, generator=draw, device=DEV, dtype=torch.float64))

    # torch.compile's versions draw from the global generator, seeded
    # outside the timed part.
    def seeded_global():
        torch.manual_seed(suite.next_seed())
        return (None,)

    def no_host(inp):
        return None

    def pi_global(_):
        n = sz["pi_n"]
        x = torch.rand(n, device=DEV, dtype=torch.float32)
        y = torch.rand(n, device=DEV, dtype=torch.float32)
        return sc.pi_inside(x, y).sum()

    def dot_global(_):
        n = sz["dot_n"]
        return torch.dot(torch.rand(n, device=DEV, dtype=torch.float64),
                         torch.rand(n, device=DEV, dtype=torch.float64))

    def stencil_step(u):
        u[1:-1, 1:-1] = sc.stencil_rhs(u)

    def sweeps(iters, step):
        def run(u):
            for _ in range(iters):
                step(u)
            return u
        return run

    def eager_ops_step(x):
        return sc.small_ops_step(torch, x)

    def captured(fn, shape, lo, hi, dtype):
        """A CUDA graph of fn on a static input (warmed up on a side stream,
        as PyTorch's documentation asks); prepare copies fresh values into
        the static input, run replays the graph."""
        static_in = uniform(shape, lo, hi, dtype)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                fn(static_in)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_out = fn(static_in)

        def prepare():
            static_in.copy_(uniform(shape, lo, hi, dtype))
            sync()
            return (static_in,)

        def run(_):
            graph.replay()
            return static_out
        return prepare, run

    def gather_inputs():
        n = sz["gather_n"]
        inp = (uniform(n, 0, 1), torch.randint(0, n, (n,), device=DEV, dtype=torch.int64, generator=gen))
        sync()
        return inp

    def la_inputs(name):
        dt = torch.float32 if name.endswith("f32") else torch.float64
        n = sc.la_size(sz, name)

        def prepare():
            A = sc.spd(uniform((n, n), -1, 1, dt), torch.eye(n, dtype=dt, device=DEV))
            inp = (A, uniform((n,), -1, 1, dt)) if sc.la_kind(name) == "solve" else (A,)
            sync()
            return inp
        return prepare

    def batch_inputs():
        b, n = sz["bsolve_b"], sz["bsolve_n"]
        inp = (sc.batch_matrices(uniform((b, n, n), -1, 1), torch.eye(n, dtype=torch.float32, device=DEV)),
               uniform((b, n, 1), -1, 1))
        sync()
        return inp

    def complex_inputs(window):
        n = sz["fft_n"]

        def prepare():
            x = torch.complex(uniform((n,), -1, 1), uniform((n,), -1, 1))
            inp = (x, uniform((n,), 0, 1)) if window else (x,)
            sync()
            return inp
        return prepare

    n_st, n_sm, m = sz["stencil_n"], sz["small_n"], sz["matmul_n"]
    inputs = {
        "chain": plain_inputs((sz["chain_n"], -2, 2), (sz["chain_n"], -2, 2)),
        "black_scholes": plain_inputs((sz["bs_n"], 5, 30), (sz["bs_n"], 1, 100),
                                      (sz["bs_n"], 0.25, 10)),
        "stencil": plain_inputs(((n_st, n_st), 0, 1)),
        "small_stencil": plain_inputs(((n_sm, n_sm), 0, 1, torch.float64)),
        "matmul_chain": plain_inputs(*[((m, m), -1, 1)] * 3),
        "small_ops": plain_inputs((sz["ops_n"], -1, 1)),
        "sum": plain_inputs((sz["sum_n"], 0, 1)),
        "sort": plain_inputs((sz["sort_n"], 0, 1)),
        "argsort": plain_inputs((sz["argsort_n"], 0, 1, torch.float64)),
        "sort_rows": plain_inputs(((sz["rows_r"], sz["rows_c"]), 0, 1)),
        "cumsum": plain_inputs((sz["cumsum_n"], -1, 1)),
        "gather_map": gather_inputs,
        "mask_select": plain_inputs((sz["mask_n"], 0, 1)),
        "histogram": plain_inputs((sz["hist_n"], 0, 1)),
        "scope_read": plain_inputs((sz["scope_n"], -2, 2), (sz["scope_n"], -2, 2)),
        "shared_matmul": plain_inputs(*[((sz["norm_n"], sz["norm_n"]), -1, 1)] * 3),
        "batched_solve": batch_inputs,
        "batched_svd": plain_inputs(((sz["bsvd_b"], sz["bsvd_n"], sz["bsvd_n"]), -1, 1)),
        "fft": complex_inputs(False),
        "rfft2": plain_inputs(((sz["rfft2_n"],) * 2, -1, 1)),
        "fft_window": complex_inputs(True),
        "einsum3": plain_inputs(*[((sz["einsum_n"],) * 2, -1, 1)] * 3),
        **{name: la_inputs(name) for name in sc.LA_WORKLOADS[:8]},
    }

    def torch_mean_std(x):
        return x.mean(0, keepdim=True), x.std(0, keepdim=True, correction=0)

    eager = {
        "chain": lambda a, b: sc.chain(torch, a, b),
        "black_scholes": lambda S, X, T: sc.black_scholes(torch, S, X, T),
        "stencil": sweeps(sz["stencil_iters"], stencil_step),
        "small_stencil": sweeps(sz["small_iters"], stencil_step),
        "matmul_chain": lambda A, B, C: sc.matmul_chain(torch, A, B, C),
        "small_ops": sc.small_ops_loop(sz, eager_ops_step),
        "sum": lambda x: x.sum(),
        "sort": lambda x: torch.sort(x).values,
        "argsort": lambda x: torch.argsort(x, stable=True),
        "sort_rows": lambda x: torch.sort(x, dim=-1).values,
        "cumsum": lambda x: torch.cumsum(x, 0),
        "gather_map": lambda x, idx: sc.gather_map(torch, x, idx),
        "mask_select": sc.mask_select,
        "histogram": lambda x: torch.histc(x, bins=sz["hist_bins"], min=0.0, max=1.0),
        "scope_read": lambda x, y: sc.scope_read(torch, x, y),
        "shared_matmul": lambda x, w1, w2: sc.shared_matmul(x, w1, w2, torch_mean_std),
        "batched_solve": torch.linalg.solve,
        "batched_svd": lambda a: tuple(torch.linalg.svd(a, full_matrices=False)),
        "fft": torch.fft.fft,
        "rfft2": torch.fft.rfft2,
        "fft_window": lambda x, w: torch.fft.fft(x * w),
        "einsum3": lambda A, B, C: torch.einsum("ij,jk,kl->il", A, B, C),
    }
    la_runs = {"cholesky": torch.linalg.cholesky, "solve": torch.linalg.solve,
               "eigh": lambda a: tuple(torch.linalg.eigh(a)),
               "svd": lambda a: tuple(torch.linalg.svd(a, full_matrices=False))}
    for name in sc.LA_WORKLOADS[:8]:
        eager[name] = la_runs[sc.la_kind(name)]

    def eager_work(name):
        """The eager version of a workload: (prepare, host, run)."""
        if name == "pi":
            return seeded, redraw(torch.float32, sz["pi_n"]), pi_run
        if name == "dot":
            return seeded, redraw(torch.float64, sz["dot_n"]), dot_run
        return inputs[name], same, eager[name]

    def compile_(fn):
        # Static shapes: the stencil step serves two grid sizes, and
        # Dynamo's automatic dynamic shapes would make the second one generic.
        return torch.compile(fn, dynamic=False)

    def compiled(name):
        """torch.compile's version of a workload: (prepare, host, run).
        Compilation happens at the first (checked) call."""
        if name == "pi":
            return seeded_global, no_host, compile_(pi_global)
        if name == "dot":
            return seeded_global, no_host, compile_(dot_global)
        if name in ("stencil", "small_stencil"):
            iters = sz["stencil_iters" if name == "stencil" else "small_iters"]
            return inputs[name], same, sweeps(iters, compile_(stencil_step))
        if name == "small_ops":
            return inputs[name], same, sc.small_ops_loop(sz, compile_(eager_ops_step))
        return inputs[name], same, compile_(eager[name])

    def graphed(name):
        if name == "small_stencil":
            prepare, run = captured(sweeps(sz["small_iters"], stencil_step), (n_sm, n_sm),
                                    0, 1, torch.float64)
        else:
            prepare, run = captured(sc.small_ops_loop(sz, eager_ops_step), (sz["ops_n"],),
                                    -1, 1, torch.float32)
        return prepare, same, run

    # Eager and the CUDA graphs first, torch.compile last: its compilations
    # take the longest, and a time cap that stops the process mid-way then
    # loses the fewest results.
    variants = [("torch", eager_work, suite.names),
                ("torch-cudagraph", graphed,
                 [n for n in suite.names if n in ("small_stencil", "small_ops")]),
                # of the linear algebra and FFT group only fft(x * w), where
                # fusing the product is the point: the rest are library calls
                ("torch-compile", compiled,
                 [n for n in suite.names if n not in sc.LA_WORKLOADS or n == "fft_window"])]
    for impl, build, names in variants:
        for name in names:
            def one():
                prepare, host, run = build(name)
                looped = impl == "torch-compile" and name in ("stencil", "small_stencil",
                                                              "small_ops")
                suite.measure(impl, name, prepare, host, run, sync, to_host,
                              note="step compiled, Python loop" if looped else None)
            suite.guarded(impl, name, one)
            torch.cuda.empty_cache()
    suite.exit()


if __name__ == "__main__":
    main()
