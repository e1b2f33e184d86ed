"""``mindelec``: electromagnetics on the core engine (``mindelec.fdtd``: differentiable FDTD).

Maxwell PINNs with MindElec's layout, imported on use: ``mindelec.architecture``,
``mindelec.loss``, ``mindelec.solver``, ``mindelec.data``, ``mindelec.geometry``,
``mindelec.operators``, ``mindelec.common``.
"""

from . import fdtd as fdtd
