"""Derivatives of a point-wise network over a batch of points (MindFlow's ``batched_jacobian``
and ``batched_hessian``, ``mindflow/core/derivatives.py``).

A PINN evaluates ``u = model(x)`` on a batch ``x [N, d]`` of collocation points and needs
``du_i / dx_j`` and ``d2u_i / dx_k dx_j`` at every point. Rows do not interact (a ``Dense``
stack acts on each point alone), so the ``[N, m, N, d]`` Jacobian of the whole batch is
block-diagonal and only its diagonal blocks matter. MindFlow gets them by summing the output
over the batch first (``d/dx[n, j] sum_n' u[n', i] = du[n, i] / dx[n, j]``) and running
``jacrev``: ``m`` reverse passes, whatever ``N``.

Layouts (MindFlow's):

- ``batched_jacobian(model)(x)``: ``[m, N, d]``, ``J[i, n, j] = du_i / dx_j`` at point ``n``;
- ``batched_hessian(model)(x)``: ``[m, d, N, d]``, ``H[i, k, n, j] = d2u_i / dx_k dx_j`` at
  point ``n``.

The Hessian is forward-over-reverse: ``d`` forward-mode passes over the reverse-mode Jacobian,
each with the tangent ``e_j`` at every point (a ``[N, d]`` tensor whose column ``j`` is one),
instead of MindFlow's ``m * d`` reverse passes over reverse passes. Both rest on the same
assumption: the model acts on each row independently (no batch norm, no attention across
points); a model that mixes rows gets sums of cross-point terms, as in MindFlow.

Both results are built from ``core`` transformations, so they nest (``grad`` of a loss that
contains them, for training) and trace under ``core.jit``.
"""

from ..ops import creation as _creation
from ..ops import reduction as _reduction
from ..ops import shape as _shape
from ..ops._convert import as_tensor
from ..vmap import vmap
from .api import jacrev, jvp

__all__ = ["batched_hessian", "batched_jacobian"]


def _check_points(x, what):
    if x.ndim != 2:
        raise ValueError(
            f"{what}: expected points of shape [batch_size, in_channels], got {tuple(x.shape)}"
        )


def _check_output(out, x, what):
    if out.ndim != 2 or out.shape[0] != x.shape[0]:
        raise ValueError(
            f"{what}: the model must map points [batch_size, in_channels] = {tuple(x.shape)} to "
            f"[batch_size, out_channels], got an output of shape {tuple(out.shape)}"
        )


def batched_jacobian(model):
    """The Jacobian of a point-wise ``model`` at a batch of points (MindFlow's name).

    Args:
        model: a Cell or function mapping ``x [N, d]`` to ``u [N, m]``, row by row.

    Returns:
        A function ``x [N, d] -> J [m, N, d]`` with ``J[i, n, j] = du_i/dx_j (x_n)``: the
        ``jacrev`` of ``x -> sum_n model(x)[n]`` (``m`` reverse passes).

    Example::

        jac = core.batched_jacobian(net)   # net: [N, 2] -> [N, 1]
        u_x, u_t = jac(x)[0, :, 0:1], jac(x)[0, :, 1:2]   # [N, 1] each
    """

    def summed(x):
        out = model(x)  # [N, m]
        _check_output(out, x, "batched_jacobian")
        return _reduction.sum(out, axis=0)  # [m]

    reverse = jacrev(summed)

    def jacobian(x):
        x = as_tensor(x)
        _check_points(x, "batched_jacobian")
        return reverse(x)  # [m, N, d]

    return jacobian


def batched_hessian(model):
    """The Hessian of a point-wise ``model`` at a batch of points (MindFlow's name).

    Args:
        model: a Cell or function mapping ``x [N, d]`` to ``u [N, m]``, row by row.

    Returns:
        A function ``x [N, d] -> H [m, d, N, d]`` with ``H[i, k, n, j] = d2u_i / dx_k dx_j
        (x_n)`` (MindFlow's layout). It is computed as ``d`` Jacobian-vector products of
        ``batched_jacobian(model)``, the ``j``-th with the tangent ``e_j`` at every point.

    Example::

        hes = core.batched_hessian(net)   # net: [N, 2] -> [N, 1], inputs (x, t)
        u_xx = hes(x)[0, 0, :, 0:1]       # [N, 1]
    """
    jacobian = batched_jacobian(model)

    def hessian(x):
        x = as_tensor(x)
        _check_points(x, "batched_hessian")
        n, d = x.shape

        def column(e):  # e [d]: one basis vector, the same at every point
            tangent = _shape.broadcast_to(_shape.reshape(e, (1, d)), (n, d))  # [N, d]
            return jvp(jacobian, (x,), (tangent,))[1]  # [m, N, d_k]: d J[i, n, k] / dx[n, j]

        basis = _creation.eye(d, dtype=x.dtype)  # [d_j, d_j]
        try:
            cols = vmap(column)(basis)  # [d_j, m, N, d_k]
        except NotImplementedError:  # a primitive without a batching rule: loop
            cols = _shape.stack([column(basis[j]) for j in range(d)])
        return _shape.transpose(cols, (1, 3, 2, 0))  # [m, d_k, N, d_j]

    return hessian
