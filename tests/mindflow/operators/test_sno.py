"""SNO: the polynomial transforms against numpy's Chebyshev/Legendre series and scipy's DCT, the
spectral layer against a numpy computation in coefficient space (exact for polynomial inputs, at
two resolutions with the same weights), SNO1D against a numpy forward pass, data formats, bad
input, gradients against finite differences (float64), jit against eager."""

import math

import numpy as np
import pytest
import scipy.fft
import scipy.special as scp
from numpy.polynomial import chebyshev as npcheb
from numpy.polynomial import legendre as npleg

from diffsci import core
from diffsci.mindflow.cell import (
    SNO1D,
    SNO2D,
    SNO3D,
    get_poly_transform,
    interpolate_1d_dataset,
    interpolate_2d_dataset,
    poly_data,
)
from diffsci.mindflow.cell.neural_operators.sno import SNOKernelCell

RNG = np.random.default_rng(7)
F64 = core.float64


def _pairs(n, m, poly_type="Chebyshev_t", dim=1, dtype=np.float64):
    t = get_poly_transform(n, m, poly_type)
    pair = [core.tensor(t["analysis"].astype(dtype)), core.tensor(t["synthesis"].astype(dtype))]
    return [pair] * dim


# ---- transforms ----------------------------------------------------------------------------------
@pytest.mark.parametrize("n, m", [(9, 9), (16, 5), (7, 1)])
def test_chebyshev_transform_is_exact_on_polynomials(n, m):
    t = get_poly_transform(n, m)
    x = t["points"]
    np.testing.assert_allclose(
        x, np.sort(np.cos((2 * np.arange(n) + 1) * np.pi / (2 * n))), atol=1e-15
    )
    np.testing.assert_allclose(x, poly_data["Chebyshev_t"](n, None), atol=1e-15)
    c = RNG.standard_normal(m)  # a Chebyshev series of degree m - 1
    f = npcheb.chebval(x, c)
    np.testing.assert_allclose(t["analysis"] @ f, c, atol=1e-12)  # exact coefficients
    np.testing.assert_allclose(t["synthesis"] @ (t["analysis"] @ f), f, atol=1e-12)
    np.testing.assert_allclose(t["analysis"] @ t["synthesis"], np.eye(m), atol=1e-12)
    if m == n:  # interpolation: values -> coefficients -> values is the identity
        np.testing.assert_allclose(t["synthesis"] @ t["analysis"], np.eye(n), atol=1e-12)


def test_chebyshev_analysis_is_the_dct2():
    n, m = 12, 7
    t = get_poly_transform(n, m)
    f = RNG.standard_normal(n)  # values at the ascending points x_j = -cos(theta_j)
    y = scipy.fft.dct(f[::-1], type=2)  # y_k = 2 sum_j f(cos theta_j) cos(k theta_j)
    expected = y[:m] / n
    expected[0] /= 2
    np.testing.assert_allclose(t["analysis"] @ f, expected, atol=1e-12)
    np.testing.assert_allclose(t["weights"], np.full(n, np.pi / n))


def test_legendre_and_jacobi_transforms_are_exact():
    n, m = 10, 6
    t = get_poly_transform(n, m, "Legendre")
    np.testing.assert_allclose(t["points"], scp.roots_legendre(n)[0])
    p = RNG.standard_normal(m)  # power series of degree m - 1
    f = np.polynomial.polynomial.polyval(t["points"], p)
    np.testing.assert_allclose(t["analysis"] @ f, npleg.poly2leg(p), atol=1e-12)
    for poly_type, alpha in (("Chebyshev_u", None), ("Jacobi", [0.5, -0.3])):
        t = get_poly_transform(n, m, poly_type, alpha)
        f = np.polynomial.polynomial.polyval(t["points"], p)
        np.testing.assert_allclose(t["synthesis"] @ (t["analysis"] @ f), f, atol=1e-11)
        np.testing.assert_allclose(t["analysis"] @ t["synthesis"], np.eye(m), atol=1e-11)


def test_transform_errors_name_the_argument():
    with pytest.raises(ValueError, match="n_modes=9 exceeds n_spatial=8"):
        get_poly_transform(8, 9)
    with pytest.raises(ValueError, match="poly_type must be one of"):
        get_poly_transform(8, 4, "Hermite")
    with pytest.raises(ValueError, match="alpha"):
        get_poly_transform(8, 4, "Jacobi")


def test_interpolation_to_gauss_points_is_exact_for_cubics():
    res = 17
    xu = np.linspace(-1.0, 1.0, res)
    cubic = np.array([0.3, -1.0, 0.5, 2.0])
    data = np.stack([np.polynomial.polynomial.polyval(xu, cubic * s) for s in (1.0, -2.0)])
    out = interpolate_1d_dataset(data, "Legendre")
    xg = scp.roots_legendre(res)[0]
    expected = np.stack([np.polynomial.polynomial.polyval(xg, cubic * s) for s in (1.0, -2.0)])
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, expected, atol=2e-6)
    hx, wy = 9, 11  # p(x) q(y) on a uniform grid -> at the tensor Chebyshev points
    p, q = np.array([1.0, 0.5, -0.25, 0.1]), np.array([0.2, -1.0, 0.0, 0.7])
    grid = (
        np.polynomial.polynomial.polyval(np.linspace(-1, 1, hx), p)[:, None]
        * (np.polynomial.polynomial.polyval(np.linspace(-1, 1, wy), q)[None, :])
    )
    out2 = interpolate_2d_dataset(grid[None])
    exp2 = (
        np.polynomial.polynomial.polyval(poly_data["Chebyshev_t"](hx, None), p)[:, None]
        * (np.polynomial.polynomial.polyval(poly_data["Chebyshev_t"](wy, None), q)[None, :])
    )
    np.testing.assert_allclose(out2[0], exp2, atol=2e-6)


# ---- the spectral layer --------------------------------------------------------------------------
def _np_conv1d(x, w):
    """[C_in, L] * [C_out, C_in, k] with zero padding k // 2 (odd k): [C_out, L]."""
    k, L = w.shape[-1], x.shape[-1]
    xp = np.pad(x, ((0, 0), (k // 2, k // 2)))
    return sum(np.einsum("oc,cl->ol", w[:, :, j], xp[:, j : j + L]) for j in range(k))


def test_sno_kernel_is_exact_for_polynomials_at_two_resolutions():
    """With identity activation a layer maps sum_k c_k T_k to sum_k (K * c)_k T_k + W f: for inputs
    of degree < n_modes the output is the same function whatever the resolution."""
    c_in, c_out, m = 2, 3, 6
    coeffs = RNG.standard_normal((c_in, m))  # input channel i = sum_k coeffs[i, k] T_k
    cell = SNOKernelCell(c_in, c_out, _pairs(12, m), 3, None, F64, F64)
    w_lin = cell.linear_conv.conv.weight.asnumpy()  # [c_out, c_in, 3]
    w_skip = cell.skip_conv.conv.weight.asnumpy()[:, :, 0]  # [c_out, c_in]
    out_coeffs = _np_conv1d(coeffs, w_lin) + w_skip @ coeffs  # [c_out, m]
    for n in (12, 20):
        other = SNOKernelCell(c_in, c_out, _pairs(n, m), 3, None, F64, F64)
        other.linear_conv.conv.weight.set_data(cell.linear_conv.conv.weight)
        other.skip_conv.conv.weight.set_data(cell.skip_conv.conv.weight)
        x = get_poly_transform(n, m)["points"]
        f = np.stack([npcheb.chebval(x, c) for c in coeffs])[None]  # [1, c_in, n]
        y = other(core.tensor(f)).asnumpy()[0]  # [c_out, n]
        expected = np.stack([npcheb.chebval(x, c) for c in out_coeffs])
        np.testing.assert_allclose(y, expected, atol=1e-12)


def _gelu(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def test_sno1d_matches_a_numpy_forward_pass():
    n, m, c_in, c_out, hc = 16, 6, 2, 3, 5
    net = SNO1D(
        c_in, c_out, hc, num_sno_layers=2, transforms=_pairs(n, m), dtype=F64, compute_dtype=F64
    )
    p = {k: v.asnumpy() for k, v in net.parameters_and_names()}
    t = get_poly_transform(n, m)
    a, s = t["analysis"], t["synthesis"]
    x = RNG.standard_normal((4, c_in, n))
    out = []
    for xb in x:
        h = _gelu(p["encoder.0.conv.weight"][:, :, 0] @ xb)  # [hc, n]
        for i in range(2):
            spec = _np_conv1d(h @ a.T, p[f"sno_kernel.{i}.linear_conv.conv.weight"]) @ s.T
            h = _gelu(spec + p[f"sno_kernel.{i}.skip_conv.conv.weight"][:, :, 0] @ h)
        h = _gelu(p["decoder.0.conv.weight"][:, :, 0] @ h)
        out.append(p["decoder.2.conv.weight"][:, :, 0] @ h)
    np.testing.assert_allclose(net(core.tensor(x)).asnumpy(), np.stack(out), atol=1e-12)
    assert list(p) == [
        "encoder.0.conv.weight",
        "sno_kernel.0.linear_conv.conv.weight",
        "sno_kernel.0.skip_conv.conv.weight",
        "sno_kernel.1.linear_conv.conv.weight",
        "sno_kernel.1.skip_conv.conv.weight",
        "decoder.0.conv.weight",
        "decoder.2.conv.weight",
    ]


def test_sno_data_formats_and_usno_layers():
    n, m = 8, 4
    first = SNO2D(
        2,
        3,
        4,
        1,
        transforms=_pairs(n, m, dim=2),
        kernel_size=3,
        num_usno_layers=1,
        num_unet_strides=2,
        dtype=F64,
        compute_dtype=F64,
    )
    last = SNO2D(
        2,
        3,
        4,
        1,
        "channels_last",
        _pairs(n, m, dim=2),
        kernel_size=3,
        num_usno_layers=1,
        num_unet_strides=2,
        dtype=F64,
        compute_dtype=F64,
    )
    names = [k for k, _ in first.parameters_and_names()]
    assert "sno_kernel.1.unet.layers_up.0.up.weight" in names
    assert not any(k.startswith("sno_kernel.1.skip_conv") for k in names)
    core.load_param_into_net(last, {k: v for k, v in first.parameters_and_names()})
    x = RNG.standard_normal((3, 2, n, n))
    y_first = first(core.tensor(x)).asnumpy()
    y_last = last(core.tensor(x.transpose(0, 2, 3, 1))).asnumpy()
    assert y_first.shape == (3, 3, n, n)
    np.testing.assert_allclose(y_last, y_first.transpose(0, 2, 3, 1), atol=1e-12)
    # several batch axes, float32 transforms on float64 data
    net32 = SNO1D(1, 1, 4, 1, transforms=_pairs(10, 4, dtype=np.float32))
    assert net32(core.ones((2, 3, 1, 10))).shape == (2, 3, 1, 10)
    # 3-D, channels_last keeps the axis order (X, Y, Z)
    pairs3 = [_pairs(6, 3)[0], _pairs(5, 3)[0], _pairs(4, 2)[0]]
    net3 = SNO3D(1, 2, 3, 1, "channels_last", pairs3)
    assert net3(core.ones((2, 6, 5, 4, 1))).shape == (2, 6, 5, 4, 2)


def test_sno_bad_input_names_the_layout_and_resolution():
    last = SNO2D(2, 1, 4, 1, "channels_last", _pairs(8, 4, dim=2))
    with pytest.raises(ValueError, match="looks channels_first: pass data_format='channels_first'"):
        last(core.ones((1, 2, 8, 8)))
    first = SNO1D(2, 1, 4, 1, transforms=_pairs(8, 4))
    with pytest.raises(ValueError, match=r"resolution \(10,\) differs from the transforms' \(8,\)"):
        first(core.ones((1, 2, 10)))
    with pytest.raises(ValueError, match="looks channels_last"):
        first(core.ones((1, 8, 2)))
    with pytest.raises(ValueError, match="SNO1D: transforms must hold 1"):
        SNO1D(2, 1, transforms=_pairs(8, 4, dim=2))
    with pytest.raises(ValueError, match="transforms is required"):
        SNO1D(2, 1)
    t = get_poly_transform(8, 4)
    with pytest.raises(ValueError, match=r"analysis \[n_modes, resolution\] and synthesis"):
        SNO1D(2, 1, transforms=[[t["analysis"], t["analysis"]]])
    with pytest.raises(ValueError, match="at least one spectral layer"):
        SNO1D(2, 1, num_sno_layers=0, transforms=_pairs(8, 4))
    with pytest.raises(ValueError, match="data_format must be"):
        SNO1D(2, 1, data_format="NCW", transforms=_pairs(8, 4))


def test_sno_gradient_matches_finite_differences():
    net = SNO2D(
        1,
        1,
        2,
        1,
        transforms=[_pairs(6, 3)[0], _pairs(5, 3)[0]],
        kernel_size=3,
        activation="tanh",
        dtype=F64,
        compute_dtype=F64,
    )
    x = core.tensor(RNG.standard_normal((2, 1, 6, 5)))
    target = RNG.standard_normal((2, 1, 6, 5))

    def loss(x):
        return ((net(x) - core.tensor(target)) ** 2).mean()

    params = net.trainable_params()
    _, grads = core.value_and_grad(loss, None, params)(x)
    eps = 1e-6
    for p, g in zip(params, grads, strict=True):
        base = p.asnumpy().copy()
        for idx in [tuple(RNG.integers(0, s) for s in base.shape) for _ in range(2)]:
            plus, minus = base.copy(), base.copy()
            plus[idx] += eps
            minus[idx] -= eps
            p.set_data(core.tensor(plus))
            lp = float(loss(x).asnumpy())
            p.set_data(core.tensor(minus))
            lm = float(loss(x).asnumpy())
            p.set_data(core.tensor(base))
            assert abs((lp - lm) / (2 * eps) - g.asnumpy()[idx]) < 1e-7, (p.name, idx)


def test_sno_jit_equals_eager():
    net = SNO2D(1, 2, 4, 2, transforms=_pairs(8, 4, dim=2), kernel_size=3, num_usno_layers=1)
    x = core.tensor(RNG.standard_normal((2, 1, 8, 8)).astype(np.float32))
    np.testing.assert_allclose(core.jit(net)(x).asnumpy(), net(x).asnumpy(), rtol=1e-5, atol=1e-6)


def test_sno_compute_dtype_float16():
    t = get_poly_transform(16, 6)
    pairs = [[t["analysis"], t["synthesis"]]]  # numpy matrices are accepted too
    half = SNO1D(1, 1, 8, 1, transforms=pairs, compute_dtype=core.float16)
    ref = SNO1D(1, 1, 8, 1, transforms=pairs)
    core.load_param_into_net(ref, dict(half.parameters_and_names()))
    # its own generator: the module's RNG state depends on which tests ran before (xdist)
    x = core.tensor(np.random.default_rng(16).standard_normal((2, 1, 16)).astype(np.float32))
    y = half(x)
    assert y.dtype == core.float16 and half.encoder[0].conv.weight.dtype == core.float32
    scale = np.abs(ref(x).asnumpy()).max()
    # float16 keeps ~3 decimal digits per operation; a few layers of sums lose one more
    np.testing.assert_allclose(y.asnumpy().astype(np.float32), ref(x).asnumpy(), atol=2e-2 * scale)


@pytest.mark.parity
def test_usno2d_matches_torch():
    """SNO2D with one SNO and one U-SNO layer against the same computation in PyTorch: einsum
    transforms on both axes, padded convolutions, and the U-Net skip (max pooling, transposed
    convolution, concatenation) written with torch.nn.functional."""
    torch = pytest.importorskip("torch")
    fn = torch.nn.functional
    nx, ny, m = 8, 6, 4
    tx, ty = get_poly_transform(nx, m, "Legendre"), get_poly_transform(ny, m, "Legendre")
    pairs = [
        [core.tensor(tx["analysis"]), core.tensor(tx["synthesis"])],
        [core.tensor(ty["analysis"]), core.tensor(ty["synthesis"])],
    ]
    net = SNO2D(
        2,
        1,
        3,
        1,
        transforms=pairs,
        kernel_size=3,
        num_usno_layers=1,
        num_unet_strides=1,
        dtype=F64,
        compute_dtype=F64,
    )
    p = {k: torch.tensor(v.asnumpy()) for k, v in net.parameters_and_names()}
    ax, sx = torch.tensor(tx["analysis"]), torch.tensor(tx["synthesis"])
    ay, sy = torch.tensor(ty["analysis"]), torch.tensor(ty["synthesis"])
    act = lambda v: fn.gelu(v, approximate="tanh")  # noqa: E731

    def conv(v, name, pad=0):
        return fn.conv2d(v, p[name], padding=pad)

    def spectral(v, name):
        c = torch.einsum("ih,bchw,jw->bcij", ax, v, ay)
        return torch.einsum("hi,bcij,wj->bchw", sx, conv(c, name, 1), sy)

    def double(v, pre):
        return act(
            conv(act(conv(v, pre + ".double_conv.0.weight", 1)), pre + ".double_conv.2.weight", 1)
        )

    def unet(v, pre):
        h0 = double(v, pre + ".inc")
        h1 = double(fn.max_pool2d(h0, 2, 2), pre + ".layers_down.0.conv")
        up = fn.conv_transpose2d(h1, p[pre + ".layers_up.0.up.weight"], stride=2)
        h = double(torch.cat([h0, up], 1), pre + ".layers_up.0.conv")
        return conv(torch.cat([h, v], 1), pre + ".outc.weight", 1)

    x = np.random.default_rng(9).standard_normal((2, 2, nx, ny))
    h = act(conv(torch.tensor(x), "encoder.0.conv.weight"))
    h = act(
        spectral(h, "sno_kernel.0.linear_conv.conv.weight")
        + conv(h, "sno_kernel.0.skip_conv.conv.weight")
    )
    h = act(spectral(h, "sno_kernel.1.linear_conv.conv.weight") + unet(h, "sno_kernel.1.unet"))
    ref = conv(act(conv(h, "decoder.0.conv.weight")), "decoder.2.conv.weight")
    np.testing.assert_allclose(net(core.tensor(x)).asnumpy(), ref.numpy(), atol=1e-12)
