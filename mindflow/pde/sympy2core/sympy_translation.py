"""Translate one sympy expression into a tree of :mod:`pde_node` nodes (MindFlow's
``SympyTranslation``), collecting the derivatives it needs.

Supported: ``Add``, ``Mul``, ``Pow`` (any exponent, also a symbolic one), numbers (``Integer``,
``Rational``, ``Float``, ``pi``, ``E``, any closed number expression), input variables,
parameters, output variables (``u(x, t)``), ``Derivative`` of an output variable of any order
and any mix of inputs (MindFlow stops at 2), ``Derivative`` of a composite expression of the
inputs (expanded by sympy's chain rule), ``Derivative(u, n)`` for the normal derivative, and
the functions of :data:`CORE_SYMPY_TRANSLATIONS`.

Anything else is a ``ValueError`` that names the offending sub-expression, the equation, and
what is allowed.
"""

import sympy
from sympy.core.function import AppliedUndef

from .pde_node import (
    CORE_SYMPY_TRANSLATIONS,
    AddNode,
    DerivativeNode,
    FunctionNode,
    MulNode,
    NetOutputNode,
    NormalDerivativeNode,
    NumberNode,
    ParamNode,
    PowNode,
    SymbolNode,
)

__all__ = ["NORMAL", "SympyTranslation", "normal_derivative"]

NORMAL = sympy.Symbol("n")  # MindFlow's symbol for the outward normal direction


def normal_derivative(u, n=NORMAL):
    """``Derivative(u, n)``, unevaluated: the outward normal derivative ``grad u . n`` of the
    output variable ``u`` (``u.diff(n)`` is 0 in sympy: ``u`` does not depend on ``n``)."""
    return sympy.Derivative(u, n, evaluate=False)


def _names(seq):
    return "[" + ", ".join(str(s) for s in seq) + "]"


class SympyTranslation:
    """Translate ``formula`` for ``formula_node`` (a :class:`FormulaNode`): fills its
    ``nodes`` (the additive terms), ``requests`` (``{(j, idx)}`` derivatives), ``normals``
    (output columns whose normal derivative appears) and ``max_order``.

    Args:
        formula: a sympy expression.
        formula_node: the FormulaNode being built.
        in_vars: the input Symbols, in the column order of the network's input.
        out_vars: the output Functions of ``in_vars``, in the column order of its output.
        params: Symbols that stand for trainable parameters (or None).
        normal: the Symbol that means the outward normal in ``Derivative(u, normal)``.
    """

    def __init__(self, formula, formula_node, in_vars, out_vars, params=None, normal=NORMAL):
        self.formula = sympy.sympify(formula)
        self.formula_node = formula_node
        self.in_vars = list(in_vars)
        self.out_vars = list(out_vars)
        self.params = list(params or [])
        self.normal = normal
        self._check_vars()
        self._parse_node()

    # ---- checks -----------------------------------------------------------------------------
    def _check_vars(self):
        for v in self.in_vars:
            if not isinstance(v, sympy.Symbol):
                raise TypeError(f"in_vars must be sympy Symbols, got {v!r} ({type(v).__name__})")
        for f in self.out_vars:
            if not isinstance(f, AppliedUndef):
                raise TypeError(
                    f"out_vars must be applied sympy Functions such as Function('u')(x, t), got "
                    f"{f!r} ({type(f).__name__})"
                )
        for p in self.params:
            if not isinstance(p, sympy.Symbol):
                raise TypeError(f"params must be sympy Symbols, got {p!r} ({type(p).__name__})")
            if p in self.in_vars:
                raise ValueError(f"{p} is both an input variable and a parameter")

    def _error(self, what):
        return ValueError(
            f"equation {self.formula_node.name!r} ({self.formula}): {what}. Allowed: input "
            f"variables {_names(self.in_vars)}, output variables {_names(self.out_vars)}, "
            f"parameters {_names(self.params)}, numbers, Derivative(out_var, in_vars...) or "
            f"Derivative(out_var, {self.normal}), and the functions "
            f"{', '.join(sorted(CORE_SYMPY_TRANSLATIONS))}"
        )

    # ---- the walk ---------------------------------------------------------------------------
    def _parse_node(self):
        terms = self.formula.args if self.formula.is_Add else (self.formula,)
        self.formula_node.nodes.extend(self._parse_item(t) for t in terms)

    def _parse_item(self, item):
        if item.is_number:
            return self._parse_number(item)
        if item.is_Symbol:
            return self._parse_symbol(item)
        if item.is_Add:
            return AddNode([self._parse_item(a) for a in item.args])
        if item.is_Mul:
            return MulNode([self._parse_item(a) for a in item.args])
        if item.is_Pow:
            base, exponent = item.args
            return PowNode(self._parse_item(base), self._parse_item(exponent))
        if item.is_Derivative:
            return self._parse_derivative(item)
        if isinstance(item, AppliedUndef):
            return self._parse_network_function(item)
        if item.is_Function:
            return self._parse_function(item)
        raise self._error(f"{item} ({type(item).__name__}) is not supported")

    def _parse_number(self, item):
        value = complex(sympy.N(item))
        if value.imag != 0:
            raise self._error(f"the number {item} is complex")
        return NumberNode(value.real)

    def _parse_symbol(self, item):
        if item in self.in_vars:
            return SymbolNode(self.in_vars.index(item))
        if item in self.params:
            return ParamNode(self.params.index(item), str(item))
        if item == self.normal:
            raise self._error(
                f"the normal symbol {item} may only appear as Derivative(out_var, {item})"
            )
        raise self._error(
            f"unknown symbol {item} (add it to in_vars or params, or substitute a number)"
        )

    def _parse_network_function(self, item):
        if item in self.out_vars:
            return NetOutputNode(self.out_vars.index(item))
        same = [f for f in self.out_vars if f.func == item.func]
        if same:
            raise self._error(
                f"{item} is {same[0]} at other arguments: an output variable is only known at "
                "the batch's points"
            )
        raise self._error(f"unknown function {item}")

    def _parse_function(self, item):
        name = type(item).__name__
        fn = CORE_SYMPY_TRANSLATIONS.get(name)
        if fn is None:
            raise self._error(f"the function {name} in {item} is not supported")
        n = len(item.args)
        if name in ("Max", "Min"):
            if n < 2:
                raise self._error(f"{name} needs two or more arguments, got {item}")
        elif n != (2 if name == "atan2" else 1):
            raise self._error(f"{name} takes {2 if name == 'atan2' else 1} argument(s), got {item}")
        return FunctionNode([self._parse_item(a) for a in item.args], fn, name)

    def _parse_derivative(self, item):
        expr = item.expr
        variables = []
        for var, count in item.variable_count:
            if not (isinstance(count, int) or getattr(count, "is_Integer", False)):
                raise self._error(f"the derivative order {count} of {item} is not an integer")
            variables.extend([var] * int(count))
        has_normal = any(v == self.normal and v not in self.in_vars for v in variables)
        for v in variables:
            if v in self.in_vars or (v == self.normal and has_normal):
                continue
            if v in self.params:
                raise self._error(
                    f"{item} differentiates with respect to the parameter {v}; only input "
                    "variables (and the normal n) can be differentiation variables"
                )
            raise self._error(
                f"{item} differentiates with respect to {v}, which is not an input variable"
            )
        if not isinstance(expr, AppliedUndef) or expr not in self.out_vars:
            if has_normal:
                raise self._error(
                    f"{item}: a normal derivative applies to an output variable only (write "
                    f"Derivative(u, {self.normal}) for u in out_vars)"
                )
            # a derivative of a composite expression: sympy's chain rule, then translate
            return self._parse_item(sympy.diff(expr, *variables))
        j = self.out_vars.index(expr)
        if has_normal:
            if len(variables) != 1:
                raise self._error(
                    f"{item}: only the first normal derivative Derivative(u, {self.normal}) is "
                    "supported (not mixed with other variables or repeated)"
                )
            self.formula_node.normals.add(j)
            self.formula_node.max_order = max(self.formula_node.max_order, 1)
            return NormalDerivativeNode(j)
        node = DerivativeNode(j, [self.in_vars.index(v) for v in variables])
        self.formula_node.requests.add(node.key)
        self.formula_node.max_order = max(self.formula_node.max_order, node.order)
        return node
