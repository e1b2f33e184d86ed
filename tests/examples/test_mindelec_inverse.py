"""The inverse-scattering example: MindElec's setup reproduced, metrics by hand, a tiny run."""

import importlib.util
import itertools
import math
import pathlib

import numpy as np

from diffsci import core

FOLDER = (
    pathlib.Path(__file__).resolve().parents[2]
    / "examples"
    / "mindelec"
    / "fdtd"
    / "inverse_scattering"
)


def _load():
    path = FOLDER / "inverse_scattering.py"
    spec = importlib.util.spec_from_file_location("example_inverse_scattering", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ex = _load()


def _mindelec():
    data = np.load(FOLDER / "reference" / "mindelec_labels.npz")
    mask = np.unpackbits(data["disc_mask"])[: 100 * 100].reshape(100, 100).astype(bool)
    return data["ez"], mask


def test_true_map_is_mindelecs():
    _, mask = _mindelec()
    true = ex.Setup(100).true_permittivity()
    assert mask.sum() == 80 + 112  # two discs of 80 and 112 cells
    np.testing.assert_array_equal(true, np.where(mask, 4.0, 1.0))


def test_forward_run_reproduces_mindelecs_labels():
    # MindElec's E_z at 8 receivers x 4 sources, 350 steps, from its own FDTD on its map
    ez_ref, mask = _mindelec()
    setup = ex.Setup(100, nt=350)
    ez = setup.measure(setup.node_map(np.where(mask, 4.0, 1.0))).asnumpy()  # [350, 4, 8]
    assert ez.shape == ez_ref.shape
    scale = np.abs(ez_ref).max()
    assert scale > 0.05
    err = np.abs(ez - ez_ref).max() / scale
    assert err < 1e-4, err  # measured 3.0e-5 (float32 in both)
    # without the half-step delay of the source the traces differ by far more
    setup.wave = ex.fdtd.Gaussian(tau=setup.wave.tau, t0=4.5 * setup.wave.tau)
    shifted = setup.receive(setup.node_map(np.where(mask, 4.0, 1.0)), setup.sources[0])
    assert np.abs(shifted.asnumpy() - ez_ref[:, 0]).max() / scale > 30 * err


def test_psnr_by_hand():
    y = np.ones((20, 20))
    y[5:9, 5:9] = 4.0  # data range 3
    assert math.isclose(ex.psnr(y + 0.03, y), 40.0, rel_tol=1e-12)  # 20 log10(3 / 0.03)
    x = y.copy()
    x[0, :4] += 0.3  # mse = 4 * 0.09 / 400
    assert math.isclose(ex.psnr(x, y), 20 * math.log10(3 / math.sqrt(0.36 / 400)), rel_tol=1e-12)


def test_mindelec_global_ssim_by_hand():
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    y = np.array([[1.0, 1.0], [4.0, 4.0]])
    # means 2.5, 2.5; variances 1.25, 2.25; covariance 1.5; L = 3: C1 = 0.03, C2 = 0.09
    expected = ((12.5 + 0.03) * (3.0 + 0.09)) / ((12.5 + 0.03) * (3.5 + 0.09))
    assert math.isclose(ex.ssim_global(x, y), expected, rel_tol=1e-12)
    assert math.isclose(ex.ssim_global(y, y), 1.0, rel_tol=1e-12)


def test_gaussian_ssim_by_hand():
    w = ex.gaussian_window(11, 1.5)
    assert w.shape == (11,) and math.isclose(w.sum(), 1.0, rel_tol=1e-14)
    assert math.isclose(w[5] / w[4], math.exp(1 / (2 * 1.5**2)), rel_tol=1e-12)
    # a ramp y = a i + b j + c: a symmetric window's local mean is the ramp at its centre and
    # x = y + s has the same local (co)variances, so the SSIM map is the luminance term
    # (2 mu (mu + s) + C1) / (mu^2 + (mu + s)^2 + C1) at each of the 14 x 16 window centres
    i, j = np.meshgrid(np.arange(24), np.arange(26), indexing="ij")
    y = 1.0 + 0.05 * i + 0.08 * j
    s = 0.4
    c1 = (0.01 * (y.max() - y.min())) ** 2
    mu = y[5:-5, 5:-5]
    expected = np.mean((2 * mu * (mu + s) + c1) / (mu**2 + (mu + s) ** 2 + c1))
    assert math.isclose(ex.ssim(y + s, y), expected, rel_tol=1e-10)
    assert expected < 0.99
    assert math.isclose(ex.ssim(y, y), 1.0, rel_tol=1e-12)
    # anti-correlated structure: negative
    rng = np.random.default_rng(0)
    z = rng.random((20, 20))
    assert ex.ssim(1 - z, z) < 0 < ex.ssim(z + 0.1 * rng.random((20, 20)), z)


def test_design_gradient_matches_finite_differences():
    # float64, 20 x 20 cells, one source: d loss / d rho along a random direction, central FD
    setup = ex.Setup(20, nt=70, npml=4, dtype="float64")
    setup.sources = setup.sources[:1]
    measured = setup.measure(setup.node_map(setup.true_permittivity()))
    rng = np.random.default_rng(1)
    rho0 = rng.uniform(0.3, 1.5, setup.design_shape) * rng.choice([-1, 1], setup.design_shape)

    def loss(rho):
        return ((setup.measure(setup.node_map(setup.cell_map(rho))) - measured) ** 2).sum()

    rho = core.tensor(rho0, dtype=core.float64)
    grad = core.grad(loss)(rho).asnumpy()
    v = rng.standard_normal(setup.design_shape)
    h = 1e-4
    fd = (
        float(loss(core.tensor(rho0 + h * v, dtype=core.float64)))
        - float(loss(core.tensor(rho0 - h * v, dtype=core.float64)))
    ) / (2 * h)
    assert abs(fd) > 0
    np.testing.assert_allclose((grad * v).sum(), fd, rtol=1e-4)


def test_tiny_inversion_reduces_the_loss(tmp_path):
    out = ex.main(n=32, nt=150, npml=5, epochs=4, out_dir=tmp_path, verbose=False)
    loss = out["loss"]
    assert len(loss) == 4 and all(b < a for a, b in itertools.pairwise(loss))
    assert loss[-1] < 0.5 * loss[0], loss
    assert out["psnr"] > out["initial"]["psnr"]
    # the reported metrics are those of the returned map
    assert math.isclose(out["psnr"], ex.psnr(out["eps"], out["eps_true"]), rel_tol=1e-12)
    assert (tmp_path / "maps.png").stat().st_size > 0 and (tmp_path / "loss.png").exists()
