#!/bin/sh
# man.sh KETTLE HELP2MAN VERSION OUTDIR - the man pages of the `kettle`
# program and of each command its --help lists (kettle.1.gz, kettle-render.1.gz,
# kettle-bench-spmv.1.gz, ...), made by help2man from the --help texts, the one
# place they are written.  Run by the build (cmake/library.cmake).
set -eu
kettle=$1 help2man=$2 version=$3 out=$4
rm -rf "$out"
mkdir -p "$out"
page() {  # page NAME "PROGRAM WORDS" SUMMARY: NAME.1.gz
    "$help2man" --no-info --no-discard-stderr --version-string="$version" \
        --source="Kettle $version" --manual="Kettle" -n "$3" -o "$out/$1.1" "$2"
    gzip -9nf "$out/$1.1"
}
page kettle "$kettle" "physical-modelling timpani in a 3D FDTD room"
# `kettle --help` lists "  NAME  SUMMARY" and "  bench NAME  SUMMARY"; words
# that are no command (the bench heading) or whose --help prints no usage
# (version prints the build's facts) make no page.
"$kettle" --help | sed -n 's/^  \([a-z]\)/\1/p' | while read -r first rest; do
    words=$first
    if [ "$first" = bench ]; then
        words="bench ${rest%% *}"
        rest=${rest#* }
    fi
    # shellcheck disable=SC2086
    "$kettle" $words --help 2>/dev/null | grep -q "^usage: kettle $words" || continue
    summary=$(printf '%s' "$rest" | sed 's/^ *//')
    page "kettle-$(echo "$words" | tr ' ' -)" "$kettle $words" "$summary"
done
