"""Input derivatives of point-wise networks (MindElec's ``mindelec/operators/derivatives.py``).

A PINN network maps a batch of points ``x [N, d]`` to ``u [N, m]`` row by row, so
``d u[n, i] / d x[n', j]`` vanishes for ``n != n'`` and one reverse pass with the cotangent
``e_i`` in every row gives ``du_i/dx_j`` at all points at once (MindElec's ``sens`` trick).
"""

import inspect

from diffsci import core
from diffsci.core import nn, ops

__all__ = ["Grad", "Hessian", "Jacobian", "SecondOrderGrad"]


def _check_model(model, where):
    if not isinstance(model, nn.Cell) and not inspect.isfunction(model) and not callable(model):
        raise TypeError(f"{where}: model must be a Cell or a function, got {type(model).__name__}")


def _check_index(value, name, where, allow_none=False):
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{where}: {name} must be an int, got {value!r}")


def _column_grad(model, x, output_idx, where):
    """``[N, d]``: ``du_{output_idx}/dx`` at each of the ``N`` points (one reverse pass)."""
    out, vjp_fn = core.vjp(model, x)
    if out.ndim != 2 or out.shape[0] != x.shape[0]:
        raise ValueError(
            f"{where}: the model must map [N, in] = {tuple(x.shape)} to [N, out], got an output "
            f"of shape {tuple(out.shape)}"
        )
    if not 0 <= output_idx < out.shape[1]:
        raise ValueError(
            f"{where}: output_idx {output_idx} is out of range for {out.shape[1]} output columns"
        )
    onehot = [1.0 if i == output_idx else 0.0 for i in range(out.shape[1])]
    sens = ops.zeros_like(out) + core.tensor(onehot, dtype=out.dtype)  # [N, m]: e_i per row
    (dx,) = vjp_fn(sens)
    return dx  # [N, d]


class Grad(nn.Cell):
    """First derivatives of one output column with respect to the inputs (MindElec's ``Grad``).

    Args:
        model: a Cell or function ``[N, d] -> [N, m]``.
        argnum: which positional input is differentiated (only 0: one input). Default 0.

    Inputs ``(x [N, d], input_idx, output_idx, net_out)``: ``input_idx`` an int (the column
    ``j``) or None (all columns), ``output_idx`` the column ``i`` of the output, ``net_out``
    the model's output (accepted for MindElec's signature; recomputed here).

    Returns ``[N, 1]`` (``du_i/dx_j``) or ``[N, d]`` with ``input_idx=None``.
    """

    def __init__(self, model, argnum=0):
        super().__init__()
        _check_model(model, "Grad")
        _check_index(argnum, "argnum", "Grad")
        if argnum != 0:
            raise ValueError(
                f"Grad: only argnum=0 (a single input tensor) is supported, got {argnum}"
            )
        self.model = model
        self.argnum = argnum

    def construct(self, *x):
        if len(x) < 4:
            raise ValueError(
                f"Grad: expected (inputs, input_idx, output_idx, net_out), got {len(x)} arguments"
            )
        input_idx, output_idx = x[-3], x[-2]
        (inputs,) = x[:-3]
        _check_index(input_idx, "input_idx", "Grad", allow_none=True)
        _check_index(output_idx, "output_idx", "Grad")
        if inputs.ndim != 2:
            raise ValueError(f"Grad: inputs must be [N, d], got {tuple(inputs.shape)}")
        dx = _column_grad(self.model, inputs, output_idx, "Grad")  # [N, d]
        if input_idx is None:
            return dx
        if not 0 <= input_idx < inputs.shape[1]:
            raise ValueError(
                f"Grad: input_idx {input_idx} is out of range for {inputs.shape[1]} input columns"
            )
        return dx[:, input_idx : input_idx + 1]  # [N, 1]


class SecondOrderGrad(nn.Cell):
    """``d2 u_{output_idx} / dx_{input_idx1} dx_{input_idx2}`` at each point, ``[N, 1]``
    (MindElec's ``SecondOrderGrad``: reverse over reverse).

    Args:
        model: a Cell or function ``[N, d] -> [N, m]``.
        input_idx1, input_idx2: input columns of the first and second derivative.
        output_idx: output column.
    """

    def __init__(self, model, input_idx1, input_idx2, output_idx):
        super().__init__()
        _check_model(model, "SecondOrderGrad")
        for value, name in (
            (input_idx1, "input_idx1"),
            (input_idx2, "input_idx2"),
            (output_idx, "output_idx"),
        ):
            _check_index(value, name, "SecondOrderGrad")
        self.model = model
        self.input_idx1, self.input_idx2, self.output_idx = input_idx1, input_idx2, output_idx

    def construct(self, x):
        def first(points):
            dx = _column_grad(self.model, points, self.output_idx, "SecondOrderGrad")
            return dx[:, self.input_idx1 : self.input_idx1 + 1]  # [N, 1]

        d2 = _column_grad(first, x, 0, "SecondOrderGrad")  # [N, d]
        return d2[:, self.input_idx2 : self.input_idx2 + 1]  # [N, 1]


class Jacobian(nn.Cell):
    """The full Jacobian of output ``out_idx`` of ``net`` (MindElec's ``Jacobian``).

    Args:
        net: a function or Cell of Tensor inputs.
        argnums: the input differentiated (int), or None (all: a tuple, one per input).
        out_idx: which output of a tuple-valued ``net``. Default 0.

    Returns ``[*out.shape, *x.shape]`` (``core.jacrev``), or a tuple of them with None.
    """

    def __init__(self, net, argnums=0, out_idx=0):
        super().__init__()
        _check_index(argnums, "argnums", "Jacobian", allow_none=True)
        _check_index(out_idx, "out_idx", "Jacobian")
        self.net, self.argnums, self.out_idx = net, argnums, out_idx

    def _selected(self, *x):
        out = self.net(*x)
        return out[self.out_idx] if isinstance(out, (tuple, list)) else out

    def construct(self, *x):
        positions = tuple(range(len(x))) if self.argnums is None else self.argnums
        return core.jacrev(self._selected, grad_position=positions)(*x)


class Hessian(nn.Cell):
    """Second derivatives of output ``out_idx`` (MindElec's ``Hessian``): the Jacobian with
    respect to input ``diff2_idx`` (None: all) of the Jacobian with respect to input
    ``diff1_idx``. Shape ``[*out.shape, *x1.shape, *x2.shape]``."""

    def __init__(self, net, diff1_idx, diff2_idx, out_idx=0):
        super().__init__()
        _check_index(diff1_idx, "diff1_idx", "Hessian")
        _check_index(diff2_idx, "diff2_idx", "Hessian", allow_none=True)
        self.jac1 = Jacobian(net, argnums=diff1_idx, out_idx=out_idx)
        self.jac2 = Jacobian(self.jac1, argnums=diff2_idx, out_idx=0)

    def construct(self, *x):
        return self.jac2(*x)
