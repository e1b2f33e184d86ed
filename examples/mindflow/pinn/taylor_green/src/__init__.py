"""MindFlow's 2-D Taylor-Green case: problem, datasets, evaluation."""

from .dataset import create_test_dataset, create_training_dataset
from .model import NavierStokes2D
from .utils import calculate_l2_error, visual

__all__ = [
    "NavierStokes2D",
    "calculate_l2_error",
    "create_test_dataset",
    "create_training_dataset",
    "visual",
]
