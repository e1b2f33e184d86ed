"""Fifth-order WENO-Z reconstruction (Borges, Carmona, Costa & Don 2008)."""

from __future__ import annotations

from .base import Reconstructor, combine, normalized, tiny
from .weno5 import LINEAR_WEIGHTS_5, weno5_candidates


class WENO5Z(Reconstructor):
    r"""WENO5-Z: WENO5 candidates and indicators with the global indicator
    :math:`\tau_5 = |\beta_0 - \beta_2|` and weights
    :math:`\alpha_k = d_k (1 + \tau_5 / (\beta_k + \epsilon))` (``p = 1``).

    Keeps fifth order at critical points and is less dissipative than WENO-JS.
    :math:`\epsilon = 10^{-40}` in float64 as in the paper; float32 uses :math:`10^{-20}` so that
    :math:`\tau_5 / \epsilon` cannot overflow next to a constant state.
    R. Borges, M. Carmona, B. Costa, W. S. Don, J. Comput. Phys. 227 (2008) 3191-3211.

    Args:
        mesh_info (MeshInfo): needs ``pad >= 3``.
    """

    name = "WENO5-Z"
    half_width = 3

    def face_value(self, stencil):
        p, beta = weno5_candidates(stencil)
        eps = tiny(stencil[0], 1e-40, 1e-20)
        tau5 = abs(beta[0] - beta[2])
        alpha = [d * (1.0 + tau5 / (b + eps)) for d, b in zip(LINEAR_WEIGHTS_5, beta, strict=True)]
        return combine(normalized(alpha), p)
