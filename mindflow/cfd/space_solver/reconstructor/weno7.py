"""Seventh-order WENO reconstruction (Balsara & Shu 2000, r = 4)."""

from __future__ import annotations

from .base import Reconstructor, combine, normalized


class WENO7(Reconstructor):
    r"""Seventh-order WENO reconstruction.

    Four four-cell candidates with linear weights (1/35, 12/35, 18/35, 4/35), the
    Balsara-Shu smoothness indicators and :math:`\alpha_k = d_k / (\epsilon + \beta_k)^2`,
    :math:`\epsilon = 10^{-5}` as in MindFlow. D. S. Balsara, C.-W. Shu, J. Comput. Phys. 160
    (2000) 405-452.

    Args:
        mesh_info (MeshInfo): needs ``pad >= 4``.
    """

    name = "WENO7"
    half_width = 4
    eps = 1e-5
    linear_weights = (1.0 / 35.0, 12.0 / 35.0, 18.0 / 35.0, 4.0 / 35.0)

    def face_value(self, stencil):
        v0, v1, v2, v3, v4, v5, v6 = stencil  # cells i-3 .. i+3; value at i+1/2
        p = [
            (-3.0 * v0 + 13.0 * v1 - 23.0 * v2 + 25.0 * v3) / 12.0,
            (v1 - 5.0 * v2 + 13.0 * v3 + 3.0 * v4) / 12.0,
            (-v2 + 7.0 * v3 + 7.0 * v4 - v5) / 12.0,
            (3.0 * v3 + 13.0 * v4 - 5.0 * v5 + v6) / 12.0,
        ]
        beta = [
            v0 * (547.0 * v0 - 3882.0 * v1 + 4642.0 * v2 - 1854.0 * v3)
            + v1 * (7043.0 * v1 - 17246.0 * v2 + 7042.0 * v3)
            + v2 * (11003.0 * v2 - 9402.0 * v3)
            + 2107.0 * v3 * v3,
            v1 * (267.0 * v1 - 1642.0 * v2 + 1602.0 * v3 - 494.0 * v4)
            + v2 * (2843.0 * v2 - 5966.0 * v3 + 1922.0 * v4)
            + v3 * (3443.0 * v3 - 2522.0 * v4)
            + 547.0 * v4 * v4,
            v2 * (547.0 * v2 - 2522.0 * v3 + 1922.0 * v4 - 494.0 * v5)
            + v3 * (3443.0 * v3 - 5966.0 * v4 + 1602.0 * v5)
            + v4 * (2843.0 * v4 - 1642.0 * v5)
            + 267.0 * v5 * v5,
            v3 * (2107.0 * v3 - 9402.0 * v4 + 7042.0 * v5 - 1854.0 * v6)
            + v4 * (11003.0 * v4 - 17246.0 * v5 + 4642.0 * v6)
            + v5 * (7043.0 * v5 - 3882.0 * v6)
            + 547.0 * v6 * v6,
        ]
        alpha = [d / (self.eps + b) ** 2 for d, b in zip(self.linear_weights, beta, strict=True)]
        return combine(normalized(alpha), p)
