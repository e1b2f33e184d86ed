"""Mixed precision, MindSpore's ``mindspore.amp`` names: ``auto_mixed_precision``, the loss
scalers ``StaticLossScaler`` / ``DynamicLossScaler`` and ``all_finite``.

``auto_mixed_precision`` sets the cells' compute dtypes with ``Cell.to_float`` (core/nn/cell.py:
a Cell with a float dtype runs with its floating inputs and its own trainable Parameters cast
to that dtype, the Parameters keeping their stored dtype). Sub-cells follow the same rule with
their own setting, so a black-listed cell stays in float32 inside a float16 network.

Low-precision dtypes are float16 and bfloat16 (ml_dtypes); on CPU they are computed through
numpy, so mixed precision here is about matching MindSpore's numerics and memory, not speed.
"""

from . import dtypes as _dt
from . import ops
from .tensor import Parameter, Tensor

__all__ = [
    "DynamicLossScaler",
    "LossScaler",
    "StaticLossScaler",
    "all_finite",
    "auto_mixed_precision",
    "get_black_list",
    "get_white_list",
]


# ---- auto_mixed_precision ----------------------------------------------------------------------
def get_white_list():
    """Cell classes cast to the low dtype by ``amp_level='O1'`` (MindSpore's cell white list)."""
    from . import nn

    return [
        nn.Dense,
        nn.Conv1d,
        nn.Conv2d,
        nn.Conv3d,
        nn.Conv1dTranspose,
        nn.Conv2dTranspose,
        nn.Conv3dTranspose,
    ]


def get_black_list():
    """Cell classes kept in float32 by ``amp_level='O2'`` (MindSpore's black list)."""
    from . import nn

    return [nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d, nn.LayerNorm]


def auto_mixed_precision(network, amp_level="O0", dtype=_dt.float16):
    """Make ``network`` compute in ``dtype`` (float16 or bfloat16) at MindSpore's levels.

    - ``'O0'``: unchanged.
    - ``'O1'``: the white-list cells (:func:`get_white_list`: Dense, Conv*) compute in
      ``dtype``; their outputs are cast back to float32.
    - ``'O2'``: the whole network computes in ``dtype`` except the black-list cells
      (:func:`get_black_list`: BatchNorm*, LayerNorm), which stay float32; the network's
      output is cast back to float32.
    - ``'O3'``: the whole network computes in ``dtype``; the output is cast back to float32.

    The Parameters keep their dtype (float32 master weights); only the computation is cast.
    Modifies ``network`` in place and returns it.

    Raises:
        ValueError: an unknown ``amp_level`` or a ``dtype`` other than float16/bfloat16.
    """
    from .nn.cell import Cell

    if not isinstance(network, Cell):
        raise TypeError(
            f"auto_mixed_precision: network must be a Cell, got {type(network).__name__}"
        )
    d = _dt.canonical(dtype)
    if d not in (_dt.float16, _dt.bfloat16):
        raise ValueError(f"auto_mixed_precision: dtype must be float16 or bfloat16, got {dtype!r}")
    if amp_level == "O0":
        return network
    if amp_level == "O1":
        white = tuple(get_white_list())
        for _, cell in network.cells_and_names():
            if isinstance(cell, white):
                cell.to_float(d)
                object.__setattr__(cell, "_amp_output_dtype", _dt.float32)
        return network
    if amp_level in ("O2", "O3"):
        network.to_float(d)
        if amp_level == "O2":
            black = tuple(get_black_list())
            for _, cell in network.cells_and_names():
                if isinstance(cell, black):
                    cell.to_float(_dt.float32)
        object.__setattr__(network, "_amp_output_dtype", _dt.float32)
        return network
    raise ValueError(
        f"auto_mixed_precision: amp_level must be 'O0', 'O1', 'O2' or 'O3', got {amp_level!r}"
    )


# ---- loss scaling -------------------------------------------------------------------------------
def all_finite(inputs):
    """A bool 0-d tensor: True when every element of every tensor in ``inputs`` (a tensor or a
    tuple/list of them, e.g. gradients) is finite."""
    leaves = [
        x for x in (inputs if isinstance(inputs, (tuple, list)) else [inputs]) if x is not None
    ]
    if not leaves:
        return Tensor(True)
    flags = [ops.all(ops.isfinite(x)) for x in leaves]
    out = flags[0]
    for f in flags[1:]:
        out = ops.logical_and(out, f)
    return out


class LossScaler:
    """Base of the loss scalers: ``scale(inputs)``, ``unscale(inputs)``, ``adjust(grads_finite)``."""

    def scale(self, inputs):
        raise NotImplementedError

    def unscale(self, inputs):
        raise NotImplementedError

    def adjust(self, grads_finite):
        raise NotImplementedError


def _mul(x, s):
    return x * s


def _div(x, s):
    return x / s


def _map_scale(inputs, factor, op):
    def f(x):
        if x is None:
            return None
        s = ops.astype(factor, x.dtype) if _dt.is_floating(x.dtype) else factor
        return op(x, s)

    if isinstance(inputs, (tuple, list)):
        return type(inputs)(f(x) for x in inputs)
    return f(inputs)


class StaticLossScaler(LossScaler):
    """A fixed loss scale: ``scale`` multiplies by ``scale_value``, ``unscale`` divides;
    ``adjust`` does nothing.

    Args:
        scale_value: the scale (> 0).
    """

    def __init__(self, scale_value):
        if (
            isinstance(scale_value, bool)
            or not isinstance(scale_value, (int, float))
            or not scale_value > 0
        ):
            raise ValueError(
                f"StaticLossScaler: scale_value must be a number > 0, got {scale_value!r}"
            )
        self.scale_value = Parameter(
            Tensor(float(scale_value), dtype=_dt.float32), name="scale_value", requires_grad=False
        )

    def scale(self, inputs):
        return _map_scale(inputs, self.scale_value + 0.0, _mul)

    def unscale(self, inputs):
        return _map_scale(inputs, self.scale_value + 0.0, _div)

    def adjust(self, grads_finite):
        return False


class DynamicLossScaler(LossScaler):
    """A loss scale that grows after ``scale_window`` finite steps and shrinks on overflow.

    ``adjust(grads_finite)``: when the gradients were finite, the step counter grows; after
    ``scale_window`` finite steps in a row the scale is multiplied by ``scale_factor`` (unless
    that overflows) and the counter restarts. When they were not, the scale is divided by
    ``scale_factor`` (never below 1) and the counter restarts. State lives in Parameters and
    is updated with core ops, so a jitted step can call ``adjust``.

    Args:
        scale_value: initial scale (> 0), e.g. ``2**16``.
        scale_factor: growth/shrink factor (> 1), e.g. 2.
        scale_window: finite steps before growing (int >= 1), e.g. 1000.
    """

    def __init__(self, scale_value, scale_factor, scale_window):
        if (
            isinstance(scale_value, bool)
            or not isinstance(scale_value, (int, float))
            or not scale_value > 0
        ):
            raise ValueError(
                f"DynamicLossScaler: scale_value must be a number > 0, got {scale_value!r}"
            )
        if not isinstance(scale_factor, (int, float)) or not scale_factor > 1:
            raise ValueError(f"DynamicLossScaler: scale_factor must be > 1, got {scale_factor!r}")
        if isinstance(scale_window, bool) or not isinstance(scale_window, int) or scale_window < 1:
            raise ValueError(
                f"DynamicLossScaler: scale_window must be an int >= 1, got {scale_window!r}"
            )
        self.scale_factor = float(scale_factor)
        self.scale_window = int(scale_window)
        self.scale_value = Parameter(
            Tensor(float(scale_value), dtype=_dt.float32), name="scale_value", requires_grad=False
        )
        self.counter = Parameter(Tensor(0, dtype=_dt.int32), name="counter", requires_grad=False)

    def scale(self, inputs):
        return _map_scale(inputs, self.scale_value + 0.0, _mul)

    def unscale(self, inputs):
        return _map_scale(inputs, self.scale_value + 0.0, _div)

    def adjust(self, grads_finite):
        """Update the scale and the counter from ``grads_finite`` (bool 0-d tensor); returns
        ``grads_finite``."""
        finite = grads_finite if isinstance(grads_finite, Tensor) else Tensor(bool(grads_finite))
        scale = self.scale_value + 0.0
        count = self.counter + 1
        grown = scale * self.scale_factor
        grow = ops.logical_and(count >= self.scale_window, ops.isfinite(grown))
        on_finite = ops.where(grow, grown, scale)
        on_overflow = ops.maximum(scale / self.scale_factor, 1.0)
        self.scale_value.set_data(ops.where(finite, on_finite, on_overflow))
        restart = ops.logical_or(ops.logical_not(finite), count >= self.scale_window)
        self.counter.set_data(ops.where(restart, ops.zeros_like(count), count))
        return grads_finite
