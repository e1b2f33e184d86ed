"""MindElec's ``L2`` metric: the relative L2 error accumulated over batches,

.. math:: \\mathrm{l2} = \\sqrt{\\sum_i (y_i - \\hat y_i)^2 \\big/ \\sum_i y_i^2}

with ``y`` the reference (label) and ``\\hat y`` the prediction.
"""

import numpy as np

from diffsci.core import Tensor

__all__ = ["L2"]


def _as_numpy(x, where):
    if isinstance(x, Tensor):
        return x.asnumpy()
    if isinstance(x, (list, tuple, np.ndarray, float, int)):
        return np.asarray(x)
    raise TypeError(f"{where}: expected a Tensor, list or numpy array, got {type(x).__name__}")


class L2:
    """Relative L2 error over all updates (MindSpore ``Metric`` protocol: ``clear``,
    ``update(y_pred, y)``, ``eval``).

    Example (MindElec's): ``update([0.1, 0.2, 0.6, 0.9], [0.1, 0.25, 0.7, 0.9])`` then
    ``eval()`` is ``0.0954330...``.
    """

    def __init__(self):
        self.clear()

    def clear(self):
        """Forget the accumulated sums."""
        self.square_error_sum = 0.0
        self.square_label_sum = 0.0

    def update(self, *inputs):
        """Accumulate ``(y_pred, y)`` of equal shapes.

        Raises:
            ValueError: not two inputs, or shapes that differ (both shapes named).
        """
        if len(inputs) != 2:
            raise ValueError(f"L2.update: expected 2 inputs (y_pred, y), got {len(inputs)}")
        y_pred = _as_numpy(inputs[0], "L2.update")
        y = _as_numpy(inputs[1], "L2.update")
        if y_pred.shape != y.shape:
            raise ValueError(
                f"L2.update: y_pred {y_pred.shape} and y {y.shape} must have the same shape"
            )
        self.square_error_sum += float(np.sum(np.square(y - y_pred)))
        self.square_label_sum += float(np.sum(np.square(y)))

    def eval(self):
        """The relative L2 error (a float).

        Raises:
            RuntimeError: nothing was accumulated (or the labels are all zero).
        """
        if self.square_label_sum == 0.0:
            raise RuntimeError("L2.eval: no labels accumulated (call update first), or all zero")
        return float(np.sqrt(self.square_error_sum / self.square_label_sum))
