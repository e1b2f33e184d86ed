"""PDE problems for PINNs (MindFlow's ``mindflow.pde``): equations written with sympy
(``PDEWithLoss``, ``sympy_to_mindspore``, built-ins ``Burgers``, ``NavierStokes``,
``Poisson``) or as plain Python functions of the network (``mindflow.pde.residual``).
Derivatives of any order, shared across equations (``mindflow.pde.derivatives``). Data-driven
problems: ``SteadyFlowWithLoss``, ``UnsteadyFlowWithLoss`` (autoregressive rollout)."""

from . import derivatives as derivatives
from . import residual as residual
from .flow_with_loss import FlowWithLoss as FlowWithLoss
from .flow_with_loss import SteadyFlowWithLoss as SteadyFlowWithLoss
from .flow_with_loss import UnsteadyFlowWithLoss as UnsteadyFlowWithLoss
from .pde_with_loss import Burgers as Burgers
from .pde_with_loss import NavierStokes as NavierStokes
from .pde_with_loss import PDEWithLoss as PDEWithLoss
from .pde_with_loss import Poisson as Poisson
from .sympy2core import FormulaNode as FormulaNode
from .sympy2core import evaluate_formulas as evaluate_formulas
from .sympy2core import normal_derivative as normal_derivative
from .sympy2core import sympy_to_core as sympy_to_core
from .sympy2core import sympy_to_mindspore as sympy_to_mindspore
