"""MindFlow's dft1/2/3 and idft1/2/3 cells against explicit DFT-matrix sums (numpy), the
round trip, the airfoil FNO's use of dft2/idft2 against SpectralConv2d, gradients, bad input."""

import numpy as np
import pytest

from diffsci import core
from diffsci.core.testing import gradcheck
from diffsci.mindflow.cell.neural_operators.dft import (
    SpectralConv2dDft,
    dft1,
    dft2,
    dft3,
    idft1,
    idft2,
    idft3,
)

F64 = core.float64


def _t(a):
    return core.tensor(np.asarray(a))


def _dft_matrix(n):
    j = np.arange(n)
    return np.exp(-2j * np.pi * np.outer(j, j) / n) / np.sqrt(n)  # scipy.linalg.dft(n, "sqrtn")


def numpy_dft(z, modes):
    """Forward by matrices: full 'sqrtn' DFT on each axis, keep 0..m-1 (last axis) or both
    ends (other axes, zeros between)."""
    d = len(modes)
    for k in range(d):
        axis = z.ndim - d + k
        n = z.shape[axis]
        z = np.moveaxis(np.moveaxis(z, axis, -1) @ _dft_matrix(n), -1, axis)
        m = modes[k]
        if k == d - 1:
            z = np.take(z, np.arange(m), axis=axis)
        else:
            keep = np.zeros(n, bool)
            keep[:m] = keep[n - m :] = True
            z = z * keep.reshape([-1 if a == axis else 1 for a in range(z.ndim)])
    return z


def numpy_idft(z, shape, modes):
    """Inverse by explicit sums: leading axes from the rows 0..m-1 and -m..-1; the last axis
    as X_0 + 2 sum X_k e^{+}, the Nyquist term once."""
    d = len(modes)
    for k in range(d - 1):
        axis = z.ndim - d + k
        n, m = shape[k], modes[k]
        keep = np.zeros(n, bool)
        keep[:m] = keep[n - m :] = True
        z = z * keep.reshape([-1 if a == axis else 1 for a in range(z.ndim)])
        z = np.moveaxis(np.moveaxis(z, axis, -1) @ _dft_matrix(n).conj().T, -1, axis)
    n, m = shape[-1], modes[-1]
    c = np.full(m, 2.0)
    c[0] = 1.0
    if m == n // 2 + 1:
        c[-1] = 1.0
    basis = np.exp(2j * np.pi * np.outer(np.arange(m), np.arange(n)) / n) / np.sqrt(n)  # [m, n]
    return (z * c) @ basis


@pytest.mark.parametrize(
    "make, inv_make, shape, modes",
    [
        (dft1, idft1, (8,), 3),
        (dft1, idft1, (8,), 5),  # the Nyquist mode included
        (dft2, idft2, (6, 8), (2, 4)),
        (dft3, idft3, (4, 6, 4), (2, 3, 3)),
    ],
)
def test_dft_and_idft_match_dft_matrices(make, inv_make, shape, modes):
    rng = np.random.default_rng(0)
    mt = (modes,) if isinstance(modes, int) else modes
    z = rng.standard_normal((2, *shape)) + 1j * rng.standard_normal((2, *shape))
    re, im = make(shape, modes, compute_dtype=F64)((_t(z.real), _t(z.imag)))
    ref = numpy_dft(z, mt)
    np.testing.assert_allclose(re.asnumpy() + 1j * im.asnumpy(), ref, atol=1e-12)
    spec = rng.standard_normal(ref.shape) + 1j * rng.standard_normal(ref.shape)
    re, im = inv_make(shape, modes, compute_dtype=F64)((_t(spec.real), _t(spec.imag)))
    np.testing.assert_allclose(
        re.asnumpy() + 1j * im.asnumpy(), numpy_idft(spec, shape, mt), atol=1e-12
    )


def test_round_trip_of_a_band_limited_real_signal():
    i, j = np.meshgrid(np.arange(8), np.arange(8), indexing="ij")
    x = np.cos(2 * np.pi * (i - 2 * j) / 8) + 0.5 * np.sin(2 * np.pi * 3 * i / 8)
    spec = dft2((8, 8), (4, 3), compute_dtype=F64)((_t(x), _t(np.zeros_like(x))))
    back, _ = idft2((8, 8), (4, 3), compute_dtype=F64)(spec)
    np.testing.assert_allclose(back.asnumpy(), x, atol=1e-12)


def test_airfoil_fno_pattern_equals_spectral_conv2d():
    """MindFlow's airfoil src/fno2d.py: dft2, corner products with (w_re, w_im), zeros in the
    middle rows, idft2 (real part); the same weights in SpectralConv2d give the same output."""
    rng = np.random.default_rng(1)
    n1, n2, m1, m2, c = 8, 6, 2, 3, 3
    conv = SpectralConv2dDft(c, c, [m1, m2], [n1, n2], compute_dtype=F64)
    x = rng.standard_normal((2, c, n1, n2))
    re, im = dft2((n1, n2), (m1, m2), compute_dtype=F64)((_t(x), _t(np.zeros_like(x))))
    z = re.asnumpy() + 1j * im.asnumpy()
    w1 = conv._w_re1.asnumpy() + 1j * conv._w_im1.asnumpy()
    w2 = conv._w_re2.asnumpy() + 1j * conv._w_im2.asnumpy()
    out = np.zeros((2, c, n1, m2), complex)
    out[:, :, :m1] = np.einsum("bixy,ioxy->boxy", z[:, :, :m1], w1)
    out[:, :, -m1:] = np.einsum("bixy,ioxy->boxy", z[:, :, -m1:], w2)
    y, _ = idft2((n1, n2), (m1, m2), compute_dtype=F64)((_t(out.real), _t(out.imag)))
    np.testing.assert_allclose(y.asnumpy(), conv(_t(x)).asnumpy(), atol=1e-12)


def test_gradients_and_dtypes():
    rng = np.random.default_rng(2)
    f = dft2((4, 6), (2, 3), compute_dtype=F64)
    g = idft2((4, 6), (2, 3), compute_dtype=F64)
    x = (_t(rng.standard_normal((4, 6))), _t(rng.standard_normal((4, 6))))
    assert gradcheck(lambda a, b: f((a, b)), x)
    s = (_t(rng.standard_normal((4, 3))), _t(rng.standard_normal((4, 3))))
    assert gradcheck(lambda a, b: g((a, b)), s)
    re, im = dft1((8,), 2)((_t(np.ones(8, np.float32)), _t(np.zeros(8, np.float32))))
    assert re.dtype == im.dtype == core.float32 and re.shape == (2,)


def test_bad_arguments():
    with pytest.raises(ValueError, match=r"modes\[0\] must be in \[1, 2\] for shape\[0\] = 4"):
        dft2((4, 8), (3, 2))
    with pytest.raises(ValueError, match=r"modes\[1\] must be in \[1, 5\] for shape\[1\] = 8"):
        idft2((4, 8), (2, 6))
    with pytest.raises(ValueError, match="shape must be even"):
        dft1((7,), 2)
    with pytest.raises(TypeError, match="shape must be tuple"):
        dft2([4, 4], (1, 1))
    with pytest.raises(ValueError, match=r"lengths \[4, 6\] on dim \[-2, -1\], expected \[4, 8\]"):
        dft2((4, 8), (2, 2))((_t(np.zeros((4, 6))), _t(np.zeros((4, 6)))))
