#!/usr/bin/env python3
"""Why the exact variants once FAILed bench/gpu_speed.cu's edge checks.

The two H200 FAIL lines were int64 cumprods (op 1 = ND_SCAN_PROD, fill 6
= RAW, 1 x 98305), which the exact variants hand to the agg kernel: no
exact carry was involved. check_exact fills RAW words on the device,
copies them back, sets bit 0 (odd factors) and copied them up again with
cudaMemcpy, which from pageable memory may return before its DMA lands;
the scan then ran on a non-blocking stream and read the end of the buffer
still holding the words without `| 1` (the cumsum check's input). This
replays gpu_speed's generator and shows that each FAIL value is, to the
last bit a float64 holds, the cumprod whose tail from some element on was
read without `| 1`. gpu_speed.cu now copies with cudaMemcpyAsync on its
stream (to_device).

    python3 bench/gpu_speed_stale_input.py      (exit 0: both reproduced)
"""
import sys

M = (1 << 64) - 1


def mix(x):  # gpu_speed.cu's mix
    x ^= x >> 31
    x = (x * 0x7FB5D329728EA185) & M
    x ^= x >> 27
    x = (x * 0x81DADEF4BC2DD44D) & M
    x ^= x >> 33
    return x


N = 98305
SEED = 91 + N  # check_exact's seed
raw = [mix(((i * 0x9E3779B97F4A7C15) & M) ^ SEED) for i in range(N)]
odd = [v | 1 for v in raw]
prod = []
acc = 1
for v in odd:
    acc = acc * v & M
    prod.append(acc)

# (variant, element, got, want) as gpu_speed printed them (%.17g)
FAILS = [("exact", 84865, 1.1469930167524833e19, 4.8414650650434007e18),
         ("exact_nodelay", 96768, 1.9428968278846287e18, 1.9889272862400876e18)]
ok = True
for name, idx, got, want in FAILS:
    assert float(prod[idx]) == want, "the generator does not match"
    found = None
    for start in range(idx, idx - 4096, -1):  # the stale tail's first element
        acc = prod[start - 1]
        for k in range(start, idx + 1):
            acc = acc * raw[k] & M
        if float(acc) == got:
            found = start
            break
    print(f"{name}: element {idx} = the cumprod with elements from {found} read without '| 1'"
          if found is not None else f"{name}: not reproduced")
    ok &= found is not None
sys.exit(0 if ok else 1)
