# Sourced (from the repository root) by the scripts of the emulated CUDA
# checks, emulate_check.sh, small_solve_check.sh and chol_check.sh:
#   emu_cc OUT SOURCES-AND-FLAGS...
# builds a check program OUT with the harness they share (emulate_harness.c:
# NVRTC through nd's loader, the g++ build against emulate_shim.h) and the
# common/ files the loader needs; the caller names its own sources.
CUDA=${CUDA_PATH:-/usr/local/cuda}
emu_cc() {
  emu_out=$1
  shift
  cc -std=c11 -O1 -g -Wall -Wextra -D_GNU_SOURCE -DND_BUILDING_LIBRARY -Iinclude -Isrc -I"$CUDA/include" \
    -DND_EMU_SHIM="\"$PWD/src/backends/cuda/tests/emulate_shim.h\"" "$@" \
    src/backends/cuda/tests/emulate_harness.c src/backends/cuda/cuda_loader.c src/common/error.c \
    src/common/dtype.c src/common/strbuf.c src/common/fault.c src/common/api_guard.c src/common/callsite.c \
    -L"$CUDA/lib64" -Wl,-rpath,"$CUDA/lib64" -lnvrtc -ldl -lm -lpthread -o "$emu_out"
}
