"""Graph mode: ``core.jit`` traces to an IR, optimizes it, and lowers it to fused code."""

from .api import JitFunction as JitFunction
from .api import jit as jit
from .codegen import Lowered as Lowered
from .ir import Eqn as Eqn
from .ir import Graph as Graph
from .ir import Var as Var
