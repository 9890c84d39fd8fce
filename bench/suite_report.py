#!/usr/bin/env python3
"""Turns the side-by-side suite's JSON lines into its three result files
(bench/README.md, "Side-by-side suite"):
  PREFIX.json  every line, plus per workload the floor, each implementation's
               median, minimum, runs, error, x-floor and x-fastest
  PREFIX.md    a table: rows workloads, columns implementations
  PREFIX.png   bars per workload per implementation, log time axis, the
               floor marked (matplotlib, Agg: no display needed)

Usage: suite_report.py --out PREFIX [--date D] [--device NAME] [--commit C]
                       [--command CMD] FILE...
FILE holds JSON lines as bench_nd_suite and bench/peers/*.py print them (and
the {"impl": "floors", ...} line of bench/peers/floors.py); other lines are
ignored, so whole logs can be passed.
"""
import argparse
import json
import math
import sys

# Column order: nd first, then the GPU peers, then the CPU ones.
ORDER = ["nd-cuda", "cupy", "cupy-fuse", "jax", "torch", "torch-compile", "torch-cudagraph",
         "nd-cpu", "numpy"]
WORKLOADS = ["chain", "black_scholes", "stencil", "small_stencil", "pi", "matmul_chain",
             "dot", "small_ops", "small_ops_body", "sum", "h2d_sum", "uniform_sum", "integers_sum", "scope_read",
             "shared_matmul", "cholesky_f32", "cholesky_f64", "solve_f32", "solve_f64", "eigh_f32",
             "eigh_f64", "svd_f32", "svd_f64", "batched_solve", "batched_svd", "fft", "rfft2", "fft_window", "einsum3"]
LA_NAMES = set(WORKLOADS[WORKLOADS.index("cholesky_f32"):])
# What each floor is made of (bench/README.md, "Floors").
COPY_BOUND = {"chain", "black_scholes", "stencil", "small_stencil", "small_ops", "small_ops_body", "sum"}
# The speed targets of issues "CUDA backend" and "GPU scheduling", for nd-cuda.
TARGETS = {
    "chain": ("<= 1.06x floor", lambda t, f: f and t / f <= 1.06),
    "black_scholes": ("<= 1.05x floor", lambda t, f: f and t / f <= 1.05),
    "stencil": ("<= 1.15x floor", lambda t, f: f and t / f <= 1.15),
    "small_stencil": ("<= 0.25 ms", lambda t, f: t <= 0.25e-3),
    "pi": ("<= 0.4 ms", lambda t, f: t <= 0.4e-3),
    "matmul_chain": ("<= 1.05x SGEMM", lambda t, f: f and t / f <= 1.05),
    "dot": ("<= 0.3 ms", lambda t, f: t <= 0.3e-3),
    "small_ops": ("<= 2 ms", lambda t, f: t <= 2e-3),
    "sum": (">= 90% of copy bandwidth", lambda t, f: f and f / t >= 0.9),
    "h2d_sum": (">= 80% of pinned H2D", lambda t, f: f and f / t >= 0.8),
}


def finite(obj):
    """The same structure with NaN and infinities as None (strict JSON)."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [finite(v) for v in obj]
    return obj


def read_lines(paths):
    lines = []
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        if path.endswith(".json"):  # an earlier report: merge its lines
            try:
                lines += [finite(ln) for ln in json.loads(text)["lines"]]
                continue
            except (json.JSONDecodeError, KeyError, TypeError):
                pass
        for raw in text.splitlines():
            raw = raw.strip()
            if raw.startswith("JSON "):
                raw = raw[5:]
            if not raw.startswith("{"):
                continue
            try:
                obj = json.loads(raw)
            except json.JSONDecodeError:
                continue
            if isinstance(obj, dict) and "impl" in obj:
                lines.append(finite(obj))
    return lines


def floor_of(name, line, floors):
    """(seconds, basis) of a workload's floor; (None, why) where none."""
    if not floors or "error" in floors:
        return None, "no floors measured (needs the GPU)"
    if name in COPY_BOUND:
        if not line.get("bytes"):
            return None, "no byte count"
        return line["bytes"] / (floors["copy_GBps"] * 1e9), "bytes / device copy bandwidth"
    if name == "matmul_chain":
        n = line["n"]
        return 2.0 * n ** 3 / (floors["sgemm_TFLOPs"] * 1e12), "2 n^3 / SGEMM rate"
    if name == "h2d_sum":
        return line["bytes"] / (floors["h2d_GBps"] * 1e9), "bytes / pinned H2D bandwidth"
    if name in LA_NAMES:
        return None, "none: compute-bound (linear algebra, FFT, einsum)"
    return None, "none: the inputs are drawn inside the kernel, nothing must move"


def build(lines, args):
    all_floors = [ln for ln in lines if ln["impl"] == "floors"]
    floors = next((ln for ln in all_floors if "error" not in ln), None) or \
        next(iter(all_floors), None)
    metas = {ln["impl"]: ln["meta"] for ln in lines if "meta" in ln}
    results = [ln for ln in lines if "workload" in ln and "median_s" in ln]
    failures = [ln for ln in lines if "error" in ln and ln["impl"] != "floors"]
    impls = [i for i in ORDER if any(r["impl"] == i for r in results + failures)]
    impls += sorted({r["impl"] for r in results + failures} - set(impls))
    names = [w for w in WORKLOADS if any(r.get("workload") == w for r in results + failures)]
    names += sorted({r["workload"] for r in results + failures if "workload" in r} - set(names))
    workloads = {}
    for name in names:
        rows = {r["impl"]: r for r in results if r["workload"] == name}
        errs = {r["impl"]: r["error"] for r in failures if r.get("workload") == name}
        first = next(iter(rows.values()), None)
        floor_s, basis = floor_of(name, first, floors) if first else (None, "no result")
        fastest = min(rows, key=lambda i: rows[i]["median_s"]) if rows else None
        entry = {"n": first and first.get("n"), "dtype": first and first.get("dtype"),
                 "bytes": first and first.get("bytes"), "floor_s": floor_s,
                 "floor_basis": basis, "target": TARGETS.get(name, ("", None))[0],
                 "fastest": fastest, "results": {}, "errors": errs}
        for impl, r in rows.items():
            entry["results"][impl] = {
                "median_s": r["median_s"], "min_s": r["min_s"], "runs": r["runs"],
                "err": r.get("err"), "check": r.get("check"),
                "x_floor": r["median_s"] / floor_s if floor_s else None,
                "x_fastest": r["median_s"] / rows[fastest]["median_s"],
                **({"note": r["note"]} if "note" in r else {})}
        nd = rows.get("nd-cuda")
        if nd and name in TARGETS:
            entry["target_met"] = bool(TARGETS[name][1](nd["median_s"], floor_s))
        peers = {i: r for i, r in rows.items() if not i.startswith("nd-") and i != "numpy"}
        if nd and peers:
            best = min(peers, key=lambda i: peers[i]["median_s"])
            entry["nd_cuda_vs_best_gpu_peer"] = {
                "peer": best, "ratio": nd["median_s"] / peers[best]["median_s"]}
        workloads[name] = entry
    # integers_sum's target is relative: nd-cuda's integers at least as fast
    # as its uniform draws of the same count (both summed where drawn).
    ints, unif = workloads.get("integers_sum"), workloads.get("uniform_sum")
    if ints is not None:
        ints["target"] = "<= uniform_sum's time"
        a = ints["results"].get("nd-cuda")
        b = unif and unif["results"].get("nd-cuda")
        if a and b:
            ints["target_met"] = a["median_s"] <= b["median_s"]
    return {"date": args.date, "device": args.device, "commit": args.commit,
            "command": args.command, "floors": floors, "implementations": metas,
            "order": impls, "workloads": workloads,
            "process_errors": [ln for ln in failures if "workload" not in ln],
            "lines": lines}


def fmt_time(s):
    if s is None:
        return "-"
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    return f"{s * 1e6:.3g} us"


def markdown(rep):
    f = rep["floors"] or {}
    out = [f"# Side-by-side suite, {rep['date']}, {rep['device']}", ""]
    if f and "error" not in f:
        out.append(f"Floors measured in the same call ({f.get('measured_with', '?')}): "
                   f"device copy {f['copy_GBps']:.0f} GB/s (read + write), pinned host->device "
                   f"{f['h2d_GBps']:.1f} GB/s, SGEMM 8192 {f['sgemm_TFLOPs']:.1f} TFLOP/s.")
    else:
        out.append("Floors: not measured" + (f" ({f['error']})" if f else "") + ".")
    out += ["", "Each cell: median wall time of the timed runs (x its floor; the floors are "
            "the GPU's, also for the CPU columns). **Bold**: the fastest. Fewer than 7 runs "
            "are marked (time budget). Timing rules and floors: bench/README.md. Commit "
            f"`{rep['commit']}`.", ""]
    impls = rep["order"]
    crashed = {ln["impl"] for ln in rep["process_errors"]}
    out.append("| workload | floor | " + " | ".join(impls) + " | nd-cuda target |")
    out.append("|---|---|" + "---|" * len(impls) + "---|")
    for name, w in rep["workloads"].items():
        cells = []
        for impl in impls:
            r = w["results"].get(impl)
            if r:
                cell = fmt_time(r["median_s"])
                if r["x_floor"]:
                    cell += f" ({r['x_floor']:.2f}x)"
                if impl == w["fastest"]:
                    cell = f"**{cell}**"
                if r["runs"] < 7:
                    cell += f" [{r['runs']} runs]"
            elif impl in w["errors"] or impl in crashed:
                cell = "failed"
            else:
                cell = "-"
            cells.append(cell)
        target = w["target"]
        if "target_met" in w:
            target += ": met" if w["target_met"] else ": missed"
        out.append(f"| {name} | {fmt_time(w['floor_s'])} | " + " | ".join(cells)
                   + f" | {target} |")
    vs = [(n, w["nd_cuda_vs_best_gpu_peer"]) for n, w in rep["workloads"].items()
          if "nd_cuda_vs_best_gpu_peer" in w]
    if vs:
        out += ["", "nd-cuda time / the fastest GPU peer's (below 1: nd is faster):", ""]
        out += [f"- {n}: {v['ratio']:.2f}x ({v['peer']})" for n, v in vs]
    errs = [(n, i, e) for n, w in rep["workloads"].items() for i, e in w["errors"].items()]
    errs += [("-", ln["impl"], ln["error"]) for ln in rep["process_errors"]]
    if errs:
        out += ["", "Failures:", ""]
        out += [f"- {i} / {n}: {e}" for n, i, e in errs]
    notes = sorted({(i, r["note"]) for w in rep["workloads"].values()
                    for i, r in w["results"].items() if "note" in r})
    if notes:
        out += ["", "Notes:", ""] + [f"- {i}: {note}" for i, note in notes]
    return "\n".join(out) + "\n"


def plot(rep, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [n for n, w in rep["workloads"].items() if w["results"]]
    impls = [i for i in rep["order"]
             if any(i in rep["workloads"][n]["results"] for n in names)]
    if not names:
        return False
    fig, ax = plt.subplots(figsize=(max(8, 1.4 * len(names) + 2), 5.5))
    width = 0.84 / max(1, len(impls))
    colors = plt.get_cmap("tab10")
    for j, impl in enumerate(impls):
        xs, ys = [], []
        for i, n in enumerate(names):
            r = rep["workloads"][n]["results"].get(impl)
            if r:
                xs.append(i - 0.42 + (j + 0.5) * width)
                ys.append(r["median_s"])
        # a colour per implementation that stays the same from run to run
        k = ORDER.index(impl) if impl in ORDER else len(ORDER) + j
        ax.bar(xs, ys, width, label=impl, color=colors(k % 10),
               edgecolor="black" if impl.startswith("nd-") else "none", linewidth=0.8)
    labelled = False
    for i, n in enumerate(names):
        floor_s = rep["workloads"][n]["floor_s"]
        if floor_s:
            ax.hlines(floor_s, i - 0.45, i + 0.45, colors="black", linestyles="--",
                      linewidth=1.2, label=None if labelled else "floor")
            labelled = True
    ax.set_yscale("log")
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=20, ha="right")
    ax.set_ylabel("median wall time per run (s, log)")
    ax.set_title(f"nd vs peers, {rep['device']}, {rep['date']}")
    ax.grid(axis="y", which="major", alpha=0.3)
    ax.legend(fontsize=8, ncol=2, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+")
    p.add_argument("--out", required=True, help="path prefix of the three files")
    p.add_argument("--date", default="unknown-date")
    p.add_argument("--device", default="unknown-device")
    p.add_argument("--commit", default="unknown")
    p.add_argument("--command", default="")
    args = p.parse_args()
    lines = read_lines(args.files)
    if not lines:
        print("suite_report: no JSON lines in " + " ".join(args.files), file=sys.stderr)
        return 1
    rep = build(lines, args)
    with open(args.out + ".json", "w", encoding="utf-8") as fh:
        json.dump(rep, fh, indent=1, allow_nan=False, default=str)
        fh.write("\n")
    md = markdown(rep)
    with open(args.out + ".md", "w", encoding="utf-8") as fh:
        fh.write(md)
    try:
        drew = plot(rep, args.out + ".png")
    except ImportError as e:
        drew = False
        print(f"suite_report: no plot ({e}); install matplotlib", file=sys.stderr)
    sys.stdout.write(md)
    print(f"suite_report: wrote {args.out}.json, {args.out}.md"
          + (f", {args.out}.png" if drew else " (no plot)"), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
