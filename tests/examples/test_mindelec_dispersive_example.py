"""examples/mindelec/fdtd/dispersive_media runs tiny: the Drude reflection meets the discrete
Fresnel coefficient and the oblique incident-field array does not leak."""

import importlib.util
import pathlib

PATH = (
    pathlib.Path(__file__).resolve().parents[2]
    / "examples/mindelec/fdtd/dispersive_media/dispersive_media.py"
)


def test_dispersive_media_example_tiny():
    spec = importlib.util.spec_from_file_location("example_dispersive_media", PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = module.main(tiny=True, plot=False, verbose=False)
    refl = out["reflection"]
    assert refl["err_discrete"] < 1e-3, refl["err_discrete"]  # 2.1e-4 measured (tiny)
    assert 1e-2 < refl["err_continuum"] < 0.1  # the skin depth is 1.6 cells
    for (mode, angle, method), (leak, peak) in out["leakage"].items():
        assert peak > 0.8, (mode, angle, method)
        if method == "array":
            assert leak < 1e-8, (mode, angle, leak)  # 1e-11 measured
        else:
            assert 1e-4 < leak < 5e-3, (mode, angle, leak)  # 8e-4 .. 2e-3 measured
