"""Third-order WENO reconstruction (Jiang & Shu 1996, r = 2)."""

from __future__ import annotations

from .base import Reconstructor, combine, normalized


class WENO3(Reconstructor):
    r"""Third-order weighted essentially non-oscillatory reconstruction.

    Two two-cell candidates, linear weights (1/3, 2/3), smoothness indicators
    :math:`\beta_0 = (v_i - v_{i-1})^2`, :math:`\beta_1 = (v_{i+1} - v_i)^2` and the
    Jiang-Shu weights :math:`\alpha_k = d_k / (\epsilon + \beta_k)^2` with MindFlow's
    :math:`\epsilon = 10^{-5}`. Third order in smooth monotone regions, second order at
    extrema. G.-S. Jiang, C.-W. Shu, J. Comput. Phys. 126 (1996) 202-228.

    Args:
        mesh_info (MeshInfo): needs ``pad >= 2``.
    """

    name = "WENO3"
    half_width = 2
    eps = 1e-5
    linear_weights = (1.0 / 3.0, 2.0 / 3.0)

    def face_value(self, stencil):
        v0, v1, v2 = stencil  # cells i-1, i, i+1; value at i+1/2
        p = [-0.5 * v0 + 1.5 * v1, 0.5 * v1 + 0.5 * v2]
        beta = [(v1 - v0) ** 2, (v2 - v1) ** 2]
        alpha = [d / (self.eps + b) ** 2 for d, b in zip(self.linear_weights, beta, strict=True)]
        return combine(normalized(alpha), p)
