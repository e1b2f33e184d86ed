"""MindFlow's Kovasznay case: problem, dataset, evaluation."""

from .dataset import create_dataset
from .model import Kovasznay
from .utils import calculate_l2_error, visual

__all__ = ["Kovasznay", "calculate_l2_error", "create_dataset", "visual"]
