#!/usr/bin/env bash
# Why nd-cpu's matmul is slower than NumPy's on a host, in one call of a few
# minutes: the host's cores and limits, sgemm through the staged BLAS alone
# (before nd starts), beside nd's idle pool, from a thread of its own and
# through nd, each with the CPU seconds of every thread meanwhile
# (bench/blas_threads.c); the same with ND_LOG=2; NumPy's BLAS on the same
# size; and the suite's matmul_chain with ND_LOG unset and 2.
#
#   bash bench/suite.sh stage          here (stages .gpu/, bench_blas_threads too)
#   bash bench/cpu_blas_check.sh [N]   on the machine, from the repository root
#                                      (N: matrix size, default 8192)
#
# Reading it: if blas-before-nd is already slow, the staged BLAS is slow on
# this host (compare NumPy's line) and nd's threads are not the cause; if
# only the nd lines are slow, the thread columns show who holds the cores.
set -uo pipefail
cd "$(dirname "$0")/.."
[ ! -f .gpu.tgz ] || { rm -rf .gpu && tar xzf .gpu.tgz; }
export LD_LIBRARY_PATH="$PWD/.gpu/lib:${LD_LIBRARY_PATH:-}"
export ND_BACKEND=cpu ND_CACHE_DIR=${ND_CACHE_DIR:-/tmp/nd-cache}
bin=${BENCH_DIR:-.gpu/bench}
n=${1:-8192}
cores=$(nproc)

echo "== host: nproc $cores, $(date -u)"
lscpu | grep -E '^Model name|^CPU\(s\)|^Thread|^Core|^Socket|^NUMA node\(s\)|^Flags' | cut -c1-200
echo "cpu.max: $(cat /sys/fs/cgroup/cpu.max 2>/dev/null || echo '(none)'); affinity: $(taskset -pc $$ 2>/dev/null)"
uptime
echo "== OpenBLAS staged: $(ls .gpu/lib 2>/dev/null | grep -i blas | tr '\n' ' ')"

for log in "" 2; do
    echo "== sgemm ${n}: ND_NUM_THREADS=$cores ND_LOG=${log:-unset}"
    env ${log:+ND_LOG=$log} ND_NUM_THREADS="$cores" timeout 240 "$bin/bench_blas_threads" "$n" 3 2>&1 |
        grep -v '^nd debug'
done

echo "== NumPy's BLAS, float32 ${n}x${n} @ ${n}x${n}"
timeout 120 "${PYTHON:-python3}" - "$n" <<'EOF'
import sys, time
import numpy as np
n = int(sys.argv[1])
try:
    import threadpoolctl
    for p in threadpoolctl.threadpool_info():
        print("  %s %s, %s threads, %s" % (p.get("internal_api"), p.get("version"), p.get("num_threads"),
                                          p.get("architecture")))
except Exception as e:
    print("  (threadpoolctl: %s)" % e)
rng = np.random.default_rng(1)
a = rng.random((n, n), dtype=np.float32) - 0.5
b = rng.random((n, n), dtype=np.float32) - 0.5
a @ b
ts = []
for _ in range(3):
    t = time.perf_counter(); a @ b; ts.append(time.perf_counter() - t)
ts.sort()
print("numpy sgemm median %.2f ms  min %.2f ms  %.1f GFLOP/s" % (ts[1] * 1e3, ts[0] * 1e3, 2 * n ** 3 / ts[1] * 1e-9))
EOF

for log in "" 2; do
    echo "== bench_nd_suite --runs 3 matmul_chain: ND_NUM_THREADS=$cores ND_LOG=${log:-unset}"
    env ${log:+ND_LOG=$log} ND_NUM_THREADS="$cores" timeout 150 "$bin/bench_nd_suite" --runs 3 matmul_chain 2>&1 |
        grep -E '^  matmul_chain|OpenBLAS|warning'
done
