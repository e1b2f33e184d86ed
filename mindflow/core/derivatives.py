"""MindFlow's ``mindflow/core/derivatives.py``: the engine's ``core.batched_jacobian`` and
``core.batched_hessian`` (``core/autodiff/batched.py``), re-exported.

- ``batched_jacobian(model)(x [N, d]) -> [m, N, d]``, ``J[i, n, j] = du_i/dx_j`` at point n;
- ``batched_hessian(model)(x [N, d]) -> [m, d, N, d]``, ``H[i, k, n, j] = d2u_i/dx_k dx_j``.
"""

from diffsci.core.autodiff.batched import batched_hessian as batched_hessian
from diffsci.core.autodiff.batched import batched_jacobian as batched_jacobian

__all__ = ["batched_hessian", "batched_jacobian"]
