#!/usr/bin/env bash
# One device call: every suite and example on CUDA, then the benchmarks named.
set -u
rm -rf .gpu && tar xzf .gpu.tgz
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64 ND_CACHE_DIR=/tmp/ndc ND_BACKEND=cuda
L=$OUT/gpu.log
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .gpu/COMMIT; lscpu | grep "Model name"; } > $L
if [ "${1:-}" != bench ]; then
ls .gpu/tests/test_* | xargs -P4 -I{} sh -c 'n=$(basename {}); {} --jobs 4 > /tmp/$n.log 2>&1; echo "$n rc=$? $(grep Synthesis /tmp/$n.log | sed s/.*Tested/Tested/)"' >> $L 2>&1
for t in /tmp/test_*.log; do grep -q "Failing: [1-9]\|Crashing: [1-9]" $t && { echo "=== $t"; grep -B2 -A8 "FAIL\|CRASH" $t | head -60; } >> $L; done
for e in .gpu/examples/*; do n=$(basename $e); a=""; case $n in user_kernel) a="256 64";; ufunc|interop_wrap) a=100000;; esac; timeout 120 $e $a > /tmp/ex_$n.log 2>&1; echo "example $n rc=$? $(tail -1 /tmp/ex_$n.log)" >> $L; done
fi
shift || true
for b in "$@"; do echo "=== bench $b" >> $L; eval ".gpu/bench/$b" >> $L 2>&1; done
