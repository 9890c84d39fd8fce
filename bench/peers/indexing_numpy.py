"""NumPy's side of bench/gather_select.c on the same machine: x[idx] * 2 + 1
(x float32 2^26, idx int64 2^26 random) and x[x > 0.5] (x float32 2^28),
median of 7 timed runs after one warm-up run."""
import time

import numpy as np


def median_ms(f, runs=7):
    times = []
    for r in range(runs + 1):
        t0 = time.perf_counter()
        f()
        t = time.perf_counter() - t0
        if r:
            times.append(t)
    times.sort()
    return 1e3 * times[len(times) // 2]


rng = np.random.default_rng(1)
G, S = 1 << 26, 1 << 28
x = rng.random(G, dtype=np.float32)
idx = rng.integers(0, G, G)
print("numpy gather+map ms", median_ms(lambda: x[idx] * np.float32(2) + np.float32(1)))
del x, idx
x = rng.random(S, dtype=np.float32)
print("numpy mask select ms", median_ms(lambda: x[x > 0.5]))
