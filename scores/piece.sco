; piece.sco - (c) a short piece for the concert set (concert.orc): 32 events
; in two sections, with a tempo change, carries, ramps and macros.
;     kettle render scores/concert.orc scores/piece.sco -o piece.wav

#define EDGE  # 0.70 #         ; near the rim: more overtones
#define MID   # 0.55 #

; ---- section 1: a slow call and answer, accelerating ----
t 0 72 8 96
i 32  0    1    mf  $MID  20   1.5
i 23  1    0.5  mp  $EDGE -10  1.0
i 26  1.5  0.5  mp  $EDGE -10  1.0  ; (carry '.' and '+' work within one drum, as in Csound)
i 29  2    1    f   $MID   0   1.2
i 32  3    1    mf  $MID  20   1.5
i 26  4    0.5  mp  $EDGE  10  1.0
i 23  4.5  0.5  mp  $EDGE  10  1.0
i 29  5    1    f   $MID   0   1.2
; a crescendo on the 29-inch drum, the force ramped from p to ff
i 29  6    0.25 p   0.62   15  1.0
i 29  +    0.25 <   0.58  -15
i 29  +    0.25 <   0.62   15
i 29  +    0.25 <   0.58  -15
i 29  +    0.25 <   0.62   15
i 29  +    0.25 <   0.58  -15
i 29  +    0.25 <   0.62   15
i 29  +    0.25 ff  0.58  -15
s

; ---- section 2: faster, with the 26-inch drum retuned by pedal ----
t 0 120
b 0.5                          ; everything half a beat later
i 32  0    1    ff  $MID  20   1.5
i 29  1    0.5  f   $MID   0
i 26  1.5  0.5  f   $MID  10
i 23  2    0.5  f   $MID -10
pedal 26  2.5  1  D3
i 26  3    0.5  f   $EDGE 10
i 23  3.5  0.5  mf  $EDGE 10
i 26  4    0.5  mf  .     .            ; '.' from the 26's note at beat 3
i 29  4.5  0.5  f   $MID   0
i 32  5    0.5  ff  $MID  20
i 29  5.5  0.5  f   $MID  20
i 26  6    0.5  mf  $MID  20
i 23  6.5  0.5  mp  $MID  20
i 32  7    2    fff $MID  20   2.0
i 29  7    2    ff  $MID   0   1.5
i 26  7    2    ff  $MID  10   1.2
i 23  7    2    ff  $MID -10   1.0
e
