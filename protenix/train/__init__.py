"""Training helpers for the Protenix port: the jitted training step and AF3's training-time
random draws (see :mod:`protenix.train.train_step`)."""

from .train_step import centre_random_augmentation, make_train_step, sample_noise_level

__all__ = ["centre_random_augmentation", "make_train_step", "sample_noise_level"]
