#!/bin/sh
# public_headers.sh PREFIX CC CXX CSPARSE_INCLUDE - each installed public
# header compiles on its own, as the first and only include, in C11 and in
# C++ (-Wall -Wextra -Werror -pedantic), seeing only PREFIX/include/kettle and
# CSparse's headers; and in C++ its functions have C linkage: a program
# calling one function of each header links against libkettle.so only when
# the header wraps its declarations in extern "C".
set -eu
prefix=$1 cc=$2 cxx=$3 csparse=$4
work=$(mktemp -d "${TMPDIR:-/tmp}/kettle-headers.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail=0
n=0
for h in "$prefix"/include/kettle/*.h; do
    name=$(basename "$h")
    printf '#include <%s>\nint kettle_header_check;\n' "$name" >"$work/one.c"
    cp "$work/one.c" "$work/one.cpp"
    "$cc" -std=c11 -Wall -Wextra -Werror -pedantic -I"$prefix/include/kettle" -I"$csparse" \
        -c "$work/one.c" -o "$work/one.o" || { echo "$name does not compile alone in C" >&2; fail=1; }
    "$cxx" -std=c++17 -Wall -Wextra -Werror -I"$prefix/include/kettle" -I"$csparse" \
        -c "$work/one.cpp" -o "$work/one.o" || { echo "$name does not compile alone in C++" >&2; fail=1; }
    n=$((n + 1))
done
# one call into each header with functions, from C++
cat >"$work/calls.cpp" <<'CPP'
#include <kt_base.h>
#include <kt_linalg.h>
#include <kettle.h>
#include <timpani.h>
#include <kt_score.h>
#include <kt_render.h>
#include <kt_spectrum.h>
#include <cstdio>
int main()
{
    kt_error err;
    kt_error_clear(&err);
    kt_room_params p;
    kt_room_params_default(&p);
    kt_timpani_params t;
    kt_render_options o;
    kt_render_options_default(&o);
    kt_performance perf;
    kt_performance_init(&perf);
    kt_performance_free(&perf);
    kt_matrix *m = nullptr;
    int rc = kt_timpani_params_standard(&t, 29, &err) | kt_matrix_triplet(2, 2, 2, &m, &err);
    kt_matrix_free(m);
    std::printf("%s %g Hz %s\n", kt_status_name(rc), kt_cents(440.0, 440.0) + p.sample_rate_hz,
                kt_timpani_format_name(t.format));
    return rc;
}
CPP
libdir=$(dirname "$(find "$prefix" -name libkettle.so | head -n 1)")
"$cxx" -std=c++17 -Wall -Wextra -Werror -I"$prefix/include/kettle" -I"$csparse" \
    "$work/calls.cpp" -o "$work/calls" -L"$libdir" -lkettle -Wl,-rpath,"$libdir" ||
    { echo "a C++ program calling the API does not link: a header lacks extern \"C\"" >&2; fail=1; }
[ $fail = 0 ] && "$work/calls" || fail=1
[ $fail = 0 ] && echo "public_headers: $n headers compile alone in C and C++; C++ links the API"
exit $fail
