"""The random source of a jitted training step.

:class:`StepRandom` draws every tensor (``randn``, ``random_rotation``) from core's generator
(``core.random.normal``), which ``core.jit`` stages as an equation of the compiled graph, so
each call of a jitted step gets fresh noise levels, noise and augmentations without passing
them as arguments. Rotations are unit quaternions from 4-d standard normal draws, uniform on
SO(3) (Shoemake 1992), turned into matrices with tensor ops (no host round trip). The
host-side draws that decide shapes (``randint`` and ``permutation`` of the MSA subsample) come
from a numpy generator; under ``core.jit`` they are fixed when the step is traced.
"""

import numpy as np

from diffsci import core
from diffsci.core import ops

__all__ = ["StepRandom"]


def quaternion_to_matrix(q):
    """Unit quaternions ``[..., 4]`` (w, x, y, z) -> rotation matrices ``[..., 3, 3]``."""
    w, x, y, z = (q[..., i] for i in range(4))
    rows = [
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ]
    return ops.stack([ops.stack(r, axis=-1) for r in rows], axis=-2)


class StepRandom:
    """``randn``/``random_rotation`` from core's generator (staged under ``core.jit``),
    ``randint``/``permutation`` from ``numpy.random.default_rng(host_seed)``."""

    def __init__(self, host_seed=0):
        self.host = np.random.default_rng(host_seed)

    def randn(self, shape):
        return core.random.normal(tuple(int(s) for s in shape))

    def random_rotation(self, n):
        q = self.randn([int(n), 4])
        q = q / ops.sqrt(ops.sum(q * q, axis=-1, keepdims=True))
        return quaternion_to_matrix(q)

    def randint(self, low, high):
        return int(self.host.integers(low, high))

    def permutation(self, n):
        return self.host.permutation(int(n)).astype(np.int64)
