"""``autograd.numpy.random``: test data are plain numpy arrays."""

from numpy.random import *  # noqa: F403
