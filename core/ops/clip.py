"""Gradient clipping by global norm (MindSpore ``ops.clip_by_global_norm``)."""

from .. import dtypes as _dt
from . import elementwise as _ew
from . import reduction as _red

__all__ = ["clip_by_global_norm", "global_norm"]


def global_norm(grads):
    """``sqrt(sum_i ||g_i||^2)`` over a sequence of tensors (None entries skipped), as a
    float64 0-d tensor; complex entries count ``|g|^2``."""
    total = None
    for g in grads:
        if g is None:
            continue
        sq = _ew.real(g * _ew.conj(g)) if _dt.is_complex(g.dtype) else g * g
        part = _ew.astype(_red.sum(sq), _dt.float64)
        total = part if total is None else total + part
    if total is None:
        raise ValueError("global_norm: no gradients (all entries are None)")
    return _ew.sqrt(total)


def clip_by_global_norm(grads, clip_norm=1.0, use_norm=None):
    """Scale every gradient by ``clip_norm / max(global_norm, clip_norm)``.

    Args:
        grads: tuple/list of tensors (None entries stay None).
        clip_norm: the largest allowed global norm (> 0).
        use_norm: a precomputed global norm (0-d tensor or float); computed when None.

    Returns:
        A tuple of the same length: unchanged when the global norm is at most ``clip_norm``.
    """
    if not clip_norm > 0:
        raise ValueError(f"clip_by_global_norm: clip_norm must be > 0, got {clip_norm}")
    norm = global_norm(grads) if use_norm is None else use_norm
    scale = clip_norm / _ew.maximum(norm, float(clip_norm))
    out = []
    for g in grads:
        if g is None:
            out.append(None)
            continue
        out.append(g * _ew.astype(scale, _dt.real_dtype(g.dtype)))
    return tuple(out)
