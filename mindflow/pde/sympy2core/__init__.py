"""sympy front-end: equations written with sympy become nodes evaluated on a batch (MindFlow's
``mindflow.pde.sympy2mindspore``), with derivatives of any order and normal derivatives."""

from .parse_sympy import FormulaNode as FormulaNode
from .parse_sympy import evaluate_formulas as evaluate_formulas
from .parse_sympy import sympy_to_core as sympy_to_core
from .parse_sympy import sympy_to_mindspore as sympy_to_mindspore
from .sympy_translation import NORMAL as NORMAL
from .sympy_translation import normal_derivative as normal_derivative
