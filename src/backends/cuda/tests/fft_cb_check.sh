#!/bin/sh
# Checks the cuFFT load callbacks of fft_callback.c where there is no GPU:
# fft_cb_check.c generates callbacks for hand-built kernels and compiles
# them with NVRTC to LTO-IR for sm_90 (the toolkit, no device), as the
# backend does before handing them to cuFFT, then runs them on the host
# (g++ after emulate_shim.h) against the maps computed in double. Under a
# minute.
set -e
cd "$(dirname "$0")/../../../.."
. src/backends/cuda/tests/emulate_build.sh
work=${TMPDIR:-/tmp}/nd_cuda_fft_cb
rm -rf "$work" && mkdir -p "$work"
python3 src/common/embed_text.py nd_element_fns_source src/common/element_fns.h "$work/element_fns_source.c"
emu_cc "$work/fft_cb_check" -DND_EMU_CUDA_INCLUDE="\"$CUDA/include\"" src/backends/cuda/tests/fft_cb_check.c src/backends/cuda/fft_callback.c \
  src/backends/cuda/codegen.c src/backends/cuda/codegen_points.c src/backends/cuda/codegen_reduce.c \
  src/backends/cuda/codegen_rng.c src/backends/kernel_hash.c src/backends/step_kinds.c src/common/ops.c src/common/lib_calls.c \
  src/common/ufunc_loop.c "$work/element_fns_source.c"
"$work/fft_cb_check" "$work"
