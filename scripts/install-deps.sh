#!/usr/bin/env bash
# Installs the Debian packages nd needs to build, test and draw its graphs,
# only those that are missing (nothing to do on a prepared machine). Uses sudo
# when not root. Shared by scripts/demo.sh and scripts/test.sh.
set -euo pipefail

pkgs=(meson ninja-build pkg-config gcc g++ libuv1-dev zlib1g-dev libopenblas-dev liblapacke-dev libcriterion-dev
      libsleef-dev graphviz python3-numpy)
# Optional: nd builds without them (meson option mpi=auto turns MPI ranks
# off), so a failure to install them is a warning, not an error.
optional=(libopenmpi-dev openmpi-bin)

if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "install-deps: not a Debian system; install these (or your system's" \
         "equivalents) yourself: ${pkgs[*]}" >&2
    for tool in meson ninja pkg-config cc; do
        command -v "$tool" >/dev/null 2>&1 || { echo "install-deps: '$tool' is missing" >&2; exit 1; }
    done
    exit 0
fi

installed() { dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -q '^install ok installed$'; }
missing=()
for p in "${pkgs[@]}"; do
    if ! installed "$p"; then
        missing+=("$p")
    fi
done
missing_optional=()
for p in "${optional[@]}"; do
    if ! installed "$p"; then
        missing_optional+=("$p")
    fi
done
if [ ${#missing[@]} -eq 0 ] && [ ${#missing_optional[@]} -eq 0 ]; then
    exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        sudo=(sudo)
    elif [ ${#missing[@]} -eq 0 ]; then
        echo "install-deps: optional packages missing (${missing_optional[*]}); neither root nor sudo" \
             "is available to install them: building without them" >&2
        exit 0
    else
        echo "install-deps: missing packages (${missing[*]}), and neither root nor sudo" \
             "is available to install them" >&2
        exit 1
    fi
fi
"${sudo[@]}" apt-get update
if [ ${#missing[@]} -gt 0 ]; then
    echo "install-deps: installing ${missing[*]}"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y --no-install-recommends "${missing[@]}"
fi
if [ ${#missing_optional[@]} -gt 0 ]; then
    echo "install-deps: installing the optional ${missing_optional[*]}"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y --no-install-recommends "${missing_optional[@]}" ||
        echo "install-deps: WARNING: could not install ${missing_optional[*]}: building without them" >&2
fi
