"""Derivative, batching and lowering rules, one module per primitive family.

Each ``core/rules/<family>.py`` registers, for the primitives declared in
``core/prims/<family>.py``: the VJP (reverse mode), the JVP (forward mode), the batching rule
(vmap) and the lowering record (what ``core.jit`` needs to fuse and generate code). Rules are
written with ``core.ops``, so they are themselves differentiable to any order. Helpers shared
by the families are in ``_define.py``.
"""

from . import conv as conv
from . import decomp as decomp
from . import elementwise as elementwise
from . import fft as fft
from . import kernel_call as kernel_call
from . import indexing as indexing
from . import linalg as linalg
from . import normalize as normalize
from . import reduction as reduction
from . import shape as shape
from . import softmax as softmax
from . import sort as sort
from . import special as special
