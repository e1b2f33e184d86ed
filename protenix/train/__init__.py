"""Training helpers for the Protenix port: the jitted training step
(:mod:`protenix.train.train_step`), its random source (:mod:`.step_random`), a small example
and a tiny config (:mod:`.toy`) and
the recompute memory bench (:mod:`.bench`)."""

from .step_random import StepRandom
from .train_step import make_train_step

__all__ = ["StepRandom", "make_train_step"]
