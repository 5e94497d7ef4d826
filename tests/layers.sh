#!/bin/sh
# layers.sh - the house's boundary: every `#include "..."` of a layer's folder
# names a file of that layer or of a layer below it, and another layer's file
# only from its include/ folder (its public headers).  The layers, bottom up:
#     base linalg room instruments perform bench cli
# A layer's gpu/ folder sits above the layer's own C files (the C side never
# includes its CUDA side), below the next layer, and sees them through the
# layer's plan: no CUDA file includes an *_internal.h.  Usage: layers.sh [ROOT].
ROOT=${1:-$(dirname "$0")/..}
cd "$ROOT" || exit 2
LAYERS="base linalg room instruments perform bench cli"

# The layers' files, then one awk pass: rank(folder) is 2 x the layer's place,
# + 1 for its gpu/ folder; a name found twice would make includes ambiguous.
for l in $LAYERS; do
    find "$l" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \
        -o -name '*.h.in' \)
done | LC_ALL=C sort | awk -v layers="$LAYERS" '
function rank(d,   i, n, a) {
    n = split(layers, a, " ")
    for (i = 1; i <= n; i++) {
        if (d == a[i] "/gpu" || index(d, a[i] "/gpu/") == 1) return 2 * (i - 1) + 1
        if (d == a[i] || index(d, a[i] "/") == 1) return 2 * (i - 1)
    }
    return -1
}
function folder(p) { sub(/\/[^\/]*$/, "", p); return p }
function name(p) { sub(/.*\//, "", p); sub(/\.in$/, "", p); return p }
{
    files[++n] = $0
    if (name($0) in where) dup = dup " " name($0)
    where[name($0)] = $0
}
END {
    bad = 0
    if (dup != "") { print "layers: a file name in two places:" dup; bad = 1 }
    for (k = 1; k <= n; k++) {
        f = files[k]
        from = rank(folder(f))
        while ((getline line < f) > 0) {
            if (line !~ /^[ \t]*#[ \t]*include[ \t]*"/) continue
            inc = line; sub(/^[^"]*"/, "", inc); sub(/".*/, "", inc)
            if (!(name(inc) in where)) {
                print f ": includes \"" inc "\", which no layer holds"; bad = 1; continue
            }
            t = where[name(inc)]; d = folder(t); to = rank(d)
            if ((from % 2 == 1 || f ~ /\.cuh?$/) && name(inc) ~ /_internal\.h$/) {
                print f ": includes " t ", a CPU private header (the GPU reads the plan)"
                bad = 1
            } else if (to > from) {
                print f ": includes " t ", a layer above it"; bad = 1
            } else if (int(to / 2) != int(from / 2) && d !~ /\/include$/ && d != "base") {
                # (base/kt_config.h.in: the generated kt_config.h)
                print f ": includes " t ", a private header of a layer below"; bad = 1
            }
        }
        close(f)
    }
    if (!bad) print "layers: " n " files, every include downward"
    exit bad
}'
