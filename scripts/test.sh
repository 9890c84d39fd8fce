#!/usr/bin/env bash
# Builds and runs every test suite: a release build in build/, where every
# CPU suite runs over three logical CPU devices (ND_DEVICES=cpu:3) and the
# rest (the examples, the CUDA suites' skips, the checks of the tree, the
# suites that split nothing) as they are; then every suite again (every
# one that runs here: without a GPU not the CUDA suites' skips), on one
# device, in an AddressSanitizer + UndefinedBehaviorSanitizer build in build-asan/;
# then the thread suite and the core suites under ThreadSanitizer in
# build-tsan/ (about a minute and a half on 2 cores). Where the CUDA toolkit
# is, the CUDA code generator is checked emulated on the host, in the
# background beside all that. Installs missing packages first.
# ND_TEST_SKIP="emulate tsan split" leaves those parts out (a quick check while
# working; CI runs everything).
# Exits non-zero if anything failed (every run happens either way, so one
# report shows every failure).
#
# Leak checking is ON (detect_leaks=1): nd_shutdown frees everything the
# library allocated, so a leak in a test or example is a bug. Third-party
# libraries that keep process-lifetime allocations are suppressed in
# scripts/lsan.supp (only those, never nd's own code). A suppression
# matches any frame of a leak's stack, and every Criterion test runs under
# libcriterion's frames, so its line hides the tests' own leaks too; and a
# leak found at a test process's exit does not fail a test Criterion already
# counted as passed. So the suites check array handles themselves: NDT_TEST
# fails a test that leaves one alive (tests/README.md, "Handles"). A test's
# own malloc'd host memory left unfreed is still not caught here
# (tests/README.md says how to look for it). Where LeakSanitizer
# cannot run at all (some containers forbid the ptrace it needs) it is turned
# off with a warning rather than failing every test. ND_TEST_DETECT_LEAKS=0
# turns it off by hand.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

scripts/install-deps.sh || exit 1

status=0
jobs=$(nproc 2>/dev/null || echo 2)
# A GPU here (its driver's device node): the CUDA suites run, and the
# release build is built as benchmarks want it (below).
have_gpu=0
[ -e /dev/nvidiactl ] && have_gpu=1

# The CUDA code generator without a GPU: emulate_check.sh compiles kernels
# it generates (random draws, sums, argmax, max and min along rows and
# columns) with NVRTC for sm_90, then runs them on the host through
# emulate_shim.h against src/common/philox.h (about 3 min of one core on
# a 2-core VM); then small_solve_check.sh does the same for the small
# batched solve kernel (lib_small_solve.c, about 40 s), and chol_check.sh
# for Cholesky's pack pass (lib_cholesky.c, about 30 s). Wherever the toolkit is, so that a change
# to the generator or its prelude is caught before a GPU run; skipped,
# visibly, where it is not. Both are one compile after another on one core,
# so they run in the background from the start, beside the builds and suites
# (which leave a core idle at times), and report at the end.
cuda_root=${CUDA_PATH:-/usr/local/cuda}
skip=" ${ND_TEST_SKIP:-} "
emulate_pid=
emulate_dir=$(mktemp -d)
# What NVRTC passed and g++ built for the emulated checks is kept for this
# run (src/backends/cuda/tests/emulate_harness.h): the sanitised suites'
# test_ops generates the same CUDA as the release one's and opens the
# object built then, instead of a minute and a half of NVRTC and g++ again
# (the code generator still runs under the sanitizers; the kernels' host
# objects were never instrumented).
export ND_EMU_CACHE="$emulate_dir/objects"
mkdir -p "$ND_EMU_CACHE"
# The same for the CPU JIT's kernels in the tests that compile every op and
# count no compiles (tests/common.h, ndt_jit_cache_dir): the first stage
# that runs them compiles them with the system compiler, the later ones
# generate, hash and load the same kernels (about a minute and a half of
# CI's 2 cores).
export ND_TEST_JIT_CACHE="$emulate_dir/jit"
mkdir -p "$ND_TEST_JIT_CACHE"
if [[ "$skip" != *" emulate "* ]] && [ -e "$cuda_root/include/nvrtc.h" ] && command -v g++ >/dev/null 2>&1; then
    (
        sh src/backends/cuda/tests/emulate_check.sh >"$emulate_dir/emulate.log" 2>&1
        echo $? >"$emulate_dir/emulate.rc"
        sh src/backends/cuda/tests/small_solve_check.sh >"$emulate_dir/small_solve.log" 2>&1
        echo $? >"$emulate_dir/small_solve.rc"
        sh src/backends/cuda/tests/chol_check.sh >"$emulate_dir/chol.log" 2>&1
        echo $? >"$emulate_dir/chol.rc"
    ) &
    emulate_pid=$!
fi


# setup_or_configure DIR OPTIONS...: configure a new build dir, or apply the
# options to an existing one.
setup_or_configure() {
    local dir=$1
    shift
    if [ -f "$dir/build.ninja" ]; then
        if [ $# -gt 0 ]; then
            # An option new since the dir was set up needs a reconfigure.
            meson configure "$dir" "$@" >/dev/null 2>&1 || meson setup --reconfigure "$dir" "$@" >/dev/null
        fi
    else
        meson setup "$dir" "$@"
    fi
}

# The release suites include the MPI test (meson test mpi: tests/mpi under
# mpirun -n 2 and 3, about 2 s) where the build found MPI and mpirun is
# here (install-deps.sh installs OpenMPI as optional packages).
# Several devices (below): every CPU suite with every array split over three
# logical CPU devices (an odd count, ND_DEVICES=cpu:3 ND_SPLIT_MIN_BYTES=0),
# in the release build, with the same tolerances as on one device (issue
# #23). Assertions on one device's structure that a split plan changes (a
# plan picture, a copy or compile count) are left out there with a warning
# naming them (tests/common.h ndt_one_device); values never are; the
# sanitised build runs every suite on one device, those assertions
# included. The release build's run on one device is what that stage
# leaves out (split_skip) and what is not a CPU suite: the examples, the
# CUDA suites (skipped without a GPU, visibly), the checks of the tree. It
# ran every CPU suite on one device too until 2026-11-30: on the 2-core
# VMs of that time CI took 31-36 minutes against its 20, and that run (3
# minutes) repeated what the sanitised build checks. Left out of the
# several-devices stage, as nothing in them splits:
#  - cuda_loader: starts ND_BACKEND=cuda without its libraries (cpu:3
#    names CPU memories: nd_init refuses it, as it should);
#  - scan_plan, exact_sum: host arithmetic of the CUDA scans, no runtime;
#  - ops: kernel IR run on backends it creates itself (backend->run_kernel),
#    never through the scheduler, so no partition pass (and half the
#    stage's time: about 40 s of it on 2 shared cores);
#  - mpi: processes, not logical devices (its ranks split the arrays
#    themselves, checked against the program run alone).
# ND_TEST_SKIP="split" leaves the stage out.
split_skip=" cuda_loader scan_plan exact_sum ops-cpu mpi "
# Without a GPU nothing runs the CUB plugin (libnd_cuda_prims.so) or the
# CUDA benchmark, so nvcc compiles them as a check only (meson_options.txt,
# prims_code): ~150 s of one core instead of ~390, most of what the release
# build took on CI's 2-core VMs. With one, they are built to run.
# Likewise libnd.so's link-time optimisation (meson_options.txt, lto): its
# gain is recording speed, which no test measures, and on CI's 2-core VMs
# it cost ~115 s of CPU (the objects' LTO bytecode beside their code, then
# the whole library optimised again at the link), about a minute of the
# 20. The suites link libnd.a, whose code is the same either way (the
# archive keeps the objects' ordinary code, meson.build); what LTO alone
# changes is libnd.so, which the examples and the benchmarks link. With a
# GPU here the build is the one benchmarks run from, LTO on.
# scripts/gpu/stage.sh and scripts/demo.sh build with LTO (the default).
prims_code=optimised
lto=auto
[ "$have_gpu" = 1 ] || { prims_code=check; lto=disabled; }
echo "=== release build (build/, prims_code=$prims_code, lto=$lto)"
if setup_or_configure build -Dprims_code="$prims_code" -Dlto="$lto" && meson compile -C build -j "$jobs"; then
    one_device=()
    # Every test but the CPU suites the several-devices stage runs
    # (meson test --list: "nd:SUITE+SUITE / NAME").
    while read -r suites name; do
        if [[ "$suites" != *+cpu* ]] || [[ "$split_skip" == *" $name "* ]] || [[ " ${ND_TEST_SKIP:-} " == *" split "* ]]; then
            one_device+=("$name")
        fi
    done < <(meson test -C build --no-rebuild --list 2>/dev/null | sed -n 's|^\(nd[^ ]*\) / |\1 |p')
    echo "=== release build, one device: ${#one_device[@]} tests (the CPU suites run in the next stage)"
    meson test -C build --no-rebuild --print-errorlogs --num-processes "$jobs" "${one_device[@]}" || status=1
    # Install into a temporary prefix; build and run a program with pkg-config.
    scripts/check_install.sh build || status=1
else
    echo "test.sh: the release build failed" >&2
    status=1
fi

if [[ " ${ND_TEST_SKIP:-} " == *" split "* ]]; then
    echo "=== several devices skipped: ND_TEST_SKIP"
elif [ -f build/build.ninja ]; then
    split_tests=()
    # Every test of the cpu suite (meson test --list: "nd:SUITE+cpu / NAME").
    while read -r t; do
        [[ "$split_skip" == *" $t "* ]] || split_tests+=("$t")
    done < <(meson test -C build --list --suite cpu 2>/dev/null | sed -n 's|^nd:[^ ]* / ||p')
    # ND_CHECK_PLANS=1: every plan the cache serves is compared with a fresh
    # one (src/scheduler/plan_check.h): split plans depend on the most state.
    echo "=== several devices (build/, ND_DEVICES=cpu:3 ND_SPLIT_MIN_BYTES=0 ND_CHECK_PLANS=1: ${#split_tests[@]} CPU suites)"
    ND_DEVICES=cpu:3 ND_SPLIT_MIN_BYTES=0 ND_CHECK_PLANS=1 meson test -C build --no-rebuild --print-errorlogs \
        --num-processes "$jobs" "${split_tests[@]}" || status=1
fi

# Does LeakSanitizer work here? Probe with a program that leaks on purpose.
detect_leaks=${ND_TEST_DETECT_LEAKS:-1}
if [ "$detect_leaks" = 1 ]; then
    probe_dir=$(mktemp -d)
    printf '#include <stdlib.h>\nvoid *keep;\nint main(void){ keep = malloc(7); keep = 0; return 0; }\n' \
        >"$probe_dir/leak.c"
    if cc -fsanitize=address -g "$probe_dir/leak.c" -o "$probe_dir/leak" 2>/dev/null; then
        # The probe exits non-zero when LSan works (it found the leak), so
        # look at what it printed, not at its status.
        probe_out=$(ASAN_OPTIONS=detect_leaks=1 "$probe_dir/leak" 2>&1 || true)
        if ! grep -q 'detected memory leaks' <<<"$probe_out"; then
            echo "test.sh: WARNING: LeakSanitizer does not work on this machine;" \
                 "running the sanitised suites without leak checking" >&2
            detect_leaks=0
        fi
    fi
    rm -rf "$probe_dir"
fi

asan_options="detect_leaks=$detect_leaks:halt_on_error=1:abort_on_error=1:strict_string_checks=1"
asan_options="$asan_options:detect_stack_use_after_return=1:check_initialization_order=1"
# The CUDA driver maps memory where ASan keeps its shadow gap.
if [ "$have_gpu" = 1 ]; then
    asan_options="$asan_options:protect_shadow_gap=0"
fi

# The benchmark programs are not built here: no suite runs them, and the
# release build compiles them with the same warnings as errors.
echo "=== sanitised build (build-asan/: address,undefined; detect_leaks=$detect_leaks)"
if setup_or_configure build-asan -Db_sanitize=address,undefined -Db_lundef=false -Dprims=disabled \
        -Dbench=false --buildtype=debugoptimized && meson compile -C build-asan -j "$jobs"; then
    # Without a GPU the CUDA suites (NAME-cuda) only skip, as the release
    # stage showed: their 61 skips took 28 s of this stage's 2 cores.
    asan_tests=()
    if [ "$have_gpu" = 0 ]; then
        while read -r t; do
            [[ "$t" != *-cuda ]] && asan_tests+=("$t")
        done < <(meson test -C build-asan --no-rebuild --list 2>/dev/null | sed -n 's|^nd[^ ]* / ||p')
        echo "=== sanitised suites: ${#asan_tests[@]} tests (the CUDA suites, no GPU here, are left out)"
    fi
    ASAN_OPTIONS="$asan_options" \
    LSAN_OPTIONS="suppressions=$root/scripts/lsan.supp:print_suppressions=0" \
    UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
        meson test -C build-asan --no-rebuild --print-errorlogs --num-processes "$jobs" \
        --timeout-multiplier 3 "${asan_tests[@]}" || status=1
else
    echo "test.sh: the sanitised build failed" >&2
    status=1
fi

# ThreadSanitizer: several user threads (test_threads) and the executor
# thread beside the caller's (the core suites). Criterion's runner does not
# start under TSan, so these suites run on tests/tsan_runner (same sources).
# No suppressions: OpenBLAS's worker threads synchronise in code TSan does
# not see (its sgemm threads' writes were reported against nd's reads), so
# OpenBLAS runs single-threaded here instead; nd's own threads all run.
# halt_on_error: the first report fails the test (exit 66).
# ND_TEST_FAULT_STRIDE=5: the fault sweeps (test_faults) fail every fifth
# point here, not every one: what TSan checks there is the executor thread
# and the pool on an error's path, and the sampled points take every path
# kind; the release build sweeps every point, the sanitised build every
# point on one device and every other over three (tests/test_faults.c,
# stride). On CI's 2-core VM the sweeps took 58 s of this stage's 105 in
# full and 28 s at every third point.
# allocator_may_return_null: a 512 GiB request fails as malloc does, so
# faults/huge_lazy_array_names_its_creation sees a real out of memory.
tsan_suites="threads body faults lifetime lazy writes streams errors fusion reductions random shaping matmul store_chains user_kernels observe"
if [[ "$skip" == *" tsan "* ]]; then
    echo "=== ThreadSanitizer build skipped: ND_TEST_SKIP"
else
echo "=== ThreadSanitizer build (build-tsan/: $tsan_suites)"
if setup_or_configure build-tsan -Db_sanitize=thread -Db_lundef=false --buildtype=debugoptimized \
        -Dcuda=disabled -Dbench=false -Dexamples=false &&
        meson compile -C build-tsan -j "$jobs" test_observe_sites \
            $(for s in $tsan_suites; do printf 'test_%s ' "$s"; done); then
    # Only these suites' executables are built (not every suite's: minutes
    # of CI on 2 cores; the observe suite also runs test_observe_sites), so
    # meson test must not rebuild the rest.
    suite_args=()
    for s in $tsan_suites; do suite_args+=(--suite "$s"); done
    TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:allocator_may_return_null=1" OPENBLAS_NUM_THREADS=1 \
    ND_TEST_FAULT_STRIDE=5 \
        meson test -C build-tsan --no-rebuild --print-errorlogs --num-processes "$jobs" \
        --timeout-multiplier 3 "${suite_args[@]}" || status=1
else
    echo "test.sh: the ThreadSanitizer build failed" >&2
    status=1
fi
fi

# The emulated CUDA checks started at the top: wait for them and report.
if [[ "$skip" == *" emulate "* ]]; then
    echo "=== CUDA code generator check skipped: ND_TEST_SKIP"
elif [ -z "$emulate_pid" ]; then
    echo "=== CUDA code generator check skipped: no CUDA toolkit (nvrtc.h) or g++ here"
else
    wait "$emulate_pid"
    for check in "emulate:CUDA code generator, emulated on the host (src/backends/cuda/tests/emulate_check.sh)" \
                 "small_solve:CUDA small batched solves, on the host (src/backends/cuda/tests/small_solve_check.sh)" \
                 "chol:CUDA Cholesky's pack pass, on the host (src/backends/cuda/tests/chol_check.sh)"; do
        name=${check%%:*}
        echo "=== ${check#*:}"
        if [ "$(cat "$emulate_dir/$name.rc" 2>/dev/null)" = 0 ]; then
            tail -1 "$emulate_dir/$name.log"
        else
            grep -E "FAIL|error" "$emulate_dir/$name.log" | head -20
            tail -1 "$emulate_dir/$name.log"
            echo "test.sh: the $name check failed" >&2
            status=1
        fi
    done
fi
rm -rf "$emulate_dir"

if [ "$status" -eq 0 ]; then
    if [ -n "${ND_TEST_SKIP:-}" ]; then
        echo "test.sh: all suites run passed (release, address/undefined; skipped: $ND_TEST_SKIP)"
    else
        echo "test.sh: all suites passed (release, address/undefined, emulated CUDA generator, thread sanitised)"
    fi
else
    echo "test.sh: FAILED (see the logs above)" >&2
fi
exit "$status"
