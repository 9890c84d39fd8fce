# Sourced by the scripts that run on the GPU machine (on-device.sh, quick.sh,
# multi_device_check.sh, observe.sh, scaling.sh), from the repository root
# after scripts/gpu/stage.sh staged .gpu/: the set-up they share.
#  - The device call carries .gpu/ packed: .gpu.txz (xz: the gzip pack grew
#    over the carry limit) or .gpu.tgz. Unpacked afresh each time: a warm
#    machine keeps the last call's .gpu. Neither there: .gpu/ as it is
#    (unpacked by the caller).
#  - The staged libraries (libnd and what it loads) before the toolkit's.
#  - ND_BACKEND=cuda and one kernel cache for the call (ND_CACHE_DIR; a
#    caller's own setting stands).
#  - Logs under $OUT (default ./gpu-out), made here.
if [ -f .gpu.txz ]; then
  rm -rf .gpu && tar xJf .gpu.txz
elif [ -f .gpu.tgz ]; then
  rm -rf .gpu && tar xzf .gpu.tgz
fi
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/.gpu/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export ND_BACKEND=cuda ND_CACHE_DIR=${ND_CACHE_DIR:-/tmp/nd-cache}
