; part.sco - a short timpani part on the concert set (concert.orc), and the
; score twin of part.mid (scripts/make_midi_part.py writes that): the same
; notes, tempi and pedal glides, which tests/test_score_repertoire.c checks.
;     kettle render scores/concert.orc scores/part.sco -o part.wav
;     kettle render scores/concert.orc scores/part.mid -o part-midi.wav
; The MIDI file's notes go to the drum tuned nearest; with `midipedal = on`
; a note off its drum's pitch glides the pedal there in the last 0.25 s
; before it (0.4 beat at 96 bpm, 0.5 beat at 120), as written out below.

t 0 96 8 96 8 120      ; 96 bpm, then 120 from beat 8 (a jump, as MIDI has it)
i 32  0    1    f
i 29  1    1    mf
i 26  2    1    mf
i 23  3    1    f
i 29  4    2    ff
pedal 29  5.6  0.4  A2
i 29  6    1    f
i 32  8    0.5  p      ; a crescendo on the 32-inch drum
i 32  +    .    mp
i 32  +    .    mf
i 32  +    .    f
pedal 29  9.5  0.5  G2
i 29  10   2    fff
f 0 12                 ; the MIDI file ends at beat 12
