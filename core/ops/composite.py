"""MindSpore's higher-order functions: ``GradOperation`` and ``depend``.

grad_all = ops.GradOperation(get_all=True)
dx, dy = grad_all(net)(x, y)               # d sum(net(x, y)) / d(x, y)
dx, dw = ops.GradOperation(get_by_list=True, sens_param=True)(net, params)(x, sens)
"""

from ..autodiff import api as _api
from ..tensor import Tensor


def depend(value, expr):
    """``value``, after ``expr`` (MindSpore orders side effects in a graph with it).

    diffsci runs Python statements in order, eagerly and while tracing, and a compiled graph
    keeps every Parameter update, so ``expr`` has already happened: ``value`` is returned.
    """
    del expr  # already evaluated by Python before this call
    return value


def _flat_outputs(out):
    if isinstance(out, Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        flat = []
        for o in out:
            flat.extend(_flat_outputs(o))
        return flat
    raise TypeError(f"GradOperation: the function returned {type(out).__name__}, not tensors")


class GradOperation:
    """A gradient transform configured once, applied to a function or Cell.

    Args:
        get_all: gradients for every positional input (a tuple), instead of the first only.
        get_by_list: gradients for the Parameters passed as ``GradOperation(...)(fn, params)``.
            With ``get_all`` too the result is ``(input_grads, param_grads)``.
        sens_param: the last argument of the gradient function is the output cotangent
            ("sensitivity", same structure as the output); otherwise ones for every output,
            so a tuple output gives the sum of the outputs' gradients (MindSpore's rule).

    ``GradOperation()(fn)`` returns ``grad_fn(*inputs[, sens])``.
    """

    def __init__(self, get_all=False, get_by_list=False, sens_param=False):
        self.get_all = bool(get_all)
        self.get_by_list = bool(get_by_list)
        self.sens_param = bool(sens_param)

    def __call__(self, fn, weights=None):
        if self.get_by_list and weights is None:
            raise TypeError("GradOperation(get_by_list=True)(fn, weights): weights are missing")
        if not self.get_by_list and weights is not None:
            raise TypeError("GradOperation(fn, weights): weights need get_by_list=True")

        def grad_fn(*args):
            if self.sens_param:
                if not args:
                    raise TypeError("GradOperation(sens_param=True): the sens argument is missing")
                args, sens = args[:-1], args[-1]
            else:
                sens = None
            if not args and not self.get_by_list:
                raise TypeError("GradOperation: the function has no input to differentiate")

            def scalar(*inputs):
                # <out, sens> summed over every output: its gradient is the VJP with sens.
                outs = _flat_outputs(fn(*inputs))
                seeds = [None] * len(outs) if sens is None else _flat_outputs(sens)
                if len(seeds) != len(outs):
                    raise ValueError(
                        f"GradOperation: sens has {len(seeds)} tensors for {len(outs)} outputs"
                    )
                total = 0
                for o, s in zip(outs, seeds):
                    if s is not None and tuple(s.shape) != tuple(o.shape):
                        raise ValueError(
                            f"GradOperation: sens shape {tuple(s.shape)} != output shape "
                            f"{tuple(o.shape)}"
                        )
                    total = total + (o.sum() if s is None else (o * s).sum())
                return total

            if self.get_all:
                position = tuple(range(len(args)))  # with get_by_list: (inputs, weights)
            else:
                position = None if self.get_by_list else 0
            return _api.grad(scalar, position, weights if self.get_by_list else None)(*args)

        return grad_fn
