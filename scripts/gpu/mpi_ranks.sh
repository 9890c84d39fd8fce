#!/usr/bin/env bash
# GPU ranks under mpirun (docs/internals.md "Several processes"), on the GPU
# machine from the repository root after scripts/gpu/stage.sh staged .gpu/
# (carry .gpu.tgz):
#   bash scripts/gpu/mpi_ranks.sh [RANKS]          (default 2)
#  - tests/mpi's programs (.gpu/tests/mpi_programs) alone on the GPU, then
#    under mpirun -n RANKS with ND_BACKEND=cuda and every array split
#    (ND_SPLIT_MIN_BYTES=0): bitwise the lone run's results for elementwise
#    work, the stencil and random draws, reductions and matmuls within
#    1e-12, every rank the same bits, bytes staged through host buffers;
#    then ND_CHECK_SPMD=1 with rank 1 recording another shape;
#  - the heat example (1000 x 1000, 50 sweeps) alone and under mpirun: every
#    rank prints the lone run's min, max and mean;
#  - every other example under mpirun: its own check passes (exit 0; 77:
#    it skips on this backend);
#  - on CUDA, the programs and the heat example again with
#    ND_RANK_TRANSPORT=nccl: the same values, bytes over NCCL and none
#    staged (mpi_programs checks its nd_stats). On one GPU NCCL refuses two
#    ranks, unless each has its own NCCL_HOSTID: NCCL then takes them for
#    two hosts and carries the bytes over its socket transport on the
#    loopback (slow, but the path is nd's NCCL path: device pointers,
#    ncclSend/ncclRecv/ncclBroadcast on the backend's stream).
# Each rank drives GPU (local rank mod GPUs visible): on a machine of one
# GPU both ranks share GPU 0 (ND_RANK_TRANSPORT=auto then carries their
# bytes through pinned host buffers and MPI).
# mpirun: $MPIRUN, else the one on PATH, else the OpenMPI tree that
# scripts/gpu/stage_openmpi.sh packed into .gpu/openmpi (found by
# OPAL_PREFIX, set here); none: one SKIP line, exit 0.
# MPI_RANKS_EXAMPLES=0 leaves out the other examples (a shorter call).
# MPI_RANKS_BACKEND=cpu runs the same checks on the CPU backend with
# ND_RANK_STAGING=1 (the script tried on a machine without a GPU).
# Logs go to $OUT (or ./gpu-out); PASS/FAIL lines, then a summary line.
set -uo pipefail
. "$(dirname "$0")/common.sh" # unpacks .gpu; LD_LIBRARY_PATH, ND_BACKEND, ND_CACHE_DIR, $OUT
ranks=${1:-2}
backend=${MPI_RANKS_BACKEND:-cuda}
export ND_BACKEND=$backend
unset ND_DEVICES ND_CHECK_SPMD ND_RANK_STAGING ND_RANK_LINK ND_RANK_TRANSPORT
[ "$backend" = cuda ] || export ND_RANK_STAGING=1
log="$OUT/mpi_ranks.txt"
: >"$log"
say() { echo "$*" | tee -a "$log"; }

# mpirun: $MPIRUN, else the one on PATH, else the staged copy; each must run.
works() { [ -n "$1" ] && "$1" --version >/dev/null 2>&1; }
mpirun_bin=${MPIRUN:-}
if [ -n "$mpirun_bin" ] && ! works "$mpirun_bin"; then
  say "FAIL mpi_ranks: MPIRUN='$mpirun_bin' does not run"
  exit 1
fi
[ -n "$mpirun_bin" ] || ! works "$(command -v mpirun || true)" || mpirun_bin=$(command -v mpirun)
if [ -z "$mpirun_bin" ] && [ -f .gpu/openmpi/bin/mpirun ]; then
  # OpenMPI carried here (stage_openmpi.sh): relocated to .gpu/openmpi.
  # Debian's sysconfdir (/etc/openmpi) and PMIx's folders are not under its
  # prefix: every directory is named.
  P=$PWD/.gpu/openmpi
  export OPAL_PREFIX=$P OPAL_BINDIR=$P/bin OPAL_LIBDIR=$P/lib OPAL_PKGLIBDIR=$P/lib/openmpi3 \
    OPAL_DATADIR=$P/share OPAL_PKGDATADIR=$P/share/openmpi OPAL_SYSCONFDIR=$P/etc \
    PMIX_PREFIX=$P PMIX_PKGLIBDIR=$P/lib/pmix PMIX_PKGDATADIR=$P/share/pmix PMIX_SYSCONFDIR=$P/etc \
    PMIX_MCA_mca_base_component_path=$P/lib/pmix
  export PATH="$P/bin:$PATH" LD_LIBRARY_PATH="$P/lib:$LD_LIBRARY_PATH"
  works "$P/bin/mpirun" && mpirun_bin=$P/bin/mpirun
fi
if [ -z "$mpirun_bin" ]; then
  say "SKIP mpi_ranks: no mpirun that runs (set MPIRUN, put mpirun on PATH, or stage OpenMPI with scripts/gpu/stage_openmpi.sh)"
  exit 0
fi
prog=.gpu/tests/mpi_programs
heat=.gpu/examples/heat
say "mpi_ranks: $("$mpirun_bin" --version 2>&1 | head -1) at $mpirun_bin; backend $backend; $ranks ranks"
[ "$backend" != cuda ] || nvidia-smi -L 2>/dev/null | tee -a "$log"
# --oversubscribe: more ranks than cores or slots is fine here; shared
# memory between the ranks (no network on the device machine;
# MPI_RANKS_BTL=self,tcp uses the loopback where /dev/shm is too small).
args=(-n "$ranks" --oversubscribe --bind-to none --mca btl "${MPI_RANKS_BTL:-self,vader}")
[ "$(id -u)" -ne 0 ] || args+=(--allow-run-as-root)
for v in ND_BACKEND ND_CACHE_DIR ND_RANK_STAGING LD_LIBRARY_PATH OPAL_PREFIX OPAL_BINDIR OPAL_LIBDIR OPAL_PKGLIBDIR \
    OPAL_DATADIR OPAL_PKGDATADIR OPAL_SYSCONFDIR PMIX_PREFIX PMIX_PKGLIBDIR PMIX_PKGDATADIR PMIX_SYSCONFDIR \
    PMIX_MCA_mca_base_component_path; do
  [ -z "${!v+x}" ] || args+=(-x "$v")
done
status=0
pass() { say "PASS $*"; }
fail() { say "FAIL $*"; status=1; }

# tests/mpi's programs.
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
if [ ! -x "$prog" ]; then
  fail "mpi_programs: $prog missing (stage.sh stages it where build-gpu found MPI)"
else
  if ND_SPLIT_MIN_BYTES=0 "$prog" ref "$dir/ref.bin" >"$OUT/mpi-ref.log" 2>&1; then
    pass "mpi_programs alone on $backend (against the C float64 reference)"
    if ND_SPLIT_MIN_BYTES=0 ND_LOG=2 "$mpirun_bin" "${args[@]}" -x ND_SPLIT_MIN_BYTES -x ND_LOG \
        "$prog" check "$dir/ref.bin" >"$OUT/mpi-check.log" 2>&1; then
      pass "mpi_programs mpirun -n $ranks: $(grep -h 'ranks on the' "$OUT/mpi-check.log" | head -1)"
    else
      fail "mpi_programs mpirun -n $ranks (log: $OUT/mpi-check.log)"
      tail -5 "$OUT/mpi-check.log"
    fi
    # What each rank drove (the GPU picked by its local rank, staging).
    grep -h "cuda backend on device\|is device .* of the split" "$OUT/mpi-check.log" | sort -u | tee -a "$log"
  else
    fail "mpi_programs alone on $backend (log: $OUT/mpi-ref.log)"
    tail -5 "$OUT/mpi-ref.log"
  fi
  if ND_CHECK_SPMD=1 "$mpirun_bin" "${args[@]}" -x ND_CHECK_SPMD "$prog" spmd >"$OUT/mpi-spmd.log" 2>&1; then
    pass "mpi_programs ND_CHECK_SPMD=1: every rank's read fails naming rank 1"
  else
    fail "mpi_programs ND_CHECK_SPMD=1 (log: $OUT/mpi-spmd.log)"
    tail -5 "$OUT/mpi-spmd.log"
  fi
fi

# heat_ranks WHAT LOG NEED MPIRUN-ARGS...: the heat example under mpirun
# (the arguments end with anything that wraps the program) prints the lone
# run's figures ($want) on every rank; NEED, where set, is a line every
# rank must log (ND_LOG=2).
heat_ranks() {
  local what=$1 out=$2 need=$3 got lines logged
  shift 3
  if timeout 240 "$mpirun_bin" "$@" "$heat" 1000 50 >"$out" 2>&1; then
    got=$(grep -h "^  min" "$out" | sort -u)
    lines=$(grep -c "^  min" "$out")
    logged=$ranks
    [ -z "$need" ] || logged=$(grep -c "$need" "$out")
    if [ "$got" = "$want" ] && [ "$lines" -eq "$ranks" ] && [ "$logged" -eq "$ranks" ]; then
      pass "heat 1000x1000 x50 mpirun -n $ranks$what: every rank prints the lone run's '$(echo $want)'"
    else
      fail "heat mpirun -n $ranks$what: got '$(echo $got)' ($lines lines, $logged logged '$need'), alone" \
        "'$(echo $want)'"
    fi
    grep -h "^  time" "$out" | sed 's/^ */  /' | tee -a "$log"
  else
    fail "heat mpirun -n $ranks$what (log: $out)"
    tail -5 "$out"
  fi
}

# The heat example: the lone run's figures on every rank.
want=
if [ ! -x "$heat" ]; then
  fail "heat: $heat missing"
elif "$heat" 1000 50 >"$OUT/heat-alone.log" 2>&1; then
  want=$(grep -h "^  min" "$OUT/heat-alone.log")
  grep -h "^  time" "$OUT/heat-alone.log" | sed 's/^ */  /' | tee -a "$log"
  heat_ranks "" "$OUT/heat-mpi.log" "" "${args[@]}"
else
  fail "heat alone (log: $OUT/heat-alone.log)"
  tail -5 "$OUT/heat-alone.log"
fi
# NCCL between the ranks (ND_RANK_TRANSPORT=nccl), each rank its own
# NCCL_HOSTID so that two ranks may share one GPU; against the same lone
# runs as above.
if [ "$backend" = cuda ]; then
  nccl_args=("${args[@]}" -x ND_RANK_TRANSPORT=nccl -x ND_LOG=2 -x NCCL_SOCKET_IFNAME=lo -x NCCL_P2P_DISABLE=1
             -x NCCL_SHM_DISABLE=1 -x NCCL_IB_DISABLE=1 -x NCCL_DEBUG=WARN)
  hostid=(sh -c 'NCCL_HOSTID=h$OMPI_COMM_WORLD_RANK exec "$@"' sh)
  if [ -x "$prog" ] && [ -f "$dir/ref.bin" ]; then
    if ND_SPLIT_MIN_BYTES=0 timeout 240 "$mpirun_bin" "${nccl_args[@]}" -x ND_SPLIT_MIN_BYTES "${hostid[@]}" \
        "$prog" check "$dir/ref.bin" >"$OUT/mpi-nccl.log" 2>&1 &&
        [ "$(grep -c 'bytes between ranks go over NCCL' "$OUT/mpi-nccl.log")" -eq "$ranks" ]; then
      pass "mpi_programs mpirun -n $ranks over NCCL: $(grep -h 'ranks on the' "$OUT/mpi-nccl.log" | head -1)"
    else
      fail "mpi_programs mpirun -n $ranks over NCCL (log: $OUT/mpi-nccl.log)"
      tail -5 "$OUT/mpi-nccl.log"
    fi
    grep -h "bytes between ranks go" "$OUT/mpi-nccl.log" | sort -u | tee -a "$log"
  else
    fail "mpi_programs over NCCL: no lone run to compare with"
  fi
  if [ -n "$want" ]; then
    heat_ranks " over NCCL" "$OUT/heat-nccl.log" "bytes between ranks go over NCCL" "${nccl_args[@]}" "${hostid[@]}"
  else
    fail "heat over NCCL: no lone run to compare with"
  fi
fi
# Every other example under mpirun: each checks its own result (against a
# reference or a tolerance) and exits non-zero when it is wrong.
for e in .gpu/examples/*; do
  [ "${MPI_RANKS_EXAMPLES:-1}" != 0 ] || break
  n=$(basename "$e")
  [ "$n" != heat ] && [ -x "$e" ] && [ -f "$e" ] || continue
  timeout 600 "$mpirun_bin" "${args[@]}" "$e" >"$OUT/example-mpi-$n.log" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then
    pass "example $n mpirun -n $ranks (its own check)"
  elif [ $rc -eq 77 ]; then
    say "SKIP example $n mpirun -n $ranks: it skips on this backend (exit 77)"
  else
    fail "example $n mpirun -n $ranks (log: $OUT/example-mpi-$n.log)"
    tail -3 "$OUT/example-mpi-$n.log"
  fi
done
say "mpi_ranks: $([ $status -eq 0 ] && echo OK || echo FAILURES)"
exit $status
