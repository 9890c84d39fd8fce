#!/usr/bin/env bash
# The MPI test (meson test mpi, where the build found MPI and mpirun):
# tests/mpi/mpi_programs.c alone, then under mpirun -n 2 and -n 3 (more
# ranks than this machine's cores: --oversubscribe) against the lone run's
# results, again with ND_RANK_STAGING=1 (transfers through host buffers,
# as GPU ranks make them) and with ND_RANK_LINK=1 (transfers over the CPU
# backend's test link: the executor's path of GPU ranks over NCCL), then
# the failure cases and the ND_CHECK_SPMD check. A few seconds in all.
#
# On a machine of few cores each rank runs its flushes on its own thread
# (ND_EXECUTOR_THREAD=0) and OpenMPI yields while it waits
# (mpi_yield_when_idle): ranks busy-polling for each other's messages on 2
# cores made one run 14 times slower. ND_CPU_JIT=0: nothing to compile.
set -euo pipefail
prog=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
unset ND_DEVICES ND_CHECK_SPMD ND_RANK_STAGING ND_RANK_LINK ND_RANK_TRANSPORT
export ND_BACKEND=cpu ND_EXECUTOR_THREAD=0 ND_SPLIT_MIN_BYTES=0 ND_CPU_JIT=0 OMP_NUM_THREADS=1 \
    OPENBLAS_NUM_THREADS=1
args=(--oversubscribe --bind-to none --mca mpi_yield_when_idle 1 --mca btl self,vader)
if [ "$(id -u)" -eq 0 ]; then
    args+=(--allow-run-as-root)
fi
echo "== alone"
"$prog" ref "$dir/ref.bin"
for n in 2 3; do
    echo "== mpirun -n $n"
    mpirun -n "$n" "${args[@]}" "$prog" check "$dir/ref.bin"
done
# The GPU ranks' path (every transfer through a host buffer: copy out,
# MPI, copy in) on the CPU: the same bits as the lone run.
for n in 2 3; do
    echo "== mpirun -n $n, ND_RANK_STAGING=1"
    ND_RANK_STAGING=1 mpirun -n "$n" "${args[@]}" -x ND_RANK_STAGING "$prog" check "$dir/ref.bin"
done
# The GPU ranks' NCCL path (every transfer over the backend's link:
# rank_xfer, zeros from the link's own blocks for a failed step, a wait
# for the link before the ranks agree) on the CPU, over the test link:
# the same bits as the lone run, the link's bytes counted and none staged
# (mpi_programs checks nd_stats). A plan that stopped waiting for the link
# hangs (the test link sends at the wait), hence the timeout.
for n in 2 3; do
    echo "== mpirun -n $n, ND_RANK_LINK=1"
    ND_RANK_LINK=1 timeout 60 mpirun -n "$n" "${args[@]}" -x ND_RANK_LINK "$prog" check "$dir/ref.bin"
done
# must_fail WHAT LINES PATTERN COMMAND...: COMMAND (an mpirun) must fail,
# not hang (45 s), and print at least LINES lines matching PATTERN
# (grep -E): the ranks that must say why.
must_fail() {
    local what=$1 lines=$2 pattern=$3 out="$dir/must_fail.txt" rc told
    shift 3
    set +e
    timeout 45 "$@" >"$out" 2>&1
    rc=$?
    set -e
    told=$(grep -cE "$pattern" "$out" || true)
    if [ $rc -eq 0 ] || [ $rc -eq 124 ] || [ "$told" -lt "$lines" ]; then
        echo "run_mpi_tests: $what gave exit $rc (want a failure, no hang) and $told of $lines lines '$pattern':" >&2
        tail -5 "$out" >&2
        exit 1
    fi
    echo "told: $(grep -m1 -oE "$pattern.{0,100}" "$out")"
}
# NCCL carries only GPU memory: forced on CPU ranks, nd_init fails on
# every rank saying why (the ranks decide together, so none hangs).
echo "== mpirun -n 2, ND_RANK_TRANSPORT=nccl on CPU ranks"
must_fail "ND_RANK_TRANSPORT=nccl on CPU ranks" 2 \
    "nd_init: ND_RANK_TRANSPORT=nccl cannot be: rank 0( \(this rank\))? does not compute on a GPU" \
    env ND_RANK_TRANSPORT=nccl mpirun -n 2 "${args[@]}" -x ND_RANK_TRANSPORT "$prog" check "$dir/ref.bin"
# A rank whose backend does not start (CUDA with no device visible) still
# takes part in that choice: the other fails nd_init naming it, no hang.
echo "== mpirun -n 2, rank 1's backend does not start"
must_fail "rank 1 failing to start" 1 "mpi_programs: nd_init: nd_init: MPI rank 1 failed to start" \
    mpirun -n 2 "${args[@]}" bash -c \
    'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then export ND_BACKEND=cuda CUDA_VISIBLE_DEVICES=; fi; exec "$0" check "$1"' \
    "$prog" "$dir/ref.bin"
# The ranks choose the test link together: set on one rank only, nd_init
# fails on both saying so.
echo "== mpirun -n 2, ND_RANK_LINK=1 on rank 1 only"
must_fail "ND_RANK_LINK=1 on one rank" 2 "nd_init: ND_RANK_TRANSPORT=auto cannot be: ND_RANK_LINK differs" \
    mpirun -n 2 "${args[@]}" bash -c \
    'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then export ND_RANK_LINK=1; fi; exec "$0" check "$1"' \
    "$prog" "$dir/ref.bin"
echo "== mpirun -n 2, ND_CHECK_SPMD=1, rank 1 records another shape"
ND_CHECK_SPMD=1 mpirun -n 2 "${args[@]}" -x ND_CHECK_SPMD "$prog" spmd
# A rank whose steps fail (ND_FAULT: every backend call from the 120th on,
# copies into and out of host buffers included) still takes part in every
# transfer once: no rank hangs, and rank 0's reads fail naming rank 1.
echo "== mpirun -n 2, ND_RANK_STAGING=1, rank 1 fails its backend calls from the 120th on"
must_fail "a failing rank 1" 1 "mpi_programs rank 0: .*MPI rank 1 failed a step" \
    env ND_RANK_STAGING=1 mpirun -n 2 "${args[@]}" -x ND_RANK_STAGING bash -c \
    'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then export ND_FAULT=backend_call:120+; fi; exec "$0" check "$1"' \
    "$prog" "$dir/ref.bin"
# A rank whose records fail (ND_FAULT: host allocations from the 400th on)
# stops recording what the other records; under ND_CHECK_SPMD=1 it says so
# at nd_shutdown, and rank 0 fails its plans naming it instead of waiting.
echo "== mpirun -n 2, ND_CHECK_SPMD=1, rank 1 fails its host allocations from the 400th on"
must_fail "a rank whose records fail" 1 "mpi_programs rank 0: .*MPI rank 1 finished" \
    env ND_CHECK_SPMD=1 mpirun -n 2 "${args[@]}" -x ND_CHECK_SPMD bash -c \
    'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then export ND_FAULT=host_alloc:400+; fi; exec "$0" check "$1"' \
    "$prog" "$dir/ref.bin"
# The same over the test link: a failed step or a failed rank_xfer takes
# part with the link's zeros and sink, and the plan's wait comes before
# the ranks agree.
echo "== mpirun -n 2, ND_RANK_LINK=1, rank 1 fails its backend calls from the 120th on"
must_fail "a failing rank 1 over the test link" 1 "mpi_programs rank 0: .*MPI rank 1 failed a step" \
    env ND_RANK_LINK=1 mpirun -n 2 "${args[@]}" -x ND_RANK_LINK bash -c \
    'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then export ND_FAULT=backend_call:120+; fi; exec "$0" check "$1"' \
    "$prog" "$dir/ref.bin"
