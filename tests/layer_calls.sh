#!/bin/sh
# layer_calls.sh - no call runs up the layers: every symbol a layer's library
# needs from another Kettle library is defined in a layer below it.  The
# arguments are the layers' static libraries, bottom up (CMake passes
# kettle_base ... kettle_bench).
[ $# -ge 2 ] || { echo "usage: layer_calls.sh LIB.a ... (bottom up)"; exit 2; }
rank=0
for lib in "$@"; do
    nm -g --defined-only "$lib" 2>/dev/null | awk -v r=$rank -v lib="$lib" \
        'NF >= 3 && $2 ~ /^[TDBRVW]$/ { print "D", $3, r, lib }'
    nm -g --undefined-only "$lib" 2>/dev/null | awk -v r=$rank -v lib="$lib" \
        'NF >= 2 && $1 == "U" { print "U", $2, r, lib }'
    rank=$((rank + 1))
done | awk '
$1 == "D" { def[$2] = $3; where[$2] = $4; next }
{ need[++n] = $2; from[n] = $3; lib[n] = $4 }
END {
    bad = 0
    for (i = 1; i <= n; i++)
        if ((need[i] in def) && def[need[i]] > from[i]) {
            print lib[i] " needs " need[i] ", defined above it in " where[need[i]]
            bad = 1
        }
    if (!bad) print "layer_calls: " n " outside symbols needed, none from a layer above"
    exit bad
}'
