"""``UnitGaussianNormalizer``: inputs and outputs scaled to zero mean and unit variance, as the
FNO paper's Darcy and Navier-Stokes (FNO-3D) scripts do (and MindFlow's ``fno3d`` case)."""

import numpy as np

from diffsci import core

__all__ = ["UnitGaussianNormalizer"]


class UnitGaussianNormalizer:
    """``encode(x) = (x - mean) / (std + eps)``, ``decode(y) = y (std + eps) + mean``.

    Args:
        mean, std: numpy arrays broadcasting against one sample (``[*spatial, C]`` per point,
            as the FNO paper's normalizer over the training samples; or scalars, as MindFlow's
            ``fno3d`` one).
        eps: added to ``std``. Default 1e-5.
        dtype: the dtype of the stored statistics (default float32).
    """

    def __init__(self, mean, std, eps=1e-5, dtype=np.float32):
        self.mean_np = np.asarray(mean, dtype=dtype)
        self.std_np = np.asarray(std, dtype=dtype)
        self.eps = float(eps)
        self.mean = core.Tensor(self.mean_np)
        self.scale = core.Tensor((self.std_np + self.eps).astype(dtype))

    @classmethod
    def fit(cls, batches, pointwise=True, eps=1e-5, dtype=np.float32):
        """Statistics of the arrays ``batches`` yields (``[B, *sample]`` each), over the
        samples (``pointwise``) or over everything; float64 sums, one pass."""
        total = total_sq = None
        n = 0
        for b in batches:
            b = np.asarray(b, dtype=np.float64)
            s, s2 = b.sum(axis=0), (b * b).sum(axis=0)
            if not pointwise:
                s, s2 = s.sum(), s2.sum()
            total = s if total is None else total + s
            total_sq = s2 if total_sq is None else total_sq + s2
            n += b.shape[0] if pointwise else b.size
        if n == 0:
            raise ValueError("UnitGaussianNormalizer.fit: no data")
        mean = total / n
        var = np.maximum(total_sq / n - mean**2, 0.0) * (n / max(n - 1, 1))  # unbiased
        return cls(mean, np.sqrt(var), eps=eps, dtype=dtype)

    def encode(self, x):
        """``(x - mean) / (std + eps)`` (core Tensors)."""
        return (x - self.mean) / self.scale

    def decode(self, y):
        """``y (std + eps) + mean`` (core Tensors)."""
        return y * self.scale + self.mean
