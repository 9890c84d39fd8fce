#!/usr/bin/env python3
"""Renders the Graphviz pictures of the seed programs (heat, pi,
Black-Scholes, matmul chain) and of a 1000-op program (200 heat sweeps, 1200
recorded calls in one flush), both views: the recorded graph and the plan
(ND_DUMP_DOT, ND_DUMP_DOT_PLAN=1). Checks that `dot` accepts every file, that
each picture fits a screen (at most 2000 x 2000 points at 72 dpi) and that
the loops are drawn once ("repeated x50", "repeated x200"). docs/*.png are
these pictures.

Skips (exit 77, which meson shows as SKIP) when `dot` is not installed
(scripts/install-deps.sh installs graphviz).

Usage: render_dots.py EXAMPLES_BUILD_DIR OUTPUT_DIR [--png]
"""
import glob
import os
import re
import shutil
import subprocess
import sys

MAX_POINTS = 2000


def largest_flush(folder):
    """The graph and plan dumps of the flush with the most recorded calls."""
    best, best_n = None, -1
    for path in glob.glob(os.path.join(folder, "flush-*.dot")):
        if path.endswith("-plan.dot"):
            continue
        text = open(path).read()
        n = len(re.findall(r"^\s+n\d+ \[", text, re.M))
        loop = re.search(r"repeated x(\d+): calls \d+\.\.\d+ drawn once \((\d+) calls", text)
        if loop:  # the calls a folded loop stands for
            n += (int(loop.group(1)) - 1) * int(loop.group(2))
        if n > best_n:
            best, best_n = path, n
    return best, best[:-4] + "-plan.dot"


def size_points(path):
    out = subprocess.run(["dot", "-Tplain", path], check=True, capture_output=True, text=True).stdout
    _, scale, w, h = out.splitlines()[0].split()[:4]
    return float(w) * 72, float(h) * 72


def main():
    build, out = sys.argv[1], sys.argv[2]
    png = "--png" in sys.argv
    if not shutil.which("dot"):
        print("render_dots: SKIP: Graphviz `dot` is not installed (scripts/install-deps.sh installs graphviz)")
        return 77
    os.makedirs(out, exist_ok=True)
    programs = {
        "heat": (["heat", "64", "50", "--dot", os.path.join(out, "heat-unused.dot")], "repeated x50"),
        "pi": (["pi", "100000"], None),
        "black-scholes": (["black_scholes", "65536"], None),
        # Recorded whole (no early flush): one kernel reading 3 arrays and
        # writing 2; with early flushes on, a flush cuts the pricing
        # expression while its scope still holds the temporaries, and the
        # first part writes each of them to memory (drawn bold).
        "black-scholes-whole": (["black_scholes", "65536"], None, {"ND_EARLY_FLUSH": "0"}),
        "matmul-chain": (["matmul_chain", "128"], None),
        "1000-ops": (["heat", "64", "200", "--dot", os.path.join(out, "heat200-unused.dot")], "repeated x200"),
    }
    failures = 0
    for name, (cmd, must, *extra) in programs.items():
        folder = os.path.join(out, name)
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        env = dict(os.environ, ND_BACKEND="cpu", ND_DUMP_DOT=folder, ND_DUMP_DOT_PLAN="1", **(extra[0] if extra else {}))
        subprocess.run([os.path.join(build, cmd[0])] + cmd[1:], check=True, env=env, stdout=subprocess.DEVNULL)
        graph, plan = largest_flush(folder)
        for view, path in (("graph", graph), ("plan", plan)):
            text = open(path).read()
            w, h = size_points(path)
            ok = w <= MAX_POINTS and h <= MAX_POINTS
            if must and must not in text:
                print(f"render_dots: {name} {view}: '{must}' missing")
                ok = False
            print(f"render_dots: {name:14s} {view:5s} {w:6.0f} x {h:6.0f} points  {'ok' if ok else 'FAILED'}")
            failures += not ok
            if png:  # for docs/: the sharpest that stays under 200 KB
                target = os.path.join(out, f"{name}-{view}.png")
                for dpi in (64, 56, 48, 40):
                    subprocess.run(["dot", "-Tpng", f"-Gdpi={dpi}", path, "-o", target], check=True)
                    if os.path.getsize(target) <= 200_000:
                        break
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
