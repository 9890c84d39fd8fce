#!/usr/bin/env python3
"""Checks that the source folders include each other only as DESIGN.md's
layout draws them: data flows frontend -> graph -> scheduler -> backends.

  src/common      includes only common/ (and the public include/nd*.h)
  src/graph       common/, graph/
  src/backends    common/, backends/ (a backend never sees the graph, and
                  the scheduler and frontend are above it)
  src/dist        common/, dist/ (MPI's few calls, behind dist.h)
  src/scheduler   common/, graph/, backends/, dist/, scheduler/
  src/frontend    common/, graph/, scheduler/, frontend/; only the runtime
                  (runtime.c, runtime.h, runtime_devices.c) creates backends and so may name
                  backends/ headers: the rest of the frontend reaches a
                  backend through the scheduler and the runtime

A quoted #include of another folder's header is a failure, listed with its
file and line, and the fix (move the shared declaration down a layer). So
is a frontend file other than the runtime that calls the backend itself
(`nd_rt.backend`): it goes through nd_runtime_* or the scheduler.

Usage: check_layers.py [SOURCE_ROOT]   (meson test: layers)
       check_layers.py --self-test        (meson test: layers_selftest)
"""
import os
import re
import sys

ALLOWED = {
    "common": {"common"},
    "graph": {"common", "graph"},
    "backends": {"common", "backends"},
    "dist": {"common", "dist"},
    "scheduler": {"common", "graph", "backends", "dist", "scheduler"},
    "frontend": {"common", "graph", "scheduler", "frontend"},
}
# Files of a layer that may also include another layer's headers.
EXTRA = {
    "src/frontend/runtime.c": {"backends", "dist"},
    "src/frontend/runtime.h": {"backends"},
    "src/frontend/runtime_devices.c": {"backends"},  # the runtime's device queries and stream
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
BACKEND_USE = re.compile(r"\bnd_rt\s*\.\s*backend\b")


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def layer_of(path):
    """'backends' for src/backends/cuda/x.c, None outside src/<layer>/."""
    parts = path.split("/")
    if len(parts) < 3 or parts[0] != "src":
        return None
    return parts[1] if parts[1] in ALLOWED else None


def check(root):
    bad = []
    for dirpath, _, files in os.walk(os.path.join(root, "src")):
        for name in sorted(files):
            if not name.endswith((".c", ".h")):
                continue
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            layer = layer_of(rel)
            if layer is None:
                continue
            allowed = ALLOWED[layer] | EXTRA.get(rel, set())
            text = open(full, encoding="utf-8", errors="replace").read()
            for m in INCLUDE.finditer(text):
                target = m.group(1)
                top = target.split("/")[0]
                if "/" not in target or top not in ALLOWED:
                    continue  # same-folder or public header (nd.h, nd/*.h)
                if top not in allowed:
                    line = text.count("\n", 0, m.start()) + 1
                    bad.append(f"{rel}:{line}: includes \"{target}\": src/{layer} may include only "
                               f"{', '.join(sorted(allowed))} (move what both need down a layer)")
            if layer == "frontend" and "backends" not in allowed:
                for m in BACKEND_USE.finditer(strip_comments(text)):
                    line = text.count("\n", 0, m.start()) + 1
                    bad.append(f"{rel}:{line}: calls the backend (nd_rt.backend): only the runtime does "
                               f"(add an nd_runtime_* function in runtime.c)")
    return bad


def self_test():
    """The checker itself: a tree with one forbidden include of each kind
    fails on exactly those; the allowed ones pass."""
    import tempfile
    cases = {
        "src/graph/a.c": ('#include "backends/plan.h"\n#include "common/error.h"\n', 1),
        "src/common/b.h": ('#include "graph/buffer.h"\n', 1),
        "src/dist/h.c": ('#include "scheduler/scheduler.h"\n#include "common/error.h"\n', 1),
        "src/backends/cuda/c.c": ('#include "graph/buffer.h"\n#include "backends/backend.h"\n', 1),
        "src/frontend/d.c": ('# include "backends/backend.h"\n#include "scheduler/scheduler.h"\n', 1),
        "src/frontend/runtime.c": ('#include "backends/registry.h"\n', 0),
        "src/scheduler/e.c": ('#include "frontend/frontend.h"\n#include "backends/plan.h"\n', 1),
        "src/common/f.c": ('#include "nd.h"\n#include "nd/types.h"\n#include "common/alloc.h"\n', 0),
        "src/frontend/g.c": ("void f(void) { nd_rt.backend->alloc(0); /* nd_rt.backend */ }\n", 1),
        "src/frontend/runtime.h": ("/* x */ static int y(void) { return nd_rt.backend != 0; }\n", 0),
    }
    with tempfile.TemporaryDirectory() as root:
        for path, (text, _) in cases.items():
            os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
            open(os.path.join(root, path), "w").write(text)
        bad = check(root)
    for path, (_, want) in cases.items():
        got = sum(1 for b in bad if b.startswith(path + ":"))
        if got != want:
            sys.exit(f"check_layers --self-test: {path}: {got} failure(s) reported, expected {want}: {bad}")
    print(f"check_layers --self-test: {len(bad)} forbidden includes or backend calls found, as expected")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    if not os.path.isdir(os.path.join(root, "src")):
        sys.exit(f"check_layers: no src/ folder under {root}")
    bad = check(root)
    for b in bad:
        print(b)
    if bad:
        sys.exit(f"check_layers: {len(bad)} include(s) against the layering (DESIGN.md, Layout)")
    print("check_layers: every include follows the layering")


if __name__ == "__main__":
    main()
