#!/usr/bin/env bash
# On the GPU machine, from the repository root, after scripts/gpu/stage.sh:
# every suite with ND_BACKEND=cuda, four at a time (about 3 minutes against
# on-device.sh's one by one), the failing tests' output, every example, then
# each benchmark command given as an argument (run from .gpu/bench/, e.g.
# "bench_nd_suite --runs 15 uniform_sum integers_sum"). "bench" as the first
# argument skips the suites and examples. One log: $OUT/gpu.log (the device
# call brings back only a few files).
set -u
. "$(dirname "$0")/common.sh" # unpacks .gpu; LD_LIBRARY_PATH, ND_BACKEND, ND_CACHE_DIR, $OUT
L=$OUT/gpu.log
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .gpu/COMMIT; lscpu | grep "Model name"; } > "$L"
if [ "${1:-}" = bench ]; then shift; else
  ls .gpu/tests/test_* | xargs -P4 -I{} sh -c 'n=$(basename {}); {} --jobs 4 > /tmp/$n.log 2>&1; echo "$n rc=$? $(grep Synthesis /tmp/$n.log | sed s/.*Tested/Tested/)"' >> "$L" 2>&1
  for t in /tmp/test_*.log; do
    grep -q "Failing: [1-9]\|Crashing: [1-9]" "$t" && { echo "=== $t"; grep -B2 -A8 "FAIL\|CRASH" "$t" | head -60; } >> "$L"
  done
  for e in .gpu/examples/*; do
    n=$(basename "$e"); a=""
    case $n in user_kernel) a="256 64";; ufunc|interop_wrap|interop_stream) a=100000;; esac
    timeout 120 "$e" $a > "/tmp/ex_$n.log" 2>&1; echo "example $n rc=$? $(tail -1 "/tmp/ex_$n.log")" >> "$L"
  done
fi
for b in "$@"; do echo "=== bench $b" >> "$L"; (cd .gpu/bench && eval "./$b") >> "$L" 2>&1; done
