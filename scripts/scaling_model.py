#!/usr/bin/env python3
"""The scaling model of docs/scaling.md: per-GPU time of one sweep (one CG
iteration) = interior + max(0, halo - overlap) + launch + collective
latency, for the heat stencil and CG on 2-D Poisson, and one matmul of a
chain with B in a ring (matmul_chain), on H200 and H100 nodes
of 8 GPUs (NVLink inside a node, one InfiniBand NDR port per GPU between
nodes). Prints the markdown tables docs/scaling.md shows:

    python3 scripts/scaling_model.py            # the tables
    python3 scripts/scaling_model.py --csv      # one line per row

Every figure is a named constant below, with where it comes from; change
one and the tables follow. Measured values from scripts/gpu/scaling.sh
replace the assumed ones (marked ASSUMED)."""
import math
import sys

# ---- hardware (public datasheet figures; docs/scaling.md names them) ----
HBM = {"H200": 4.8e12, "H100": 3.35e12}  # bytes/s peak: HBM3e, HBM3 (SXM)
# Share of peak a device-to-device copy reaches, measured by nd's bench
# (bench/results: H100 2990 GB/s, H200 4123 GB/s read + write).
HBM_EFF = {"H200": 4123e9 / 4.8e12, "H100": 2990e9 / 3.35e12}
NVLINK_DIR = 450e9   # bytes/s one direction per GPU (NVLink4: 900 GB/s both)
IB_DIR = 400e9 / 8   # bytes/s one NDR port (400 Gb/s), one per GPU
PCIE5_DIR = 64e9     # bytes/s one direction, PCIe Gen5 x16 (no NVLink)
GPUS_PER_NODE = 8

# ---- latencies (ASSUMED; scripts/gpu/scaling.sh measures them) ----
L_COPY_NVLINK = 8e-6    # a peer copy step issued and completed, small message
L_COPY_IB = 12e-6       # a send/recv pair between nodes, small message
L_AR_NODE = 12e-6       # NCCL allreduce of 8 bytes over 8 GPUs on NVLink
L_AR_HOP = 7e-6         # added per level of NCCL's inter-node tree (log2 nodes);
                        # 4 nodes: 12 + 2 * 7 = 26 us, NCCL's own estimate for
                        # a small allreduce across H100 nodes
L_BUBBLE = 4e-6         # a device waiting on another's event, then launching
L_SYNC = 20e-6          # nd_sync: the host waits, then plans/launches again
L_GRAPH = 10e-6         # one CUDA graph launch per device per flush

ITEM = 4  # float32

# ---- matmul (float32, nd's default cuBLAS compute type: no TF32) ----
FP32_PEAK = {"H200": 67e12, "H100": 67e12}  # FLOP/s, non-tensor FP32 (SXM datasheets)
GEMM_EFF = 0.8        # ASSUMED share of it a large SGEMM reaches (bench_scaling matmul measures it)
L_GEMM = 5e-6         # ASSUMED: one cuBLAS GEMM launch


def allreduce(p):
    if p == 1:
        return 0.0
    nodes = math.ceil(p / GPUS_PER_NODE)
    return L_AR_NODE + L_AR_HOP * (math.log2(nodes) if nodes > 1 else 0) + L_BUBBLE


def halo(p, cols, rows_per_side=1):
    """Time of one GPU's halo exchange (both neighbours at once): the slowest
    GPU of the run, which for p > 8 has a neighbour on another node."""
    if p == 1:
        return 0.0
    msg = rows_per_side * cols * ITEM
    t = L_COPY_NVLINK + msg / NVLINK_DIR
    if p > GPUS_PER_NODE:
        t = max(t, L_COPY_IB + msg / IB_DIR)
    return t


# Workloads: bytes moved per point per sweep/iteration, halo exchanges and
# allreduces on the critical path per sweep, sweeps per nd_sync, arrays
# the flush scatters and gathers while pieces live one flush.
WORK = {
    # u read once (the 5 loads hit cache), written once
    "heat": dict(bytes=8, halos=1, colls=0, per_sync=20, arrays=1),
    # + the residual's kernel reads the grid again; its sum on the path
    "heat-norm": dict(bytes=12, halos=1, colls=1, per_sync=20, arrays=1),
    # A p (8), p.Ap (8), x += a p (12), r -= a Ap (12), r.r (4), p = r + b p (12)
    "cg": dict(bytes=56, halos=1, colls=2, per_sync=20, arrays=3),
}


def sweep_time(gpu, work, p, rows, cols, overlap=True, pieces_persist=True):
    w = WORK[work]
    t_int = rows * cols * w["bytes"] / (HBM[gpu] * HBM_EFF[gpu])
    t_halo = w["halos"] * halo(p, cols)
    # Edge strips first: the exchange runs while the interior computes.
    hidden = t_int * (1 - 2.0 / rows) if overlap else 0.0
    t_exposed = max(0.0, t_halo - hidden)
    # One process drives a node's GPUs (ND_DEVICES=0,...,7) up to 8; past
    # a node, one rank per GPU (mpirun), each launching for itself.
    local = p if p <= GPUS_PER_NODE else 1
    t_launch = (L_SYNC + local * L_GRAPH) / w["per_sync"]
    t_coll = w["colls"] * allreduce(p)
    t_flush = 0.0
    if not pieces_persist and p > 1:
        # Today: every flush scatters from and gathers into device 0's
        # whole array over its NVLink (both directions at once).
        whole = p * rows * cols * ITEM * w["arrays"]
        t_flush = (p - 1) / p * whole / NVLINK_DIR / w["per_sync"]
    return dict(interior=t_int, halo=t_exposed, launch=t_launch, coll=t_coll, flush=t_flush,
                total=t_int + t_exposed + t_launch + t_coll + t_flush)


# cuPyNumeric's published weak scaling (2-D CFD example, per-GPU
# throughput against 1 GPU, read from NVIDIA's chart: 1 to 2048 A100s).
CUPYNUMERIC = {1: 1.00, 8: 0.97, 64: None, 1024: 0.80}


def rows_weak(gpu, n=16384):
    out = []
    for work in ("heat", "heat-norm", "cg"):
        base = sweep_time(gpu, work, 1, n, n)["total"]
        for p in (1, 8, 64, 1024):
            r = sweep_time(gpu, work, p, n, n)
            r0 = sweep_time(gpu, work, p, n, n, overlap=False)
            today = sweep_time(gpu, work, p, n, n, overlap=False, pieces_persist=False) if p <= 8 else None
            out.append(dict(gpu=gpu, work=work, p=p, **{k: v * 1e6 for k, v in r.items()},
                            eff=base / r["total"], eff_no_overlap=base / r0["total"],
                            eff_today=(base / today["total"]) if today else None,
                            cupy=CUPYNUMERIC.get(p) if work == "heat" else None))
    return out


def rows_strong(gpu, n=32768):
    out = []
    base = sweep_time(gpu, "heat", 1, n, n)["total"]
    for p in (1, 2, 4, 8):
        r = sweep_time(gpu, "heat", p, n // p, n)
        r0 = sweep_time(gpu, "heat", p, n // p, n, overlap=False)
        out.append(dict(gpu=gpu, work="strong heat", p=p, **{k: v * 1e6 for k, v in r.items()},
                        eff=base / (p * r["total"]), eff_no_overlap=base / (p * r0["total"])))
    return out


def matmul_chain(gpu, p, n=16384):
    """One N x N float32 matmul of a chain over p GPUs of one node (ring of
    B blocks: p GEMM steps per device, step t+1's block copied during step
    t). Today every device's GEMM runs on device 0's stream: serial."""
    rate = FP32_PEAK[gpu] * GEMM_EFF
    step = 2.0 * (n / p) * (n / p) * n / rate       # one GEMM step of one device
    copy = (n / p) * n * ITEM / NVLINK_DIR if p > 1 else 0.0  # one block over the link
    exposed = (p - 1) * max(0.0, copy - step)
    total = p * step + exposed + p * L_GEMM
    one = 2.0 * n ** 3 / rate + L_GEMM
    today = one + (p * p - 1) * L_GEMM  # the same work, p^2 launches, one stream
    return dict(gpu=gpu, p=p, step=step, copy=copy, exposed=exposed, total=total,
                eff=one / (p * total), eff_today=one / (p * today))


def pct(x):
    return "-" if x is None else f"{100 * x:.1f}%"


def main():
    if "--csv" in sys.argv:
        print("gpu,work,p,interior_us,halo_us,launch_us,coll_us,flush_us,total_us,eff,eff_no_overlap,eff_today")
        for g in ("H200", "H100"):
            for r in rows_weak(g) + rows_strong(g):
                print(f'{r["gpu"]},{r["work"]},{r["p"]},{r["interior"]:.2f},{r["halo"]:.2f},{r["launch"]:.2f},'
                      f'{r["coll"]:.2f},{r["flush"]:.2f},{r["total"]:.2f},{r["eff"]:.4f},{r["eff_no_overlap"]:.4f},'
                      f'{r.get("eff_today") or ""}')
        return
    for g in ("H200", "H100"):
        print(f"\n### Weak scaling, {g}: 16384^2 float32 per GPU, 20 sweeps (iterations) per nd_sync\n")
        print("| workload | GPUs | interior us | exposed halo us | launch us | collectives us | per-GPU us "
              "| efficiency | no overlap | pieces living one flush (nd before 2026-11-29) | cuPyNumeric CFD |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in rows_weak(g):
            print(f'| {r["work"]} | {r["p"]} | {r["interior"]:.1f} | {r["halo"]:.1f} | {r["launch"]:.1f} | '
                  f'{r["coll"]:.1f} | {r["total"]:.1f} | {pct(r["eff"])} | {pct(r["eff_no_overlap"])} | '
                  f'{pct(r["eff_today"])} | {pct(r["cupy"])} |')
        print(f"\n### Strong scaling, {g}: one 32768^2 float32 grid\n")
        print("| GPUs | interior us | exposed halo us | launch us | per-GPU us | efficiency | no overlap |")
        print("|---:|---:|---:|---:|---:|---:|---:|")
        for r in rows_strong(g):
            print(f'| {r["p"]} | {r["interior"]:.1f} | {r["halo"]:.1f} | {r["launch"]:.1f} | {r["total"]:.1f} | '
                  f'{pct(r["eff"])} | {pct(r["eff_no_overlap"])} |')
    for g in ("H200",):  # the H100 SXM has the same FP32 peak and NVLink: the same table
        print(f"\n### Matmul chain, {g} (and H100 SXM): one 16384^2 float32 matmul, B in a ring\n")
        print("| GPUs | GEMM step us | block copy us | exposed copy us | per-matmul ms | efficiency "
              "| nd today (GEMMs on one stream) |")
        print("|---:|---:|---:|---:|---:|---:|---:|")
        for p in (1, 2, 4, 8):
            r = matmul_chain(g, p)
            print(f'| {p} | {r["step"] * 1e6:.0f} | {r["copy"] * 1e6:.0f} | {r["exposed"] * 1e6:.0f} | '
                  f'{r["total"] * 1e3:.1f} | {pct(r["eff"])} | {pct(r["eff_today"])} |')


if __name__ == "__main__":
    main()
