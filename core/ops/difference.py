"""Finite differences with numpy's semantics: ``diff`` and ``gradient``, written with core ops
(slices and arithmetic), so they are differentiable in the values and in the coordinates."""

import numpy as np

from .. import dtypes as _dt
from ..tensor import Tensor
from ._convert import as_tensor, normalize_axis
from .elementwise import astype, not_equal
from .shape import broadcast_to, concat, reshape, slice_axis


def _inexact(x):
    x = as_tensor(x)
    return x if _dt.is_inexact(x.dtype) else astype(x, _dt.default_float)


def diff(x, n=1, axis=-1, prepend=None, append=None):
    """The n-th forward difference ``x[i + 1] - x[i]`` along ``axis`` (numpy.diff); ``prepend``
    and ``append`` (scalars or tensors) are joined to ``x`` along ``axis`` first."""
    x = as_tensor(x)
    if n < 0:
        raise ValueError(f"diff: order n must be non-negative, got {n}")
    axis = normalize_axis(axis, x.ndim, "diff")

    def edge(v):
        v = as_tensor(v)
        if v.ndim == 0:  # a scalar: one slice of x's shape along axis
            shape = tuple(1 if i == axis else s for i, s in enumerate(x.shape))
            v = broadcast_to(astype(v, x.dtype), shape)
        return v

    if prepend is not None or append is not None:
        parts = [edge(prepend)] if prepend is not None else []
        parts += [x] + ([edge(append)] if append is not None else [])
        x = concat(parts, axis=axis)
    for _ in range(n):
        m = x.shape[axis]
        hi, lo = slice_axis(x, axis, 1, m), slice_axis(x, axis, 0, max(m - 1, 0))
        x = not_equal(hi, lo) if x.dtype == _dt.bool_ else hi - lo
    return x


def _along(coeff, axis, ndim):
    """A 1-D tensor of coefficients shaped to broadcast along ``axis`` of an ndim tensor."""
    return reshape(coeff, tuple(-1 if i == axis else 1 for i in range(ndim)))


def _spacings(varargs, axes, f):
    """One spacing per axis: a scalar (Python number or 0-d tensor) or a 1-D coordinate tensor."""
    if len(varargs) == 0:
        return [1.0] * len(axes)
    if len(varargs) == 1 and np.ndim(_shape_probe(varargs[0])) == 0:
        return [_scalar(varargs[0])] * len(axes)
    if len(varargs) != len(axes):
        raise TypeError(
            f"gradient: {len(varargs)} spacings given for {len(axes)} axes (give none, one "
            "scalar, or one per axis)"
        )
    out = []
    for a, h in zip(axes, varargs):
        if np.ndim(_shape_probe(h)) == 0:
            out.append(_scalar(h))
            continue
        h = _inexact(h)
        if h.ndim != 1 or h.shape[0] != f.shape[a]:
            raise ValueError(
                f"gradient: coordinates of shape {tuple(h.shape)} for axis {a} of length "
                f"{f.shape[a]} (they must be 1-D of that length)"
            )
        out.append(h)
    return out


def _scalar(h):
    """A spacing: a 0-d tensor stays one (differentiable), numbers become Python floats."""
    return h if isinstance(h, Tensor) else float(h)


def _shape_probe(h):
    """Something np.ndim can read without converting a (possibly traced) tensor."""
    return np.empty(h.shape) if isinstance(h, Tensor) else h


def _uniform(f, axis, h, edge_order):
    """Second-order central differences inside, one-sided ones of ``edge_order`` at the ends,
    for a constant spacing ``h``."""
    n = f.shape[axis]

    def at(i, j=None):
        return slice_axis(f, axis, i, j if j is not None else i + 1)

    inner = (at(2, n) - at(0, n - 2)) / (2.0 * h)
    if edge_order == 1:
        first = (at(1) - at(0)) / h
        last = (at(n - 1) - at(n - 2)) / h
    else:
        first = (-1.5 / h) * at(0) + (2.0 / h) * at(1) + (-0.5 / h) * at(2)
        last = (0.5 / h) * at(n - 3) + (-2.0 / h) * at(n - 2) + (1.5 / h) * at(n - 1)
    return concat([first, inner, last], axis=axis)


def _coordinates(f, axis, x, edge_order):
    """The same for coordinates ``x`` (1-D, increasing or not): the second-order formulas for
    unequal steps (Fornberg), as numpy.gradient."""
    n, nd = f.shape[axis], f.ndim
    dx = x[1:] - x[:-1]  # [n - 1]

    def at(i, j=None):
        return slice_axis(f, axis, i, j if j is not None else i + 1)

    dx1, dx2 = dx[:-1], dx[1:]
    a = -dx2 / (dx1 * (dx1 + dx2))
    b = (dx2 - dx1) / (dx1 * dx2)
    c = dx1 / (dx2 * (dx1 + dx2))
    inner = (
        _along(a, axis, nd) * at(0, n - 2)
        + _along(b, axis, nd) * at(1, n - 1)
        + _along(c, axis, nd) * at(2, n)
    )
    if edge_order == 1:
        first = (at(1) - at(0)) / dx[0]
        last = (at(n - 1) - at(n - 2)) / dx[-1]
    else:
        d1, d2 = dx[0], dx[1]
        first = (
            (-(2.0 * d1 + d2) / (d1 * (d1 + d2))) * at(0)
            + ((d1 + d2) / (d1 * d2)) * at(1)
            + (-d1 / (d2 * (d1 + d2))) * at(2)
        )
        d1, d2 = dx[-2], dx[-1]
        last = (
            (d2 / (d1 * (d1 + d2))) * at(n - 3)
            + (-(d2 + d1) / (d1 * d2)) * at(n - 2)
            + ((2.0 * d2 + d1) / (d2 * (d1 + d2))) * at(n - 1)
        )
    return concat([first, inner, last], axis=axis)


def gradient(f, *varargs, axis=None, edge_order=1):
    """The derivative of sampled ``f`` along each of ``axis`` (numpy.gradient): central
    differences inside, one-sided differences of ``edge_order`` (1 or 2) at the boundaries.

    Args:
        f: tensor of samples, shape [n_0, ..., n_{d-1}] (integers become float32).
        *varargs: spacing: nothing (1), one scalar for all axes, or one per axis, each a scalar
            or 1-D coordinates of length n_axis (Python numbers, arrays or tensors).
        axis: None (all axes), an int, or a tuple of ints.
        edge_order: accuracy order at the boundaries, 1 or 2.

    Returns:
        A tensor of f's shape for a single axis, else a tuple of them, one per axis.
    """
    f = _inexact(f)
    if edge_order not in (1, 2):
        raise ValueError(f"gradient: edge_order must be 1 or 2, got {edge_order!r}")
    single = isinstance(axis, (int, np.integer))
    axes = range(f.ndim) if axis is None else ([axis] if single else axis)
    axes = [normalize_axis(a, f.ndim, "gradient") for a in axes]
    outs = []
    for a, h in zip(axes, _spacings(varargs, axes, f)):
        if f.shape[a] < edge_order + 1:
            raise ValueError(
                f"gradient: axis {a} of shape {tuple(f.shape)} has {f.shape[a]} samples; "
                f"edge_order={edge_order} needs at least {edge_order + 1}"
            )
        if isinstance(h, Tensor) and h.ndim == 1:
            outs.append(_coordinates(f, a, h, edge_order))
        else:
            outs.append(_uniform(f, a, h, edge_order))
    return outs[0] if single or len(outs) == 1 else tuple(outs)
