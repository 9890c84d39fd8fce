#!/usr/bin/env bash
# Installs a configured, built nd into a temporary folder (meson install
# --destdir) and builds and runs a small program against it the way README's
# "Installing" section says: pkg-config nd (the shared library), and
# pkg-config nd-static (libnd.a); with ND_DEBUG_CALLSITES too (the generated
# nd/callsites.h must be installed). Checks the soname (libnd.so.MAJOR.MINOR
# before 1.0). A fully static link (cc -static) is tried where nd.pc names
# no CUDA library, which is every build since libnd opens them at run time,
# and a static SLEEF exists (Debian has none).
# Usage: scripts/check_install.sh [BUILD_DIR]   (scripts/test.sh runs it on build/)
set -euo pipefail
build=${1:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

meson install -C "$build" --no-rebuild --destdir "$tmp/dest" >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log"; echo "check_install: meson install failed" >&2; exit 1; }
option() {
    meson introspect "$build" --buildoptions |
        python3 -c 'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == sys.argv[1]))' "$1"
}
prefix=$(option prefix)
libdir=$(option libdir)
case $libdir in /*) ;; *) libdir=$prefix/$libdir ;; esac
root=$tmp/dest$prefix
export PKG_CONFIG_PATH="$tmp/dest$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
pc() { pkg-config --define-variable=prefix="$root" "$@"; }

soname=$(readelf -d "$tmp/dest$libdir/libnd.so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
version=$(pc --modversion nd)
major=${version%%.*}
minor=${version#*.}
minor=${minor%%.*}
want=libnd.so.$major
[ "$major" = 0 ] && want=libnd.so.0.$minor
[ "$soname" = "$want" ] || { echo "check_install: soname $soname, want $want" >&2; exit 1; }

# libnd.a holds ordinary code only (meson.build strips the LTO bytecode of
# fat objects): a program linking it must not need nd's GCC or an LTO pass.
if readelf -S -W "$tmp/dest$libdir/libnd.a" 2>/dev/null | grep -q '\.gnu\.lto_'; then
    echo "check_install: the installed libnd.a carries LTO bytecode (.gnu.lto_ sections)" >&2
    exit 1
fi

cat >"$tmp/prog.c" <<'PROG'
#include <nd.h>
#include <stdio.h>
int main(void) {
    nd_array *x = nd_arange(ND_FLOAT64, 0, 10, 1);
    nd_array *s = nd_sum(nd_mul(x, x), ND_ALL_AXES);
    double v = nd_item(s);
    if (v != 285.0) { fprintf(stderr, "prog: sum of squares %g, want 285 (%s)\n", v, nd_last_error()); return 1; }
    nd_array *bad = nd_add(x, nd_zeros(ND_FLOAT64, ND_SHAPE(3)));
    if (bad || !nd_last_error()[0]) return 1;
    printf("%s | %s\n", nd_version(), nd_last_error());
    nd_shutdown();
    return 0;
}
PROG
cd "$tmp"
export ND_BACKEND=cpu
# Shared: the runtime linker finds the temporary libdir through the rpath.
cc -std=c11 prog.c $(pc --cflags --libs nd) -Wl,-rpath,"$(pc --variable=libdir nd)" -o prog_shared
./prog_shared >out_shared
# (ldd's output kept first: grep -q leaving early would fail the pipe.)
ldd prog_shared >ldd_shared
grep -q "$soname" ldd_shared || { echo "check_install: prog_shared does not load $soname" >&2; exit 1; }
# Static libnd.a, with call sites.
cc -std=c11 -DND_DEBUG_CALLSITES prog.c $(pc --cflags --libs nd-static) -o prog_static
./prog_static >out_static
ldd prog_static >ldd_static
if grep -q libnd ldd_static; then echo "check_install: prog_static loads libnd.so" >&2; exit 1; fi
grep -q "nd_add (prog.c:8): shapes (10,) and (3,)" out_static ||
    { echo "check_install: no call site in: $(cat out_static)" >&2; exit 1; }
how="shared and static"
pc --static --libs nd >static_libs
# SLEEF's static library: Debian ships the shared one only (libsleef-dev).
sleef_a=$(cc -print-file-name=libsleef.a)
if ! grep -q cudart static_libs && [ "$sleef_a" = libsleef.a ]; then
    echo "check_install: fully static link skipped: no static SLEEF (libsleef.a) on this system"
elif ! grep -q cudart static_libs; then
    cc -static -std=c11 prog.c $(pc --cflags nd) $(pc --static --libs nd) -o prog_full_static 2>link.log ||
        { cat link.log; echo "check_install: cc -static failed" >&2; exit 1; }
    ./prog_full_static >/dev/null
    how="$how, and fully static"
fi
echo "check_install: installed into a temporary prefix; programs built with pkg-config ($how) run; soname $soname"
