#!/usr/bin/env bash
# Builds nd with the CUDA backend here (build-gpu/) and stages what a GPU
# machine without our dependencies needs in .gpu/ (git-ignored): the
# library, tests, examples, benchmarks and every non-system shared library
# they load (libuv, OpenBLAS, Criterion and theirs; CUDA's own come from the
# device's toolkit), and packs it as .gpu.tgz (22 MB instead of 66: a device
# call carries at most 64 MiB). Then carry .gpu.tgz and, on the device, from
# the repository root:
#   bash scripts/gpu/on-device.sh        (unpacks .gpu.tgz, writes logs under $OUT)
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -d build-gpu ] || meson setup build-gpu -Dcuda=enabled -Dbuildtype=release >/dev/null
ninja -C build-gpu >/dev/null
rm -rf .gpu && mkdir -p .gpu/lib .gpu/tests .gpu/examples .gpu/bench
# the links and the library (soname libnd.so.MAJOR.MINOR), not the .p folder
for f in build-gpu/libnd.so build-gpu/libnd.so.[0-9]*; do [ -d "$f" ] || cp -P "$f" .gpu/lib/; done
# nd's CUB plugin, opened from libnd's folder
cp build-gpu/src/backends/cuda/libnd_cuda_prims.so .gpu/lib/
for t in build-gpu/tests/test_*; do [ -x "$t" ] && [ -f "$t" ] && cp "$t" .gpu/tests/; done
# tests/mpi's programs (where build-gpu found MPI), for scripts/gpu/mpi_ranks.sh;
# not test_*: on-device.sh runs those as Criterion suites.
[ ! -x build-gpu/tests/mpi_programs ] || cp build-gpu/tests/mpi_programs .gpu/tests/
# The CPU backend's self-test (src/backends/cpu/cpu_selftest.c), for the host's cores.
[ ! -x build-gpu/tests/cpu_selftest ] || cp build-gpu/tests/cpu_selftest .gpu/tests/
for e in build-gpu/examples/*; do [ -x "$e" ] && [ -f "$e" ] && cp "$e" .gpu/examples/; done
for b in build-gpu/bench/bench_*; do [ -x "$b" ] && [ -f "$b" ] && cp "$b" .gpu/bench/; done
cp bench/peers/*.py .gpu/bench/ 2>/dev/null || true
# Shared libraries outside glibc and the CUDA toolkit.
ldd .gpu/tests/* .gpu/bench/* .gpu/lib/libnd.so .gpu/lib/libnd_cuda_prims.so 2>/dev/null | awk '/=> \// {print $3}' | sort -u |
  grep -v -E '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*|libcudart|libcublas[^/]*|libnvrtc[^/]*)\.so' |
  grep -v '/usr/local/cuda' | while read -r lib; do cp -L "$lib" .gpu/lib/; done || true
# The device timeline tool (scripts/gpu/kernel_timeline.c), with CUPTI.
cupti_lib=$(ls /usr/local/cuda/lib64/libcupti.so.* /usr/local/cuda/lib/libcupti.so.* \
    /usr/local/cuda/extras/CUPTI/lib64/libcupti.so.* 2>/dev/null | head -1 || true)
if [ -f /usr/local/cuda/include/cupti.h ] && [ -n "$cupti_lib" ]; then
  cc -O2 -shared -fPIC -o .gpu/lib/libnd_timeline.so scripts/gpu/kernel_timeline.c \
    -I/usr/local/cuda/include "$cupti_lib" -Wl,-rpath,'$ORIGIN' && cp -L "$cupti_lib" .gpu/lib/
fi
du -sh .gpu
strip --strip-debug .gpu/lib/libnd.so.*.*.* .gpu/lib/libnd_cuda_prims.so .gpu/tests/* .gpu/examples/* .gpu/bench/bench_* 2>/dev/null || true
# The device gets a copy of the tree without .git: the commit travels here.
{ git rev-parse --short HEAD && git diff --quiet HEAD -- src include bench || echo "(dirty)"; } \
    2>/dev/null | paste -sd' ' > .gpu/COMMIT
tar czf .gpu.tgz .gpu
du -sh .gpu.tgz
