#!/usr/bin/env bash
# Installs the Debian packages nd needs to build, test and draw its graphs,
# only those that are missing (nothing to do on a prepared machine). Uses sudo
# when not root. Shared by scripts/demo.sh and scripts/test.sh.
set -euo pipefail

pkgs=(meson ninja-build pkg-config gcc g++ libuv1-dev zlib1g-dev libopenblas-dev liblapacke-dev libcriterion-dev
      libsleef-dev graphviz python3-numpy)

if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "install-deps: not a Debian system; install these (or your system's" \
         "equivalents) yourself: ${pkgs[*]}" >&2
    for tool in meson ninja pkg-config cc; do
        command -v "$tool" >/dev/null 2>&1 || { echo "install-deps: '$tool' is missing" >&2; exit 1; }
    done
    exit 0
fi

missing=()
for p in "${pkgs[@]}"; do
    if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
        missing+=("$p")
    fi
done
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        sudo=(sudo)
    else
        echo "install-deps: missing packages (${missing[*]}), and neither root nor sudo" \
             "is available to install them" >&2
        exit 1
    fi
fi
echo "install-deps: installing ${missing[*]}"
"${sudo[@]}" apt-get update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends "${missing[@]}"
