#!/bin/sh
# Builds and runs backend_check.c against the CUDA backend sources only
# (needs the CUDA toolkit and a GPU; no libuv or scheduler). Runs it three
# times on a fresh cache dir (CHECK_CFLAGS adds compiler flags, e.g.
# -fsanitize=address,undefined with ASAN_OPTIONS=protect_shadow_gap=0): cold (compiles), warm (loads CUBINs from disk),
# and after truncating every cached file (must detect and recompile).
set -e
cd "$(dirname "$0")/../../../.."
CUDA=${CUDA_PATH:-/usr/local/cuda}
out=${TMPDIR:-/tmp}/nd_cuda_check
# codegen.c pastes common/element_fns.h into every kernel: embed its text
python3 src/common/embed_text.py nd_element_fns_source src/common/element_fns.h "$out.element_fns.c"
cc -std=c11 -O1 -g -Wall -Wextra ${CHECK_CFLAGS} -D_GNU_SOURCE -DND_BUILDING_LIBRARY -Iinclude -Isrc -I"$CUDA/include" \
  src/backends/cuda/tests/backend_check.c src/backends/cuda/backend.c src/backends/cuda/codegen.c \
  src/backends/cuda/codegen_points.c src/backends/cuda/codegen_reduce.c src/backends/cuda/codegen_rng.c src/backends/cuda/cuda_loader.c src/backends/cuda/kernel_cache.c src/backends/cuda/matmul.c \
  src/backends/cuda/plan_runner.c src/backends/cuda/app_stream.c src/backends/cuda/devices.c src/backends/cuda/ufunc_check.c src/backends/cuda/user_kernel.c src/backends/step_kinds.c src/common/profile.c \
  src/common/user_kernel.c src/common/ufunc_loop.c \
  src/common/error.c src/common/dtype.c src/common/ops.c src/common/dirs.c src/common/strbuf.c src/common/env.c src/common/fault.c src/common/api_guard.c src/common/callsite.c src/common/mem_count.c "$out.element_fns.c" \
  -L"$CUDA/lib64" -Wl,-rpath,"$CUDA/lib64" -lcublas -lnvrtc -lcudart -ldl -lpthread -lm -o "$out"
export CHECK_CACHE_DIR=${TMPDIR:-/tmp}/nd_cuda_check_cache
rm -rf "$CHECK_CACHE_DIR"
t0=$(date +%s%N); "$out" "$@"; t1=$(date +%s%N)
echo "cold run: $(( (t1 - t0) / 1000000 )) ms, $(ls "$CHECK_CACHE_DIR" | wc -l) cache files"
t0=$(date +%s%N); "$out" "$@" | tail -1; t1=$(date +%s%N)
echo "warm run: $(( (t1 - t0) / 1000000 )) ms"
for f in "$CHECK_CACHE_DIR"/*.cubin; do head -c 100 "$f" > "$f.x" && mv "$f.x" "$f"; done
"$out" 2 2>&1 | grep -c "is invalid; recompiling" | sed 's/^/files detected as corrupt and recompiled: /'
"$out" | tail -1
