#!/bin/sh
# csparse_in_tree.sh SOURCE CS_H - a tree configures with CSparse's cs.h
# unpacked inside it, as the GPU machine's .deps lies (DEVELOPERS.md, "On
# the GPU machine"): CMake refused to generate when the installed package's
# include path named a directory inside the source tree.  A copy of the
# sources (no build folders), cs.h beside it under .deps, configure only.
set -eu
src=$1 cs_h=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$src" && tar -cf - --exclude='./build*' --exclude=./.git --exclude=./.deps \
    --exclude=./.devrun .) | (mkdir "$tmp/src" && cd "$tmp/src" && tar -xf -)
inc="$tmp/src/.deps/usr/include/suitesparse"
mkdir -p "$inc"
cp "$cs_h" "$inc/"
if ! cmake -S "$tmp/src" -B "$tmp/build" -DKETTLE_CUDA=OFF -DKETTLE_MPI=OFF \
        -DCSPARSE_INCLUDE_DIR="$inc" > "$tmp/cmake.log" 2>&1; then
    grep -A4 "CMake Error" "$tmp/cmake.log" >&2 || tail -20 "$tmp/cmake.log" >&2
    echo "csparse_in_tree: configuring with cs.h inside the source tree failed" >&2
    exit 1
fi
echo "csparse_in_tree: configured with cs.h in $inc"
