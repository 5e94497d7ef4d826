/* kt_physics.h - the one place physical constants and reference values live.
 * Every default in Kettle that is a property of air or of a drumhead comes
 * from here, so a change of convention is a one-line change. */
#ifndef KT_PHYSICS_H
#define KT_PHYSICS_H

#define KT_PI 3.14159265358979323846
/* First zero of the Bessel function J1: the (1,1) mode of a clamped disc. */
#define KT_BESSEL_J11 3.8317059702075125

/* Air (thesis Table 7.2; design note section 1). */
#define KT_SOUND_SPEED_M_PER_S 344.0
#define KT_AIR_DENSITY_KG_PER_M3 1.21
#define KT_SAMPLE_RATE_HZ 44100.0

/* Sound speed of dry air at a temperature: c = 331.3 * sqrt(1 + T/273.15). */
#define KT_SOUND_SPEED_AT_0C_M_PER_S 331.3
#define KT_ZERO_CELSIUS_K 273.15

/* Courant-number back-off used in single precision (thesis 5.4.2: 0.4 %). */
#define KT_SINGLE_COURANT_BACKOFF 0.004

/* Mylar drumhead (thesis Table 7.2; density 1380 kg/m^3 x 0.19 mm). */
#define KT_MYLAR_SURFACE_DENSITY_KG_PER_M2 0.262
#define KT_MYLAR_THICKNESS_M 0.19e-3
#define KT_MYLAR_YOUNGS_MODULUS_PA 3.0e9
#define KT_MYLAR_POISSON_RATIO 0.3

/* The reference drum: 29 inch (R = 0.37 m), T = 2200 N/m, bowl 0.5 m deep. */
#define KT_REFERENCE_TENSION_N_PER_M 2200.0
#define KT_REFERENCE_RADIUS_M 0.37
#define KT_REFERENCE_BOWL_DEPTH_M 0.5
#define KT_METRES_PER_INCH 0.0254

/* Air-loaded (1,1) fundamental of the reference drum in the reference box
 * (design note section 10: 96.56 Hz, close to G2 = 98 Hz); the score
 * language calibrates pitch -> tension on it. */
#define KT_REFERENCE_FUNDAMENTAL_HZ 96.56

/* Output level: the pressure written as full scale (0 dBFS) unless an
 * orchestra says `0dbfs =` or a render asks for --gain or --normalize.
 * 200 Pa is 140 dB SPL, the maximum a studio condenser microphone takes
 * before it distorts: a close microphone clips where a real one would
 * (a fff stroke, 200 N, peaks near 230 Pa 35 cm above the head). */
#define KT_FULL_SCALE_PA 200.0
/* 0 dB SPL, for the levels the summary prints. */
#define KT_SPL_REFERENCE_PA 20e-6
/* The loudest a source may be: the pressure it puts into the air at its node
 * (rho * peak Psi-per-step / k).  The default impulse gives ~5e4 Pa at
 * 44.1 kHz; 1e9 Pa (ten thousand atmospheres) is no sound but a blast, and a
 * render fed that much only blows up, so such a source is refused before it. */
#define KT_SOURCE_MAX_PRESSURE_PA 1e9

/* Classical viscous length of air (design note 2.3), for `viscosity = on`. */
#define KT_AIR_VISCOSITY_LENGTH_M 8.0e-8

#endif
