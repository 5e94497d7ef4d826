"""The kettle Python module against the engine (ctest `python`, or
`python3 -m pytest python/tests` once it is installed): renders into NumPy
and to a file agree sample for sample, rooms and drums made through the C
API behave physically, errors carry the score's file:line:col, and the
benches come back as records."""
import subprocess
import wave

import numpy as np
import pytest

import kettle

# a small, coarse room so that each render takes about a second: 16 kHz, a
# 23-inch drum and an impulse, two microphones
CSD = """<CsoundSynthesizer>
<CsInstruments>
sr = 16000
room = 0.8 0.8 0.9
beta = 0.2
mic near 0.4 0.4 0.75
mic far 0.15 0.2 0.3
impulse 0.2 0.6 0.3 0.001 0.5ms
instr 1
  size = 23
  pitch = D3
  pos = 0.4 0.4 0.6
endin
</CsInstruments>
<CsScore>
i 1 0 0.02 ff
</CsScore>
</CsoundSynthesizer>
"""
FAST = dict(threads=1, tail=0.01, device="cpu", tuning="formula")


def read_wav(path):
    """(frames, channels) of a 24-bit PCM WAV, full scale = 1."""
    with wave.open(str(path)) as w:
        raw = np.frombuffer(w.readframes(w.getnframes()), dtype=np.uint8)
        channels, rate = w.getnchannels(), w.getframerate()
    b = raw.reshape(-1, 3).astype(np.int32)
    v = b[:, 0] | (b[:, 1] << 8) | (b[:, 2] << 16)
    v = np.where(v >= 1 << 23, v - (1 << 24), v)
    return v.reshape(-1, channels) / float(1 << 23), rate


def test_version_is_the_programs():
    out = subprocess.run([kettle.program(), "--version"], capture_output=True, text=True)
    assert out.stdout.split()[:2] == ["kettle", kettle.__version__]
    assert ("CUDA:     off" in out.stdout) == (not kettle.cuda)


def test_render_to_numpy_and_to_file_agree(tmp_path):
    audio = kettle.render(text=CSD, **FAST)
    assert audio.mics == ["near", "far"]
    assert audio.sample_rate_hz == 16000
    assert audio.samples.dtype == np.float64
    assert audio.samples.shape == (2, int(0.03 * 16000))
    assert np.all(np.isfinite(audio.samples)) and np.abs(audio.samples).max() > 1e-3
    info = kettle.render(text=CSD, out=tmp_path / "take.wav", **FAST)
    assert info["steps"] == audio.samples.shape[1] and info["channels"] == 2
    written, rate = read_wav(tmp_path / "take.wav")
    assert rate == 16000 and written.shape == audio.samples.T.shape
    # the file is the same pascals times one gain, to 24-bit rounding
    gain = np.dot(written[:, 0], audio.samples[0]) / np.dot(audio.samples[0], audio.samples[0])
    assert gain > 0
    assert np.abs(written - gain * audio.samples.T).max() <= 1.5 / (1 << 23)


def test_render_files_by_name(tmp_path):
    (tmp_path / "small.csd").write_text(CSD)
    orc = CSD.split("<CsInstruments>")[1].split("</CsInstruments>")[0]
    sco = CSD.split("<CsScore>")[1].split("</CsScore>")[0]
    (tmp_path / "small.orc").write_text(orc)
    (tmp_path / "small.sco").write_text(sco)
    a = kettle.render(tmp_path / "small.csd", until=0.01, **FAST)
    b = kettle.render(text=CSD, until=0.01, **FAST)
    c = kettle.render(tmp_path / "small.sco", orchestra=tmp_path / "small.orc", until=0.01, **FAST)
    assert a.samples.shape == (2, 160)
    assert np.array_equal(a.samples, b.samples) and np.array_equal(a.samples, c.samples)


def test_progress_and_stopping():
    seen = []
    audio = kettle.render(text=CSD, progress=lambda done, total: seen.append((done, total)),
                          **FAST)
    frames = audio.samples.shape[1]
    assert seen[-1] == (frames, frames)
    assert all(a[0] < b[0] for a, b in zip(seen, seen[1:]))

    class Enough(Exception):
        pass

    def halfway(done, total):
        if 2 * done > total:
            raise Enough

    with pytest.raises(Enough):
        kettle.render(text=CSD, progress=halfway, **FAST)
    room = kettle.Room(size_m=(0.3, 0.3, 0.3), threads=1)
    with pytest.raises(Enough):
        room.run(1000, progress=halfway)      # told every 256 steps
    assert room.grid()["steps"] == 512


def test_score_error_carries_its_place():
    bad = CSD.replace("i 1 0 0.02 ff", "i 1 0 0.02 ff\ni 1 0.01 0.01 loud")
    with pytest.raises(kettle.KettleError) as caught:
        kettle.render(text=bad, text_name="bad.csd", **FAST)
    e = caught.value
    line = bad.splitlines().index("i 1 0.01 0.01 loud") + 1
    assert (e.file, e.line) == ("bad.csd", line)
    assert e.col > 1 and e.status == "invalid argument"
    assert str(e).startswith(f"bad.csd:{line}:{e.col}: error: ")
    assert "i 1 0.01 0.01 loud" in str(e) and "^" in str(e)


def test_missing_file_is_an_error(tmp_path):
    with pytest.raises(kettle.KettleError) as caught:
        kettle.render(tmp_path / "none.csd", **FAST)
    assert "none.csd" in str(caught.value)


def test_room_impulse_travels_at_c():
    room = kettle.Room(size_m=(0.6, 0.4, 0.4), sample_rate=44100, wall_beta=0.5, threads=1)
    grid = room.grid()
    assert grid["courant"] <= 1 / 3 ** 0.5 and grid["nodes"][0] > grid["nodes"][1]
    source, near, far = (0.1, 0.2, 0.2), (0.2, 0.2, 0.2), (0.5, 0.2, 0.2)
    room.add_impulse(source, start_s=0.0, duration_s=0.5e-3, amplitude=1e-3)
    assert room.add_mic("near", near) == 0 and room.add_mic("far", far) == 1
    room.run(120)
    p = room.signals()
    assert p.shape == (2, 120) and room.mic_names() == ["near", "far"]
    # the far microphone hears the near one's sound 0.3 m / c later (to the
    # grid's dispersion, a step or two at 3 points a centimetre) ...
    lag = np.argmax(np.correlate(p[1], p[0], "full")) - (p.shape[1] - 1)
    assert abs(lag - 0.3 / 344.0 / grid["time_step_s"]) <= 2
    # ... and nothing before the sound can reach it, and weaker, about as 1/r
    assert np.all(p[1][:30] == 0)
    assert 3 < np.abs(p[0]).max() / np.abs(p[1]).max() < 5


def test_drum_in_a_room(tmp_path):
    room = kettle.Room(size_m=(1.0, 1.0, 1.0), sample_rate=44100, wall_beta=0.5, threads=1)
    drum = room.add_timpani(29, centre_m=(0.5, 0.5, 0.6), tension=2200.0, format="csr")
    info = drum.info()
    assert info["membrane_n"] > 100 and info["energy_J"] == 0.0
    drum.strike(0.0, 100.0, contact_s=2e-3, x_m=0.1, y_m=0.05)
    room.add_mic("over", (0.5, 0.5, 0.85))
    room.run(40)
    u = drum.membrane
    n, h = info["membrane_n"], info["membrane_spacing_m"]
    assert u.shape == (n, n)
    # 0.9 ms into a 2 ms stroke the head is furthest out under the stick:
    # u[i, j] is the node at x = (i - (n-1)/2) h, y = (j - (n-1)/2) h
    peak = np.array(np.unravel_index(np.argmax(np.abs(u)), u.shape))
    assert np.abs((peak - (n - 1) / 2) * h - (0.1, 0.05)).max() <= 2 * h
    assert drum.info()["energy_J"] > 0
    room.write(tmp_path / "drum.wav", normalize=True)
    assert (tmp_path / "drum.wav").stat().st_size > 40 * 3
    with pytest.raises(kettle.KettleError) as caught:
        drum.strike(0.0, 100.0, x_m=0.5)      # beyond the 0.37 m head
    assert caught.value.code == -1 and caught.value.file is None
    room.close()
    with pytest.raises(RuntimeError):
        drum.info()


def test_bad_room_is_an_error():
    with pytest.raises(kettle.KettleError) as caught:
        kettle.Room(size_m=(1, 1, -1))
    assert caught.value.status == "invalid argument"
    with pytest.raises(kettle.KettleError):
        kettle.Room(scheme="no-such-scheme")


def test_bench_records():
    records = kettle.bench("timpani", "--format", "csr", "--steps", "3", "--repeats", "1",
                           "--threads", "1")
    assert records and all(r["bench"] == "timpani" for r in records)
    assert {"case", "impl", "device", "metric", "value", "unit"} <= set(records[0])
    solve = [r for r in records if r["impl"].startswith("csr") and r["unit"] == "us"]
    assert solve and all(r["value"] > 0 for r in solve)
    with pytest.raises(kettle.KettleError) as caught:
        kettle.bench("timpani", "--no-such-option")
    assert "no-such-option" in str(caught.value)
