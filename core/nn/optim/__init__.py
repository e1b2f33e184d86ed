"""Optimizers: ``SGD``, ``Adam``, ``AdamW``, ``LBFGS`` and gradient clipping."""

from .adam import Adam as Adam
from .adam import AdamW as AdamW
from .clip import clip_by_global_norm as clip_by_global_norm
from .clip import global_norm as global_norm
from .lbfgs import LBFGS as LBFGS
from .optimizer import Optimizer as Optimizer
from .sgd import SGD as SGD
