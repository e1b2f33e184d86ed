"""``mindelec``: electromagnetics on the core engine (``mindelec.fdtd``: differentiable FDTD)."""

from . import fdtd as fdtd
