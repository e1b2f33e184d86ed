"""Training helpers for the Protenix port: the jitted training step
(:mod:`protenix.train.train_step`), a small example and stand-in network (:mod:`.toy`) and
the recompute memory bench (:mod:`.bench`)."""

from .train_step import make_train_step

__all__ = ["make_train_step"]
