; passage.sco - (b) a short passage on the concert set (concert.orc): a
; fanfare figure down the set, then the 29-inch drum struck forte while its
; pedal glides the pitch up a fourth from G2 to C3, then back to G2.
;     kettle render scores/concert.orc scores/passage.sco -o passage.wav

t 0 96
; drum start dur force  where angle
i 23   0     0.5  f      0.6   10
i 26   0.5   0.5  f      0.6   10
i 29   1     0.5  f      0.6  -10
i 32   1.5   1    ff     0.6   20
; the glissando: strike, then glide while it rings
i 29   3     2    ff     0.65   0
pedal 29  3.25  1.5  C3
pedal 29  5     1    G2
i 32   6     2    mf     0.6   20
e
