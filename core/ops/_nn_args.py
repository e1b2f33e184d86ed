"""Argument handling shared by the nn ops (``conv``, ``pool``, ``normalization``): per-axis
ints and paddings from MindSpore/PyTorch spellings, float promotion, channel views. Errors name
the op."""

import numpy as np

from .. import dtypes as _dt
from ._convert import as_tensor
from .elementwise import astype
from .shape import pad, reshape

SPATIAL = {1: "L", 2: "H, W", 3: "D, H, W"}  # spatial axes' names by count, for messages


def ntuple(value, n, name, what):
    """One int per spatial axis from an int or a sequence of n ints."""
    if isinstance(value, (int, np.integer)):
        return (int(value),) * n
    value = tuple(value)
    if len(value) != n or not all(isinstance(v, (int, np.integer)) for v in value):
        raise ValueError(
            f"{name}: {what} {value} must be an int or {n} ints (one per spatial axis)"
        )
    return tuple(int(v) for v in value)


def positive(name, what, values):
    """``values`` unchanged, or an error naming ``what`` when one is below 1."""
    if any(v < 1 for v in values):
        raise ValueError(f"{name}: {what} {values} must be positive")
    return values


def pad_pairs(name, padding, n):
    """``((lo, hi), ...)`` per spatial axis from an int, n ints, or n (lo, hi) pairs."""
    if isinstance(padding, (int, np.integer)):
        pads = ((int(padding), int(padding)),) * n
    else:
        padding = tuple(padding)
        if len(padding) != n:
            raise ValueError(
                f"{name}: padding {padding} must be an int, {n} ints or {n} (lo, hi) pairs"
            )
        pads = []
        for p in padding:
            if isinstance(p, (int, np.integer)):
                pads.append((int(p), int(p)))
            elif len(tuple(p)) == 2:
                pads.append((int(p[0]), int(p[1])))
            else:
                raise ValueError(
                    f"{name}: padding entry {p!r} is neither an int nor a (lo, hi) pair"
                )
        pads = tuple(pads)
    if any(lo < 0 or hi < 0 for lo, hi in pads):
        raise ValueError(f"{name}: negative padding {pads}")
    return pads


def int_prod(values):
    """Product of ints (a shape's size) as a Python int."""
    n = 1
    for v in values:
        n *= int(v)
    return n


def as_float(x):
    """``x`` itself when floating or complex, else cast to the default float."""
    return x if _dt.is_inexact(x.dtype) else astype(x, _dt.default_float)


def pad_spatial(x, pads, nsp, mode="constant", value=0.0):
    """``x`` padded by ``pads`` ((lo, hi) per axis) on its trailing ``nsp`` axes."""
    if all(lo == 0 and hi == 0 for lo, hi in pads):
        return x
    return pad(x, ((0, 0),) * (x.ndim - nsp) + tuple(pads), mode=mode, value=value)


def channel_view(v, c, nsp, name, what):
    """A per-channel vector ``[C]`` shaped ``[C, 1, ..., 1]`` to broadcast over ``[N, C, *spatial]``."""
    v = as_tensor(v)
    if tuple(v.shape) != (c,):
        raise ValueError(f"{name}: {what} of shape {tuple(v.shape)} should be ({c},)")
    return reshape(v, (c,) + (1,) * nsp)
