#!/usr/bin/env python3
"""`heat N ITERS --dot FILE` draws ITERS sweeps: one generated add_mul
kernel per iteration (README's "Seeing what runs" and docs/heat-stencil.png
rely on it). Runs the example for 1, 2 and 5 iterations and counts them.

Usage: check_heat_dot.py HEAT_EXECUTABLE OUTPUT_FOLDER   (meson test)
"""
import os
import re
import subprocess
import sys


def main():
    heat, out = sys.argv[1], sys.argv[2]
    env = dict(os.environ, ND_BACKEND="cpu")
    for iters in (1, 2, 5):
        path = os.path.join(out, f"heat-{iters}.dot")
        subprocess.run([heat, "32", str(iters), "--dot", path], check=True, env=env, stdout=subprocess.DEVNULL)
        text = open(path).read()
        sweeps = len(re.findall(r'label="kernel \d+: add_mul', text))
        if sweeps != iters:
            print(f"check_heat_dot: heat 32 {iters} --dot drew {sweeps} sweeps, not {iters}")
            return 1
    print("check_heat_dot: heat N ITERS --dot draws ITERS sweeps (1, 2, 5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
