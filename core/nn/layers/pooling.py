"""Max pooling with MindSpore's ``pad_mode`` rules (``nn.MaxPool2d``), built on ``ops.max_pool2d``.

``pad_mode`` (NCHW input ``[N, C, H, W]`` or ``[C, H, W]``; ``k_eff = dilation * (k - 1) + 1``):

- ``'valid'``: no padding; output ``floor((in - k_eff) / stride) + 1``.
- ``'same'``: output ``ceil(in / stride)``; the needed padding
  ``max((out - 1) * stride + k_eff - in, 0)`` is split evenly, the odd element at the end.
- ``'pad'``: explicit ``padding`` (int, ``(h, w)`` or ``(top, bottom, left, right)``); output
  ``floor((in + lo + hi - k_eff) / stride) + 1`` (``ceil`` with ``ceil_mode=True``, where a
  last window that would start in the bottom/right padding is dropped, as in PyTorch).

Padding never wins the maximum (it is filled with the dtype's lowest value), so the gradient
goes to input elements only; tied maxima share the cotangent (see ``ops.max_pool2d``).
"""

import math

import ml_dtypes
import numpy as np

from ... import dtypes as _dt
from ... import ops
from ..cell import Cell
from ._common import ntuple
from .conv import _pad_pairs

__all__ = ["MaxPool2d"]


def _lowest(dtype):
    """The fill value that never wins a maximum (finite, so debug-NaN checks stay quiet)."""
    if _dt.is_inexact(dtype):
        return float(ml_dtypes.finfo(dtype).min)
    if dtype == _dt.bool_:
        return False
    return int(np.iinfo(dtype).min)


class MaxPool2d(Cell):
    """2-d max pooling over the last two axes of ``[N, C, H, W]`` (or ``[C, H, W]``).

    Args:
        kernel_size: int or ``(kh, kw)`` (MindSpore's default 1).
        stride: int or ``(sh, sw)`` (default 1).
        pad_mode: ``'valid'`` (default), ``'same'`` or ``'pad'`` (see the module docstring).
        padding: with ``'pad'`` only: int, ``(h, w)`` or ``(top, bottom, left, right)``; each
            side at most half the dilated kernel.
        dilation: int or ``(dh, dw)``; only with ``'pad'`` (MindSpore's rule).
        return_indices: not supported (raises).
        ceil_mode: with ``'pad'``: ceil instead of floor for the output size.
        data_format: ``'NCHW'`` only.

    Returns:
        ``[N, C, H_out, W_out]`` (``[C, H_out, W_out]`` for an unbatched input).
    """

    def __init__(
        self,
        kernel_size=1,
        stride=1,
        pad_mode="valid",
        padding=0,
        dilation=1,
        return_indices=False,
        ceil_mode=False,
        data_format="NCHW",
    ):
        super().__init__()
        name = type(self).__name__
        self.kernel_size = ntuple(kernel_size, 2, "kernel_size", name)
        self.stride = ntuple(stride, 2, "stride", name)
        self.dilation = ntuple(dilation, 2, "dilation", name)
        if not isinstance(pad_mode, str) or pad_mode.lower() not in ("same", "valid", "pad"):
            raise ValueError(f"{name}: pad_mode must be 'same', 'valid' or 'pad', got {pad_mode!r}")
        self.pad_mode = pad_mode.lower()
        if isinstance(padding, (tuple, list)) and len(padding) == 1:
            padding = padding[0]
        self.padding = padding
        self._pads = _pad_pairs(padding, 2, name)
        self.ceil_mode = bool(ceil_mode)
        if self.pad_mode != "pad":
            if any(lo or hi for lo, hi in self._pads):
                raise ValueError(
                    f"{name}: padding must be 0 when pad_mode is {pad_mode!r}, got {padding!r}"
                )
            if self.dilation != (1, 1) or self.ceil_mode:
                raise ValueError(
                    f"{name}: dilation and ceil_mode need pad_mode='pad', got pad_mode={pad_mode!r}"
                )
        for (lo, hi), k, d in zip(self._pads, self.kernel_size, self.dilation, strict=True):
            if max(lo, hi) > (d * (k - 1) + 1) // 2:
                raise ValueError(
                    f"{name}: padding {padding!r} must be at most half the (dilated) kernel size "
                    f"{self.kernel_size}"
                )
        if return_indices:
            raise NotImplementedError(f"{name}: return_indices=True is not supported")
        if data_format != "NCHW":
            raise ValueError(f"{name}: only data_format='NCHW' is supported, got {data_format!r}")

    def _pads_for(self, spatial):
        """``((top, bottom), (left, right))`` for input sizes ``spatial = (H, W)``."""
        pads = []
        for n, k, s, d, (lo, hi) in zip(
            spatial, self.kernel_size, self.stride, self.dilation, self._pads, strict=True
        ):
            k_eff = d * (k - 1) + 1
            if self.pad_mode == "same":
                total = max((math.ceil(n / s) - 1) * s + k_eff - n, 0)
                lo, hi = total // 2, total - total // 2
            elif self.pad_mode == "pad" and self.ceil_mode:
                span = n + lo + hi - k_eff
                out = -(-span // s) + 1 if span >= 0 else 0
                if out > 1 and (out - 1) * s >= n + lo:
                    out -= 1  # the last window would start inside the end padding
                hi += max((out - 1) * s + k_eff - (n + lo + hi), 0)
            pads.append((lo, hi))
        return tuple(pads)

    def construct(self, x):
        name = type(self).__name__
        if x.ndim not in (3, 4):
            raise ValueError(
                f"{name}: input of shape {tuple(x.shape)} must be [N, C, H, W] or [C, H, W]"
            )
        spatial = tuple(x.shape[-2:])
        for n, k, d in zip(spatial, self.kernel_size, self.dilation, strict=True):
            if self.pad_mode == "valid" and n < d * (k - 1) + 1:
                raise ValueError(
                    f"{name}: input of shape {tuple(x.shape)} is smaller than the kernel "
                    f"{self.kernel_size} (pad_mode='valid')"
                )
        pads = self._pads_for(spatial)
        if any(lo or hi for lo, hi in pads):
            lead = ((0, 0),) * (x.ndim - 2)
            x = ops.pad(x, (*lead, *pads), value=_lowest(x.dtype))  # [.., C, H + pads, W + pads]
        return ops.max_pool2d(x, self.kernel_size, self.stride, 0, self.dilation)

    def extend_repr(self):
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode}, "
            f"padding={self.padding}"
        )
