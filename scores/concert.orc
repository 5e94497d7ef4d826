; concert.orc - the four-drum concert set (32, 29, 26 and 23 inches) in a
; hall of 500 m^3 (10 x 8 x 6.25 m), played by passage.sco and piece.sco.
;
; Sample rate: at 44.1 kHz this hall is 742 x 594 x 464 = 204 million air
; points (about 1.6 GB in double precision and far too slow for a 2-core
; machine).  At 11025 Hz it is 186 x 149 x 116 = 3.2 million points (64 times
; fewer points and 4 times fewer steps).  The grid spacing, 5.4 cm, still puts
; 10 cells across the smallest head (Kettle asks for at least 8), the membrane
; grids stay well above their minimum, and a timpani's sound lies below
; 1.5 kHz, far under the 5.5 kHz Nyquist limit.  Render with --sr 22050 for a
; finer (8x costlier) version.
;     kettle render scores/concert.orc scores/passage.sco -o passage.wav
;
; The simulation runs at 11025 Hz; the files come out at 44.1 kHz (out_sr),
; resampled, as a DAW session wants them.  The level: 0dbfs = 63 puts full
; scale at 130 dB SPL, a recording engineer's gain for microphones one to
; three metres from the set (the default, 200 Pa, suits close microphones):
; the loudest moment, fff on the 32-inch drum with the three others ff,
; peaks at -2.8 dBFS on `close` and -6.6 dBFS on hall_L (measured with
; --gain 1 --bits 64f on the chord alone, 2026-11-25).

sr          = 11025
out_sr      = 44100           ; the files are written at 44.1 kHz (libsamplerate)
0dbfs       = 63              ; full scale is 63 Pa (130 dB SPL): the final chord of piece.sco
                              ; peaks at 46 Pa on `close`, 30 Pa on the pair
midipedal   = on              ; a MIDI note off its drum's pitch glides the pedal there
room        = 10 8 6.25
absorption  = 0.25            ; a live hall: plaster and wood
temperature = 20              ; c = 343.2 m/s
nchnls      = 3

pair   hall  5.3 6.0 2.6  0.6  ; an A-B pair in the hall, 3 m in front of the drums
mic    close 5.3 3.6 1.6       ; a spot microphone above the set

; From the player's left: the 32-inch (lowest) to the 23-inch (highest).
instr 32
  size  = 32
  pitch = D2
  pos   = 3.95 3.0 0.9
endin

instr 29
  size  = 29
  pitch = G2
  pos   = 4.90 2.8 0.9
endin

instr 26
  size  = 26
  pitch = C3
  pos   = 5.80 2.8 0.9
endin

instr 23
  size  = 23
  pitch = E3
  pos   = 6.60 3.0 0.9
endin
