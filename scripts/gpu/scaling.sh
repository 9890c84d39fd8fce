#!/usr/bin/env bash
# The several-device scaling run (docs/scaling.md has the model it is read
# against): every case of bench/scaling.c on 1, 2, 4, 8 devices (only as
# many as there are), per-device throughput (points/s) and efficiency
# against 1 device, as a markdown table on stdout and $OUT/scaling.md, and
# the raw lines in $OUT/scaling.csv, with the date and the device.
#
# On a GPU machine, after scripts/gpu/stage.sh packed .gpu.tgz (one device
# call per machine size; carry .gpu.tgz):
#   bash scripts/gpu/scaling.sh                 ND_DEVICES=0,...,P-1, one process
#   bash scripts/gpu/scaling.sh --same-gpu 2    ND_DEVICES=0,0 (logical devices on one GPU)
# Here, on the CPU (ND_DEVICES=cpu:P, small sizes, results checked):
#   bash scripts/gpu/scaling.sh --cpu 4 --small
# Under mpirun as well (one rank per GPU), where mpirun exists and libnd was
# built with MPI; skipped, and said so, otherwise.
# Options: --cases "heat heat-norm bcast strong cg matmul", --max P, --runs R,
# --small (also checks every device count's result against one device's),
# --check (that check at full size: doubles the time).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-scaling-out}
mkdir -p "$OUT"
mode=gpu cpu_max=0 same=0 small="" check="" runs="" maxp=8
cases="heat heat-norm bcast strong cg matmul"
while [ $# -gt 0 ]; do
  case "$1" in
    --cpu) mode=cpu cpu_max=$2; shift ;;
    --same-gpu) mode=same same=$2; shift ;;
    --small) small=--small ;;
    --check) check=--check ;;
    --cases) cases=$2; shift ;;
    --runs) runs="--runs $2"; shift ;;
    --max) maxp=$2; shift ;;
    *) echo "scaling.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

if [ "$mode" = cpu ]; then
  BIN=${BIN:-build/bench/bench_scaling}
  export ND_BACKEND=cpu
  avail=$cpu_max
  device="CPU ($(nproc) cores), ND_DEVICES=cpu:P"
  libnd=$(ls build/libnd.so 2>/dev/null || true)
else
  # Unpacks .gpu.txz/.gpu.tgz; LD_LIBRARY_PATH, ND_BACKEND, ND_CACHE_DIR.
  . scripts/gpu/common.sh
  BIN=${BIN:-.gpu/bench/bench_scaling}
  avail=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
  [ "$mode" = same ] && avail=$same
  device="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1) x $(nvidia-smi -L 2>/dev/null | grep -c '^GPU')"
  libnd=.gpu/lib/libnd.so
fi
# Small grids are below the default split size (1 MiB): split them anyway.
[ -z "$small" ] || export ND_SPLIT_MIN_BYTES=0
[ -x "$BIN" ] || { echo "scaling.sh: $BIN not built (here: ninja -C build; GPU: scripts/gpu/stage.sh)" >&2; exit 1; }
[ "${avail:-0}" -ge 1 ] || { echo "scaling.sh: no device visible" >&2; exit 1; }
ps=""
for p in 1 2 4 8 16; do [ "$p" -le "$avail" ] && [ "$p" -le "$maxp" ] && ps="$ps $p"; done

devices_for() { # P -> ND_DEVICES
  local p=$1 i list=""
  if [ "$mode" = cpu ]; then echo "cpu:$p"; return; fi
  for ((i = 0; i < p; i++)); do
    if [ "$mode" = same ]; then list="$list,0"; else list="$list,$i"; fi
  done
  echo "${list#,}"
}

csv="$OUT/scaling.csv"
stamp=$(date -u +%Y-%m-%dT%H:%M:%SZ)
commit=$(cat .gpu/COMMIT 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)
echo "launch,devices,case,parts,n,rows,cols,seconds,points_per_s,points_per_s_per_part,checksum,ref_checksum" > "$csv"
log="$OUT/scaling.log"
: > "$log"

run_one() { # launch devices case P [ref]
  local launch=$1 devs=$2 c=$3 p=$4 line ref=""
  if [ "$launch" = mpi ]; then
    line=$(timeout 300 mpirun -n "$p" "$BIN" "$c" --parts "$p" $small $check $runs 2>>"$log" | tail -1)
  else
    line=$(ND_DEVICES=$devs timeout 300 "$BIN" "$c" --parts "$p" $small $check $runs 2>>"$log" | tail -1)
  fi
  [ -n "$line" ] || { echo "$launch $devs $c P=$p: failed (see $log)" | tee -a "$log" >&2; return; }
  # The check: the same grid on one device (bitwise for the stencils).
  if [ -n "$small$check" ] && [ "$p" -gt 1 ]; then
    local one; one=$(devices_for 1)
    ref=$(ND_DEVICES=$one timeout 300 "$BIN" "$c" --parts "$p" $small $check $runs 2>>"$log" | tail -1 | cut -d, -f9)
  fi
  echo "$launch,$devs,$line,$ref" >> "$csv"
}

for c in $cases; do
  for p in $ps; do
    run_one one "$(devices_for "$p")" "$c" "$p"
  done
done
# One timeline of the largest heat run (ND_TRACE: Chrome/Perfetto JSON,
# a row per stream): how much of each halo copy the interior hides.
if [ "$mode" != cpu ] && [ -n "$ps" ]; then
  top=${ps##* }
  ND_TRACE="$OUT/heat-trace-P$top.json" ND_DEVICES=$(devices_for "$top") timeout 300 \
    "$BIN" heat --parts "$top" --runs 1 --sweeps 5 $small >>"$log" 2>&1 || echo "trace run failed" | tee -a "$log"
fi
# One rank per GPU: needs mpirun and a libnd built with MPI (-Dmpi).
if [ "$mode" = gpu ] || [ "$mode" = cpu ]; then
  if command -v mpirun >/dev/null 2>&1 && ldd "$libnd" 2>/dev/null | grep -q libmpi; then
    for c in $cases; do
      for p in $ps; do
        if [ "$mode" = cpu ]; then ND_DEVICES=cpu:1 run_one mpi "cpu:1 x $p ranks" "$c" "$p"
        else run_one mpi "$p ranks" "$c" "$p"; fi
      done
    done
  else
    echo "mpirun: skipped ($(command -v mpirun >/dev/null 2>&1 && echo "libnd built without MPI" || echo "no mpirun here"))" | tee -a "$log"
  fi
fi

python3 - "$csv" "$stamp" "$device" "$commit" <<'PY' | tee "$OUT/scaling.md"
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(f"Scaling run {sys.argv[2]} on {sys.argv[3]} (nd {sys.argv[4]})\n")
print("| case | launch | P | ND_DEVICES | grid | s / batch | points/s | per device | efficiency | check |")
print("|---|---|---:|---|---|---:|---:|---:|---:|---|")
base = {}
for r in rows:
    if int(r["parts"]) == 1: base[(r["case"], r["launch"])] = float(r["points_per_s_per_part"])
for r in rows:
    b = base.get((r["case"], r["launch"])) or base.get((r["case"], "one"))
    per = float(r["points_per_s_per_part"])
    eff = f"{100 * per / b:.1f}%" if b else "-"
    chk, ref = r["checksum"], r["ref_checksum"]
    if ref:
        x, y = float(chk), float(ref)
        rel = abs(x - y) / max(abs(y), 1e-300)
        chk = "bitwise" if chk == ref else (f"rel {rel:.1e}" if rel < 1e-4 else f"DIFFERS ({chk} vs {ref})")
    elif chk == "nan": chk = "-"
    else: chk = "P=1" if int(r["parts"]) == 1 else "-"
    grid = f'{r["rows"]}x{r["cols"]}' if r["case"] != "matmul" else f'{r["n"]}^3 x chain'
    print(f'| {r["case"]} | {r["launch"]} | {r["parts"]} | {r["devices"]} | {grid} | {float(r["seconds"]):.4g} | '
          f'{float(r["points_per_s"]):.3e} | {per:.3e} | {eff} | {chk} |')
print("\nWeak scaling (heat, heat-norm, bcast, cg): per-device grid fixed, efficiency = per-device points/s at P over P=1."
      "\nStrong (strong, matmul): one problem, efficiency = points/s at P over P x points/s at P=1."
      "\nmatmul: C's rows follow A's, B in a ring of blocks (docs/internals.md \"Matmul over pieces\"); on CUDA"
      "\nevery device's GEMM still runs on device 0's stream, so expect about one device's time (docs/scaling.md).")
PY
