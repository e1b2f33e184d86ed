"""Fifth-order WENO reconstruction, WENO5-JS (Jiang & Shu 1996, r = 3)."""

from __future__ import annotations

from .base import Reconstructor, combine, normalized

LINEAR_WEIGHTS_5 = (0.1, 0.6, 0.3)


def weno5_candidates(stencil):
    """The three third-order candidates and their smoothness indicators.

    Args:
        stencil (list[Tensor]): cells ``i-2 .. i+2``.

    Returns:
        tuple[list[Tensor], list[Tensor]]: candidate values at ``i+1/2`` and the Jiang-Shu
        indicators ``beta_k`` (eqs. 2.9-2.11 of Jiang & Shu 1996).
    """
    v0, v1, v2, v3, v4 = stencil
    p = [
        (2.0 * v0 - 7.0 * v1 + 11.0 * v2) / 6.0,
        (-v1 + 5.0 * v2 + 2.0 * v3) / 6.0,
        (2.0 * v2 + 5.0 * v3 - v4) / 6.0,
    ]
    c0, c1 = 13.0 / 12.0, 0.25
    beta = [
        c0 * (v0 - 2.0 * v1 + v2) ** 2 + c1 * (v0 - 4.0 * v1 + 3.0 * v2) ** 2,
        c0 * (v1 - 2.0 * v2 + v3) ** 2 + c1 * (v1 - v3) ** 2,
        c0 * (v2 - 2.0 * v3 + v4) ** 2 + c1 * (3.0 * v2 - 4.0 * v3 + v4) ** 2,
    ]
    return p, beta


class WENO5(Reconstructor):
    r"""Fifth-order WENO-JS reconstruction.

    Three three-cell candidates with linear weights (1/10, 6/10, 3/10) and
    :math:`\alpha_k = d_k / (\epsilon + \beta_k)^2`, :math:`\epsilon = 10^{-5}` as in MindFlow.
    Fifth order where the data are smooth and monotone (order drops near critical points,
    Henrick et al. 2005). G.-S. Jiang, C.-W. Shu, J. Comput. Phys. 126 (1996) 202-228.

    Unlike MindFlow, the solver applies it by default to characteristic variables
    (``reconstruction_variables: characteristic``, see ``space_solver.projection``); the
    class itself reconstructs whatever it is given, component by component.

    Args:
        mesh_info (MeshInfo): needs ``pad >= 3``.
    """

    name = "WENO5"
    half_width = 3
    eps = 1e-5

    def face_value(self, stencil):
        p, beta = weno5_candidates(stencil)
        alpha = [d / (self.eps + b) ** 2 for d, b in zip(LINEAR_WEIGHTS_5, beta, strict=True)]
        return combine(normalized(alpha), p)
