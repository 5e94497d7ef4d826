#!/bin/sh
# debian_package.sh BUILD PACKAGE SOURCE CC - `cpack -G DEB` of the build
# makes PACKAGE_*.deb (kettle, or kettle-cuda from a CUDA build) whose
# Depends name the Debian libraries the program and libkettle.so link
# (dpkg-shlibdeps), which apt resolves on this Debian (a simulated install),
# and which dpkg installs into a scratch root; from there the program runs
# and room_impulse.c builds with the package's pkg-config file and runs.
set -eu
build=$1 package=$2 src=$3 cc=$4
work=$(mktemp -d "${TMPDIR:-/tmp}/kettle-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/out" >"$work/cpack.log" 2>&1 ||
    { cat "$work/cpack.log" >&2; exit 1; }
deb=$(ls "$work"/out/${package}_*.deb)
fail=0
bad() { echo "debian_package: $*" >&2; fail=1; }
depends=$(dpkg-deb --field "$deb" Depends)
for lib in libc6 libgomp1 libsndfile1 libcxsparse3 libfftw3-double3 libpng16-16 \
           libsamplerate0 libsmf0; do
    echo "$depends" | grep -q "\\b$lib\\b" || bad "Depends lacks $lib: $depends"
done
contents=$(dpkg-deb --contents "$deb" | awk '{print $6}')
for f in ./usr/bin/kettle ./usr/lib/libkettle.so.0 ./usr/lib/libkettle.a \
         ./usr/include/kettle/kettle.h ./usr/lib/pkgconfig/kettle.pc \
         ./usr/lib/cmake/Kettle/KettleConfig.cmake ./usr/share/man/man1/kettle-render.1.gz \
         ./usr/share/doc/kettle/README.md; do
    echo "$contents" | grep -qx -- "$f" || echo "$contents" | grep -q -- "^$f " ||
        bad "the package lacks $f"
done
# apt finds every dependency on this system's Debian
if command -v apt-get >/dev/null; then
    apt-get install --simulate --no-install-recommends "$deb" >"$work/apt.log" 2>&1 ||
        { cat "$work/apt.log" >&2; bad "apt cannot install it"; }
fi
# dpkg installs it into an empty root (its dependencies are this system's)
root=$work/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
: >"$root/var/lib/dpkg/status"
dpkg --root="$root" --force-depends --force-script-chrootless -i "$deb" >"$work/dpkg.log" 2>&1 ||
    { cat "$work/dpkg.log" >&2; exit 1; }
dpkg --root="$root" -s "$package" | grep -q "^Status: install ok installed" || bad "not installed"
"$root/usr/bin/kettle" --help | grep -q "^usage: kettle" || bad "the installed kettle does not run"
# shellcheck disable=SC2046
PKG_CONFIG_PATH=$root/usr/lib/pkgconfig "$cc" -std=c11 "$src/examples/room_impulse.c" \
    -o "$work/room_impulse" $(PKG_CONFIG_PATH=$root/usr/lib/pkgconfig pkg-config --cflags --libs kettle) -lm
LD_LIBRARY_PATH=$root/usr/lib "$work/room_impulse" "$work/r.wav" 0.005 >"$work/r.txt" 2>&1 ||
    { cat "$work/r.txt" >&2; bad "room_impulse against the package does not run"; }
[ $fail = 0 ] && echo "debian_package: $(basename "$deb"): Depends: $depends; installs, runs"
exit $fail
