#!/bin/sh
# checkpoint_kill.sh KETTLE - issue #9's end-to-end test of checkpoints: a
# render killed with SIGKILL after its first checkpoint, resumed with
# `kettle resume`, must give an output whose sha256 equals that of an
# uninterrupted render; a render stopped with SIGTERM exits 143 and leaves a
# checkpoint and a valid partial file; an older output survives both.
set -eu
kettle=$1
dir=$(mktemp -d /tmp/kettle_kill_XXXXXX)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
cat > t.orc <<'ORC'
sr = 16000
room = 0.8 0.8 0.9
beta = 0.2
solid shelf box 0 0 0.8  0.8 0.05 0.9  beta 0.1   ; a shaped room resumes too (issue #28)
mic near 0.4 0.4 0.75
mic far 0.15 0.2 0.3
instr 1
  size = 23
  pitch = D3
  pos = 0.4 0.4 0.6
endin
ORC
printf 'i 1 0 0.05 ff\ni 1 + . mf 0.3 90\npedal 1 0.05 0.1 E3\n' > t.sco
fail() { echo "checkpoint_kill: FAIL: $*"; exit 1; }

"$kettle" render t.orc t.sco -o full.wav --threads 1 --tail 1.2 --quiet
echo "old take" > out.wav
"$kettle" render t.orc t.sco -o out.wav --threads 1 --tail 1.2 --quiet \
    --checkpoint c.ckpt --checkpoint-every 0.2s &
pid=$!
n=0
while [ ! -f c.ckpt ]; do
    kill -0 "$pid" 2>/dev/null || fail "the render ended before its first checkpoint"
    n=$((n + 1)); [ $n -lt 600 ] || fail "no checkpoint after 60 s"
    sleep 0.1
done
kill -9 "$pid"
wait "$pid" || true
[ "$(cat out.wav)" = "old take" ] || fail "the older output was replaced by a killed render"
"$kettle" resume c.ckpt --quiet || fail "kettle resume failed"
a=$(sha256sum < full.wav) b=$(sha256sum < out.wav)
[ "$a" = "$b" ] || fail "resumed output differs: $a vs $b"
echo "kill -9 + resume: sha256 identical ($a)"

"$kettle" render t.orc t.sco -o term.wav --threads 1 --tail 1.2 --quiet 2>/dev/null &
pid=$!
# Wait until the render catches SIGTERM (bit 15 of SigCgt in /proc): on a
# loaded machine loading the libraries alone can take longer than a fixed sleep.
n=0
until [ $(( 0x$(sed -n 's/^SigCgt:[[:space:]]*//p' /proc/$pid/status 2>/dev/null || echo 0) & 0x4000 )) -ne 0 ]; do
    kill -0 "$pid" 2>/dev/null || fail "SIGTERM: the render ended before it could be stopped"
    n=$((n + 1)); [ $n -lt 600 ] || fail "SIGTERM: no handler after 60 s"
    sleep 0.1
done
sleep 0.3
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
[ "$status" -eq 143 ] || fail "SIGTERM: exit status $status, expected 143"
[ -f term.ckpt ] && [ -f term.partial.wav ] && [ ! -f term.wav ] ||
    fail "SIGTERM: expected term.ckpt and term.partial.wav and no term.wav"
"$kettle" resume term.ckpt --quiet || fail "resume after SIGTERM failed"
[ "$(sha256sum < term.wav)" = "$a" ] || fail "resumed after SIGTERM: output differs"
echo "SIGTERM: exit 143, checkpoint + partial file, resume identical"
