#!/usr/bin/env bash
# For a GPU machine without mpirun: copies this machine's OpenMPI runtime
# (Debian's openmpi-bin 4.1.4 and libopenmpi3: mpirun, its MCA plugins,
# PMIx's, the help texts, and every shared library they load outside
# glibc) into .gpu/openmpi, after scripts/gpu/stage.sh made .gpu/, and
# packs .gpu.tgz again. scripts/gpu/mpi_ranks.sh uses it when the device
# has no mpirun of its own, relocated with OPAL_PREFIX (and the OPAL_*,
# PMIX_* directory variables, set there: Debian's sysconfdir /etc/openmpi
# and PMIx's plugin folder are not under its prefix).
#   bash scripts/gpu/stage_openmpi.sh        (from the repository root)
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -d .gpu ] || { echo "stage_openmpi: run scripts/gpu/stage.sh first (no .gpu/)" >&2; exit 1; }
mpirun_bin=$(readlink -f "$(command -v mpirun)")
libdir=$(ompi_info --path libdir --parsable 2>/dev/null | sed -n 's/^path:libdir:\(.*\)/\1/p')
pkglibdir=$(ompi_info --path pkglibdir --parsable 2>/dev/null | sed -n 's/^path:pkglibdir:\(.*\)/\1/p')
pkgdatadir=$(ompi_info --path pkgdatadir --parsable 2>/dev/null | sed -n 's/^path:pkgdatadir:\(.*\)/\1/p')
sysconfdir=$(ompi_info --path sysconfdir --parsable 2>/dev/null | sed -n 's/^path:sysconfdir:\(.*\)/\1/p')
: "${libdir:=/usr/lib/x86_64-linux-gnu/openmpi/lib}" "${pkglibdir:=$libdir/openmpi3}"
: "${pkgdatadir:=/usr/share/openmpi}" "${sysconfdir:=/etc/openmpi}"
pmix_lib=$(readlink -f /usr/lib/x86_64-linux-gnu/libpmix.so.2 2>/dev/null || true)
P=.gpu/openmpi
rm -rf "$P" && mkdir -p "$P/bin" "$P/lib/openmpi3" "$P/lib/pmix" "$P/share/openmpi" "$P/share/pmix" "$P/etc"
bindir=$(dirname "$mpirun_bin")
cp "$mpirun_bin" "$P/bin/mpirun"
for b in orted ompi_info; do [ ! -x "$bindir/$b" ] || cp "$bindir/$b" "$P/bin/"; done
cp "$pkglibdir"/*.so "$P/lib/openmpi3/"
cp -rL "$pkgdatadir"/. "$P/share/openmpi/"
cp -L "$sysconfdir"/* "$P/etc/" 2>/dev/null || true
if [ -n "$pmix_lib" ]; then
  pmix_root=$(dirname "$(dirname "$pmix_lib")")
  cp -L "$pmix_lib" "$P/lib/libpmix.so.2"
  [ ! -d "$pmix_root/lib/pmix" ] || cp "$pmix_root/lib/pmix"/*.so "$P/lib/pmix/"
  [ ! -d "$pmix_root/share/pmix" ] || cp -rL "$pmix_root/share/pmix"/. "$P/share/pmix/"
  [ ! -d /usr/share/pmix ] || cp -rL /usr/share/pmix/. "$P/share/pmix/"
  [ ! -f /etc/pmix-mca-params.conf ] || cp /etc/pmix-mca-params.conf "$P/etc/"
fi
# Every library those load (libmpi, libopen-rte, libopen-pal, hwloc,
# libevent, the transports' libraries), under their sonames, outside glibc
# and the GPU driver's.
ldd "$P"/bin/* "$P"/lib/*.so* "$P"/lib/openmpi3/*.so "$P"/lib/pmix/*.so 2>/dev/null | awk '/=> \// {print $3}' | sort -u |
  grep -v -E '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*|libcuda|libcudart|libnvidia[^/]*)\.so' |
  while read -r lib; do
    n=$(basename "$lib")
    [ -e "$P/lib/$n" ] || cp -L "$lib" "$P/lib/$n"
  done
strip --strip-unneeded "$P"/lib/*.so* "$P"/lib/openmpi3/*.so "$P"/lib/pmix/*.so "$P"/bin/* 2>/dev/null || true
du -sh "$P"
# Packed again as the device call carries it (common.sh unpacks .gpu.txz
# first where one was made).
tar czf .gpu.tgz .gpu
[ ! -f .gpu.txz ] || tar cJf .gpu.txz .gpu
du -sh .gpu.tgz $([ ! -f .gpu.txz ] || echo .gpu.txz)
