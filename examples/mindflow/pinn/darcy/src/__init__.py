"""MindFlow's 2-D Darcy case: problem, datasets, evaluation."""

from .darcy import Darcy2D
from .dataset import create_test_dataset, create_training_dataset
from .utils import calculate_l2_error, visual

__all__ = [
    "Darcy2D",
    "calculate_l2_error",
    "create_test_dataset",
    "create_training_dataset",
    "visual",
]
