<CsoundSynthesizer>
; demo.csd - the README's demo: the thesis' reference drum (29 inch, tuned to
; G2) in a 1 m^3 room at 44.1 kHz, heard by a stereo pair above the head.
; 0.9 s of audio (39,690 steps); under a millisecond of compute per step on
; two cores, so roughly 30 s in all.
;     kettle render scores/demo.csd -o demo.wav
<CsOptions>
--tail 0.3
</CsOptions>
<CsInstruments>
sr        = 44100
room      = 1.0 1.0 1.1        ; metres: 75 x 75 x 82 air points
beta      = 0.35               ; fairly absorbent walls
nchnls    = 2

pair      oh  0.5 0.5 0.95  0.3   ; two microphones 30 cm apart, 35 cm above the head

instr 1                        ; the reference drum of the thesis (Table 7.2)
  size    = 29                 ; inches
  pitch   = G2
  pos     = 0.5 0.5 0.6        ; centre of the head; the bowl hangs 0.5 m below
endin
</CsInstruments>
<CsScore>
;  drum start dur  force  where  angle  contact(ms)
i  1    0     0.3  f      0.62   17     1.0
i  1    0.3   0.3  mp     0.55  -20     1.5
e
</CsScore>
</CsoundSynthesizer>
