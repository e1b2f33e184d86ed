"""SpectralConv1d/2d/3d, FNOBlocks, FNO1D/2D/3D: against independent numpy computations (FFT
and MindFlow's DFT-matrix form), analytic single-mode cases, resolution independence, finite
differences in float64, jit, recompute, PyTorch (parity) and bad input."""

import gc
import tracemalloc

import numpy as np
import pytest

from diffsci import core
from diffsci.core.testing import gradcheck
from diffsci.mindflow.cell import (
    FNO1D,
    FNO2D,
    FNO3D,
    FNOBlocks,
    SpectralConv1d,
    SpectralConv2d,
    SpectralConv3d,
)
from diffsci.mindflow.cell.neural_operators.spectral_conv import SpectralConv2dDft

F64 = core.float64
SPECTRAL = {1: SpectralConv1d, 2: SpectralConv2d, 3: SpectralConv3d}


def _t(a):
    return core.tensor(np.asarray(a))


def _weights(conv):
    """The complex corner weights as numpy arrays, in MindFlow's corner order."""
    d = len(conv.n_modes)
    out = []
    for k in range(2 ** (d - 1)):
        s = "" if d == 1 else str(k + 1)
        re, im = getattr(conv, f"_w_re{s}").asnumpy(), getattr(conv, f"_w_im{s}").asnumpy()
        out.append(re + 1j * im)
    return out


def numpy_spectral_conv(x, weights, n_modes):
    """Reference: rfftn, an explicit loop over corners and modes, irfftn (numpy only).

    ``x`` [B, I, *n]; ``weights`` the 2**(d-1) corners [I, O, *m] (corner k: bit i of k set
    means negative frequencies on axis i).
    """
    d = len(n_modes)
    sizes = x.shape[2:]
    axes = tuple(range(2, 2 + d))
    x_ft = np.fft.rfftn(x, axes=axes)
    out_ft = np.zeros((x.shape[0], weights[0].shape[1], *x_ft.shape[2:]), dtype=complex)
    for k, w in enumerate(weights):
        for idx in np.ndindex(*n_modes):
            freq = []
            for i, j in enumerate(idx):
                neg = i < d - 1 and (k >> i) & 1
                freq.append(sizes[i] - n_modes[i] + j if neg else j)
            sel = (slice(None), slice(None), *freq)
            out_ft[sel] += x_ft[sel] @ w[(slice(None), slice(None), *idx)]
    return np.fft.irfftn(out_ft, s=sizes, axes=axes)


@pytest.mark.parametrize(
    "d, sizes, modes", [(1, (12,), (4,)), (2, (8, 10), (3, 4)), (3, (6, 4, 6), (2, 2, 3))]
)
def test_spectral_conv_matches_numpy_fft(d, sizes, modes):
    rng = np.random.default_rng(d)
    conv = SPECTRAL[d](3, 2, list(modes), list(sizes), compute_dtype=F64)
    for p in conv.trainable_params():  # weights of both signs, to catch swapped corners
        p.set_data(_t(rng.standard_normal(p.shape)))
    x = rng.standard_normal((2, 3, *sizes))
    y = conv(_t(x))
    assert y.dtype == F64 and y.shape == (2, 2, *sizes)
    np.testing.assert_allclose(
        y.asnumpy(), numpy_spectral_conv(x, _weights(conv), modes), rtol=1e-10, atol=1e-12
    )


def test_spectral_conv_1d_matches_mindflow_dft_matrices():
    """MindFlow's DFT1d: forward with the 'sqrtn' DFT matrix truncated to the modes, inverse as
    Re(X_0) + 2 Re(sum_{k >= 1} X_k e^{+2 pi i k n / N}), scaled by 1/sqrt(N) again. Same
    weights, same output: MindFlow checkpoints carry over."""
    rng = np.random.default_rng(1)
    n, m = 16, 5
    conv = SpectralConv1d(2, 3, m, n, compute_dtype=F64)
    x = rng.standard_normal((4, 2, n))
    grid = np.arange(n)
    dft = np.exp(-2j * np.pi * np.outer(grid, np.arange(m)) / n) / np.sqrt(n)  # [n, m]
    x_ft = x @ dft  # [B, I, m]
    out_ft = np.einsum("bik,iok->bok", x_ft, _weights(conv)[0])
    inv = np.exp(2j * np.pi * np.outer(np.arange(m), grid) / n) / np.sqrt(n)  # [m, n]
    inv[1:] *= 2.0
    ref = np.real(out_ft @ inv)
    np.testing.assert_allclose(conv(_t(x)).asnumpy(), ref, rtol=1e-10, atol=1e-12)


def test_single_mode_through_spectral_conv_1d():
    """cos(2 pi k x) with weight a + ib at mode k comes out as a cos - b sin; modes above
    n_modes come out as zero."""
    n, m, k = 32, 6, 3
    conv = SpectralConv1d(1, 1, m, n, compute_dtype=F64)
    a, b = 0.7, -1.3
    w_re, w_im = np.zeros((1, 1, m)), np.zeros((1, 1, m))
    w_re[0, 0, k], w_im[0, 0, k] = a, b
    conv._w_re.set_data(_t(w_re))
    conv._w_im.set_data(_t(w_im))
    theta = 2 * np.pi * k * np.arange(n) / n
    y = conv(_t(np.cos(theta)[None, None])).asnumpy()[0, 0]
    np.testing.assert_allclose(y, a * np.cos(theta) - b * np.sin(theta), atol=1e-12)
    high = 2 * np.pi * m * np.arange(n) / n  # the first mode not kept
    np.testing.assert_allclose(conv(_t(np.cos(high)[None, None])).asnumpy(), 0.0, atol=1e-12)


def test_single_mode_2d_takes_the_weight_of_its_sign():
    """exp(i(-k1 x + k2 y)) (real part) goes through corner 2 (negative frequencies on the
    first axis) only; with corner 1 zero and corner 2 the identity it passes unchanged."""
    n1, n2, m = 8, 8, (3, 3)
    conv = SpectralConv2d(1, 1, list(m), [n1, n2], compute_dtype=F64)
    for p in conv.trainable_params():
        p.set_data(_t(np.zeros(p.shape)))
    conv._w_re2.set_data(_t(np.ones((1, 1, *m))))
    i, j = np.meshgrid(np.arange(n1), np.arange(n2), indexing="ij")
    neg = np.cos(2 * np.pi * (-2 * i / n1 + 1 * j / n2))[None, None]
    pos = np.cos(2 * np.pi * (2 * i / n1 + 1 * j / n2))[None, None]
    np.testing.assert_allclose(conv(_t(neg)).asnumpy(), neg, atol=1e-12)
    np.testing.assert_allclose(conv(_t(pos)).asnumpy(), 0.0, atol=1e-12)


def _band_limited(n, rng_seed=0, kmax=4, channels=1):
    """A real periodic signal with modes below kmax sampled at x_j = j / n: [1, n, channels]."""
    rng = np.random.default_rng(rng_seed)
    x = np.arange(n) / n
    coef = rng.standard_normal((channels, kmax, 2))
    k = np.arange(kmax)[:, None]
    u = np.einsum("ck,kn->nc", coef[..., 0], np.cos(2 * np.pi * k * x)) + np.einsum(
        "ck,kn->nc", coef[..., 1], np.sin(2 * np.pi * k * x)
    )
    return u[None]


def test_spectral_conv_is_resolution_independent():
    conv = SpectralConv1d(2, 2, 8, 32, compute_dtype=F64)
    coarse = _band_limited(32, channels=2).transpose(0, 2, 1)
    fine = _band_limited(128, channels=2).transpose(0, 2, 1)
    yc, yf = conv(_t(coarse)).asnumpy(), conv(_t(fine)).asnumpy()
    np.testing.assert_allclose(yf[..., ::4], yc, atol=1e-12)


def test_fno1d_linear_is_exactly_resolution_independent():
    """With identity Fourier-layer activations and no grid embedding every inner map is linear
    and keeps the band, so the same weights give the same values at the shared points; the
    projection is pointwise."""
    net = FNO1D(
        1,
        1,
        6,
        32,
        hidden_channels=4,
        projection_channels=8,
        fnoblock_act="identity",
        positional_embedding=False,
        dft_compute_dtype=F64,
        fno_compute_dtype=F64,
    )
    yc = net(_t(_band_limited(32))).asnumpy()
    yf = net(_t(_band_limited(256))).asnumpy()
    np.testing.assert_allclose(yf[:, ::8], yc, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("embedding, tol", [(False, 1e-5), (True, 1e-2)])
def test_fno1d_built_at_256_evaluates_at_1024(embedding, tol):
    """The full model (gelu) built for 256 points runs on 1024: at the shared points the
    outputs agree to float32 rounding without the grid embedding (gelu of a smooth input
    aliases very little), and to a fraction of a percent with it (MindFlow's linspace(0, 1, n)
    grid, regenerated per input, is not periodic and its points j/255, 4j/1023 differ)."""
    net = FNO1D(
        1, 1, 16, 256, hidden_channels=8, projection_channels=16, positional_embedding=embedding
    )
    yc = net(_t(_band_limited(256).astype(np.float32))).asnumpy()
    yf = net(_t(_band_limited(1024).astype(np.float32))).asnumpy()
    assert yf.shape == (1, 1024, 1)
    rel = np.linalg.norm(yf[:, ::4] - yc) / np.linalg.norm(yc)
    assert rel < tol, rel


def _swap_params(net, values):
    """Call-time replacement of Parameters by tensors (so that grad sees them as inputs)."""
    owners = {}
    for name, _ in net.parameters_and_names():
        cell_path, _, attr = name.rpartition(".")
        cell = net
        for part in cell_path.split(".") if cell_path else []:
            cell = cell._cells[part]
        owners[name] = (cell, attr)

    def run(x, *tensors):
        saved = []
        try:
            for name, t in zip(values, tensors):
                cell, attr = owners[name]
                saved.append((cell, attr, cell.__dict__[attr]))
                object.__setattr__(cell, attr, t)
            return net(x)
        finally:
            for cell, attr, p in saved:
                object.__setattr__(cell, attr, p)

    return run


@pytest.mark.parametrize("d", [1, 2])
def test_fno_gradients_match_finite_differences_float64(d):
    sizes = [8, 6][:d]
    net = (FNO1D if d == 1 else FNO2D)(
        2,
        1,
        [3, 2][:d],
        sizes,
        hidden_channels=3,
        projection_channels=4,
        n_layers=2,
        add_residual=True,
        dft_compute_dtype=F64,
        fno_compute_dtype=F64,
    )
    names = [
        "_lifting.0.weight",
        f"_fno_blocks.1._convs._w_im{'' if d == 1 else '2'}",
        "_fno_blocks.0._fno_skips.weight",
        "_projection.2.weight",
    ]
    params = net.parameters_dict()
    run = _swap_params(net, names)
    x = np.random.default_rng(0).standard_normal((2, *sizes, 2))
    assert gradcheck(run, (_t(x), *[core.tensor(params[n].asnumpy()) for n in names]))


def test_jit_equals_eager_forward_and_train_step():
    net = FNO2D(2, 1, [3, 3], [8, 8], hidden_channels=4, projection_channels=8, n_layers=2)
    x = _t(np.random.default_rng(0).standard_normal((2, 8, 8, 2)).astype(np.float32))
    y = _t(np.random.default_rng(1).standard_normal((2, 8, 8, 1)).astype(np.float32))
    np.testing.assert_allclose(core.jit(net)(x).asnumpy(), net(x).asnumpy(), rtol=1e-5, atol=1e-6)

    def loss_fn(x, y):
        return ((net(x) - y) ** 2).mean()

    grad_fn = core.value_and_grad(loss_fn, None, net.trainable_params())
    l_e, g_e = grad_fn(x, y)
    l_j, g_j = core.jit(grad_fn)(x, y)
    np.testing.assert_allclose(l_j.asnumpy(), l_e.asnumpy(), rtol=1e-5)
    for a, b in zip(g_j, g_e):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-4, atol=1e-6)


def test_training_lowers_the_loss():
    """A few Adam steps on a tiny linear operator (u -> smoothed u)."""
    u = np.concatenate([_band_limited(32, s) for s in range(8)]).astype(np.float32)
    target = np.real(np.fft.ifft(np.fft.fft(u, axis=1) * 0.5, axis=1)).astype(np.float32)
    net = FNO1D(1, 1, 4, 32, hidden_channels=8, projection_channels=16, n_layers=2)
    opt = core.nn.Adam(net.trainable_params(), learning_rate=1e-2)
    grad_fn = core.value_and_grad(lambda x, y: ((net(x) - y) ** 2).mean(), None, opt.parameters)

    @core.jit
    def step(x, y):
        loss, grads = grad_fn(x, y)
        opt(grads)
        return loss

    x, y = _t(u), _t(target)
    losses = [float(step(x, y).asnumpy()) for _ in range(30)]
    assert losses[-1] < 0.2 * losses[0], losses


def test_recompute_gives_the_same_gradients_and_tags_the_ir():
    kw = dict(hidden_channels=4, projection_channels=8, n_layers=2)
    plain = FNO1D(1, 1, 4, 16, **kw)
    rec = FNO1D(1, 1, 4, 16, recompute=True, **kw)
    for (_, a), (_, b) in zip(plain.parameters_and_names(), rec.parameters_and_names()):
        b.set_data(core.tensor(a.asnumpy()))
    x = _t(_band_limited(16).astype(np.float32))

    def grads(net):
        return core.grad(lambda x: (net(x) ** 2).sum(), None, net.trainable_params())(x)

    for a, b in zip(grads(plain), grads(rec)):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-5, atol=1e-7)
    text = (
        core.jit(core.grad(lambda x: (rec(x) ** 2).sum(), None, rec.trainable_params()))
        .lower(x)
        .as_text()
    )
    assert "recompute" in text


def _peak_bytes(fn):
    """Peak array memory (numpy reports its buffers to tracemalloc) while ``fn()`` runs."""
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        fn()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def test_recompute_cuts_the_peak_memory_of_a_gradient():
    """8 Fourier layers: keeping only each block's input instead of its activations cuts the
    gradient's peak by at least 40%, eagerly and under jit (measured: 1.85x and 1.8x; 2.2x and
    2.3x while the spectral layers still saved their zero-padded spectra, whose removal cut
    the plain peak by a quarter)."""
    x = _t(np.random.default_rng(0).standard_normal((4, 256, 1)).astype(np.float32))
    peaks = {}
    for rc in (False, True):
        net = FNO1D(
            1, 1, 8, 256, hidden_channels=16, projection_channels=16, n_layers=8, recompute=rc
        )
        g = core.grad(lambda x, net=net: (net(x) ** 2).mean(), None, net.trainable_params())
        jg = core.jit(g)
        g(x), jg(x)  # warm up (the first jit call traces)
        peaks[rc] = (_peak_bytes(lambda g=g: g(x)), _peak_bytes(lambda jg=jg: jg(x)))
    for mode, plain, cut in zip(("eager", "jit"), peaks[False], peaks[True]):
        assert cut <= 0.6 * plain, f"{mode}: recompute peak {cut} vs {plain}"


def test_data_format_channels_first_matches_channels_last():
    net = FNO2D(3, 2, 2, [8, 6], hidden_channels=4, projection_channels=0, lifting_channels=5)
    first = FNO2D(
        3,
        2,
        2,
        [8, 6],
        hidden_channels=4,
        projection_channels=0,
        lifting_channels=5,
        data_format="channels_first",
    )
    for (_, a), (_, b) in zip(net.parameters_and_names(), first.parameters_and_names()):
        b.set_data(core.tensor(a.asnumpy()))
    x = np.random.default_rng(0).standard_normal((2, 8, 6, 3)).astype(np.float32)
    y_last = net(_t(x)).asnumpy()
    y_first = first(_t(x.transpose(0, 3, 1, 2))).asnumpy()
    np.testing.assert_allclose(y_first.transpose(0, 2, 3, 1), y_last, rtol=1e-5, atol=1e-6)


def test_mindflow_parameter_names_and_shapes():
    net = FNO3D(2, 1, [2, 2, 3], [4, 6, 8], hidden_channels=3, lifting_channels=5)
    shapes = {n: tuple(p.shape) for n, p in net.parameters_and_names()}
    assert shapes["_lifting.0.weight"] == (5, 2 + 3)
    assert shapes["_lifting.1.weight"] == (3, 5)
    for k in range(1, 5):
        assert shapes[f"_fno_blocks.3._convs._w_re{k}"] == (3, 3, 2, 2, 3)
        assert shapes[f"_fno_blocks.3._convs._w_im{k}"] == (3, 3, 2, 2, 3)
    assert shapes["_fno_blocks.0._fno_skips.weight"] == (3, 3, 1, 1, 1)
    assert shapes["_projection.0.weight"] == (128, 3)
    assert shapes["_projection.2.weight"] == (1, 128)
    assert len(shapes) == 2 + 4 * 9 + 2
    assert SpectralConv2dDft is SpectralConv2d


def test_fnoblocks_is_act_of_spectral_plus_skip():
    blk = FNOBlocks(
        3, 3, [2, 2], [6, 6], add_residual=True, dft_compute_dtype=F64, fno_compute_dtype=F64
    )
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 6))
    spec = numpy_spectral_conv(x, _weights(blk._convs), (2, 2))
    skip = np.einsum("bixy,oi->boxy", x, blk._fno_skips.weight.asnumpy()[:, :, 0, 0])
    z = spec + skip
    gelu = 0.5 * z * (1 + np.tanh(np.sqrt(2 / np.pi) * (z + 0.044715 * z**3)))
    np.testing.assert_allclose(blk(_t(x)).asnumpy(), gelu + x, rtol=1e-10, atol=1e-12)


def test_compute_dtypes_are_honoured():
    x = _t(_band_limited(16).astype(np.float32))
    y64 = FNO1D(1, 1, 4, 16, dft_compute_dtype=F64, fno_compute_dtype=F64)
    assert all(p.dtype == F64 for p in y64.trainable_params())
    assert y64(x).dtype == F64
    half = FNO1D(1, 1, 4, 16, hidden_channels=4, fno_compute_dtype=core.float16)
    full = FNO1D(1, 1, 4, 16, hidden_channels=4)
    for (_, a), (_, b) in zip(full.parameters_and_names(), half.parameters_and_names()):
        b.set_data(core.tensor(a.asnumpy()))
    y_half = half(x)
    assert y_half.dtype == core.float16
    np.testing.assert_allclose(
        y_half.asnumpy().astype(np.float32), full(x).asnumpy(), rtol=0.05, atol=0.02
    )
    conv = SpectralConv1d(1, 1, 4, 16, compute_dtype=core.float64)
    assert conv(x[:, None, :, 0]).dtype == F64


@pytest.mark.parity
def test_spectral_conv_2d_and_block_match_torch():
    """neuraloperator-style reference math in PyTorch: rfft2, einsum on both corners, irfft2,
    plus a 1x1 convolution and tanh-gelu."""
    torch = pytest.importorskip("torch")
    blk = FNOBlocks(4, 4, [3, 4], [8, 10], dft_compute_dtype=F64, fno_compute_dtype=F64)
    x = np.random.default_rng(3).standard_normal((2, 4, 8, 10))
    w1, w2 = (torch.tensor(w) for w in _weights(blk._convs))
    tx = torch.tensor(x)
    x_ft = torch.fft.rfft2(tx)
    out_ft = torch.zeros(2, 4, 8, 6, dtype=torch.complex128)
    out_ft[:, :, :3, :4] = torch.einsum("bixy,ioxy->boxy", x_ft[:, :, :3, :4], w1)
    out_ft[:, :, -3:, :4] = torch.einsum("bixy,ioxy->boxy", x_ft[:, :, -3:, :4], w2)
    spec = torch.fft.irfft2(out_ft, s=(8, 10))
    skip = torch.nn.functional.conv2d(tx, torch.tensor(blk._fno_skips.weight.asnumpy()))
    ref = torch.nn.functional.gelu(spec + skip, approximate="tanh")
    np.testing.assert_allclose(blk(_t(x)).asnumpy(), ref.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parity
def test_fno1d_matches_torch_reference():
    """The whole FNO1D (two-layer lifting with the linspace grid, residual Fourier layers,
    gelu projection) rebuilt in PyTorch from our weights."""
    torch = pytest.importorskip("torch")
    net = FNO1D(
        2,
        3,
        5,
        24,
        hidden_channels=4,
        lifting_channels=6,
        projection_channels=7,
        n_layers=2,
        add_residual=True,
        dft_compute_dtype=F64,
        fno_compute_dtype=F64,
    )
    p = {n: torch.tensor(v.asnumpy()) for n, v in net.parameters_and_names()}
    x = np.random.default_rng(5).standard_normal((3, 24, 2))
    tx = torch.tensor(x)
    grid = torch.linspace(0, 1, 24, dtype=torch.float64).reshape(1, 24, 1).expand(3, 24, 1)
    h = torch.cat([tx, grid], -1) @ p["_lifting.0.weight"].T @ p["_lifting.1.weight"].T
    h = h.permute(0, 2, 1)
    for i in range(2):
        w = torch.complex(p[f"_fno_blocks.{i}._convs._w_re"], p[f"_fno_blocks.{i}._convs._w_im"])
        h_ft = torch.fft.rfft(h)
        out_ft = torch.zeros(3, 4, 13, dtype=torch.complex128)
        out_ft[..., :5] = torch.einsum("bix,iox->box", h_ft[..., :5], w)
        spec = torch.fft.irfft(out_ft, n=24)
        skip = torch.nn.functional.conv1d(h, p[f"_fno_blocks.{i}._fno_skips.weight"])
        h = torch.nn.functional.gelu(spec + skip, approximate="tanh") + h
    h = h.permute(0, 2, 1) @ p["_projection.0.weight"].T
    ref = torch.nn.functional.gelu(h, approximate="tanh") @ p["_projection.2.weight"].T
    np.testing.assert_allclose(net(_t(x)).asnumpy(), ref.numpy(), rtol=1e-10, atol=1e-12)


def test_bad_input_names_shapes_and_arguments():
    with pytest.raises(ValueError, match=r"fewer than 2 \* n_modes\[0\] = 18.*n_modes\[0\]"):
        FNO2D(1, 1, [9, 4], [16, 16])
    with pytest.raises(ValueError, match=r"real FFT has only 9 frequencies.*n_modes\[0\] = 10"):
        FNO1D(1, 1, 10, 16)
    with pytest.raises(ValueError, match=r"n_modes .* and resolutions .* same length"):
        FNOBlocks(2, 2, [4, 4], 32)
    with pytest.raises(ValueError, match=r"FNO1D: n_modes must have 1 entries.*\[4, 4\]"):
        FNO1D(1, 1, [4, 4], 32)
    with pytest.raises(ValueError, match="n_modes must have 2 entries"):
        FNO2D(1, 1, [4, 4, 4], 32)
    with pytest.raises(TypeError, match="hidden_channels must be int"):
        FNO1D(1, 1, 4, 32, hidden_channels=2.5)
    with pytest.raises(ValueError, match="data_format must be 'channels_last' or"):
        FNO1D(1, 1, 4, 32, data_format="NCHW")
    with pytest.raises(ValueError, match="add_residual needs in_channels == out_channels"):
        FNOBlocks(2, 3, 4, 32, add_residual=True)
    net = FNO2D(3, 1, [4, 4], [16, 16], hidden_channels=4)
    bad = _t(np.zeros((2, 3, 16, 16), np.float32))
    with pytest.raises(ValueError, match=r"\(2, 3, 16, 16\).*in_channels=3.*channels_first"):
        net(bad)
    coarse = _t(np.zeros((2, 6, 16, 3), np.float32))
    with pytest.raises(ValueError, match=r"input grid \[6, 16\] has 6 points on spatial axis 0"):
        net(coarse)
    with pytest.raises(ValueError, match="has 3 axes"):
        net(_t(np.zeros((2, 16, 3), np.float32)))
    conv = SpectralConv1d(2, 2, 4, 16)
    with pytest.raises(ValueError, match=r"\(1, 3, 16\) is not \[..., in_channels=2"):
        conv(_t(np.zeros((1, 3, 16), np.float32)))


def test_positional_embedding_is_mindflow_grid():
    """Channels in + 2 for the lifting; the grid is linspace(0, 1, n) per axis (checked by
    a lifting that reads only the grid channels and identity everything else)."""
    net = FNO2D(
        1,
        2,
        [2, 2],
        [4, 6],
        hidden_channels=2,
        projection_channels=0,
        n_layers=0,
        fno_compute_dtype=F64,
        dft_compute_dtype=F64,
    )
    lift = np.zeros((2, 3))
    lift[0, 1] = lift[1, 2] = 1.0
    net._lifting[0].weight.set_data(_t(lift))
    net._projection[0].weight.set_data(_t(np.eye(2)))
    y = net(_t(np.ones((1, 4, 6, 1)))).asnumpy()[0]
    gx, gy = np.meshgrid(np.linspace(0, 1, 4), np.linspace(0, 1, 6), indexing="ij")
    np.testing.assert_allclose(y[..., 0], gx, atol=1e-12)
    np.testing.assert_allclose(y[..., 1], gy, atol=1e-12)


def test_checkpoint_round_trip_and_architecture_mismatch(tmp_path):
    net = FNO1D(1, 1, 8, 32, hidden_channels=4, projection_channels=8, n_layers=2)
    path = str(tmp_path / "fno.ckpt.h5")
    core.save_checkpoint(net, path)
    same = FNO1D(1, 1, 8, 32, hidden_channels=4, projection_channels=8, n_layers=2)
    core.load_param_into_net(same, core.load_checkpoint(path))
    x = _t(_band_limited(32).astype(np.float32))
    np.testing.assert_array_equal(same(x).asnumpy(), net(x).asnumpy())
    other = FNO1D(1, 1, 6, 32, hidden_channels=4, projection_channels=8, n_layers=2)
    with pytest.raises(ValueError, match=r"_fno_blocks.0._convs._w_re.*\(4, 4, 6\).*\(4, 4, 8\)"):
        core.load_param_into_net(other, core.load_checkpoint(path))
