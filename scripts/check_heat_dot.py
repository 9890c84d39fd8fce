#!/usr/bin/env python3
"""`heat N ITERS --dot FILE` draws ITERS sweeps: one generated add_mul
kernel per iteration for 1 and 2 iterations, and for 5 one sweep framed
"repeated x5" (a loop is drawn once; README's "Seeing what runs" and
docs/heat-stencil.png rely on it). Runs the example and counts them.

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
        want = iters if iters < 3 else 1
        if sweeps != want or (iters >= 3) != (f"repeated x{iters}" in text):
            print(f"check_heat_dot: heat 32 {iters} --dot drew {sweeps} sweeps, not {want}"
                  f"{' framed repeated x%d' % iters if iters >= 3 else ''}")
            return 1
    print("check_heat_dot: heat N ITERS --dot draws 1 and 2 sweeps as they are, 5 as one framed x5")
    return 0


if __name__ == "__main__":
    sys.exit(main())
