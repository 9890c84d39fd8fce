#!/usr/bin/env bash
# The side-by-side suite (bench/README.md, "Side-by-side suite") in two steps:
#
#   bash bench/suite.sh stage    here: builds nd with CUDA (build-gpu/) and
#                                stages .gpu/ (scripts/gpu/stage.sh), which
#                                then travels to the GPU machine
#   bash bench/suite.sh run [--small] [--runs N] [--h2d-gib G] [--only IMPL,...]
#                           [--workloads W,...] [--set SIZE=V ...]
#                                on the GPU machine, from the repository root:
#                                floors, then nd-cuda, cupy, torch, jax, nd-cpu
#                                and numpy, each in its own process, then
#                                $OUT/<date>-<device>.{json,md,png,log}
#
# IMPL names for --only: floors nd-cuda cupy torch jax nd-cpu numpy (cupy
# also runs cupy-fuse, torch also torch-compile and torch-cudagraph).
# --workloads names the workloads every implementation runs (default: each
# one's default set); --workloads lib runs the sorting, scan and indexing
# workloads (bench/peers/suite_common.py's LIB_WORKLOADS), which are not in
# the default set; --workloads la the linear algebra and FFT ones
# (LA_WORKLOADS; --set svd_n=8192 and the other sizes of SETTABLE change
# their sizes everywhere).
# Environment: OUT (default ./suite-out), PYTHON (default python3),
# ND_SUITE_BIN (default .gpu/bench/bench_nd_suite), SUITE_BUDGET_S (seconds
# for the whole run, default 560: one device call is 600), SUITE_CAP_<IMPL>
# (one implementation's cap in seconds, e.g. SUITE_CAP_ND_CUDA=300). The
# whole suite fits one call on an H100 (495 s); where it does not, run
# --only floors,nd-cuda,cupy,torch,jax, then --only floors,nd-cpu,numpy,
# and merge with python3 bench/suite_report.py --out PREFIX a.json b.json.
set -uo pipefail
cd "$(dirname "$0")/.."

usage() {
    sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

stage() {
    bash scripts/gpu/stage.sh || exit 1
    [ -x .gpu/bench/bench_nd_suite ] || { echo "suite.sh: .gpu/bench/bench_nd_suite was not built" >&2; exit 1; }
    echo "staged: now, on the GPU machine, carry .gpu.tgz and run: bash bench/suite.sh run"
}

run() {
    local small="" runs=9 h2d_gib="" only="floors,nd-cuda,cupy,torch,jax,nd-cpu,numpy" names=""
    local -a sets=()
    while [ $# -gt 0 ]; do
        case "$1" in
        --small) small=--small ;;
        --runs) runs=${2:?--runs needs a number}; shift ;;
        --h2d-gib) h2d_gib=${2:?--h2d-gib needs a size}; shift ;;
        --only) only=${2:?--only needs a list}; shift ;;
        --workloads) names=${2:?--workloads needs a list}; shift ;;
        --set) sets+=(--set "${2:?--set needs SIZE=V}"); shift ;;
        *) usage ;;
        esac
        shift
    done
    # What a device call carries (scripts/gpu/stage.sh); unpacked afresh each
    # time, since a warm machine keeps the last call's .gpu.
    [ ! -f .gpu.tgz ] || { rm -rf .gpu && tar xzf .gpu.tgz; }
    local out=${OUT:-suite-out} python=${PYTHON:-python3}
    local bin=${ND_SUITE_BIN:-.gpu/bench/bench_nd_suite}
    local budget=${SUITE_BUDGET_S:-560}
    mkdir -p "$out"
    export LD_LIBRARY_PATH="$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
    export ND_CACHE_DIR=${ND_CACHE_DIR:-/tmp/nd-cache} PYTHONUNBUFFERED=1
    export XLA_PYTHON_CLIENT_PREALLOCATE=false CUPY_TF32=0

    local date device slug commit
    date=$(date -u +%F)
    device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
    if [ -n "$device" ]; then
        slug=$device
        device="$device, driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
    else
        slug="cpu-$(hostname -s 2>/dev/null || echo host)"
        device="$slug (no GPU found)"
    fi
    slug=$(printf '%s' "$slug" | tr 'A-Z' 'a-z' | tr -c 'a-z0-9' '-' | sed 's/--*/-/g; s/^-//; s/-$//')
    commit=$(cat .gpu/COMMIT 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)
    local prefix="$out/$date-$slug" raw
    raw=$(mktemp -d /tmp/nd-suite.XXXXXX)
    local log="$prefix.log"
    echo "suite: $device, commit $commit, $date ${small:+(--small)}" | tee "$log"
    local start=$SECONDS reserve=25

    # step NAME CAP COMMAND...: runs one implementation in its own process
    # with a time cap (its own, and what is left of the suite's budget); its
    # JSON lines go to $raw/NAME.jsonl, its stderr to the log. A process that
    # dies, or prints no result, leaves an "error" line naming why.
    step() {
        local name=$1 cap=$2
        shift 2
        case ",$only," in *",$name,"*) ;; *) return 0 ;; esac
        local override="SUITE_CAP_$(printf '%s' "$name" | tr 'a-z-' 'A-Z_')"
        cap=${!override:-$cap}
        local left=$((budget - (SECONDS - start) - reserve))
        [ "$cap" -lt "$left" ] || cap=$left
        if [ "$cap" -lt 15 ]; then
            echo "{\"impl\":\"$name\",\"error\":\"not run: the suite's time budget (${budget} s) was spent\"}" >"$raw/$name.jsonl"
            echo "== $name: not run, budget spent" | tee -a "$log"
            return 0
        fi
        echo "== $name (at most ${cap} s): $*" | tee -a "$log"
        local t0=$SECONDS rc
        timeout --kill-after=10 "$cap" "$@" >"$raw/$name.jsonl" 2>"$raw/$name.err"
        rc=$?
        cat "$raw/$name.err" >>"$log"
        tail -n 25 "$raw/$name.err"
        local why=""
        if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
            why="stopped after $cap s (its time cap in bench/suite.sh); the workloads before that are kept"
        elif ! grep -q '"median_s"\|"copy_GBps"\|"error"' "$raw/$name.jsonl"; then
            why="exited with status $rc and no result: $(grep -v '^\s*$' "$raw/$name.err" | tail -n 1 | tr -d '"\\\t\r' | cut -c1-300)"
        elif [ $rc -gt 1 ]; then
            why="exited with status $rc: $(tail -n 1 "$raw/$name.err" | tr -d '"\\\t\r' | cut -c1-300)"
        fi
        [ -z "$why" ] || echo "{\"impl\":\"$name\",\"error\":\"$why\"}" >>"$raw/$name.jsonl"
        echo "== $name: exit $rc after $((SECONDS - t0)) s" | tee -a "$log"
    }

    if [ ! -x "$bin" ]; then
        echo "suite.sh: no $bin: run 'bash bench/suite.sh stage' on the build machine and carry .gpu (or set ND_SUITE_BIN)" | tee -a "$log" >&2
        for impl in nd-cuda nd-cpu; do
            echo "{\"impl\":\"$impl\",\"error\":\"$bin missing: stage first\"}" >"$raw/$impl.jsonl"
        done
    fi
    local h2d=()
    [ -z "$h2d_gib" ] || h2d=(--h2d-gib "$h2d_gib")
    [ "$names" != lib ] || names="sort,argsort,sort_rows,cumsum,gather_map,mask_select,histogram"
    [ "$names" != la ] || names="cholesky_f32,cholesky_f64,solve_f32,solve_f64,eigh_f32,eigh_f64,svd_f32,svd_f64,batched_solve,batched_svd,fft,rfft2,fft_window,einsum3"
    local -a w=()
    [ -z "$names" ] || read -r -a w <<<"${names//,/ }"
    local cap_big=150 cap=90
    [ -z "$small" ] || { cap_big=120; cap=120; }
    step floors 90 "$python" bench/peers/floors.py
    [ -x "$bin" ] && step nd-cuda "$cap_big" env ND_BACKEND=cuda "$bin" $small --runs "$runs" "${h2d[@]}" "${sets[@]}" "${w[@]}"
    step cupy "$cap" "$python" bench/peers/cupy_suite.py $small --runs "$runs" "${sets[@]}" "${w[@]}"
    step torch "$cap_big" "$python" bench/peers/torch_suite.py $small --runs "$runs" "${sets[@]}" "${w[@]}"
    step jax "$cap" "$python" bench/peers/jax_suite.py $small --runs "$runs" "${sets[@]}" "${w[@]}"
    [ -x "$bin" ] && step nd-cpu "$cap_big" env ND_BACKEND=cpu ND_NUM_THREADS="$(nproc)" "$bin" $small --runs "$runs" "${sets[@]}" "${w[@]}"
    # NumPy is the slowest by far: last, with whatever the budget has left,
    # its cheap workloads first, so a budget that runs out cuts the stencil
    # rather than everything.
    local -a numpy_w=(small_ops small_stencil sum matmul_chain dot scope_read shared_matmul chain black_scholes pi stencil)
    [ ${#w[@]} -eq 0 ] || numpy_w=("${w[@]}")
    step numpy 600 "$python" bench/peers/numpy_suite.py $small --runs "$runs" "${sets[@]}" "${numpy_w[@]}"

    echo "== report" | tee -a "$log"
    "$python" bench/suite_report.py --out "$prefix" --date "$date" --device "$device" \
        --commit "$commit" --command "bash bench/suite.sh run $small --runs $runs ${h2d[*]} --only $only${names:+ --workloads $names}${sets[*]:+ ${sets[*]}}" \
        "$raw"/*.jsonl 2>>"$log"
    local rc=$?
    rm -rf "$raw"
    echo "suite: $((SECONDS - start)) s; files: $(ls "$prefix".* 2>/dev/null | tr '\n' ' ')"
    return $rc
}

case "${1:-}" in
stage) stage ;;
run) shift; run "$@" ;;
*) usage ;;
esac
