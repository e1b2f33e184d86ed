"""MindFlow's grid helpers (``mindflow.core.math``): the positional embedding of its FNO scripts.

``get_grid_Nd(resolution)`` is ``linspace(0, 1, n)`` along each axis, stacked as the last axis
of a numpy float64 array ``[1, *resolution, N]`` (channel ``k`` is the coordinate along spatial
axis ``k``); ``resolution`` is an int (the same along every axis) or a sequence of N ints.
"""

import numpy as np

__all__ = ["get_grid_1d", "get_grid_2d", "get_grid_3d", "to_2tuple", "to_3tuple"]


def _ntuple(value, n, name):
    if isinstance(value, (int, np.integer)):
        return (int(value),) * n
    value = tuple(int(v) for v in value)
    if len(value) != n:
        raise ValueError(f"{name}: expected an int or {n} ints, got {value}")
    return value


def to_2tuple(value):
    """``(value, value)`` for an int, else the 2-sequence as a tuple."""
    return _ntuple(value, 2, "to_2tuple")


def to_3tuple(value):
    """``(value, value, value)`` for an int, else the 3-sequence as a tuple."""
    return _ntuple(value, 3, "to_3tuple")


def _grid(resolution, n, name):
    sizes = _ntuple(resolution, n, name)
    if min(sizes) < 1:
        raise ValueError(f"{name}: resolution must be positive, got {sizes}")
    axes = [np.linspace(0.0, 1.0, s) for s in sizes]
    return np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1)[None]


def get_grid_1d(resolution):
    """``[1, n, 1]`` coordinates ``linspace(0, 1, n)``."""
    if not isinstance(resolution, (int, np.integer)):
        resolution = tuple(resolution)[:1]
    return _grid(resolution, 1, "get_grid_1d")


def get_grid_2d(resolution):
    """``[1, nx, ny, 2]`` coordinates on ``[0, 1]^2``."""
    return _grid(resolution, 2, "get_grid_2d")


def get_grid_3d(resolution):
    """``[1, nx, ny, nz, 3]`` coordinates on ``[0, 1]^3``."""
    return _grid(resolution, 3, "get_grid_3d")
