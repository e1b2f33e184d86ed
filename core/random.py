"""Random tensors from the current device's generator; ``core.set_seed`` makes them repeatable.

The draws are written in ``core.ops.random`` (ops draw too: dropout, ``ops.randn``) and the
seed lives in ``core.random_state``; this module is the user's namespace for them.
"""

from .ops.random import draw_bernoulli as bernoulli
from .ops.random import draw_normal as normal
from .ops.random import draw_permutation as permutation
from .ops.random import draw_randint as randint
from .ops.random import draw_uniform as uniform
from .random_state import get_seed as get_seed
from .random_state import set_seed as set_seed

__all__ = ["bernoulli", "get_seed", "normal", "permutation", "randint", "set_seed", "uniform"]
