"""FFTs: the three primitives from a table (value against numpy, abstract rule, gradcheck of
order 1 and 2 in both modes, vmap against a loop), then every public op of ``core.ops.fft``
against numpy (shapes, norms, odd/even lengths, n/s padding and truncation, dtypes), errors,
and the FNO spectral-layer pattern."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffsci import core
from diffsci.core import ops
from diffsci.core.ops import fft
from diffsci.core.primitive import ShapedArray
from diffsci.core.prims import fft as prims_fft
from diffsci.core.testing import gradcheck

from ._helpers import cnormal, normal

T = core.Tensor
NORMS = ("backward", "ortho", "forward")


class Case:
    def __init__(self, id, prim, arg, params, ref):
        self.id = id
        self.prim = prim
        self.arg = arg
        self.params = params
        self.ref = ref

    def make(self, seed=0):
        return self.arg(np.random.default_rng(seed))

    def fn(self, x):
        return self.prim(x, **self.params)


def _irfft_ref(axes, n, norm):
    def ref(x):
        s = [x.shape[a] for a in axes[:-1]] + [n]
        return np.fft.irfftn(x, s=s, axes=axes, norm=norm)

    return ref


TABLE = []
for norm in NORMS:
    for inverse in (False, True):
        npf = np.fft.ifftn if inverse else np.fft.fftn
        for shape, axes in [((5,), (0,)), ((3, 4), (1,)), ((3, 4), (0, 1)), ((4, 3, 2), (2, 0))]:
            TABLE.append(
                Case(
                    f"fft_{'inv' if inverse else 'fwd'}_{norm}_{shape}_{axes}",
                    prims_fft.fft,
                    cnormal(*shape),
                    {"axes": axes, "inverse": inverse, "norm": norm},
                    lambda x, axes=axes, norm=norm, npf=npf: npf(x, axes=axes, norm=norm),
                )
            )
    for shape, axes in [
        ((6,), (0,)),
        ((5,), (0,)),
        ((3, 4), (0, 1)),
        ((3, 5), (1, 0)),
        ((2, 3, 4), (1,)),
    ]:
        TABLE.append(
            Case(
                f"rfft_{norm}_{shape}_{axes}",
                prims_fft.rfft,
                normal(*shape),
                {"axes": axes, "norm": norm},
                lambda x, axes=axes, norm=norm: np.fft.rfftn(x, axes=axes, norm=norm),
            )
        )
    for n, shape, axes in [
        (6, (4,), (0,)),
        (7, (4,), (0,)),
        (1, (1,), (0,)),
        (2, (2,), (0,)),
        (6, (3, 4), (0, 1)),
        (5, (3, 3), (0, 1)),
        (4, (3, 2), (1, 0)),
        (3, (2, 3, 2), (2,)),
    ]:
        TABLE.append(
            Case(
                f"irfft_{norm}_n{n}_{shape}_{axes}",
                prims_fft.irfft,
                cnormal(*shape),
                {"axes": axes, "n": n, "norm": norm},
                _irfft_ref(axes, n, norm),
            )
        )
CASES = [pytest.param(c, id=c.id) for c in TABLE]
# order 2 is linear-in-linear (zero second derivative) but exercises the rules' own rules:
# one norm suffices there.
ORDER2 = [
    pytest.param(c, id=c.id)
    for c in TABLE
    if c.params["norm"] != "backward" or c.prim is prims_fft.irfft
]


@pytest.mark.parametrize("case", CASES)
def test_value_against_numpy(case):
    x = case.make()
    out = case.fn(T(x))
    ref = case.ref(x)
    assert out.shape == ref.shape and out.dtype == ref.dtype, (
        out.dtype,
        out.shape,
        ref.dtype,
        ref.shape,
    )
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", CASES)
def test_abstract_rule_matches_eager(case):
    x = T(case.make())
    out = case.fn(x)
    assert case.prim.abstract(ShapedArray(x.shape, x.dtype), **case.params) == ShapedArray(
        out.shape, out.dtype
    )


@pytest.mark.parametrize("case", CASES)
def test_gradcheck_order1(case):
    gradcheck(case.fn, [T(case.make())], order=1)


@pytest.mark.parametrize("case", ORDER2)
def test_gradcheck_order2(case):
    # through a nonlinearity, so that second derivatives are not all zero
    prim_out_complex = case.prim is not prims_fft.irfft

    def fn(x):
        y = case.fn(x * x)
        return y * y if prim_out_complex else ops.sin(y)

    gradcheck(fn, [T(case.make())], order=2)


@pytest.mark.parametrize("case", CASES)
def test_vmap_against_loop(case):
    examples = [case.make(seed) for seed in range(3)]
    ndim = examples[0].ndim
    for ax in sorted({0, 1, ndim} & set(range(ndim + 1))):
        out = core.vmap(case.fn, in_axes=ax)(T(np.stack(examples, axis=ax)))
        expected = np.stack([case.fn(T(x)).asnumpy() for x in examples])
        np.testing.assert_allclose(
            out.asnumpy(), expected, rtol=1e-12, atol=1e-12, err_msg=f"in_axes={ax}"
        )


# ---- the public ops against numpy ----------------------------------------------------------------
ONE_AXIS = ["fft", "ifft", "rfft", "irfft"]
MULTI_AXIS = ["fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn"]


def _input_for(name, x):
    return x if name.startswith("rfft") else x + 0.5j * x[::-1]


@settings(max_examples=15, deadline=None)
@given(
    shape=st.lists(st.integers(1, 6), min_size=1, max_size=3),
    name=st.sampled_from(ONE_AXIS),
    norm=st.sampled_from((None, *NORMS)),
    n=st.one_of(st.none(), st.integers(1, 9)),
    axis=st.integers(-3, 2),
    seed=st.integers(0, 2**16),
)
def test_one_axis_ops_against_numpy(shape, name, norm, n, axis, seed):
    if not -len(shape) <= axis < len(shape):
        axis = -1
    if name == "irfft" and n is None and shape[axis] == 1:
        n = 1  # numpy's default n = 2 * (1 - 1) = 0 is an error (tested below)
    x = _input_for(name, np.random.default_rng(seed).standard_normal(shape))
    got = getattr(fft, name)(T(x), n=n, axis=axis, norm=norm)
    ref = getattr(np.fft, name)(x, n=n, axis=axis, norm=norm)
    assert got.shape == ref.shape and got.dtype == ref.dtype
    np.testing.assert_allclose(got.asnumpy(), ref, rtol=1e-10, atol=1e-12)


@settings(max_examples=15, deadline=None)
@given(
    shape=st.lists(st.integers(1, 5), min_size=2, max_size=4),
    name=st.sampled_from(MULTI_AXIS),
    norm=st.sampled_from((None, *NORMS)),
    data=st.data(),
    seed=st.integers(0, 2**16),
)
def test_multi_axis_ops_against_numpy(shape, name, norm, data, seed):
    ndim = len(shape)
    if name.endswith("2"):
        axes = data.draw(st.sampled_from([(-2, -1), (0, 1), (-1, -2), (ndim - 1, 0)]))
    else:
        axes = data.draw(
            st.one_of(
                st.none(), st.permutations(range(ndim)).map(lambda p: tuple(p[: max(1, ndim - 1)]))
            )
        )
    axes_used = axes if axes is not None else tuple(range(ndim))
    s = data.draw(
        st.one_of(
            st.none(), st.lists(st.integers(1, 7), min_size=len(axes_used), max_size=len(axes_used))
        )
    )
    x = _input_for(name, np.random.default_rng(seed).standard_normal(shape))
    if name.startswith("irfft") and s is None and x.shape[axes_used[-1]] == 1:
        s = [x.shape[a] for a in axes_used[:-1]] + [1]
    kw = {"s": s, "axes": axes_used, "norm": norm}  # numpy warns when s is given without axes
    got = getattr(fft, name)(
        T(x), **({"s": s, "axes": axes, "norm": norm} if name.endswith("n") else kw)
    )
    ref = getattr(np.fft, name)(x, **kw)
    assert got.shape == ref.shape and got.dtype == ref.dtype
    np.testing.assert_allclose(got.asnumpy(), ref, rtol=1e-10, atol=1e-12)


def test_s_without_axes_takes_the_last_axes():
    x = np.random.default_rng(0).standard_normal((2, 3, 4))
    np.testing.assert_allclose(
        fft.fftn(T(x), s=(5, 2)).asnumpy(), np.fft.fftn(x, s=(5, 2), axes=(1, 2)), rtol=1e-12
    )
    np.testing.assert_allclose(
        fft.irfftn(T(x + 0j), s=(3, 6)).asnumpy(),
        np.fft.irfftn(x, s=(3, 6), axes=(1, 2)),
        rtol=1e-12,
        atol=1e-14,
    )


@pytest.mark.parametrize("n", [6, 7])
@pytest.mark.parametrize("norm", NORMS)
def test_round_trips(n, norm):
    x = np.random.default_rng(1).standard_normal((3, n))
    np.testing.assert_allclose(
        fft.irfft(fft.rfft(T(x), norm=norm), n=n, norm=norm).asnumpy(), x, atol=1e-12
    )
    np.testing.assert_allclose(
        fft.ifft2(fft.fft2(T(x), norm=norm), norm=norm).asnumpy(), x, atol=1e-12
    )
    np.testing.assert_allclose(
        fft.irfft2(fft.rfft2(T(x), norm=norm), s=x.shape, norm=norm).asnumpy(), x, atol=1e-12
    )


@pytest.mark.parametrize("name", ONE_AXIS + MULTI_AXIS)
def test_float32_gives_complex64_and_float32(name):
    x = np.random.default_rng(2).standard_normal((4, 6)).astype(np.float32)
    x = _input_for(name, x).astype(np.complex64 if not name.startswith("rfft") else np.float32)
    got = getattr(fft, name)(T(x))
    ref = getattr(np.fft, name)(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64))
    want = np.float32 if name.startswith("irfft") else np.complex64
    assert got.dtype == want
    np.testing.assert_allclose(got.asnumpy(), ref, rtol=1e-5, atol=1e-5)


def test_integer_and_half_inputs():
    x = np.arange(6)
    assert fft.fft(T(x)).dtype == np.complex64
    assert fft.rfft(T(x)).dtype == np.complex64
    np.testing.assert_allclose(fft.rfft(T(x)).asnumpy(), np.fft.rfft(x), rtol=1e-6, atol=1e-5)
    assert fft.rfft(T(x.astype(np.float16))).dtype == np.complex64


def test_freq_and_shift_helpers():
    np.testing.assert_allclose(fft.fftfreq(7, d=0.5).asnumpy(), np.fft.fftfreq(7, d=0.5), rtol=1e-6)
    np.testing.assert_allclose(
        fft.rfftfreq(8, d=0.1, dtype=core.float64).asnumpy(), np.fft.rfftfreq(8, d=0.1)
    )
    x = np.arange(24.0).reshape(4, 6)
    np.testing.assert_array_equal(fft.fftshift(T(x)).asnumpy(), np.fft.fftshift(x))
    np.testing.assert_array_equal(fft.fftshift(T(x), axes=1).asnumpy(), np.fft.fftshift(x, axes=1))
    np.testing.assert_array_equal(
        fft.ifftshift(T(np.arange(5.0))).asnumpy(), np.fft.ifftshift(np.arange(5.0))
    )


# ---- derivatives of the ops (padding, truncation, casts) --------------------------------------------
@pytest.mark.parametrize(
    "fn",
    [
        lambda x: fft.fft(x, n=7),
        lambda x: fft.ifft(x, n=3, norm="ortho"),
        lambda x: fft.rfft(x, n=8),
        lambda x: fft.rfft(x, n=3, norm="forward"),
        lambda x: fft.irfft(fft.rfft(x), n=9),
        lambda x: fft.irfft(fft.fft(x), n=3),
        lambda x: fft.rfft2(x, s=(3, 7), norm="ortho"),
        lambda x: fft.irfft2(fft.fft2(x), s=(5, 4)),
        lambda x: fft.fftn(x, axes=(0,)),
        lambda x: fft.irfftn(fft.rfftn(x, axes=(1, 0)), axes=(1, 0), s=(4, 5)),
    ],
    ids=[
        "fft_pad",
        "ifft_trunc",
        "rfft_pad",
        "rfft_trunc",
        "irfft_pad",
        "irfft_of_complex",
        "rfft2_s",
        "irfft2_s",
        "fftn_real_input",
        "irfftn_axes",
    ],
)
def test_op_gradients(fn):
    x = np.random.default_rng(3).standard_normal((4, 5))
    gradcheck(fn, [T(x)], order=1)
    gradcheck(lambda v: fn(ops.sin(v)), [T(x)], order=2)


def test_complex_input_gradients():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    gradcheck(lambda z: fft.irfft2(z, s=(3, 5)), [T(x)], order=2)
    gradcheck(lambda z: fft.fft2(z * z, norm="ortho"), [T(x)], order=2)


def test_jacobians_forward_equal_reverse():
    x = T(np.random.default_rng(5).standard_normal((3, 4)))
    for f in (lambda v: ops.real(fft.rfft2(v)), lambda v: fft.irfft(fft.rfft(v, n=6), n=5)):
        np.testing.assert_allclose(
            core.jacfwd(f)(x).asnumpy(), core.jacrev(f)(x).asnumpy(), rtol=1e-12, atol=1e-12
        )


def test_vmap_of_ops_with_padding_and_of_grad():
    rng = np.random.default_rng(6)
    xs = rng.standard_normal((3, 4, 5))
    f = lambda v: fft.irfft2(fft.rfft2(v, s=(6, 7)) * 2.0, s=(4, 5))  # noqa: E731
    out = core.vmap(f, in_axes=1)(T(np.moveaxis(xs, 0, 1)))
    np.testing.assert_allclose(
        out.asnumpy(), np.stack([f(T(x)).asnumpy() for x in xs]), rtol=1e-12, atol=1e-12
    )
    loss = lambda v: (ops.abs(fft.rfft2(v)) ** 2).sum()  # noqa: E731
    g = core.vmap(core.grad(loss))(T(xs))
    np.testing.assert_allclose(
        g.asnumpy(), np.stack([core.grad(loss)(T(x)).asnumpy() for x in xs]), rtol=1e-12
    )


def test_parseval_gradient():
    # sum |rfft2_ortho(x)|^2 counts the doubled bins once: with the weights it equals sum x^2,
    # whose gradient is 2x
    x = np.random.default_rng(7).standard_normal((4, 6))
    w = np.full(4, 2.0)
    w[0] = w[-1] = 1.0

    def energy(v):
        return (ops.abs(fft.rfft2(v, norm="ortho")) ** 2 * T(w)).sum()

    np.testing.assert_allclose(float(energy(T(x)).asnumpy()), (x**2).sum(), rtol=1e-12)
    np.testing.assert_allclose(core.grad(energy)(T(x)).asnumpy(), 2 * x, rtol=1e-10, atol=1e-12)


# ---- the FNO spectral layer -------------------------------------------------------------------------
def _spectral_layer(x, w, modes):
    """x [b, h, w] real, w [m0, m1] complex: keep the low modes of rfft2(x), scale them, pad
    back and invert (the spectral convolution of a Fourier neural operator, Li et al. 2021)."""
    h, wdt = x.shape[-2], x.shape[-1]
    x_ft = fft.rfft2(x)  # [b, h, w//2+1]
    low = x_ft[:, : modes[0], : modes[1]] * w  # [b, m0, m1]
    out_ft = ops.pad(low, ((0, 0), (0, h - modes[0]), (0, wdt // 2 + 1 - modes[1])))
    return fft.irfft2(out_ft, s=(h, wdt))  # [b, h, w]


@pytest.mark.parametrize("width", [6, 7])
def test_fno_spectral_layer_weight_gradients(width):
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 5, width))
    w = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    target = rng.standard_normal((2, 5, width))

    def loss(w_re, w_im):
        y = _spectral_layer(T(x), ops.complex(w_re, w_im), (3, 3))
        return ((y - T(target)) ** 2).mean()

    g_re, g_im = core.grad(loss, grad_position=(0, 1))(T(w.real), T(w.imag))
    eps = 1e-6
    num_re, num_im = np.zeros((3, 3)), np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            e = np.zeros((3, 3))
            e[i, j] = eps
            num_re[i, j] = (
                float(loss(T(w.real + e), T(w.imag)).asnumpy())
                - float(loss(T(w.real - e), T(w.imag)).asnumpy())
            ) / (2 * eps)
            num_im[i, j] = (
                float(loss(T(w.real), T(w.imag + e)).asnumpy())
                - float(loss(T(w.real), T(w.imag - e)).asnumpy())
            ) / (2 * eps)
    np.testing.assert_allclose(g_re.asnumpy(), num_re, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(g_im.asnumpy(), num_im, rtol=1e-6, atol=1e-9)
    # the same with one complex weight tensor: JAX's convention gives d/dre - i d/dim
    g = core.grad(lambda wc: ((_spectral_layer(T(x), wc, (3, 3)) - T(target)) ** 2).mean())(T(w))
    np.testing.assert_allclose(g.asnumpy(), num_re - 1j * num_im, rtol=1e-6, atol=1e-9)
    gradcheck(lambda xx, wc: _spectral_layer(xx, wc, (3, 3)), [T(x), T(w)], order=2)


def test_fno_spectral_layer_float32():
    rng = np.random.default_rng(9)
    x = rng.standard_normal((2, 8, 8)).astype(np.float32)
    w = (rng.standard_normal((4, 4)) + 1j * rng.standard_normal((4, 4))).astype(np.complex64)
    g_x, g_w = core.grad(
        lambda a, b: (_spectral_layer(a, b, (4, 4)) ** 2).sum(), grad_position=(0, 1)
    )(T(x), T(w))
    assert g_x.dtype == np.float32 and g_w.dtype == np.complex64
    g64 = core.grad(lambda a, b: (_spectral_layer(a, b, (4, 4)) ** 2).sum(), grad_position=(0, 1))(
        T(x.astype(np.float64)), T(w.astype(np.complex128))
    )
    np.testing.assert_allclose(g_x.asnumpy(), g64[0].asnumpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(g_w.asnumpy(), g64[1].asnumpy(), rtol=1e-4, atol=1e-4)


# ---- errors ---------------------------------------------------------------------------------------
def test_errors_name_the_op_and_shapes():
    x = T(np.ones((3, 4)))
    with pytest.raises(
        TypeError, match=r"rfft: input must be real, got complex128 \(shape \(3, 4\)\)"
    ):
        fft.rfft(T(np.ones((3, 4)) + 0j))
    with pytest.raises(TypeError, match=r"rfftn: input must be real"):
        fft.rfftn(T(np.ones((3, 4)) + 0j))
    with pytest.raises(ValueError, match=r"fft2: norm must be one of .*'sideways'"):
        fft.fft2(x, norm="sideways")
    with pytest.raises(ValueError, match=r"fft: invalid number of data points 0"):
        fft.fft(x, n=0)
    with pytest.raises(
        ValueError,
        match=r"irfft: invalid number of data points 0 from 1 bins on axis 1 of shape \(3, 1\)",
    ):
        fft.irfft(T(np.ones((3, 1)) + 0j))
    with pytest.raises(ValueError, match=r"ifft: axis 2 out of range .*\(3, 4\)"):
        fft.ifft(x, axis=2)
    with pytest.raises(ValueError, match=r"fftn: repeated axis in \(1, 1\)"):
        fft.fftn(x, axes=(1, -1))
    with pytest.raises(
        ValueError, match=r"rfft2: s=\[3\] and axes=\(0, 1\) have different lengths"
    ):
        fft.rfft2(x, s=(3,))


def test_abstract_rules_reject_bad_arguments():
    c = ShapedArray((3, 4), np.complex128)
    # fewer bins than n//2+1 are a truncated spectrum (allowed); more are not
    with pytest.raises(
        ValueError, match=r"irfft: output length 5 needs 1 to 3 bins on axis 1, got shape \(3, 4\)"
    ):
        prims_fft.irfft.abstract(c, axes=(1,), n=5, norm="backward")
    with pytest.raises(ValueError, match=r"rfft: bins=4 must be in \[1, 3\]"):
        prims_fft.rfft.abstract(ShapedArray((5,), np.float64), axes=(0,), norm="ortho", bins=4)
    with pytest.raises(ValueError, match=r"fft: axes \(0, 2\) are not distinct axes .*\(3, 4\)"):
        prims_fft.fft.abstract(c, axes=(0, 2), inverse=False, norm="backward")
    with pytest.raises(TypeError, match=r"fft: input must be complex, got float64"):
        prims_fft.fft.abstract(
            ShapedArray((3,), np.float64), axes=(0,), inverse=False, norm="backward"
        )
    with pytest.raises(ValueError, match=r"rfft: norm must be one of"):
        prims_fft.rfft.abstract(ShapedArray((3,), np.float64), axes=(0,), norm=None)


def test_jit_of_grad_matches_eager():
    rng = np.random.default_rng(10)
    x = rng.standard_normal((2, 6, 8))
    w = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))

    def loss(x, w):
        spectral = (_spectral_layer(x, w, (3, 3)) ** 2).sum()
        return spectral + ops.abs(fft.fft(x, n=9, norm="ortho")).sum()

    g = core.grad(loss, grad_position=(0, 1))
    for eager, jitted in zip(g(T(x), T(w)), core.jit(g)(T(x), T(w))):
        np.testing.assert_allclose(jitted.asnumpy(), eager.asnumpy(), rtol=1e-12, atol=1e-12)


# ---- truncated half spectra (rfft(..., bins=m), irfft of m < n//2+1 bins) ---------------------
@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
def test_truncated_spectrum_matches_numpy(norm):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((3, 4, 12))
    got = fft.rfft(T(x), bins=4, norm=norm).asnumpy()
    np.testing.assert_allclose(got, np.fft.rfft(x, norm=norm)[..., :4], rtol=1e-12, atol=1e-12)
    spec = np.fft.rfft(x)[..., :4]
    for n in (12, 9, 7):  # numpy's irfft zero-pads the missing high bins
        np.testing.assert_allclose(
            fft.irfft(T(spec), n=n, norm=norm).asnumpy(),
            np.fft.irfft(spec, n=n, norm=norm),
            rtol=1e-12,
            atol=1e-12,
        )
    jitted = core.jit(lambda v: fft.irfft(fft.rfft(v, bins=4), n=12))(T(x)).asnumpy()
    np.testing.assert_allclose(jitted, np.fft.irfft(spec, n=12), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match=r"rfft: bins must be an int in \[1, 7\].*got 8"):
        fft.rfft(T(x), bins=8)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: fft.rfft(x, bins=2),
        lambda x: fft.rfft(x, bins=3, norm="ortho"),  # all bins (n = 5)
        lambda x: fft.irfft(fft.rfft(x, bins=2), n=9),
        lambda x: fft.irfft(fft.rfft(x, bins=2, norm="forward"), n=4, norm="forward"),
        lambda x: fft.irfft(fft.fft(x)[..., :2], n=8),
    ],
    ids=["rfft_bins", "rfft_all_bins", "irfft_of_bins", "irfft_of_bins_even", "irfft_few_bins"],
)
def test_truncated_spectrum_gradients(fn):
    x = np.random.default_rng(7).standard_normal((4, 5))
    gradcheck(fn, [T(x)], order=1)
    gradcheck(lambda v: fn(ops.sin(v)), [T(x)], order=2)
    f = lambda v: ops.real(fn(v)) if fn(v).dtype.kind == "c" else fn(v)  # noqa: E731
    np.testing.assert_allclose(
        core.jacfwd(f)(T(x)).asnumpy(), core.jacrev(f)(T(x)).asnumpy(), rtol=1e-12, atol=1e-12
    )
    batched = core.vmap(fn)(T(np.stack([x, 2 * x]))).asnumpy()
    np.testing.assert_allclose(batched[1], fn(T(2 * x)).asnumpy(), rtol=1e-12, atol=1e-12)
