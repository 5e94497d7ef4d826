"""Kettle from Python: physical-modelling timpani in a 3D FDTD room.

    import kettle
    audio = kettle.render("scores/demo.csd", until=0.5)    # NumPy, pascals
    audio.samples.shape                                    # (microphones, frames)
    kettle.render("scores/demo.csd", out="demo.wav")       # a file, as `kettle render`

    room = kettle.Room(size_m=(1, 1, 1), wall_beta=0.5)
    drum = room.add_timpani(29, pitch_hz=98.0)
    drum.strike(0.0, 100.0)
    room.add_mic("left", (0.3, 0.5, 0.85))
    room.run(4410)
    room.signals()                                         # (1, 4410) pascals

    kettle.bench("load", "--steps", "20")                  # records as dicts

Errors from the engine are raised as kettle.KettleError; for a score its
str() is "file:line:col: error: message" with the line and a caret, and
.file, .line, .col give the place.  The C API underneath is in
include/kettle/ (kettle.h, timpani.h, kt_render.h).
"""
import json
import os
import shutil
import subprocess
import sysconfig
import tempfile
from dataclasses import dataclass, field

import numpy as np

from . import _kettle
from ._kettle import KettleError, Timpani

__all__ = ["render", "Audio", "Room", "Timpani", "KettleError", "bench", "program"]
__version__ = _kettle.version
#: True when the engine was built with CUDA (render(device="gpu") can run)
cuda = bool(_kettle.cuda)


@dataclass
class Audio:
    """A render's microphones: samples[c] is microphone c's pressure in
    pascals at sample_rate_hz (the simulation's rate)."""

    samples: np.ndarray
    sample_rate_hz: float
    mics: list
    info: dict = field(default_factory=dict)


def _score_arguments(score, orchestra, text, text_name):
    if text is not None:
        return {"text": text, "text_name": text_name}
    if score is None:
        raise ValueError("name a score (.csd, or .sco/.mid with orchestra=) or give text=")
    score = os.fspath(score)
    if orchestra is not None:
        return {"orchestra": os.fspath(orchestra), "score": score}
    return {"csd": score}


def render(score=None, *, orchestra=None, text=None, text_name="<text>", out=None,
           sample_rate=0.0, until=0.0, tail=None, threads=0, device="auto",
           tuning="calibrated", tuning_cache=None, progress=None):
    """Render a performance.

    score: a .csd file, or a .sco or .mid file with orchestra= its .orc;
    text: a .csd's text instead of a file, named text_name in messages.  With out= a file name (.wav,
    .aiff, .flac) the audio is written as `kettle render` writes it and the
    render's facts come back as a dict; without, an Audio whose samples are
    a (microphones, frames) float64 array in pascals.  sample_rate overrides
    the orchestra's sr, until stops after that many seconds of audio, tail
    is the ring-out after the last event (default 1.5 s), device auto, cpu
    or gpu, tuning calibrated (the drums tuned on the room that runs) or
    formula; tuning_cache a folder ("" for none); progress(done, total) is
    called once a percent of the steps (an exception in it stops the render).
    Ctrl-C stops a render."""
    args = _score_arguments(score, orchestra, text, text_name)
    options = dict(sample_rate=float(sample_rate), until=float(until),
                   tail=-1.0 if tail is None else float(tail), threads=int(threads),
                   device=device, tuning=tuning, tuning_cache=tuning_cache,
                   progress=progress)
    if out is not None:
        return _kettle.render(out=os.fspath(out), **args, **options)
    samples, channels, frames, rate, mics, info = _kettle.render(**args, **options)
    array = np.frombuffer(samples, dtype=np.float64).reshape(channels, frames)
    return Audio(array, rate, mics, info)


class Room(_kettle.Room):
    """A box of air (kettle.h): Room(size_m=(x, y, z), sample_rate=44100,
    wall_beta=0 (rigid) .. 0.5 (anechoic at normal incidence),
    scheme="standard" | "iwb" | "fcc" | "compact" | "box" | "leggy" (with
    reach=), precision="double" | "single", threads=0 (all cores)).
    add_mic, add_impulse and add_timpani set it up, run(steps) steps it,
    signals() gives what the microphones heard."""

    def signals(self):
        """(microphones, steps) float64 array of pressure in pascals."""
        names = self.mic_names()
        rows = [np.frombuffer(self.signal(m), dtype=np.float64) for m in range(len(names))]
        return np.array(rows).reshape(len(names), -1)

    def run_seconds(self, seconds, progress=None):
        """Steps the room through this much time."""
        self.run(int(round(seconds / self.grid()["time_step_s"])), progress=progress)


def _displacement(drum):
    data, n = drum.displacement()
    return np.frombuffer(data, dtype=np.float64).reshape(n, n)


Timpani.membrane = property(_displacement, doc="u^n (m) on the n x n membrane grid")


def program():
    """The kettle program this module runs benches with: $KETTLE_EXE, the one
    `pip install` put beside the interpreter's scripts, or the one on PATH."""
    given = os.environ.get("KETTLE_EXE")
    if given:
        return given
    beside = os.path.join(sysconfig.get_path("scripts"), "kettle")
    if os.access(beside, os.X_OK):
        return beside
    found = shutil.which("kettle")
    if not found:
        raise KettleError("no kettle program found (set KETTLE_EXE, or pip install kettle)")
    return found


def bench(name, *options, timeout=None):
    """Run `kettle bench NAME OPTIONS... --json FILE` and return its records,
    one dict per measured figure (bench, case, impl, device, precision,
    threads, metric, value, unit).  A bench that fails raises KettleError
    with what the program said."""
    with tempfile.TemporaryDirectory(prefix="kettle-bench-") as folder:
        path = os.path.join(folder, "records.json")
        run = subprocess.run([program(), "bench", name, *map(str, options), "--json", path],
                             capture_output=True, text=True, timeout=timeout)
        if run.returncode != 0:
            # the program's first line says what went wrong (a usage may follow)
            said = (run.stderr.strip() or run.stdout.strip()).splitlines()
            raise KettleError(said[0] if said else
                              f"kettle bench {name}: exit status {run.returncode}")
        with open(path, encoding="utf-8") as f:
            return json.load(f)
