"""MindElec's ``mindelec.solver``: ``Problem`` (the residuals a user writes), ``Solver`` (train,
eval and predict, eager or compiled with ``core.jit``) and the callbacks
``LossAndTimeMonitor`` and ``EvalCallback``."""

from .callback import EvalCallback as EvalCallback
from .callback import LossAndTimeMonitor as LossAndTimeMonitor
from .problem import Problem as Problem
from .solver import Solver as Solver

__all__ = ["EvalCallback", "LossAndTimeMonitor", "Problem", "Solver"]
