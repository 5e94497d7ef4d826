#!/bin/sh
# install_consumers.sh PREFIX SOURCE CC - programs outside the repository
# use the installed tree: examples/timpani_test.c and examples/room_impulse.c
# built with pkg-config (against libkettle.so, and room_impulse against
# libkettle.a with `pkg-config --static`) and with CMake (find_package(Kettle),
# Kettle::kettle), then run briefly.  The same program from either build
# writes the same bytes.
set -eu
prefix=$1 src=$2 cc=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/kettle-consumers.XXXXXX")
trap 'rm -rf "$work"' EXIT
libdir=$(dirname "$(find "$prefix" -name libkettle.so | head -n 1)")
export PKG_CONFIG_PATH="$libdir/pkgconfig"
# only the installed tree: none of the repository's include folders
for ex in timpani_test room_impulse; do
    # shellcheck disable=SC2046
    "$cc" -std=c11 -Wall -Wextra "$src/examples/$ex.c" -o "$work/$ex-pc" \
        $(pkg-config --cflags --libs kettle) -Wl,-rpath,"$libdir" -lm
done
# the static library: libkettle.a by path, its dependencies from Libs.private
static_libs=$(pkg-config --static --libs kettle | sed 's/-lkettle//')
# shellcheck disable=SC2086
"$cc" -std=c11 "$src/examples/room_impulse.c" -o "$work/room_impulse-static" \
    $(pkg-config --cflags kettle) "$libdir/libkettle.a" $static_libs
if ldd "$work/room_impulse-static" | grep -q libkettle; then
    echo "install_consumers: the static build links libkettle.so" >&2
    exit 1
fi
mkdir -p "$work/cmake"
cat >"$work/cmake/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.20)
project(kettle_consumer C)
find_package(Kettle 0.1 REQUIRED)
foreach(ex timpani_test room_impulse)
  add_executable(\${ex} $src/examples/\${ex}.c)
  target_link_libraries(\${ex} PRIVATE Kettle::kettle m)
endforeach()
CMAKE
cmake -S "$work/cmake" -B "$work/cmake/build" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_BUILD_TYPE=Release >"$work/cmake.log" 2>&1 || { cat "$work/cmake.log"; exit 1; }
cmake --build "$work/cmake/build" >>"$work/cmake.log" 2>&1 || { cat "$work/cmake.log"; exit 1; }
cd "$work"
# 5 ms of the thesis' drum (220 steps), 20 ms of the room's impulse response
./timpani_test-pc drum-pc.wav 0.005 >drum-pc.txt 2>/dev/null
cmake/build/timpani_test drum-cmake.wav 0.005 >/dev/null 2>&1
./room_impulse-pc room-pc.wav 0.02 >room-pc.txt 2>/dev/null
cmake/build/room_impulse room-cmake.wav 0.02 >/dev/null 2>&1
./room_impulse-static room-static.wav 0.02 >/dev/null 2>&1
grep -q "^air grid  *75 x 75 x 75" drum-pc.txt ||
    { echo "install_consumers: timpani_test said:" >&2; cat drum-pc.txt >&2; exit 1; }
grep -q "peak" room-pc.txt || { echo "install_consumers: room_impulse said:" >&2; cat room-pc.txt >&2; exit 1; }
cmp drum-pc.wav drum-cmake.wav
cmp room-pc.wav room-cmake.wav
cmp room-pc.wav room-static.wav
echo "install_consumers: timpani_test and room_impulse built with pkg-config (shared and" \
     "static) and with find_package(Kettle), run; each wrote the same bytes every way"
