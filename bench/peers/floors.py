#!/usr/bin/env python3
"""The three ceilings the suite's floors are made of, measured on the GPU in
the same device call as the suite (bench/README.md, "Side-by-side suite"):
  copy_GBps     device-to-device copy of 1 GiB, bytes read + written / time
  h2d_GBps      pinned host -> device copy of 1 GiB, bytes / time
  sgemm_TFLOPs  8192^3 float32 matrix product (no TF32), 2 n^3 / time
Each the median of 9 event-timed runs after 2 warm-ups. Prints one JSON line
{"impl": "floors", ...}. Uses CuPy, or PyTorch where CuPy is missing.
"""
import json
import os
import statistics
import sys

os.environ.setdefault("CUPY_TF32", "0")
RUNS, WARMUP = 9, 2
COPY_BYTES = 1 << 30
GEMM_N = 8192


def median_time(fn, event, elapsed_ms):
    """Median seconds of fn() between two device events."""
    times = []
    for i in range(WARMUP + RUNS):
        start, stop = event(), event()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        if i >= WARMUP:
            times.append(elapsed_ms(start, stop) * 1e-3)
    return statistics.median(times)


def with_cupy():
    import cupy as cp
    import cupyx
    import numpy as np

    event, elapsed = cp.cuda.Event, cp.cuda.get_elapsed_time
    n = COPY_BYTES // 4
    src = cp.random.random(n, dtype=cp.float32)
    dst = cp.empty_like(src)
    d2d = getattr(cp.cuda.runtime, "memcpyDeviceToDevice", 3)
    copy_s = median_time(lambda: cp.cuda.runtime.memcpyAsync(
        dst.data.ptr, src.data.ptr, COPY_BYTES, d2d, cp.cuda.get_current_stream().ptr),
        event, elapsed)
    host = cupyx.empty_pinned((n,), dtype=np.float32)
    host[...] = np.random.default_rng(1).random(n, dtype=np.float32)
    h2d_s = median_time(lambda: dst.set(host), event, elapsed)
    a = cp.random.random((GEMM_N, GEMM_N), dtype=cp.float32)
    b = cp.random.random((GEMM_N, GEMM_N), dtype=cp.float32)
    gemm_s = median_time(lambda: cp.matmul(a, b), event, elapsed)
    name = cp.cuda.runtime.getDeviceProperties(0)["name"]
    return (name.decode() if isinstance(name, bytes) else str(name),
            f"cupy {cp.__version__}", copy_s, h2d_s, gemm_s)


def with_torch():
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")

    def event():
        return torch.cuda.Event(enable_timing=True)

    def elapsed(start, stop):
        return start.elapsed_time(stop)
    n = COPY_BYTES // 4
    src = torch.rand(n, device=dev)
    dst = torch.empty_like(src)
    copy_s = median_time(lambda: dst.copy_(src), event, elapsed)
    host = torch.rand(n).pin_memory()
    h2d_s = median_time(lambda: dst.copy_(host, non_blocking=True), event, elapsed)
    a = torch.rand(GEMM_N, GEMM_N, device=dev)
    b = torch.rand(GEMM_N, GEMM_N, device=dev)
    gemm_s = median_time(lambda: a @ b, event, elapsed)
    return (torch.cuda.get_device_name(dev), f"torch {torch.__version__}",
            copy_s, h2d_s, gemm_s)


def main():
    errors = []
    for fn in (with_cupy, with_torch):
        try:
            device, lib, copy_s, h2d_s, gemm_s = fn()
            break
        except Exception as e:  # noqa: BLE001 - try the next library, say why
            errors.append(f"{fn.__name__}: {type(e).__name__}: {e}")
    else:
        print(json.dumps({"impl": "floors", "error": "; ".join(errors)[:800]}), flush=True)
        return 1
    print(json.dumps({"impl": "floors", "device": device, "measured_with": lib,
                      "copy_GBps": 2 * COPY_BYTES / copy_s * 1e-9,
                      "h2d_GBps": COPY_BYTES / h2d_s * 1e-9,
                      "sgemm_TFLOPs": 2 * GEMM_N ** 3 / gemm_s * 1e-12}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
