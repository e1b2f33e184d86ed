"""MindElec's ``mindelec.common``: physical constants (``LIGHT_SPEED``, ``MU``, ``EPS``, ``PI``),
the relative L2 metric ``L2``, learning-rate schedules ``LearningRate`` and ``get_poly_lr``."""

from .constants import EPS as EPS
from .constants import LIGHT_SPEED as LIGHT_SPEED
from .constants import MU as MU
from .constants import PI as PI
from .lr_scheduler import LearningRate as LearningRate
from .lr_scheduler import get_poly_lr as get_poly_lr
from .metrics import L2 as L2

__all__ = ["EPS", "L2", "LIGHT_SPEED", "MU", "PI", "LearningRate", "get_poly_lr"]
