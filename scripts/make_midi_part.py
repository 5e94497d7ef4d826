#!/usr/bin/env python3
"""Writes scores/part.mid, the MIDI twin of scores/part.sco (a short timpani
part for scores/concert.orc), with mido (pip install mido).  The committed
.mid is what tests/test_score_repertoire.c compares with the .sco; run this
only to change the part, and change part.sco with it.

    python3 scripts/make_midi_part.py scores/part.mid
"""
import sys

import mido

PPQ = 480
# (beat, key, velocity, beats): quarters at 96 bpm, then 120 bpm from beat 8.
# Velocities are the dynamic marks' (pp 33, p 49, mp 64, mf 80, f 96, ff 112,
# fff 127); A2 at beat 6 and G2 at beat 10 make the 29-inch drum's pedal glide.
NOTES = [
    (0, 38, 96, 1),    # D2 f    -> 32-inch
    (1, 43, 80, 1),    # G2 mf   -> 29-inch
    (2, 48, 80, 1),    # C3 mf   -> 26-inch
    (3, 52, 96, 1),    # E3 f    -> 23-inch
    (4, 43, 112, 2),   # G2 ff
    (6, 45, 96, 1),    # A2 f    -> 29-inch, pedalled up a tone
    (8, 38, 49, 0.5),  # D2 p ... f, a crescendo at 120 bpm
    (8.5, 38, 64, 0.5),
    (9, 38, 80, 0.5),
    (9.5, 38, 96, 0.5),
    (10, 43, 127, 2),  # G2 fff  -> 29-inch, pedalled back down
]
TEMPI = [(0, 96), (8, 120)]
END_BEAT = 12


def main(path):
    events = []  # (tick, order, message): offs before ons at one tick
    for beat, bpm in TEMPI:
        events.append((round(beat * PPQ), 0, mido.MetaMessage("set_tempo",
                                                              tempo=mido.bpm2tempo(bpm))))
    for beat, key, vel, beats in NOTES:
        on, off = round(beat * PPQ), round((beat + beats) * PPQ)
        events.append((on, 2, mido.Message("note_on", channel=0, note=key, velocity=vel)))
        events.append((off, 1, mido.Message("note_off", channel=0, note=key, velocity=0)))
    events.append((0, 0, mido.Message("program_change", channel=0, program=47)))  # GM timpani
    events.sort(key=lambda e: (e[0], e[1]))
    track = mido.MidiTrack()
    track.append(mido.MetaMessage("track_name", name="Timpani", time=0))
    now = 0
    for tick, _, msg in events:
        track.append(msg.copy(time=tick - now))
        now = tick
    track.append(mido.MetaMessage("end_of_track", time=END_BEAT * PPQ - now))
    mid = mido.MidiFile(ticks_per_beat=PPQ, type=0)
    mid.tracks.append(track)
    mid.save(path)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "scores/part.mid")
