"""Fifth-order targeted ENO reconstruction, TENO5 (Fu, Hu & Adams 2016)."""

from __future__ import annotations

from diffsci.core import ops

from .base import Reconstructor, combine, normalized, tiny
from .weno5 import LINEAR_WEIGHTS_5, weno5_candidates


class TENO5(Reconstructor):
    r"""TENO5: the WENO5 candidates, a smoothness measure
    :math:`\gamma_k = (C + \tau_5 / (\beta_k + \epsilon))^q` (``C = 1``, ``q = 6``), its
    normalisation :math:`\chi_k = \gamma_k / \sum_m \gamma_m`, a sharp cut-off
    :math:`\delta_k = [\chi_k \ge C_T]` (``C_T = 1e-5``) and the weights
    :math:`\omega_k = d_k \delta_k / \sum_m d_m \delta_m`: a stencil is either used with its
    optimal linear weight or discarded. L. Fu, X. Y. Hu, N. A. Adams, J. Comput. Phys. 305
    (2016) 333-359.

    :math:`\chi_k` is computed from ratios :math:`\gamma_m / \gamma_k` (cross-multiplied, so
    nothing overflows even with :math:`\epsilon = 10^{-40}`), and the cut-off is piecewise
    constant, so it is taken under ``stop_gradient``: derivatives flow through the candidates
    and the (locally constant) weights.

    Args:
        mesh_info (MeshInfo): needs ``pad >= 3``.
    """

    name = "TENO5"
    half_width = 3
    q = 6
    cutoff = 1e-5
    _ratio_cap = 2.0 * cutoff ** (-1.0 / q)

    def face_value(self, stencil):
        p, beta = weno5_candidates(stencil)
        eps = tiny(stencil[0], 1e-40, 1e-19)
        beta = [ops.stop_gradient(b) + eps for b in beta]
        tau5 = abs(beta[0] - beta[2])
        # gamma_m / gamma_k = [(b_m + tau) b_k / (b_m (b_k + tau))]^q with b = beta + eps, C = 1
        deltas = []
        for k in range(3):
            total = 0.0
            for m in range(3):
                if m == k:
                    total = total + 1.0
                    continue
                ratio = ((beta[m] + tau5) * beta[k]) / (beta[m] * (beta[k] + tau5))
                # a ratio above C_T^(-1/q) already discards stencil k: clamping it there keeps
                # the decision and keeps ratio^q finite in float32
                total = total + ops.minimum(ratio, self._ratio_cap) ** self.q
            chi = 1.0 / total
            deltas.append(ops.cast(chi >= self.cutoff, chi.dtype))
        alpha = [d * delta for d, delta in zip(LINEAR_WEIGHTS_5, deltas, strict=True)]
        return combine(normalized(alpha), p)
