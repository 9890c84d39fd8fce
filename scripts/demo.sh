#!/usr/bin/env bash
# The demo on a fresh Debian machine: install what is missing, build into
# build/, run the heat-stencil example on the default backend (CUDA when a GPU
# is present, else the CPU) and render the graph it recorded to heat.png.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

scripts/install-deps.sh
if [ ! -f build/build.ninja ]; then
    meson setup build
fi
meson compile -C build

build/examples/heat
build/examples/heat 1000 2 --dot build/heat.dot
dot -Tpng build/heat.dot -o heat.png
echo "demo: the graph of two heat iterations is in $root/heat.png" \
     "(Graphviz source: build/heat.dot)"
