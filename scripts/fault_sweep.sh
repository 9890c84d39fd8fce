#!/usr/bin/env bash
# The full fault-injection sweep (DESIGN.md "Errors": faults never give a
# wrong answer). Runs the already built tests/test_faults at every
# injection point, once with the executor thread
# and once without (ND_EXECUTOR_THREAD=0), on the backend ND_BACKEND names
# (default cpu; ND_BACKEND=cuda on a GPU machine), then sweeps a few
# example programs from outside through ND_FAULT (each must exit normally,
# with its answer or an error, never crash). Builds nothing: pass the build
# directory as $1 (default build/).
#
#   scripts/fault_sweep.sh [BUILD_DIR]
#   ND_BACKEND=cuda scripts/fault_sweep.sh build
#
# Prints the tally per program and kind of point ("fault sweep ... N
# points: R runs, H harmless, E reported, W silently wrong, M messages
# without function or cause") and exits non-zero if any run was silently
# wrong, crashed or leaked (leaks: run it on the build-asan/ build).
# On CUDA the suite samples host allocations (about 40 per program and mode:
# nd's own code, swept in full on the CPU) and sweeps the CUDA backend's
# points in full; FAULT_SWEEP_FULL=1 fails every host allocation there too
# (ND_TEST_FAULT_STRIDE=1; slow: a CUDA context per run).
# FAULT_SWEEP_EXAMPLES=0 skips the examples; their points are swept with a
# stride that keeps each kind of each example near 100 points (a process
# start each, ~0.1 s); FAULT_SWEEP_EXAMPLE_STRIDE=1 sweeps every one.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
backend=${ND_BACKEND:-cpu}
exe=$build/tests/test_faults
if [ ! -x "$exe" ]; then
    echo "fault_sweep.sh: $exe is missing (build first: meson compile -C $build)" >&2
    exit 2
fi
status=0

for executor in 1 0; do
    echo "=== test_faults, ND_BACKEND=$backend, ND_EXECUTOR_THREAD=$executor, every point"
    full=()
    if [ "${FAULT_SWEEP_FULL:-0}" = 1 ]; then full=(ND_TEST_FAULT_STRIDE=1); fi
    env ND_BACKEND="$backend" ND_EXECUTOR_THREAD="$executor" "${full[@]}" \
        "$exe" --jobs "$(nproc 2>/dev/null || echo 2)" --short-filename 2>&1 |
        grep -E 'fault sweep|device memory limit|Assertion|FAIL|CRASH|Synthesis|silently|names no' 
    rc=${PIPESTATUS[0]}
    # 77: every test skipped (no CUDA device).
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then status=1; fi
done

if [ "${FAULT_SWEEP_EXAMPLES:-1}" = 1 ] && [ -d "$build/examples" ]; then
    for prog in "pi 1000" "dot 1000" "black_scholes 100" "stream_sum 0.0001"; do
        set -- $prog
        bin=$build/examples/$1
        shift
        [ -x "$bin" ] || continue
        counts=$(ND_BACKEND=$backend ND_FAULT=count "$bin" "$@" 2>&1 >/dev/null | grep 'nd fault points')
        runs=0 crashed=0
        for kind in host_alloc device_alloc compile backend_call; do
            n=$(sed -n "s/.*$kind=\([0-9]*\).*/\1/p" <<<"$counts")
            stride=${FAULT_SWEEP_EXAMPLE_STRIDE:-$(( ${n:-0} / 100 + 1 ))}
            for ((i = 1; i <= ${n:-0}; i += stride)); do
                for mode in "" "+"; do
                    ND_BACKEND=$backend ND_FAULT="$kind:$i$mode" "$bin" "$@" >/dev/null 2>&1
                    rc=$?
                    runs=$((runs + 1))
                    if [ "$rc" -ge 128 ]; then
                        crashed=$((crashed + 1))
                        echo "fault_sweep.sh: $(basename "$bin") $* crashed (status $rc) with ND_FAULT=$kind:$i$mode" >&2
                    fi
                done
            done
        done
        echo "example $(basename "$bin") $*: $counts; $runs runs, $crashed crashed"
        [ "$crashed" -eq 0 ] || status=1
    done
fi

if [ "$status" -eq 0 ]; then echo "fault_sweep.sh: no silently wrong run, no crash"; else echo "fault_sweep.sh: FAILED" >&2; fi
exit "$status"
