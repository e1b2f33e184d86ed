"""Convolutions, transposed convolutions, unfold/fold and pooling: values against direct numpy
loops (and scipy / PyTorch), adjoint identities, derivatives of order 1 and 2, vmap, errors."""

import itertools

import numpy as np
import pytest
import scipy.signal
from hypothesis import given, settings
from hypothesis import strategies as st

from diffsci import core
from diffsci.core import ops
from diffsci.core.prims import conv as prims_conv
from diffsci.core.testing import gradcheck

from ._helpers import ref_conv, ref_conv_transpose


def _rng(seed=0):
    return np.random.default_rng(seed)


def _t(a):
    return core.Tensor(np.asarray(a))


# ---- direct references: loops over kernel offsets and groups, never im2col -------------------
# (ref_conv and ref_conv_transpose are in _helpers, shared with tests/core/nn/test_layers.py)
def ref_pool(x, kernel, stride, pads, reducer, fill, dilation=None):
    nsp = len(kernel)
    dilation = dilation or (1,) * nsp
    xp = np.pad(x, ((0, 0),) * (x.ndim - nsp) + tuple(pads), constant_values=fill)
    out = [
        (n - d * (k - 1) - 1) // s + 1
        for n, k, s, d in zip(xp.shape[-nsp:], kernel, stride, dilation)
    ]
    windows = []
    for offs in itertools.product(*[range(k) for k in kernel]):
        sl = tuple(
            slice(o * d, o * d + s * (m - 1) + 1, s)
            for o, d, s, m in zip(offs, dilation, stride, out)
        )
        windows.append(xp[(Ellipsis, *sl)])
    return reducer(np.stack(windows), axis=0)


# ---- unfold / fold primitives -------------------------------------------------------------------
PRIM_CASES = [
    # lead shape, spatial, kernel, stride, dilation
    ((2, 3), (7,), (3,), (2,), (1,)),
    ((1, 2), (6, 5), (2, 3), (1, 2), (2, 1)),
    ((2,), (5, 6), (3, 3), (2, 2), (1, 1)),  # a single leading axis
    ((1, 1), (4, 5, 4), (2, 2, 2), (1, 2, 1), (1, 1, 2)),
    ((1, 2), (6, 6), (2, 2), (2, 2), (1, 1)),  # non-overlapping windows: fold's fast path
]


@pytest.mark.parametrize("lead,spatial,kernel,stride,dilation", PRIM_CASES)
def test_unfold_values_and_fold_adjoint(lead, spatial, kernel, stride, dilation):
    rng = _rng()
    x = rng.standard_normal(lead + spatial)
    cols = prims_conv.unfold(_t(x), kernel=kernel, stride=stride, dilation=dilation).asnumpy()
    out = [(n - d * (k - 1) - 1) // s + 1 for n, k, s, d in zip(spatial, kernel, stride, dilation)]
    assert cols.shape == lead + kernel + tuple(out)
    for offs in itertools.product(*[range(k) for k in kernel]):
        for pos in itertools.product(*[range(o) for o in out]):
            src = tuple(p * s + o * d for p, s, o, d in zip(pos, stride, offs, dilation))
            np.testing.assert_array_equal(cols[(Ellipsis, *offs, *pos)], x[(Ellipsis, *src)])
    # fold is the adjoint: <unfold(x), c> == <x, fold(c)>
    c = rng.standard_normal(cols.shape)
    folded = prims_conv.fold(
        _t(c), spatial=spatial, kernel=kernel, stride=stride, dilation=dilation
    ).asnumpy()
    assert folded.shape == x.shape
    np.testing.assert_allclose(np.sum(cols * c), np.sum(x * folded), rtol=1e-12)


@pytest.mark.parametrize("lead,spatial,kernel,stride,dilation", PRIM_CASES)
def test_abstract_rules_match_eager(lead, spatial, kernel, stride, dilation):
    params = dict(kernel=kernel, stride=stride, dilation=dilation)
    x = np.zeros(lead + spatial, np.float32)
    cols = prims_conv.unfold(_t(x), **params)
    aval = prims_conv.unfold.abstract(core.primitive.ShapedArray(x.shape, x.dtype), **params)
    assert (aval.shape, aval.dtype) == (cols.shape, cols.dtype)
    back = prims_conv.fold(cols, spatial=spatial, **params)
    aval = prims_conv.fold.abstract(
        core.primitive.ShapedArray(cols.shape, cols.dtype), spatial=spatial, **params
    )
    assert (aval.shape, aval.dtype) == (back.shape, back.dtype) == (x.shape, x.dtype)


def test_fold_matches_scatter_loop():
    rng = _rng(1)
    kernel, stride, dilation, spatial = (2, 3), (1, 2), (2, 1), (6, 7)
    out = [(n - d * (k - 1) - 1) // s + 1 for n, k, s, d in zip(spatial, kernel, stride, dilation)]
    c = rng.standard_normal((2, 3, *kernel, *out))
    ref = np.zeros((2, 3, *spatial))
    for i, j, p, q in itertools.product(range(2), range(3), range(out[0]), range(out[1])):
        ref[..., p * stride[0] + i * dilation[0], q * stride[1] + j * dilation[1]] += c[
            ..., i, j, p, q
        ]
    got = prims_conv.fold(
        _t(c), spatial=spatial, kernel=kernel, stride=stride, dilation=dilation
    ).asnumpy()
    np.testing.assert_allclose(got, ref, rtol=1e-12)


@pytest.mark.parametrize("lead,spatial,kernel,stride,dilation", PRIM_CASES[:3])
def test_unfold_fold_gradcheck(lead, spatial, kernel, stride, dilation):
    rng = _rng(2)
    params = dict(kernel=kernel, stride=stride, dilation=dilation)
    x = rng.standard_normal(lead + spatial)
    gradcheck(lambda a: prims_conv.unfold(a, **params) ** 2, [x], order=2)
    cols = prims_conv.unfold(_t(x), **params).asnumpy()
    gradcheck(
        lambda c: prims_conv.fold(c, spatial=spatial, **params) ** 2,
        [rng.standard_normal(cols.shape)],
        order=2,
    )


def test_unfold_fold_vmap():
    rng = _rng(3)
    params = dict(kernel=(2, 2), stride=(2, 1), dilation=(1, 2))
    x = rng.standard_normal((2, 3, 5, 6))  # batch on axis 1
    got = core.vmap(lambda a: prims_conv.unfold(a, **params), in_axes=1)(_t(x)).asnumpy()
    ref = np.stack([prims_conv.unfold(_t(x[:, i]), **params).asnumpy() for i in range(3)])
    np.testing.assert_allclose(got, ref)
    c = rng.standard_normal((4, 2, 2, 2, 2, 2))
    got = core.vmap(lambda a: prims_conv.fold(a, spatial=(4, 4), **params))(_t(c)).asnumpy()
    ref = np.stack(
        [prims_conv.fold(_t(c[i]), spatial=(4, 4), **params).asnumpy() for i in range(4)]
    )
    np.testing.assert_allclose(got, ref)


def test_unfold_shape_errors_name_the_op():
    with pytest.raises(ValueError, match=r"unfold.*larger than"):
        prims_conv.unfold(_t(np.zeros((1, 1, 2, 2))), kernel=(3, 3), stride=(1, 1), dilation=(1, 1))
    with pytest.raises(ValueError, match="unfold"):
        prims_conv.unfold.abstract(
            core.primitive.ShapedArray((4,), np.float32),
            kernel=(2, 2),
            stride=(1, 1),
            dilation=(1, 1),
        )
    with pytest.raises(ValueError, match=r"fold: cols of shape \(1, 2, 2, 2, 3\)"):
        prims_conv.fold.abstract(
            core.primitive.ShapedArray((1, 2, 2, 2, 3), np.float32),
            spatial=(4, 4),
            kernel=(2, 2),
            stride=(1, 1),
            dilation=(1, 1),
        )


def test_unfold_and_fold_ops_torch_layout():
    rng = _rng(4)
    x = rng.standard_normal((2, 3, 6, 5))
    cols = ops.unfold(_t(x), (2, 3), dilation=(2, 1), padding=1, stride=(1, 2)).asnumpy()
    ref = prims_conv.unfold(
        _t(np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))),
        kernel=(2, 3),
        stride=(1, 2),
        dilation=(2, 1),
    )
    np.testing.assert_array_equal(cols, ref.asnumpy().reshape(2, 18, -1))
    c = rng.standard_normal(cols.shape)
    back = ops.fold(_t(c), (6, 5), (2, 3), dilation=(2, 1), padding=1, stride=(1, 2)).asnumpy()
    np.testing.assert_allclose(np.sum(cols * c), np.sum(x * back), rtol=1e-12)


# ---- convolution ---------------------------------------------------------------------------------
CONV_CASES = [
    # x shape, weight shape, kwargs
    ((2, 3, 9), (4, 3, 3), dict(stride=2, padding=1)),
    ((2, 4, 10), (6, 2, 2), dict(dilation=3, groups=2, padding=(2,))),
    ((1, 2, 8), (2, 2, 3), dict(padding="same", padding_mode="reflect")),
    ((2, 2, 7, 6), (4, 2, 3, 2), dict(stride=(2, 1), padding=((1, 2), (0, 1)), dilation=(1, 2))),
    ((1, 4, 6, 7), (4, 1, 3, 3), dict(groups=4, padding="same")),  # depthwise
    ((2, 2, 5, 5), (3, 2, 1, 1), dict()),  # 1x1: no window copy
    ((1, 2, 6, 6), (2, 2, 2, 2), dict(padding="valid", stride=2, padding_mode="circular")),
    ((1, 2, 5, 6), (2, 2, 3, 3), dict(padding=1, padding_mode="replicate", stride=(1, 2))),
    (
        (1, 2, 5, 4, 6),
        (2, 1, 2, 3, 2),
        dict(groups=2, stride=(1, 2, 2), padding=(1, 0, 1), dilation=(2, 1, 1)),
    ),
    ((2, 3, 4, 4), (2, 3, 3, 3), dict(padding="same", stride=2)),  # TF/MindSpore 'same' with stride
]
_CONV = {3: ops.conv1d, 4: ops.conv2d, 5: ops.conv3d}


def _ref_pads(x_shape, w_shape, kw):
    nsp = len(x_shape) - 2
    padding = kw.get("padding", 0)
    stride = kw.get("stride", 1)
    dilation = kw.get("dilation", 1)
    stride = (stride,) * nsp if isinstance(stride, int) else stride
    dilation = (dilation,) * nsp if isinstance(dilation, int) else dilation
    if padding == "valid":
        return ((0, 0),) * nsp
    if padding == "same":
        pads = []
        for n, k, s, d in zip(x_shape[2:], w_shape[2:], stride, dilation):
            total = max((-(-n // s) - 1) * s + d * (k - 1) + 1 - n, 0)
            pads.append((total // 2, total - total // 2))
        return tuple(pads)
    if isinstance(padding, int):
        return ((padding, padding),) * nsp
    return tuple((p, p) if isinstance(p, int) else p for p in padding)


@pytest.mark.parametrize("x_shape,w_shape,kw", CONV_CASES)
def test_conv_matches_direct_loop(x_shape, w_shape, kw):
    rng = _rng(5)
    x, w, b = (
        rng.standard_normal(x_shape),
        rng.standard_normal(w_shape),
        rng.standard_normal(w_shape[0]),
    )
    got = _CONV[len(x_shape)](_t(x), _t(w), _t(b), **kw).asnumpy()
    ref = ref_conv(
        x,
        w,
        b,
        kw.get("stride", 1),
        _ref_pads(x_shape, w_shape, kw),
        kw.get("dilation", 1),
        kw.get("groups", 1),
        kw.get("padding_mode", "zeros"),
    )
    assert got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-12)


def test_conv_same_keeps_size_at_stride_one():
    rng = _rng(6)
    for k, d in [(3, 1), (4, 1), (2, 3)]:
        x = rng.standard_normal((1, 2, 7, 8))
        w = rng.standard_normal((3, 2, k, k))
        assert ops.conv2d(_t(x), _t(w), padding="same", dilation=d).shape == (1, 3, 7, 8)


def test_conv2d_matches_scipy_correlate():
    rng = _rng(7)
    x, w = rng.standard_normal((9, 8)), rng.standard_normal((3, 4))
    got = ops.conv2d(_t(x[None, None]), _t(w[None, None])).asnumpy()[0, 0]
    np.testing.assert_allclose(got, scipy.signal.correlate(x, w, mode="valid"), rtol=1e-10)
    got = ops.conv1d(_t(x[None, :1, :]), _t(w[None, :1, :])).asnumpy()[0, 0]
    np.testing.assert_allclose(got, scipy.signal.correlate(x[0], w[0], mode="valid"), rtol=1e-10)


def test_conv_unbatched_input_and_dtype():
    rng = _rng(8)
    x, w = (
        rng.standard_normal((2, 6, 5)).astype(np.float32),
        rng.standard_normal((3, 2, 2, 2)).astype(np.float32),
    )
    y = ops.conv2d(_t(x), _t(w), padding=1)
    assert y.shape == (3, 7, 6) and y.dtype == np.float32
    np.testing.assert_allclose(y.asnumpy(), ops.conv2d(_t(x[None]), _t(w), padding=1).asnumpy()[0])


@settings(max_examples=15, deadline=None)
@given(
    n=st.integers(1, 2),
    groups=st.sampled_from([1, 2]),
    cg=st.integers(1, 2),
    og=st.integers(1, 2),
    k=st.tuples(st.integers(1, 3), st.integers(1, 3)),
    s=st.tuples(st.integers(1, 3), st.integers(1, 2)),
    d=st.tuples(st.integers(1, 2), st.integers(1, 2)),
    p=st.tuples(st.integers(0, 2), st.integers(0, 2)),
    extra=st.tuples(st.integers(0, 4), st.integers(0, 4)),
)
def test_conv2d_random_shapes(n, groups, cg, og, k, s, d, p, extra):
    rng = _rng(9)
    spatial = tuple(max(dd * (kk - 1) + 1 - 2 * pp, 1) + e for kk, dd, pp, e in zip(k, d, p, extra))
    x = rng.standard_normal((n, cg * groups, *spatial))
    w = rng.standard_normal((og * groups, cg, *k))
    got = ops.conv2d(_t(x), _t(w), stride=s, padding=p, dilation=d, groups=groups).asnumpy()
    ref = ref_conv(x, w, None, s, tuple((q, q) for q in p), d, groups)
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "x_shape,w_shape,kw", [CONV_CASES[0], CONV_CASES[3], CONV_CASES[4], CONV_CASES[8]]
)
def test_conv_gradcheck(x_shape, w_shape, kw):
    rng = _rng(10)
    # small copies of the shapes keep the second-order finite differences cheap
    x, w, b = (
        rng.standard_normal(x_shape),
        rng.standard_normal(w_shape),
        rng.standard_normal(w_shape[0]),
    )
    conv = _CONV[len(x_shape)]
    order = 2 if len(x_shape) < 5 else 1
    gradcheck(lambda x, w, b: conv(x, w, b, **kw), [x[:1], w, b], order=order)


# ---- transposed convolution -----------------------------------------------------------------------
CONVT_CASES = [
    ((2, 3, 5), (3, 2, 3), dict(stride=2, padding=1, output_padding=1)),
    ((1, 4, 4), (4, 1, 2), dict(stride=3, dilation=2, groups=2, output_padding=(1,))),
    ((2, 2, 3, 4), (2, 3, 3, 2), dict(stride=(2, 1), padding=(1, 0), dilation=(1, 2))),
    (
        (1, 4, 3, 3),
        (4, 2, 2, 2),
        dict(stride=2, groups=2, padding=((0, 1), (1, 0)), output_padding=1),
    ),
    (
        (1, 2, 3, 2, 3),
        (2, 2, 2, 2, 2),
        dict(stride=(2, 1, 2), padding=(1, 0, 0), output_padding=(1, 0, 0)),
    ),
    ((1, 2, 2, 2), (2, 2, 3, 3), dict(stride=1, padding=1)),
    (
        (1, 2, 3, 3),
        (2, 1, 1, 1),
        dict(stride=1, dilation=3, padding=0, output_padding=2),
    ),  # output_padding past the fold
]
_CONVT = {3: ops.conv_transpose1d, 4: ops.conv_transpose2d, 5: ops.conv_transpose3d}


@pytest.mark.parametrize("x_shape,w_shape,kw", CONVT_CASES)
def test_conv_transpose_matches_direct_loop(x_shape, w_shape, kw):
    rng = _rng(11)
    x, w = rng.standard_normal(x_shape), rng.standard_normal(w_shape)
    b = rng.standard_normal(w_shape[1] * kw.get("groups", 1))
    nsp = len(x_shape) - 2
    padding = kw.get("padding", 0)
    pads = (
        ((padding, padding),) * nsp
        if isinstance(padding, int)
        else tuple((p, p) if isinstance(p, int) else p for p in padding)
    )
    got = _CONVT[len(x_shape)](_t(x), _t(w), _t(b), **kw).asnumpy()
    ref = ref_conv_transpose(
        x,
        w,
        b,
        kw.get("stride", 1),
        pads,
        kw.get("output_padding", 0),
        kw.get("dilation", 1),
        kw.get("groups", 1),
    )
    assert got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "n,k,stride,padding,dilation,groups",
    [(9, 3, 2, 1, 1, 1), (10, 2, 3, 0, 2, 2), (7, 3, 1, 2, 1, 1), (8, 3, 2, 1, 2, 2)],
)
@pytest.mark.parametrize("nsp", [1, 2, 3])
def test_conv_transpose_is_adjoint_of_conv(n, k, stride, padding, dilation, groups, nsp):
    """<conv(x, w), y> == <x, conv_transpose(y, w)> with output_padding picking x's size."""
    rng = _rng(12)
    c_in, c_out = 2 * groups, 2 * groups
    n = n if nsp < 3 else min(n, 7)
    x = rng.standard_normal((2, c_in) + (n,) * nsp)
    w = rng.standard_normal((c_out, c_in // groups) + (k,) * nsp)
    y_shape = _CONV[nsp + 2](
        _t(x), _t(w), stride=stride, padding=padding, dilation=dilation, groups=groups
    ).shape
    m = y_shape[2]
    out_pad = n - ((m - 1) * stride - 2 * padding + dilation * (k - 1) + 1)
    y = rng.standard_normal(y_shape)
    cx = _CONV[nsp + 2](
        _t(x), _t(w), stride=stride, padding=padding, dilation=dilation, groups=groups
    ).asnumpy()
    ty = _CONVT[nsp + 2](
        _t(y),
        _t(w),
        stride=stride,
        padding=padding,
        output_padding=out_pad,
        dilation=dilation,
        groups=groups,
    ).asnumpy()
    assert ty.shape == x.shape
    np.testing.assert_allclose(np.sum(cx * y), np.sum(x * ty), rtol=1e-10)


@pytest.mark.parametrize("x_shape,w_shape,kw", [CONVT_CASES[0], CONVT_CASES[3], CONVT_CASES[6]])
def test_conv_transpose_gradcheck(x_shape, w_shape, kw):
    rng = _rng(13)
    x, w = rng.standard_normal(x_shape), rng.standard_normal(w_shape)
    b = rng.standard_normal(w_shape[1] * kw.get("groups", 1))
    convt = _CONVT[len(x_shape)]
    gradcheck(lambda x, w, b: convt(x, w, b, **kw), [x[:1], w, b], order=2)


# ---- vmap -------------------------------------------------------------------------------------------
def test_conv_vmap_over_inputs_and_weights():
    rng = _rng(14)
    xs = rng.standard_normal((3, 2, 4, 6, 5))  # a batch of [N, C, H, W]
    ws = rng.standard_normal((3, 6, 2, 3, 2))  # a batch of weights (groups=2)
    kw = dict(stride=(1, 2), padding=1, groups=2)
    f = lambda x, w: ops.conv2d(x, w, **kw)  # noqa: E731
    for in_axes, args in [((0, None), (xs, ws[0])), ((None, 0), (xs[0], ws)), ((0, 0), (xs, ws))]:
        got = core.vmap(f, in_axes=in_axes)(*map(_t, args)).asnumpy()
        ref = np.stack(
            [
                f(
                    _t(args[0] if in_axes[0] is None else args[0][i]),
                    _t(args[1] if in_axes[1] is None else args[1][i]),
                ).asnumpy()
                for i in range(3)
            ]
        )
        np.testing.assert_allclose(got, ref, rtol=1e-12)


def test_conv_transpose_and_pool_vmap():
    rng = _rng(15)
    xs = rng.standard_normal((3, 1, 2, 4, 4))
    w = rng.standard_normal((2, 3, 3, 3))
    for f in (
        lambda x: ops.conv_transpose2d(x, _t(w), stride=2, padding=1, output_padding=1),
        lambda x: ops.max_pool2d(x, 3, 2, 1),
        lambda x: ops.avg_pool2d(x, 2, 1, 1, count_include_pad=False),
        lambda x: ops.adaptive_avg_pool2d(x, (3, 2)),
    ):
        got = core.vmap(f)(_t(xs)).asnumpy()
        ref = np.stack([f(_t(xs[i])).asnumpy() for i in range(3)])
        np.testing.assert_allclose(got, ref, rtol=1e-12)


def test_grad_of_vmapped_conv():
    rng = _rng(16)
    xs, w = rng.standard_normal((2, 1, 2, 4, 4)), rng.standard_normal((2, 2, 2, 2))
    g = core.grad(lambda w: core.vmap(lambda x: ops.conv2d(x, w, padding=1))(_t(xs)).sum())(
        _t(w)
    ).asnumpy()
    ref = core.grad(lambda w: ops.conv2d(_t(xs.reshape(2, 2, 4, 4)), w, padding=1).sum())(
        _t(w)
    ).asnumpy()
    np.testing.assert_allclose(g, ref, rtol=1e-12)


def test_conv_and_pool_under_jit():
    rng = _rng(23)
    x, w = _t(rng.standard_normal((2, 3, 6, 6))), _t(rng.standard_normal((3, 2, 3, 3)))

    def loss(x, w):
        wt = ops.swapaxes(w, 0, 1)  # [2, 3, 3, 3]: conv 3 -> 2 channels, transpose 2 -> 3
        y = ops.conv_transpose2d(ops.conv2d(x, wt, padding=1, stride=2), wt, stride=2)
        return (ops.max_pool2d(y, 2) ** 2).sum() + ops.avg_pool2d(y, 3, 1, 1).sum()

    np.testing.assert_allclose(core.jit(loss)(x, w).asnumpy(), loss(x, w).asnumpy(), rtol=1e-12)
    for a, b in zip(core.jit(core.grad(loss, (0, 1)))(x, w), core.grad(loss, (0, 1))(x, w)):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-12)


# ---- pooling -------------------------------------------------------------------------------------------
POOL_CASES = [
    ((2, 3, 9), (3,), (2,), ((1, 1),)),
    ((2, 2, 7, 6), (3, 2), (2, 2), ((1, 1), (0, 0))),
    ((1, 2, 6, 6), (2, 2), (2, 2), ((0, 0), (0, 0))),
    ((1, 1, 5, 4, 6), (2, 3, 2), (1, 2, 2), ((1, 1), (1, 1), (0, 0))),
    ((3, 5, 5), (3, 3), (1, 1), ((1, 1), (1, 1))),  # unbatched [C, H, W]
]
_MAXPOOL = {1: ops.max_pool1d, 2: ops.max_pool2d, 3: ops.max_pool3d}
_AVGPOOL = {1: ops.avg_pool1d, 2: ops.avg_pool2d, 3: ops.avg_pool3d}


@pytest.mark.parametrize("shape,kernel,stride,pads", POOL_CASES)
def test_pool_values(shape, kernel, stride, pads):
    rng = _rng(17)
    x = rng.standard_normal(shape)
    nsp = len(kernel)
    padding = tuple(p[0] for p in pads)
    got = _MAXPOOL[nsp](_t(x), kernel, stride, padding).asnumpy()
    np.testing.assert_array_equal(got, ref_pool(x, kernel, stride, pads, np.max, -np.inf))
    got = _AVGPOOL[nsp](_t(x), kernel, stride, padding).asnumpy()
    np.testing.assert_allclose(got, ref_pool(x, kernel, stride, pads, np.mean, 0.0), rtol=1e-12)
    got = _AVGPOOL[nsp](_t(x), kernel, stride, padding, count_include_pad=False).asnumpy()
    count = ref_pool(np.ones_like(x), kernel, stride, pads, np.sum, 0.0)
    np.testing.assert_allclose(
        got, ref_pool(x, kernel, stride, pads, np.sum, 0.0) / count, rtol=1e-12
    )


def test_max_pool_dilation_default_stride_and_ints():
    rng = _rng(18)
    x = rng.standard_normal((1, 2, 9, 8))
    got = ops.max_pool2d(_t(x), 2, stride=1, padding=1, dilation=2).asnumpy()
    np.testing.assert_array_equal(
        got, ref_pool(x, (2, 2), (1, 1), ((1, 1), (1, 1)), np.max, -np.inf, (2, 2))
    )
    assert ops.max_pool2d(_t(x), 2).shape == (1, 2, 4, 4)  # stride defaults to the kernel
    xi = rng.integers(-50, 50, (1, 2, 6, 6))
    got = ops.max_pool2d(_t(xi), 3, 2, 1)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(
        got.asnumpy(),
        ref_pool(xi, (3, 3), (2, 2), ((1, 1), (1, 1)), np.max, np.iinfo(np.int64).min),
    )


@pytest.mark.parametrize("shape,kernel,stride,pads", POOL_CASES[:4])
def test_pool_gradcheck(shape, kernel, stride, pads):
    rng = _rng(19)
    x = (
        rng.permutation(np.prod(shape[-len(kernel) - 1 :])).reshape(shape[-len(kernel) - 1 :])[None]
        * 0.1
    )
    padding = tuple(p[0] for p in pads)
    nsp = len(kernel)
    gradcheck(
        lambda x: _MAXPOOL[nsp](x, kernel, stride, padding), [x], order=2
    )  # distinct values: no ties
    gradcheck(
        lambda x: _AVGPOOL[nsp](x, kernel, stride, padding, count_include_pad=False), [x], order=2
    )


def test_max_pool_ties_share_the_gradient():
    x = np.array([[[1.0, 3.0, 3.0, 0.0]]])
    g = core.grad(lambda x: ops.max_pool1d(x, 4).sum())(_t(x)).asnumpy()
    np.testing.assert_allclose(g, [[[0.0, 0.5, 0.5, 0.0]]])
    # overlapping windows accumulate through fold
    g = core.grad(lambda x: ops.max_pool1d(x, 2, 1).sum())(
        _t(np.array([[[0.0, 2.0, 1.0]]]))
    ).asnumpy()
    np.testing.assert_allclose(g, [[[0.0, 2.0, 0.0]]])


def test_max_pool_padding_is_finite_under_debug_nans():
    core.set_debug_nans(True)  # the conftest fixture turns it off again
    x = _rng(22).standard_normal((1, 2, 5, 5))
    got = ops.max_pool2d(_t(x), 3, 2, 1).asnumpy()
    np.testing.assert_array_equal(
        got, ref_pool(x, (3, 3), (2, 2), ((1, 1), (1, 1)), np.max, -np.inf)
    )
    with pytest.raises(TypeError, match="max_pool1d: complex input"):
        ops.max_pool1d(_t(np.ones((1, 1, 4), np.complex64)), 2)


def _adaptive_ref(x, out_size):
    nsp = len(out_size)
    for a, m in enumerate(out_size):
        axis = x.ndim - nsp + a
        n = x.shape[axis]
        pieces = []
        for i in range(m):
            lo, hi = (i * n) // m, -((-(i + 1) * n) // m)
            pieces.append(np.take(x, np.arange(lo, hi), axis=axis).mean(axis=axis, keepdims=True))
        x = np.concatenate(pieces, axis=axis)
    return x


@pytest.mark.parametrize(
    "fn,shape,out",
    [
        (ops.adaptive_avg_pool1d, (2, 3, 7), (3,)),
        (ops.adaptive_avg_pool2d, (1, 2, 7, 5), (3, 5)),
        (ops.adaptive_avg_pool2d, (1, 2, 6, 4), (4, 6)),  # upsampling bins overlap
        (ops.adaptive_avg_pool3d, (1, 1, 4, 5, 6), (2, 3, 1)),
    ],
)
def test_adaptive_avg_pool(fn, shape, out):
    rng = _rng(20)
    x = rng.standard_normal(shape)
    np.testing.assert_allclose(fn(_t(x), out).asnumpy(), _adaptive_ref(x, out), rtol=1e-12)
    gradcheck(lambda x: fn(x, out), [x[:1]], order=2)
    assert ops.adaptive_avg_pool2d(_t(np.zeros((1, 2, 5, 6))), (None, 3)).shape == (1, 2, 5, 3)


# ---- errors -----------------------------------------------------------------------------------------------
def test_conv_errors_name_op_and_shapes():
    x, w = _t(np.zeros((1, 3, 5, 5))), _t(np.zeros((4, 2, 3, 3)))
    with pytest.raises(ValueError, match=r"conv2d: input \(1, 3, 5, 5\).*weight \(4, 2, 3, 3\)"):
        ops.conv2d(x, w)
    with pytest.raises(
        ValueError, match=r"conv2d: expected input \[N, C_in, H, W\].*got shapes \(3, 5\)"
    ):
        ops.conv2d(_t(np.zeros((1, 1, 3, 5))[0, 0]), w)
    with pytest.raises(ValueError, match=r"conv1d: window of extent 5"):
        ops.conv1d(_t(np.zeros((1, 1, 3))), _t(np.zeros((1, 1, 3))), dilation=2)
    with pytest.raises(ValueError, match="conv2d: padding 'full'"):
        ops.conv2d(x, _t(np.zeros((4, 3, 3, 3))), padding="full")
    with pytest.raises(ValueError, match="conv2d: stride"):
        ops.conv2d(x, _t(np.zeros((4, 3, 3, 3))), stride=(1, 2, 3))
    with pytest.raises(ValueError, match=r"conv2d: bias of shape \(3,\) should be \(4,\)"):
        ops.conv2d(x, _t(np.zeros((4, 3, 3, 3))), _t(np.zeros(3)))
    with pytest.raises(ValueError, match="conv2d: negative padding"):
        ops.conv2d(x, _t(np.zeros((4, 3, 3, 3))), padding=-1)
    with pytest.raises(ValueError, match="conv_transpose2d: output_padding"):
        ops.conv_transpose2d(x, _t(np.zeros((3, 2, 3, 3))), stride=2, output_padding=2)
    with pytest.raises(
        ValueError, match=r"conv_transpose2d: input \(1, 3, 5, 5\).*weight \(4, 2, 3, 3\)"
    ):
        ops.conv_transpose2d(x, w)
    with pytest.raises(ValueError, match="max_pool2d: padding"):
        ops.max_pool2d(x, 2, padding=2)
    with pytest.raises(ValueError, match=r"avg_pool3d: input of shape \(5, 5\)"):
        ops.avg_pool3d(_t(np.zeros((5, 5))), 2)


# ---- PyTorch comparison ---------------------------------------------------------------------------------
@pytest.mark.parity
def test_against_torch():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    rng = _rng(21)
    T = torch.tensor

    def close(a, b):
        np.testing.assert_allclose(a.asnumpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)

    for x_shape, w_shape, kw in CONV_CASES:
        if isinstance(kw.get("padding"), tuple) and isinstance(kw["padding"][0], tuple):
            continue  # torch has no asymmetric padding
        if kw.get("padding") == "same" and kw.get("stride", 1) != 1:
            continue  # torch 'same' needs stride 1
        if kw.get("padding_mode", "zeros") != "zeros":
            continue  # a Conv module option in torch
        x, w, b = (
            rng.standard_normal(x_shape),
            rng.standard_normal(w_shape),
            rng.standard_normal(w_shape[0]),
        )
        tf = {3: F.conv1d, 4: F.conv2d, 5: F.conv3d}[len(x_shape)]
        close(_CONV[len(x_shape)](_t(x), _t(w), _t(b), **kw), tf(T(x), T(w), T(b), **kw))
    for x_shape, w_shape, kw in CONVT_CASES:
        if isinstance(kw.get("padding"), tuple) and isinstance(kw["padding"][0], tuple):
            continue
        x, w = rng.standard_normal(x_shape), rng.standard_normal(w_shape)
        tf = {3: F.conv_transpose1d, 4: F.conv_transpose2d, 5: F.conv_transpose3d}[len(x_shape)]
        close(_CONVT[len(x_shape)](_t(x), _t(w), **kw), tf(T(x), T(w), **kw))
    for shape, kernel, stride, pads in POOL_CASES:
        x = rng.standard_normal(shape)
        nsp, padding = len(kernel), tuple(p[0] for p in pads)
        close(
            _MAXPOOL[nsp](_t(x), kernel, stride, padding),
            getattr(F, f"max_pool{nsp}d")(T(x), kernel, stride, padding),
        )
        for cip in (True, False):
            close(
                _AVGPOOL[nsp](_t(x), kernel, stride, padding, count_include_pad=cip),
                getattr(F, f"avg_pool{nsp}d")(T(x), kernel, stride, padding, count_include_pad=cip),
            )
    x = rng.standard_normal((2, 3, 7, 9))
    close(ops.adaptive_avg_pool2d(_t(x), (3, 4)), F.adaptive_avg_pool2d(T(x), (3, 4)))
    close(ops.max_pool2d(_t(x), 2, 1, 1, dilation=2), F.max_pool2d(T(x), 2, 1, 1, dilation=2))
    close(ops.unfold(_t(x), (2, 3), 2, 1, (2, 1)), F.unfold(T(x), (2, 3), 2, 1, (2, 1)))
    c = rng.standard_normal((2, 3 * 6, 20))
    close(ops.fold(_t(c), (7, 9), (2, 3), 1, 1, 2), F.fold(T(c), (7, 9), (2, 3), 1, 1, 2))
    # gradients of a strided, dilated, grouped conv2d
    x, w = rng.standard_normal((2, 4, 7, 6)), rng.standard_normal((6, 2, 3, 2))
    y = rng.standard_normal((2, 6, 4, 3))
    gx, gw = core.grad(
        lambda x, w: (
            ops.conv2d(x, w, stride=2, padding=1, dilation=(1, 2), groups=2) * _t(y)
        ).sum(),
        (0, 1),
    )(_t(x), _t(w))
    xt, wt = T(x, requires_grad=True), T(w, requires_grad=True)
    (F.conv2d(xt, wt, stride=2, padding=1, dilation=(1, 2), groups=2) * T(y)).sum().backward()
    close(gx, xt.grad)
    close(gw, wt.grad)
