"""Optimizers: ``SGD``, ``Momentum``, ``Adam``, ``AdamW``, ``AdamWeightDecay``, ``LBFGS`` and
gradient clipping."""

from ...ops.clip import clip_by_global_norm as clip_by_global_norm
from ...ops.clip import global_norm as global_norm
from .adam import Adam as Adam
from .adam import AdamW as AdamW
from .adam import AdamWeightDecay as AdamWeightDecay
from .lbfgs import LBFGS as LBFGS
from .momentum import Momentum as Momentum
from .optimizer import Optimizer as Optimizer
from .sgd import SGD as SGD
