#!/bin/sh
# mpi_snapshot.sh MPIEXEC KETTLE - snapshots of a room split over two MPI
# ranks: the plane is gathered from the ranks that hold it, and the pictures
# (a plane across both slabs, x = const, and one inside rank 1's, z = const)
# are byte for byte those one process writes; a render over ranks wrote none
# before (refused).  The same with the room split along x (--split-axis x:
# then the z-plane crosses the cut), and the audio of that render is one
# process's byte for byte.
set -eu
mpiexec=$1
kettle=$2
dir=$(mktemp -d /tmp/kettle_mpi_snap_XXXXXX)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
cat > t.orc <<'ORC'
sr = 8000
0dbfs = 100
room = 0.9 0.7 1.1
beta = 0.2
mic m 0.3 0.3 0.5
impulse 0.4 0.3 0.6 0 2ms
ORC
printf 'f 0 0.03\n' > t.sco
fail() { echo "mpi_snapshot: FAIL: $*"; exit 1; }
for case in z:x=0.41 z:z=0.9 x:x=0.41 x:z=0.9; do
    axis=${case%%:*}
    plane=${case#*:}
    rm -f one_snap_* two_snap_*
    "$kettle" render t.orc t.sco -o one.wav --device cpu --threads 1 --tail 0 --quiet \
        --snapshot 0.01,0.02 --snapshot-plane $plane || fail "one process ($plane)"
    "$mpiexec" -np 2 --allow-run-as-root --oversubscribe "$kettle" render t.orc t.sco \
        -o two.wav --device cpu --threads 1 --tail 0 --quiet --snapshot 0.01,0.02 \
        --snapshot-plane $plane --split-axis $axis || fail "two ranks ($plane, along $axis)"
    cmp -s one.wav two.wav || fail "$plane: the audio split along $axis differs"
    n=0
    for a in one_snap_*.png; do
        b=two${a#one}
        [ -f "$b" ] || fail "$plane: two ranks wrote no $b"
        cmp -s "$a" "$b" || fail "$plane: $b differs from one process's picture"
        n=$((n + 1))
    done
    [ "$n" -eq 2 ] || fail "$plane: $n pictures, expected 2"
    echo "$plane, split along $axis: 2 pictures and the audio over two ranks equal one process's"
done
