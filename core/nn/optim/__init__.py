"""Optimizers: ``SGD``, ``Momentum``, ``Adam``, ``AdamW``, ``AdamWeightDecay``, ``LBFGS`` and
gradient clipping."""

from .adam import Adam as Adam
from .adam import AdamW as AdamW
from .adam import AdamWeightDecay as AdamWeightDecay
from .clip import clip_by_global_norm as clip_by_global_norm
from .clip import global_norm as global_norm
from .lbfgs import LBFGS as LBFGS
from .momentum import Momentum as Momentum
from .optimizer import Optimizer as Optimizer
from .sgd import SGD as SGD
