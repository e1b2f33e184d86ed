"""sympy equations -> formula nodes evaluated on a batch (MindFlow's ``parse_sympy.py``)."""

from diffsci import core

from ..derivatives import DerivativePlan, evaluate
from .sympy_translation import NORMAL, SympyTranslation

__all__ = ["FormulaNode", "evaluate_formulas", "sympy_to_core", "sympy_to_mindspore"]


class FormulaNode:
    """The root of one translated equation.

    Attributes:
        name: the equation's key in the dict given to :func:`sympy_to_mindspore`.
        nodes: its additive terms (nodes); ``compute`` sums them.
        requests: ``{(j, idx)}``, the derivatives ``D^idx u_j`` it reads.
        normals: the output columns whose normal derivative it reads.
        max_order: its highest derivative order (MindFlow's attribute).
        n_in, n_out: the number of input and output variables it was translated for.
    """

    def __init__(self, eq_name, n_in=0, n_out=0):
        self.name = eq_name
        self.nodes = []
        self.requests = set()
        self.normals = set()
        self.max_order = 0
        self.n_in, self.n_out = n_in, n_out
        self.formula = None

    def compute(self, data):
        """The equation's value: ``[N, 1]`` (a Python float or 0-d Tensor if it reads no
        point data; :func:`evaluate_formulas` broadcasts those to ``[N, 1]``)."""
        total = self.nodes[0].compute(data)
        for node in self.nodes[1:]:
            total = total + node.compute(data)
        return total

    def __repr__(self):
        return f"FormulaNode({self.name!r}: {self.formula}, max_order={self.max_order})"


def sympy_to_mindspore(equations, in_vars, out_vars, params=None, normal=NORMAL, verbose=False):
    """Translate sympy equations into formula nodes (MindFlow's name; also
    :func:`sympy_to_core`).

    Args:
        equations (dict): ``{name: sympy expression}``; each expression is a residual (zero
            when the equation holds).
        in_vars (list[sympy.Symbol]): the input variables, in the column order of the
            network's input ``[N, d]``.
        out_vars (list[sympy.Function]): the output variables, functions of ``in_vars``
            (``Function('u')(x, t)``), in the column order of the network's output ``[N, m]``.
        params (list[sympy.Symbol]): symbols that stand for trainable parameters (inverse
            problems); their values come with :func:`evaluate_formulas` (``params=``).
        normal (sympy.Symbol): the symbol that means the outward normal:
            ``Derivative(u, n)`` is ``grad u . n`` with the normals of the boundary batch.
            Note ``u.diff(n)`` is 0 in sympy (``u`` does not depend on ``n``): write the
            unevaluated ``sympy.Derivative(u, n)``.
        verbose (bool): print each equation and its number of terms, as MindFlow does.

    Returns:
        list[FormulaNode], one per equation, in the dict's order.

    Raises:
        ValueError: an unknown symbol or function, a derivative with respect to something
            that is not an input, an unsupported expression (the message names it).
    """
    if not isinstance(equations, dict):
        raise TypeError(
            f"equations must be a dict {{name: sympy expression}}, got {type(equations).__name__}"
        )
    in_vars, out_vars = list(in_vars), list(out_vars)
    nodes = []
    for name, formula in equations.items():
        node = FormulaNode(name, len(in_vars), len(out_vars))
        translation = SympyTranslation(formula, node, in_vars, out_vars, params, normal)
        node.formula = translation.formula
        if verbose:
            print(f"{name}: {translation.formula}")
            print(f"    Item numbers of current derivative formula nodes: {len(node.nodes)}")
        nodes.append(node)
    return nodes


sympy_to_core = sympy_to_mindspore


def evaluate_formulas(formula_nodes, model, inputs, norm=None, params=None):
    """Evaluate translated equations on one batch, with one derivative tower for all of them.

    Args:
        formula_nodes (list[FormulaNode]): from :func:`sympy_to_mindspore`.
        model: a Cell or function mapping ``inputs [N, d]`` to ``[N, m]``.
        inputs (Tensor): the batch ``[N, d]``.
        norm (Tensor): outward normals ``[N, k]`` or ``[k]`` for ``Derivative(u, n)``.
        params: parameter values (Tensor ``[P]`` or a sequence of ``P`` scalars) for the
            ``params`` symbols.

    Returns:
        list of Tensors ``[N, 1]``, one residual per equation.
    """
    formula_nodes = list(formula_nodes)
    if not formula_nodes:
        return []
    for f in formula_nodes:
        if not isinstance(f, FormulaNode):
            raise TypeError(
                f"expected FormulaNodes from sympy_to_mindspore, got {type(f).__name__}"
            )
    n_in, n_out = formula_nodes[0].n_in, formula_nodes[0].n_out
    for f in formula_nodes[1:]:
        if (f.n_in, f.n_out) != (n_in, n_out):
            raise ValueError(
                f"equations {formula_nodes[0].name!r} and {f.name!r} were translated for "
                f"different variables ({n_in}/{n_out} and {f.n_in}/{f.n_out} inputs/outputs)"
            )
    if not isinstance(inputs, core.Tensor):
        raise TypeError(f"inputs must be a core Tensor [N, d], got {type(inputs).__name__}")
    requests = set().union(*(f.requests for f in formula_nodes))
    normals = set().union(*(f.normals for f in formula_nodes))
    if normals and norm is None:
        names = [f.name for f in formula_nodes if f.normals]
        raise ValueError(
            f"equations {names} use the normal derivative Derivative(u, n) but parse_node got "
            "no normals (norm=None); pass the boundary's normals [N, k]"
        )
    plan = DerivativePlan(requests, n_in, n_out, gradients=[(j, ()) for j in normals])
    outputs, derivatives, gradients = evaluate(model, inputs, plan)
    data = {
        "inputs": inputs,
        "outputs": outputs,
        "derivatives": derivatives,
        "gradients": gradients,
        "norm": norm,
        "params": params,
    }
    res = []
    for f in formula_nodes:
        r = f.compute(data)
        if not isinstance(r, core.Tensor) or tuple(r.shape) != (inputs.shape[0], 1):
            r = core.ops.zeros((inputs.shape[0], 1), dtype=outputs.dtype) + r
        res.append(r)
    return res
