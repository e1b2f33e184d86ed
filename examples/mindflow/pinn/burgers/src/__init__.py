"""The Burgers example's helpers in MindFlow's layout (``src/``): datasets, problem, plots."""

from .dataset import create_test_dataset, create_training_dataset
from .model import Burgers1D
from .utils import calculate_l2_error, visual

__all__ = [
    "Burgers1D",
    "calculate_l2_error",
    "create_test_dataset",
    "create_training_dataset",
    "visual",
]
