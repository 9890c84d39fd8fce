#!/usr/bin/env python3
"""Round trips of .npy/.npz files between NumPy itself and nd.

NumPy writes files of every dtype nd has, C and Fortran order, little- and
big-endian, 0-d and empty arrays, format versions 1.0/2.0/3.0, and .npz
archives (np.savez and np.savez_compressed); the C program
npy_numpy_check (argv[1]) loads each with nd and checks dtype, shape and
values against the raw C-order little-endian bytes written beside it, then
saves what it loaded with nd_save_npy, nd_savez and nd_savez_compressed
(once more with ZIP64 records throughout);
this script loads those with np.load and compares them with the originals.

Skips (exit 77, meson's "skipped") when NumPy is not installed.

Usage: npy_numpy.py PATH/TO/npy_numpy_check   (meson test: npy_numpy)
"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("SKIP: numpy is not installed (python3 -c 'import numpy' fails)")
    sys.exit(77)
from numpy.lib import format as npformat

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64"]


def values(dtype, shape, rng):
    n = int(np.prod(shape))
    if dtype == "bool":
        return (rng.integers(0, 2, n) == 1).reshape(shape)
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        v = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        v[:2] = [info.min, info.max][:min(2, n)] if n >= 2 else v[:2]
        return v.reshape(shape)
    v = (rng.standard_normal(n) * 100).astype(dtype)
    special = np.array([np.nan, np.inf, -np.inf, -0.0], dtype)
    v[:min(4, n)] = special[:min(4, n)]
    return v.reshape(shape)


def main():
    checker = sys.argv[1]
    rng = np.random.default_rng(19)
    tmp = tempfile.mkdtemp(prefix="nd_npy_numpy_")
    out = os.path.join(tmp, "out")
    os.mkdir(out)
    manifest = []
    originals = {}

    def add(name, a, version=None):
        path = os.path.join(tmp, name + ".npy")
        with open(path, "wb") as f:
            if version:
                npformat.write_array(f, a, version=version)
            else:
                np.save(f, a)
        le = a.astype(a.dtype.newbyteorder("<")) if a.dtype.kind != "V" else a
        raw = os.path.join(tmp, name + ".raw")
        with open(raw, "wb") as f:
            f.write(le.tobytes(order="C"))
        dt = "bfloat16" if a.dtype.kind == "V" else np.dtype(a.dtype.newbyteorder("=")).name
        manifest.append(" ".join(["npy", name, path, raw, dt, str(a.ndim)] + [str(s) for s in a.shape]))
        originals[name] = a

    for dt in DTYPES:
        for order in "CF":
            for endian in "<>":
                if endian == ">" and dt in ("bool", "int8", "uint8"):
                    continue
                a = values(dt, (3, 4), rng).astype(np.dtype(dt).newbyteorder(endian))
                a = np.asfortranarray(a) if order == "F" else a
                add(f"{dt}_{order}_{'le' if endian == '<' else 'be'}", a)
        add(f"{dt}_0d", values(dt, (1,), rng).reshape(()))
        add(f"{dt}_empty", values(dt, (0, 3), rng))
    add("f_3d", np.asfortranarray(values("float32", (2, 3, 4), rng)))
    add("big_1d", values("float64", (100000,), rng))
    add("v2", values("int32", (5,), rng), (2, 0))
    add("v3", values("float64", (2, 2), rng), (3, 0))
    add("bf16", np.array([0x3fc0, 0xc049, 0x7f80], np.uint16).view("V2"))

    # archives: NumPy's own, stored and deflated
    members = {k: originals[k] for k in ["float32_C_le", "int64_F_be", "bool_0d", "uint16_empty", "big_1d"]}
    for kind, save in (("stored", np.savez), ("deflated", np.savez_compressed)):
        path = os.path.join(tmp, f"np_{kind}.npz")
        save(path, **members)
        for k in members:
            manifest.append(" ".join(["npz", k, path, os.path.join(tmp, k + ".raw")] +
                                     manifest_tail(members[k])))

    with open(os.path.join(tmp, "manifest"), "w") as f:
        f.write("\n".join(manifest) + "\n")
    r = subprocess.run([checker, os.path.join(tmp, "manifest"), out])
    if r.returncode != 0:
        print(f"npy_numpy_check failed (exit {r.returncode}); files kept in {tmp}")
        return 1

    bad = 0

    def same(name, got, want):
        nonlocal bad
        if want.dtype.kind == "V":
            ok = got.dtype == np.dtype("V2") and got.tobytes() == np.ascontiguousarray(want).tobytes()
        else:
            ok = (got.dtype == want.dtype.newbyteorder("=") and got.shape == want.shape and
                  np.array_equal(got, want, equal_nan=want.dtype.kind == "f") and
                  np.array_equal(np.signbit(got), np.signbit(want)) if want.dtype.kind == "f" else
                  got.dtype == want.dtype.newbyteorder("=") and got.shape == want.shape and
                  np.array_equal(got, want))
        if not ok:
            print(f"MISMATCH {name}: nd wrote {got.dtype} {got.shape}, NumPy had {want.dtype} {want.shape}")
            bad += 1

    for name, want in originals.items():
        same(name + ".npy", np.load(os.path.join(out, name + ".npy")), want)
    for arch in ("all.npz", "all_compressed.npz", "all_zip64.npz"):
        with np.load(os.path.join(out, arch)) as z:
            if sorted(z.files) != sorted(originals):
                print(f"MISMATCH {arch}: members {sorted(z.files)[:5]}...")
                bad += 1
            for name, want in originals.items():
                same(f"{arch}[{name}]", z[name], want)
    print(f"{len(originals)} .npy files and {2 * len(members)} archive members NumPy wrote loaded in nd; "
          f"{len(originals)} .npy files and 3 archives (one all ZIP64) nd wrote loaded in NumPy; {bad} mismatches")
    if bad == 0:
        subprocess.run(["rm", "-rf", tmp])
    return 1 if bad else 0


def manifest_tail(a):
    dt = "bfloat16" if a.dtype.kind == "V" else np.dtype(a.dtype.newbyteorder("=")).name
    return [dt, str(a.ndim)] + [str(s) for s in a.shape]


if __name__ == "__main__":
    sys.exit(main())
