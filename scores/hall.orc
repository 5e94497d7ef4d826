; hall.orc - the four-drum concert set of concert.orc on the stage of a
; shoebox hall with a balcony: 16 x 9 x 7 m, a stage 0.8 m high along the
; wall behind the players, a balcony 3.5 m up along the back wall held by two
; round pillars, and a niche cut into the stage's front for the steps.  Plays
; passage.sco and piece.sco as concert.orc does (docs/score-language.md,
; "The room's shape").
;     kettle render scores/hall.orc scores/passage.sco -o hall.wav
;     kettle render scores/hall.orc scores/passage.sco -o hall.wav --until 0.5 \
;         --snapshot 0.02,0.04 --snapshot-plane y=4.5      ; the shape in pictures
;
; At 11025 Hz the box is 297 x 167 x 130 = 6.4 million air points (5.4 cm),
; of which the solids take 0.4 million.

sr          = 11025
out_sr      = 44100
0dbfs       = 63
midipedal   = on
room        = 16 9 7
absorption  = 0.2             ; plaster walls, a wooden floor
temperature = 20
nchnls      = 4

solid stage   box 0 0 0  4.5 9 0.8   absorption 0.1   ; wood over an air space
hole  steps   box 4.0 3.5 0  4.5 5.5 0.4              ; the niche for the steps
solid balcony box 12.5 0 3.5  16 9 3.8  absorption 0.5 ; seats and carpet above and below
solid         cylinder 12.7 2.5 0 3.5 0.25 beta 0      ; its pillars: painted steel
solid         cylinder 12.7 6.5 0 3.5 0.25 beta 0

pair   hall     8.0 4.5 2.6  0.6    ; an A-B pair in the stalls, 5.5 m from the drums
mic    close    2.9 4.5 2.4         ; a spot microphone above the set
mic    balcony  14.5 4.5 5.0        ; in the balcony's front row, 1.2 m above its floor

; Along the stage from the players' left: the 32-inch (lowest) to the 23-inch.
instr 32
  size  = 32
  pitch = D2
  pos   = 2.35 3.15 1.7           ; heads 0.9 m above the stage
endin

instr 29
  size  = 29
  pitch = G2
  pos   = 2.15 4.1 1.7
endin

instr 26
  size  = 26
  pitch = C3
  pos   = 2.15 5.0 1.7
endin

instr 23
  size  = 23
  pitch = E3
  pos   = 2.35 5.8 1.7
endin
