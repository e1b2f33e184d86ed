"""Closed-form "networks" for the pde tests: Cells whose derivatives are known exactly."""

import itertools
import math

import numpy as np

from diffsci import core
from diffsci.core import nn, ops


class SinExp(nn.Cell):
    """``[N, 2] (x, t) -> [N, 2]``: ``sin(a x) exp(b t)`` and ``exp(c x) sin(e t)``.

    ``d^m/dx^m d^n/dt^n`` of column 0 is ``a^m sin(a x + m pi/2) b^n exp(b t)``, of column 1
    ``c^m exp(c x) e^n sin(e t + n pi/2)``.
    """

    def __init__(self, a=1.3, b=-0.7, c=0.6, e=2.1, calls=None):
        super().__init__()
        self.a, self.b, self.c, self.e = a, b, c, e
        self.calls = calls

    def construct(self, x):
        if self.calls is not None:
            self.calls.append(1)
        s, t = x[:, 0:1], x[:, 1:2]
        u = ops.sin(self.a * s) * ops.exp(self.b * t)
        w = ops.exp(self.c * s) * ops.sin(self.e * t)
        return ops.concat([u, w], axis=1)

    def exact(self, j, m, n, x):
        """The exact ``d^m/dx^m d^n/dt^n`` of column ``j`` at numpy points ``x [N, 2]``."""
        s, t = x[:, 0], x[:, 1]
        if j == 0:
            return self.a**m * np.sin(self.a * s + m * math.pi / 2) * self.b**n * np.exp(self.b * t)
        return self.c**m * np.exp(self.c * s) * self.e**n * np.sin(self.e * t + n * math.pi / 2)


def mlp(sizes, act=nn.Tanh, dtype=core.float64, seed=0):
    """A Dense/activation stack in ``dtype``."""
    core.set_seed(seed)
    layers = []
    for i, (a, b) in enumerate(itertools.pairwise(sizes)):
        layers.append(nn.Dense(a, b, dtype=dtype))
        if i < len(sizes) - 2:
            layers.append(act())
    return nn.SequentialCell(*layers)


class Columns(nn.Cell):
    """A network made of closed-form columns ``fns[k](x) -> [N, 1]`` (exact solutions)."""

    def __init__(self, *fns):
        super().__init__()
        self.fns = fns

    def construct(self, x):
        cols = [f(x) for f in self.fns]
        return cols[0] if len(cols) == 1 else ops.concat(cols, axis=1)
