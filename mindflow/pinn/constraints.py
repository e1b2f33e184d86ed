"""Hard constraints by output transforms: ``u(x) = g(x) + d(x) * net(x)``.

If ``g`` satisfies the boundary (or initial) condition and ``d`` vanishes exactly there and
nowhere inside, every network output satisfies the condition exactly and the loss needs no
boundary term (Lagaris, Likas & Fotiadis 1998, "Artificial neural networks for solving ordinary
and partial differential equations", IEEE TNN 9(5), eq. (11); Lu et al. 2021, "Physics-informed
neural networks with hard constraints for inverse design", SIAM J. Sci. Comput. 43(6)).
``d`` must be written with core ops (it is differentiated with the network):
:func:`box_distance` and :func:`ball_distance` build it for boxes and balls; for an initial
condition at ``t = t0`` use ``d = t - t0``.
"""

import numpy as np

from diffsci import core

__all__ = ["OutputTransform", "ball_distance", "box_distance", "hard_constraint"]


def box_distance(coord_min, coord_max, axes=None):
    """``d(x) = prod_i (x_i - a_i)(b_i - x_i) / ((b_i - a_i) / 2)^2`` over the box's axes:
    positive inside, 1 at the centre, zero exactly on every face.

    Args:
        coord_min, coord_max: the box's corners ``a``, ``b`` (length ``k``).
        axes: the input columns they bound (default ``0..k-1``; e.g. ``[0]`` for the spatial
            axis of an ``(x, t)`` input).

    Returns:
        A callable ``[N, d_in] -> [N, 1]``.
    """
    lo = np.asarray(coord_min, dtype=np.float64).reshape(-1)
    hi = np.asarray(coord_max, dtype=np.float64).reshape(-1)
    if lo.shape != hi.shape or np.any(hi <= lo):
        raise ValueError(f"box_distance: need coord_min < coord_max, got {lo} and {hi}")
    axes = list(range(lo.size)) if axes is None else [int(a) for a in axes]
    if len(axes) != lo.size:
        raise ValueError(f"box_distance: {len(axes)} axes for a {lo.size}-d box")

    def d(x):
        out = None
        for a, b, i in zip(lo.tolist(), hi.tolist(), axes, strict=True):
            xi = x[:, i : i + 1]  # [N, 1]
            part = (xi - a) * (b - xi) * (4.0 / (b - a) ** 2)
            out = part if out is None else out * part
        return out

    return d


def ball_distance(center, radius):
    """``d(x) = 1 - |x - c|^2 / r^2`` (first ``len(center)`` columns): 1 at the centre, zero on
    the sphere, positive inside. Returns a callable ``[N, d_in] -> [N, 1]``."""
    c = np.asarray(center, dtype=np.float64).reshape(-1)
    if not radius > 0:
        raise ValueError(f"ball_distance: radius must be > 0, got {radius!r}")

    def d(x):
        r2 = None
        for i, ci in enumerate(c.tolist()):
            part = (x[:, i : i + 1] - ci) ** 2
            r2 = part if r2 is None else r2 + part
        return 1.0 - r2 / float(radius) ** 2

    return d


class OutputTransform(core.nn.Cell):
    """A Cell computing ``g(x) + d(x) * net(x)``.

    Args:
        net: the network, ``[N, d_in] -> [N, m]``.
        g: callable ``[N, d_in] -> [N, m]`` (or ``[N, 1]``, broadcast) written with core ops,
            or None for 0.
        d: callable ``[N, d_in] -> [N, m]`` or ``[N, 1]``, zero where the condition holds, or
            None for 1.
        transform: instead of ``g`` and ``d``, any callable ``transform(x, out) -> u`` (e.g.
            ``lambda x, out: out * x[:, 1:2] + ops.sin(x[:, 0:1])``).

    Shapes: ``construct(x)`` takes ``[N, d_in]`` and returns the network's ``[N, m]``.
    """

    def __init__(self, net, g=None, d=None, transform=None):
        super().__init__()
        if transform is not None and (g is not None or d is not None):
            raise ValueError("OutputTransform: pass either transform or g/d, not both")
        for label, fn in (("g", g), ("d", d), ("transform", transform)):
            if fn is not None and not callable(fn):
                raise TypeError(
                    f"OutputTransform: {label} must be callable, got {type(fn).__name__}"
                )
        self.net = net
        object.__setattr__(self, "g", g)
        object.__setattr__(self, "d", d)
        object.__setattr__(self, "transform", transform)

    def construct(self, x):
        out = self.net(x)  # [N, m]
        if self.transform is not None:
            return self.transform(x, out)
        if self.d is not None:
            dist = self.d(x)
            if dist.ndim != out.ndim or dist.shape[0] != out.shape[0]:
                raise ValueError(
                    f"OutputTransform: d(x) has shape {tuple(dist.shape)}; expected "
                    f"[{out.shape[0]}, 1] or [{out.shape[0]}, {out.shape[-1]}] like net(x)"
                )
            out = dist * out
        if self.g is not None:
            out = self.g(x) + out
        return out


def hard_constraint(net, g=None, d=None):
    """``OutputTransform(net, g, d)``: the Cell ``x -> g(x) + d(x) * net(x)``."""
    return OutputTransform(net, g=g, d=d)
