#!/usr/bin/env python3
"""NumPy peers of bench/seed_chain.c and bench/membound_chain.c.

Same rules as the C benchmarks: fresh random float32 inputs in [-2, 2) for
every run (made outside the timed part), one warm-up run whose answer is
checked against a float64 reference, then the median of RUNS >= 7 timed runs.
Prints a human line and a `JSON {...}` line per benchmark (bench/run_cpu.sh
collects the JSON lines).

Usage: numpy_chain.py [N] [RUNS]
"""
import json
import statistics
import sys
import time

import numpy as np


def seed_chain(a, b):
    return np.sin(a) * np.cos(b) + np.sqrt(np.abs(a * b)) * np.exp(-a * a)


def membound_chain(a, b, c, d):
    return a * b + c * d - np.float32(0.5) * a


def seed_ref(a, b):
    a, b = a.astype(np.float64), b.astype(np.float64)
    ref = seed_chain(a, b)
    return ref, 1.0 + np.abs(ref)


def membound_ref(a, b, c, d):
    a, b, c, d = (x.astype(np.float64) for x in (a, b, c, d))
    scale = np.abs(a * b) + np.abs(c * d) + np.abs(0.5 * a) + 1e-30
    return membound_chain(a, b, c, d), scale


def bench(name, fn, ref, n_inputs, n, runs, rng, tol):
    times = []
    for r in range(-1, runs):
        inputs = [rng.uniform(-2.0, 2.0, n).astype(np.float32) for _ in range(n_inputs)]
        t0 = time.perf_counter()
        y = fn(*inputs)
        t = time.perf_counter() - t0
        if y.dtype != np.float32:
            raise SystemExit(f"{name}: result dtype {y.dtype}, expected float32")
        if r < 0:
            expect, scale = ref(*inputs)
            worst = float(np.max(np.abs(y.astype(np.float64) - expect) / scale))
            if worst > tol:
                raise SystemExit(f"{name}: wrong answer, worst error {worst:.3e}")
        else:
            times.append(t)
    med = statistics.median(times)
    print(f"{name} (numpy {np.__version__}): {n} float32, median of {runs}: {1e3 * med:.3f} ms")
    print("JSON " + json.dumps({"bench": name, "impl": "numpy", "numpy": np.__version__,
                                "n": n, "runs": runs, "median_ms": round(1e3 * med, 4),
                                "checked": True}))


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 24
    runs = max(7, int(sys.argv[2]) if len(sys.argv) > 2 else 9)
    rng = np.random.default_rng(2718)
    bench("seed_chain", seed_chain, seed_ref, 2, n, runs, rng, 4e-6)
    bench("membound_chain", membound_chain, membound_ref, 4, n, runs, rng, 1e-6)


if __name__ == "__main__":
    main()
