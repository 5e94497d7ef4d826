#!/bin/sh
# install_tree.sh BUILD PREFIX MAN HEADER... - `cmake --install BUILD --prefix
# PREFIX` into an emptied PREFIX, then what the tree must hold: the program,
# libkettle.so with its SONAME exporting the public API only (kt_* and the
# timpani's three), libkettle.a, exactly the public headers under
# include/kettle, kettle.pc, the CMake package, a man page for the program
# and each of its commands (MAN yes; no: the build had no help2man), and
# the docs.  The other install tests use PREFIX.
set -eu
build=$1 prefix=$2 man=$3
shift 3
rm -rf "$prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
fail=0
bad() { echo "install_tree: $*" >&2; fail=1; }
libdir=$(cd "$prefix" && find . -name 'libkettle.so' -path '*/lib*' | sed 's|^\./||;s|/libkettle.so$||')
[ -n "$libdir" ] || { echo "install_tree: no libkettle.so under $prefix" >&2; exit 1; }
for f in bin/kettle "$libdir/libkettle.a" "$libdir/pkgconfig/kettle.pc" \
         "$libdir/cmake/Kettle/KettleConfig.cmake" "$libdir/cmake/Kettle/KettleTargets.cmake" \
         "$libdir/cmake/Kettle/KettleConfigVersion.cmake" share/doc/kettle/README.md \
         share/doc/kettle/render.md share/doc/kettle/examples/timpani_test.c \
         share/kettle/scores/demo.csd; do
    [ -f "$prefix/$f" ] || bad "missing $f"
done
# the SONAME names the major version, the file the whole one
soname=$(objdump -p "$prefix/$libdir/libkettle.so" | awk '$1 == "SONAME" {print $2}')
[ "$soname" = libkettle.so.0 ] || bad "SONAME is '$soname', not libkettle.so.0"
[ -f "$prefix/$libdir/$soname" ] || bad "no $soname"
# exports: the public API only, every symbol a function of the headers
exports=$(nm -D --defined-only "$prefix/$libdir/libkettle.so" | awk '{print $NF}' |
          sed 's/@.*//' | grep -v '^KETTLE_0$')
count=$(echo "$exports" | wc -l)
others=$(for s in $exports; do
    grep -q "[ *]$s(" "$prefix"/include/kettle/*.h || echo "$s"
done)
[ -z "$others" ] || bad "libkettle.so exports what no public header declares:" $others
[ "$count" -gt 100 ] || bad "libkettle.so exports only $count symbols"
# exactly the public headers
want=$(for h in "$@"; do basename "$h"; done | LC_ALL=C sort | tr '\n' ' ')
have=$(ls "$prefix/include/kettle" | LC_ALL=C sort | tr '\n' ' ')
[ "$want" = "$have" ] || bad "include/kettle holds '$have', not '$want'"
# a man page for kettle and for every command its --help lists
if [ "$man" = yes ]; then
    for page in kettle kettle-render kettle-resume kettle-tune kettle-plot kettle-bench-spmv \
                kettle-bench-room kettle-bench-timpani kettle-bench-stencils kettle-bench-load \
                kettle-bench-section; do
        [ -f "$prefix/share/man/man1/$page.1.gz" ] || bad "no man page $page.1.gz"
    done
    gzip -dc "$prefix/share/man/man1/kettle-render.1.gz" | grep -q 'checkpoint' ||
        bad "kettle-render.1 does not hold render's options"
fi
[ $fail = 0 ] && echo "install_tree: $prefix holds the program, libkettle.so ($count symbols)," \
    "libkettle.a, $(echo "$have" | wc -w) headers, kettle.pc, the CMake package, man pages, docs"
exit $fail
