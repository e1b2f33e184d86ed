"""The nodes a sympy expression becomes (MindFlow's ``sympy2mindspore/pde_node.py`` names).

Each node has ``compute(data)`` with ``data`` a dict:

- ``"inputs"``: the batch ``[N, d]``;
- ``"outputs"``: the network's output ``[N, m]``;
- ``"derivatives"``: ``{(j, idx): [N, 1]}`` with ``idx`` a sorted tuple of input indices
  (see :mod:`mindflow.pde.derivatives`);
- ``"gradients"``: ``{(j, p): [N, d]}``, the gradients those came from;
- ``"norm"``: the boundary's normals ``[N, k]`` or ``[k]`` (or None);
- ``"params"``: the values of the equation's parameters (a Tensor ``[P]`` or a sequence of
  ``P`` scalars), or None.

A node returns a ``[N, 1]`` Tensor, a 0-d Tensor (a parameter) or a Python float (a
constant: a weak scalar, so it keeps the batch's dtype).
"""

from diffsci import core
from diffsci.core import ops

from ..derivatives import normal_component

__all__ = [
    "CORE_SYMPY_TRANSLATIONS",
    "MINDSPORE_SYMPY_TRANSLATIONS",
    "AddNode",
    "DerivativeNode",
    "FunctionNode",
    "MSFunctionNode",
    "MulNode",
    "NetOutputNode",
    "NormalDerivativeNode",
    "NumberNode",
    "ParamNode",
    "PowNode",
    "SymbolNode",
]

# sympy function class name -> core op (one argument unless noted)
CORE_SYMPY_TRANSLATIONS = {
    "sin": ops.sin,
    "cos": ops.cos,
    "tan": ops.tan,
    "asin": ops.arcsin,
    "acos": ops.arccos,
    "atan": ops.arctan,
    "sinh": ops.sinh,
    "cosh": ops.cosh,
    "tanh": ops.tanh,
    "asinh": ops.arcsinh,
    "acosh": ops.arccosh,
    "atanh": ops.arctanh,
    "exp": ops.exp,
    "log": ops.log,
    "sqrt": ops.sqrt,
    "Abs": ops.abs,
    "sign": ops.sign,
    "erf": ops.erf,
    "floor": ops.floor,
    "ceiling": ops.ceil,
    "atan2": ops.arctan2,  # two arguments
    "Max": ops.maximum,  # two or more arguments, folded
    "Min": ops.minimum,
}
MINDSPORE_SYMPY_TRANSLATIONS = CORE_SYMPY_TRANSLATIONS  # MindFlow's name for the table


class NumberNode:
    """A constant (Integer, Rational, Float, pi, E, or any closed number expression)."""

    def __init__(self, value):
        self.value = float(value)

    def compute(self, data):
        return self.value

    def __repr__(self):
        return f"NumberNode({self.value!r})"


class SymbolNode:
    """Input variable ``in_vars[in_var_idx]``: the column ``inputs[:, i:i+1]``."""

    def __init__(self, in_var_idx):
        self.in_var_idx = int(in_var_idx)

    def compute(self, data):
        i = self.in_var_idx
        return data["inputs"][:, i : i + 1]


class ParamNode:
    """Trainable parameter ``params[param_var_idx]`` (inverse problems): a 0-d value."""

    def __init__(self, param_var_idx, name):
        self.param_var_idx = int(param_var_idx)
        self.name = name

    def compute(self, data):
        params = data.get("params")
        if params is None:
            raise ValueError(
                f"the equation uses the parameter {self.name} but no parameter values were "
                "given (PDEWithLoss(..., params=[...], params_val=Parameter) or params=)"
            )
        k = self.param_var_idx
        if isinstance(params, core.Tensor):
            if params.ndim != 1 or params.shape[0] <= k:
                raise ValueError(
                    f"parameter {self.name} is number {k} of the equation's parameters, but "
                    f"their values have shape {tuple(params.shape)} (expected [P] with P > {k})"
                )
            return params[k]
        return params[k]


class NetOutputNode:
    """Output variable ``out_vars[out_var_idx]``: the column ``outputs[:, j:j+1]``."""

    def __init__(self, out_var_idx):
        self.out_var_idx = int(out_var_idx)

    def compute(self, data):
        j = self.out_var_idx
        return data["outputs"][:, j : j + 1]


class DerivativeNode:
    """``D^idx u_j``: output ``out_var_idx`` differentiated once for each input index in
    ``in_var_idx`` (sorted; any order, any mix). ``order`` is ``len(in_var_idx)``."""

    def __init__(self, out_var_idx, in_var_idx):
        self.out_var_idx = int(out_var_idx)
        self.in_var_idx = tuple(sorted(int(i) for i in in_var_idx))
        self.order = len(self.in_var_idx)

    @property
    def key(self):
        return (self.out_var_idx, self.in_var_idx)

    def compute(self, data):
        return data["derivatives"][self.key]


class NormalDerivativeNode:
    """``du_j/dn = grad u_j . n`` with the boundary's outward normals ``data["norm"]``
    (``[N, k]`` or ``[k]``; the ``k`` components pair with the first ``k`` inputs)."""

    order = 1

    def __init__(self, out_var_idx):
        self.out_var_idx = int(out_var_idx)

    def compute(self, data):
        grad = data["gradients"][(self.out_var_idx, ())]
        return normal_component(grad, data.get("norm"), "normal derivative (Derivative(u, n))")


class AddNode:
    """Sum of the child nodes."""

    def __init__(self, nodes):
        self.nodes = list(nodes)

    def compute(self, data):
        total = self.nodes[0].compute(data)
        for node in self.nodes[1:]:
            total = total + node.compute(data)
        return total


class MulNode:
    """Product of the child nodes (a constant factor multiplies last: one scaling)."""

    def __init__(self, nodes):
        consts = [n for n in nodes if isinstance(n, NumberNode)]
        self.coefficient = 1.0
        for c in consts:
            self.coefficient *= c.value
        self.nodes = [n for n in nodes if not isinstance(n, NumberNode)]

    def compute(self, data):
        if not self.nodes:
            return self.coefficient
        prod = self.nodes[0].compute(data)
        for node in self.nodes[1:]:
            prod = prod * node.compute(data)
        return prod if self.coefficient == 1.0 else prod * self.coefficient


class PowNode:
    """``base ** exponent``; a constant exponent 2, -1 or 1/2 is a product, a reciprocal or a
    square root (cheaper, and exact derivatives at base 0 for the square)."""

    def __init__(self, base, exponent):
        self.base = base
        self.exponent = exponent

    def compute(self, data):
        b = self.base.compute(data)
        if isinstance(self.exponent, NumberNode):
            e = self.exponent.value
            if isinstance(b, float):
                return b**e
            if e == 1.0:
                return b
            if e == 2.0:
                return b * b
            if e == -1.0:
                return 1.0 / b
            if e == 0.5:
                return ops.sqrt(b)
            if e == -0.5:
                return 1.0 / ops.sqrt(b)
            if e == float(int(e)) and 0 < e <= 4:
                out = b
                for _ in range(int(e) - 1):
                    out = out * b
                return out
            return b**e
        return b ** self.exponent.compute(data)


class FunctionNode:
    """A core op applied to the child nodes' values (``sin``, ``exp``, ``atan2``, ``Max``)."""

    def __init__(self, nodes, fn, name):
        self.nodes = list(nodes)
        self.fn = fn
        self.name = name

    def compute(self, data):
        args = [n.compute(data) for n in self.nodes]
        if all(isinstance(a, float) for a in args):
            args = [core.tensor(a, dtype=data["inputs"].dtype) for a in args]
        if self.name in ("Max", "Min"):
            res = args[0]
            for a in args[1:]:
                res = self.fn(res, a)
            return res
        return self.fn(*args)


MSFunctionNode = FunctionNode  # MindFlow's name
