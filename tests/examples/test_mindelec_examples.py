"""The mindelec.fdtd examples run tiny and agree with theory at tiny-grid tolerances."""

import importlib.util
import pathlib

import numpy as np

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "mindelec" / "fdtd"


def _load(relpath):
    path = EXAMPLES / relpath
    spec = importlib.util.spec_from_file_location(f"example_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_fit_frequencies_recovers_a_sum_of_sinusoids():
    from diffsci.mindelec.fdtd.analysis import fit_frequencies, spectral_peaks

    dt, n = 1e-3, 1500
    t = 0.2 + np.arange(n) * dt
    w = np.array([31.0, 52.5, 90.2])
    y = 0.3 + np.cos(w[0] * t) + 0.5 * np.sin(w[1] * t + 1) + 1e-2 * np.cos(w[2] * t)
    start = spectral_peaks(y, dt, w + 1.5)  # off by about a third of a bin (2 pi / T = 4.2)
    assert np.abs(start - w).max() > 1e-3
    fit, amp = fit_frequencies(y, dt, start, t0=0.2)
    np.testing.assert_allclose(fit, w, rtol=1e-10)
    np.testing.assert_allclose(amp, [1, 0.5, 1e-2], rtol=1e-8)


def test_cavity_modes_match_yee_dispersion(capsys):
    out = _load("cavity_modes/cavity_modes.py").main(
        nx=12, ny=9, steps=3000, plot=False, verbose=True
    )
    assert out["n_measured"] >= 3
    # the fit finds the discrete (Yee) frequencies, not the continuum ones
    assert out["max_rel_err"] < 1e-7, out["rel_err"]
    assert out["max_continuum_err"] > 1e-3
    assert out["guess_rel_err"] > 100 * out["max_rel_err"]  # the fit did the work
    assert "max |fit/Yee - 1|" in capsys.readouterr().out


def test_pml_reflection_below_theory_thresholds():
    out = _load("pml_reflection/pml_reflection.py").main(
        steps_normal=170, steps_oblique=330, plot=False, verbose=False
    )
    # 10 CFS-CPML cells (measured -78 / -66 dB tiny): < -70 dB at normal incidence, < -55 dB at
    # 60 degrees; a PEC wall in its place reflects about -5 dB
    assert out["normal"]["max_db"] < -70, out["normal"]["db"]
    assert abs(out["oblique"]["angle"] - 60) < 1
    assert out["oblique"]["max_db"] < -55, out["oblique"]["db"]
    assert np.median(out["normal"]["pec_db"]) > -10  # 2D spreading over its longer path


def test_dipole_radiation_matches_hertzian_power():
    out = _load("dipole_radiation/dipole_radiation.py").main(
        n=24, steps=200, npml=6, plot=False, verbose=False
    )
    assert out["max_err"] < 0.035  # 0.0215 measured; 1% at 44^3, out["ratio"]
    assert np.all(np.isfinite(out["slice"])) and np.abs(out["slice"]).max() > 0
