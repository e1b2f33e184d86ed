"""Shared by the test files of tests/core: input generators, the dtype list, direct numpy
references of the convolutions (loops over kernel offsets and groups, never im2col), and a
tensor on a fake device."""

import itertools

import numpy as np

from diffsci import core

ALL_DTYPES = [
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "int32",
    "int64",
    "bool",
]


# ---- input generators: rng -> numpy array ------------------------------------------------------
def normal(*shape):
    return lambda rng: rng.standard_normal(shape)


def cnormal(*shape):
    return lambda rng: rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def positive(*shape):
    return lambda rng: rng.uniform(0.5, 2.0, shape)


def unit(*shape):
    return lambda rng: rng.uniform(-0.8, 0.8, shape)


def away_from_zero(*shape):
    """Normal samples pushed away from 0 (kinks of abs, sign)."""
    return lambda rng: rng.uniform(0.3, 1.5, shape) * rng.choice([-1.0, 1.0], shape)


# ---- convolution references ----------------------------------------------------------------------
_NP_MODES = {"zeros": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def ref_conv(x, w, b=None, stride=1, pads=0, dilation=1, groups=1, padding_mode="zeros"):
    nsp = x.ndim - 2
    stride = (stride,) * nsp if isinstance(stride, int) else stride
    dilation = (dilation,) * nsp if isinstance(dilation, int) else dilation
    pads = ((pads, pads),) * nsp if isinstance(pads, int) else pads
    xp = np.pad(x, ((0, 0), (0, 0), *pads), mode=_NP_MODES[padding_mode])
    kernel = w.shape[2:]
    out = [
        (n - d * (k - 1) - 1) // s + 1 for n, k, s, d in zip(xp.shape[2:], kernel, stride, dilation)
    ]
    n, c_in = x.shape[:2]
    c_out = w.shape[0]
    cg, og = c_in // groups, c_out // groups
    y = np.zeros((n, c_out, *out))
    for g in range(groups):
        xg, wg = xp[:, g * cg : (g + 1) * cg], w[g * og : (g + 1) * og]
        for offs in itertools.product(*[range(k) for k in kernel]):
            sl = tuple(
                slice(o * d, o * d + s * (m - 1) + 1, s)
                for o, d, s, m in zip(offs, dilation, stride, out)
            )
            patch = xg[(slice(None), slice(None), *sl)]  # [n, cg, *out]
            y[:, g * og : (g + 1) * og] += np.einsum(
                "nc...,oc->no...", patch, wg[(slice(None), slice(None), *offs)]
            )
    if b is not None:
        y += b.reshape((-1,) + (1,) * nsp)
    return y


def ref_conv_transpose(x, w, b=None, stride=1, pads=0, out_pad=0, dilation=1, groups=1):
    nsp = x.ndim - 2
    stride = (stride,) * nsp if isinstance(stride, int) else stride
    dilation = (dilation,) * nsp if isinstance(dilation, int) else dilation
    out_pad = (out_pad,) * nsp if isinstance(out_pad, int) else out_pad
    pads = ((pads, pads),) * nsp if isinstance(pads, int) else pads
    kernel = w.shape[2:]
    n, c_in = x.shape[:2]
    og = w.shape[1]
    cg = c_in // groups
    full = [
        (i - 1) * s + d * (k - 1) + 1 for i, s, d, k in zip(x.shape[2:], stride, dilation, kernel)
    ]
    y = np.zeros((n, og * groups, *[f + p for f, p in zip(full, out_pad)]))
    for g in range(groups):
        xg, wg = x[:, g * cg : (g + 1) * cg], w[g * cg : (g + 1) * cg]
        for offs in itertools.product(*[range(k) for k in kernel]):
            sl = tuple(
                slice(o * d, o * d + s * (m - 1) + 1, s)
                for o, d, s, m in zip(offs, dilation, stride, x.shape[2:])
            )
            y[(slice(None), slice(g * og, (g + 1) * og), *sl)] += np.einsum(
                "nc...,co->no...", xg, wg[(slice(None), slice(None), *offs)]
            )
    out = [f - lo - hi + p for f, (lo, hi), p in zip(full, pads, out_pad)]
    y = y[(slice(None), slice(None), *[slice(lo, lo + o) for (lo, _), o in zip(pads, out)])]
    if b is not None:
        y = y + b.reshape((-1,) + (1,) * nsp)
    return y


# ---- devices -------------------------------------------------------------------------------------
def fake_device_tensor(monkeypatch, values):
    """``values`` as a float32 Tensor on device "FAKE": numpy arrays of a registered subclass,
    served by a copy of the numpy backend under another name (for the device-mixing checks)."""
    from diffsci.core import backend as B

    class FakeArray(np.ndarray):
        pass

    class FakeBackend(B.numpy_backend.NumpyBackend):
        name = "FAKE"
        array_type = FakeArray

    monkeypatch.setitem(B._BY_ARRAY_TYPE, FakeArray, FakeBackend())
    return core.Tensor._wrap(np.asarray(values, dtype=np.float32).view(FakeArray))
