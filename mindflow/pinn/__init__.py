"""Training physics-informed networks: Adam then L-BFGS, loss weighting, hard constraints,
adaptive resampling, diagnostics (``from diffsci.mindflow.pinn import Trainer``)."""

from .adaptive import Resampler as Resampler
from .constraints import OutputTransform as OutputTransform
from .constraints import ball_distance as ball_distance
from .constraints import box_distance as box_distance
from .constraints import hard_constraint as hard_constraint
from .diagnostics import plot_history as plot_history
from .diagnostics import plot_residual_map as plot_residual_map
from .diagnostics import residual_map as residual_map
from .trainer import Trainer as Trainer
from .weighting import FixedWeights as FixedWeights
from .weighting import GradNormWeights as GradNormWeights
from .weighting import LossWeighting as LossWeighting
from .weighting import MTLWeights as MTLWeights
from .weighting import make_weighting as make_weighting

__all__ = [
    "FixedWeights",
    "GradNormWeights",
    "LossWeighting",
    "MTLWeights",
    "OutputTransform",
    "Resampler",
    "Trainer",
    "ball_distance",
    "box_distance",
    "hard_constraint",
    "make_weighting",
    "plot_history",
    "plot_residual_map",
    "residual_map",
]
