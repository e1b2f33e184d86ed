"""The random state every layer may use: the seed, the eager draw from the current device's
generator, and the hook through which ``core.jit`` and ``core.recompute`` take draws over.

``core.jit`` must turn a draw into an equation of the graph (a draw made while tracing would
be baked into the compiled graph as a constant) and ``core.recompute`` replays the draws of a
forward pass in its backward re-run. Both live above the ops that draw, so they install one
hook here (``set_stage_hook``) instead of the ops importing them.
"""

from . import backend as _backend

_stage_hook = [None]  # staged(kind, shape, dtype, params) -> tensor or None, or None


def set_seed(seed):
    """Seed the generators of every loaded backend (CPU always, GPU once selected)."""
    _backend._SEED[0] = seed
    for name in list(_backend._LOADED):
        _backend.get_backend(name).seed(seed)


def get_seed():
    """The value of the last ``set_seed`` call, or None if it was never called
    (``mindspore.get_seed``)."""
    return _backend._SEED[0]


def set_stage_hook(hook):
    """Install ``hook(kind, shape, dtype, params)``: it returns the draw as a tensor when the
    caller must not draw eagerly (a jit trace or a recompute tape is active), else None."""
    _stage_hook[0] = hook


def eager_draw(kind, shape, dtype, **params):
    """A backend array drawn now from the current device's generator.

    Args:
        kind: "normal" (standard), "uniform" (params ``low``, ``high``), "randint" (params
            ``low``, ``high``) or "permutation" (of ``range(shape[0])``).
        shape: tuple of ints.
        dtype: the array's dtype.
    """
    b = _backend.current()
    if kind == "normal":
        return b.normal(shape, dtype)
    if kind == "uniform":
        return b.uniform(shape, params["low"], params["high"], dtype)
    if kind == "permutation":
        return b.permutation(shape[0]).astype(dtype)
    if kind == "randint":
        return b.randint(params["low"], params["high"], shape, dtype)
    raise ValueError(f"unknown random draw kind {kind!r}")


def staged_draw(kind, shape, dtype, **params):
    """The draw as a tensor when it must not be drawn eagerly by the caller (inside core.jit,
    or while core.recompute records or replays draws); else None."""
    hook = _stage_hook[0]
    return None if hook is None else hook(kind, tuple(shape), dtype, params)
