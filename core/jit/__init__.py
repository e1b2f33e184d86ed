"""Graph mode: ``core.jit`` traces to an IR, optimizes it, and lowers it to fused code."""

from . import random as _random  # noqa: F401  (installs core.random_state's draw hook)
from .api import JitFunction as JitFunction
from .api import jit as jit
from .codegen import Lowered as Lowered
from .ir import Eqn as Eqn
from .ir import Graph as Graph
from .ir import Var as Var
