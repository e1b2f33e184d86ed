"""MindFlow's ``mindflow.core``: derivatives of networks over batches of points, losses and
loss weighting, learning-rate schedules.

(Inside the ``mindflow`` package this name is MindFlow's subpackage; the engine is the
top-level ``core``, which every ``mindflow`` module imports absolutely.)
"""

from .derivatives import batched_hessian as batched_hessian
from .derivatives import batched_jacobian as batched_jacobian
from .losses import MTLWeightedLoss as MTLWeightedLoss
from .losses import RegularizedLossCell as RegularizedLossCell
from .losses import RelativeRMSELoss as RelativeRMSELoss
from .losses import WeightedLossCell as WeightedLossCell
from .losses import get_loss_metric as get_loss_metric
from .lr_scheduler import get_multi_step_lr as get_multi_step_lr
from .lr_scheduler import get_poly_lr as get_poly_lr
from .lr_scheduler import get_warmup_cosine_annealing_lr as get_warmup_cosine_annealing_lr
from .math import get_grid_1d as get_grid_1d
from .math import get_grid_2d as get_grid_2d
from .math import get_grid_3d as get_grid_3d
