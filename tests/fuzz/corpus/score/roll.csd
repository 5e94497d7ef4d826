<CsoundSynthesizer>
; roll.csd - (a) one 29-inch drum playing a roll on G2: single strokes
; alternating between two spots on the head, swelling from pp to ff and
; dying away, in a small room (1.5 m cube) at 44.1 kHz.
;     kettle render scores/roll.csd -o roll.wav      (about 3.5 s of audio)
<CsOptions>
--tail 1.5
</CsOptions>
<CsInstruments>
sr      = 44100
room    = 1.5 1.5 1.5
absorption = 0.6              ; about a treated studio wall
pair    main 0.75 0.75 1.3 0.4
instr 1
  size  = 29
  pitch = G2
  pos   = 0.75 0.75 0.7
endin
</CsInstruments>
<CsScore>
; Where each hand strikes: distance from the centre (fraction of the
; radius) and angle in degrees.  Strokes are 16ths at the tempo below.
#define R # 0.62  15 #
#define L # 0.58 -15 #
t 0 150 8 190                 ; the roll speeds up a little as it swells
i 1 0    0.25 pp $R 1.2
i 1 +    0.25 <  $L 1.2
i 1 +    0.25 <  $R
i 1 +    0.25 <  $L
i 1 +    0.25 <  $R
i 1 +    0.25 <  $L
i 1 +    0.25 <  $R
i 1 +    0.25 <  $L
i 1 +    0.25 <  $R
i 1 +    0.25 <  $L
i 1 +    0.25 <  $R
i 1 +    0.25 <  $L
i 1 +    0.25 <  $R
i 1 +    0.25 <  $L
i 1 +    0.25 <  $R
i 1 +    0.25 ff $L
i 1 +    0.25 <  $R
i 1 +    0.25 <  $L
i 1 +    0.25 <  $R
i 1 +    0.25 <  $L
i 1 +    0.25 <  $R
i 1 +    0.25 <  $L
i 1 +    0.25 <  $R
i 1 +    0.25 p  $L
i 1 +    1    ff $R 1.0 ; the final stroke
e
</CsScore>
</CsoundSynthesizer>
