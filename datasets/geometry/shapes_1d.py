"""1-D geometry: MindFlow's ``Interval`` (``mindflow/geometry/geometry_1d.py``)."""

import numbers

import numpy as np

from .box import Box


class Interval(Box):
    """The closed interval ``[coord_min, coord_max]``.

    Its boundary is the two end points, with normals -1 and +1; boundary sampling picks one of
    them per point (each with probability 1/2).

    Args:
        name: the geometry's name.
        coord_min, coord_max: the ends (numbers), ``coord_min < coord_max``.
        dtype: numpy dtype of sampled points. Default float32.
        sampling_config: a ``SamplingConfig`` or None.

    Example::

        line = Interval("line", -1.0, 1.0, sampling_config=generate_sampling_config(
            {"domain": {"size": 100, "sampler": "lhs"}, "BC": {"size": 10}}))
        line.sampling("domain").shape   # (100, 1)

    Raises:
        ValueError: inverted bounds.
    """

    def __init__(self, name, coord_min, coord_max, dtype=np.float32, sampling_config=None):
        for value, what in ((coord_min, "coord_min"), (coord_max, "coord_max")):
            if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating)):
                raise TypeError(f"Interval {name!r}: {what} must be a number, got {value!r}")
        super().__init__(name, 1, [coord_min], [coord_max], dtype, sampling_config)
