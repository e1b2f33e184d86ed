"""Hard constraints by output transforms: ``u(x) = g(x) + d(x) * net(x)``.

If ``g`` satisfies the boundary (or initial) condition and ``d`` vanishes exactly there and
nowhere inside, every network output satisfies the condition exactly and the loss needs no
boundary term (Lagaris, Likas & Fotiadis 1998, "Artificial neural networks for solving ordinary
and partial differential equations", IEEE TNN 9(5), eq. (11); Lu et al. 2021, "Physics-informed
neural networks with hard constraints for inverse design", SIAM J. Sci. Comput. 43(6)). A
geometry's ``sdf`` (negative inside) gives ``d = -sdf`` for any ``datasets.geometry`` shape.
"""

import core

__all__ = ["OutputTransform", "hard_constraint"]


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
