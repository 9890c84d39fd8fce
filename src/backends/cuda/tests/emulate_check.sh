#!/bin/sh
# Checks the CUDA code generator where there is no GPU: emulate_check.c
# generates kernels with random draws (fresh, offset, reversed, strided,
# transposed and broadcast index maps; stored, summed and argmaxed along
# rows and columns; float16 .. float64; Monte Carlo pi's shape), compiles
# each with NVRTC for sm_90 (the toolkit, no device), then as C++ against
# emulate_shim.h (emulate_harness.h), runs it on the host with the
# backend's launch geometry and compares with src/common/philox.h (integer
# draws too, exactly). A few minutes: one g++ compile per kernel. First,
# curand_philox_check.cpp compares cuRAND's Philox (the kernels'
# primitive) with philox.h. Arguments: v (print each kernel's grouping), n
# (skip NVRTC).
set -e
cd "$(dirname "$0")/../../../.."
. src/backends/cuda/tests/emulate_build.sh
work=${TMPDIR:-/tmp}/nd_cuda_emulate
rm -rf "$work" && mkdir -p "$work"
# codegen.c pastes common/element_fns.h into every kernel: embed its text
python3 src/common/embed_text.py nd_element_fns_source src/common/element_fns.h "$work/element_fns_source.c"
# cuRAND's Philox against common/philox.h on the host, many keys and counters
g++ -std=c++17 -O1 -Wall -Wextra -Werror -Isrc -I"$CUDA/include" src/backends/cuda/tests/curand_philox_check.cpp \
  -o "$work/curand_philox_check"
"$work/curand_philox_check"
emu_cc "$work/emulate_check" -DND_EMU_CUDA_INCLUDE="\"$CUDA/include\"" \
  src/backends/cuda/tests/emulate_check.c src/backends/cuda/codegen.c src/backends/cuda/codegen_points.c \
  src/backends/cuda/codegen_reduce.c src/backends/cuda/codegen_rng.c src/backends/kernel_hash.c src/backends/kernel_loops.c \
  src/common/ops.c src/common/ufunc_loop.c "$work/element_fns_source.c"
"$work/emulate_check" "$work" "$@"
