"""``nn.Optimizer``: the base of every optimizer (MindSpore 2.x style).

An optimizer is a Cell built on a list of Parameters (or of parameter groups) and called with
the gradient tuple, ``opt(grads)``; it writes the new values with ``Parameter.set_data``.
Every update is computed with core ops on tensors, so ``core.jit`` can trace a whole training
step (forward, backward, update) into one graph.

State (moments, the step counter, float learning rates) lives in Parameters registered on the
optimizer, so ``opt.parameters_and_names()`` yields it and a checkpoint of net + optimizer
restores training exactly. The model's Parameters are *not* registered on the optimizer
(``opt.parameters`` is a plain tuple), so a checkpoint stores each of them once, under the
network's names. State names never collide with model names: ``global_step``,
``learning_rate`` (``learning_rate_group_<i>`` for a group with its own rate) and
``<slot>.<key>`` (``adam_m.<key>``, ``sgd_momentum.<key>``), where ``<key>`` is the
parameter's ``name`` when the names of all optimized parameters are set and distinct, and
``param<i>`` (its position) otherwise.

Complex parameters: the engine's gradient of a real loss with respect to a complex ``z`` is
the *conjugate* of the steepest-ascent direction (JAX's convention), so optimizers conjugate
complex gradients before using them.
"""

import numpy as np

from ... import dtypes as _dt
from ... import ops
from ...tensor import Parameter, Tensor
from ..cell import Cell
from ..learning_rate_schedule import LearningRateSchedule

__all__ = ["Optimizer"]

_GROUP_KEYS = ("params", "lr", "weight_decay", "order_params")


def _const_like(value, like, dtype):
    """A constant tensor holding ``value`` (numpy array or scalar) on ``like``'s device."""
    return Tensor._wrap(_device_array(np.asarray(value, dtype=dtype), like))


def _device_array(array, like):
    from ... import backend as _backend

    return _backend.backend_of(like._value).asarray(array)


def _zeros_param(like, name, shape=None, dtype=None):
    """A zero Parameter with ``like``'s device (and shape/dtype unless given), not trainable."""
    shape = tuple(like.shape) if shape is None else tuple(shape)
    dtype = like.dtype if dtype is None else _dt.canonical(dtype)
    arr = _device_array(np.zeros(shape, dtype=dtype), like)
    return Parameter(Tensor._wrap(arr), name=name, requires_grad=False)


def _scalar_param(value, dtype, like, name):
    arr = _device_array(np.asarray(value, dtype=dtype), like)
    return Parameter(Tensor._wrap(arr), name=name, requires_grad=False)


class _Slots(Cell):
    """A Cell holding one zero state Parameter per optimized parameter, named ``<key>``.

    Slots go straight into the Cell's parameter table (not through ``setattr``), so a key
    such as ``"0.weight"`` or ``"apply"`` never clashes with an attribute; index with ``[i]``.
    """

    def __init__(self, prefix, keys, params):
        super().__init__()
        values = []
        for key, p in zip(keys, params, strict=True):
            slot = _zeros_param(p, f"{prefix}.{key}")
            self._params[key] = slot
            values.append(slot)
        object.__setattr__(self, "values", tuple(values))

    def __getitem__(self, i):
        """The slot of the i-th parameter (int) or of parameter key ``i`` (str)."""
        return self._params[i] if isinstance(i, str) else self.values[i]

    def __getattr__(self, name):  # only reached when normal lookup fails: ``slots.weight``
        params = self.__dict__.get("_params")
        if params is not None and name in params:
            return params[name]
        raise AttributeError(f"{type(self).__name__} has no attribute or slot {name!r}")

    def __len__(self):
        return len(self.values)


def _param_keys(params):
    names = [p.name for p in params]
    if all(isinstance(n, str) and n for n in names) and len(set(names)) == len(names):
        return names
    return [f"param{i}" for i in range(len(params))]


class Optimizer(Cell):
    """Base class of optimizers.

    Args:
        learning_rate: a float, a list (one value per step; the last one is kept after the
            end), a 1-D Tensor, or a :class:`LearningRateSchedule` called with the step.
        parameters: a list of Parameters, or a list of group dicts
            ``{"params": [...], "lr": ..., "weight_decay": ...}`` (``lr`` and ``weight_decay``
            optional; a group without them uses the optimizer's arguments).
        weight_decay: default weight decay (float >= 0).

    Subclasses implement ``_update(i, param, grad, lr, weight_decay, step)`` for the i-th
    parameter; ``lr`` is a 0-d tensor of the parameter's real dtype and ``step`` the number of
    updates already made (int32 0-d tensor). ``grad`` is already conjugated for complex
    parameters.
    """

    def __init__(self, learning_rate, parameters, weight_decay=0.0):
        super().__init__()
        groups = self._normalize_groups(parameters, learning_rate, weight_decay)
        params = [p for g in groups for p in g["params"]]
        object.__setattr__(self, "parameters", tuple(params))
        object.__setattr__(self, "_keys", tuple(_param_keys(params)))
        first = params[0]
        self.global_step = _scalar_param(0, np.int32, first, "global_step")
        # learning rates: the optimizer's own, shared by the groups that do not set "lr"
        default_lr = self._make_lr(learning_rate, first, "learning_rate")
        lrs, owner = [], []
        for i, g in enumerate(groups):
            if "lr" in g:
                lrs.append(self._make_lr(g["lr"], first, f"learning_rate_group_{i}"))
                owner.append(f"learning_rate_group_{i}")
            else:
                lrs.append(default_lr)
                owner.append("learning_rate")
        if "learning_rate" in owner:
            self._register_lr("learning_rate", default_lr)
        else:
            object.__setattr__(self, "learning_rate", default_lr)
        for i, name in enumerate(owner):
            if name != "learning_rate":
                self._register_lr(name, lrs[i])
        object.__setattr__(self, "_group_lrs", tuple(lrs))
        object.__setattr__(
            self, "_group_wd", tuple(float(g.get("weight_decay", weight_decay)) for g in groups)
        )
        sizes = [len(g["params"]) for g in groups]
        group_of = [gi for gi, n in enumerate(sizes) for _ in range(n)]
        object.__setattr__(self, "_group_of", tuple(group_of))
        object.__setattr__(self, "is_group", len(groups) > 1)
        object.__setattr__(self, "is_group_lr", any("lr" in g for g in groups))

    # ---- construction helpers ----------------------------------------------------------------
    @staticmethod
    def _normalize_groups(parameters, learning_rate, weight_decay):
        if isinstance(parameters, (Parameter, dict)):
            parameters = [parameters]
        try:
            items = list(parameters)
        except TypeError:
            raise TypeError(
                f"optimizer: parameters must be a list of Parameters or of group dicts, got "
                f"{type(parameters).__name__}"
            ) from None
        if not items:
            raise ValueError("optimizer: got an empty parameter list")
        if all(isinstance(p, dict) for p in items):
            groups = []
            for i, g in enumerate(items):
                unknown = sorted(set(g) - set(_GROUP_KEYS))
                if unknown:
                    raise ValueError(
                        f"optimizer: group {i} has unknown keys {unknown}; allowed: {list(_GROUP_KEYS)}"
                    )
                if "order_params" in g:
                    continue
                if "params" not in g:
                    raise ValueError(f"optimizer: group {i} has no 'params'")
                g = dict(g)
                g["params"] = list(g["params"])
                groups.append(g)
        elif any(isinstance(p, dict) for p in items):
            raise TypeError("optimizer: mix of Parameters and group dicts; use only group dicts")
        else:
            groups = [{"params": items}]
        seen = set()
        for gi, g in enumerate(groups):
            if not g["params"]:
                raise ValueError(f"optimizer: group {gi} has no parameters")
            for j, p in enumerate(g["params"]):
                if not isinstance(p, Parameter):
                    raise TypeError(
                        f"optimizer: parameter {j} of group {gi} is a {type(p).__name__}, expected a "
                        "Parameter (use cell.trainable_params())"
                    )
                if id(p) in seen:
                    raise ValueError(f"optimizer: parameter {p.name!r} appears twice")
                seen.add(id(p))
                if not _dt.is_inexact(p.dtype):
                    raise TypeError(
                        f"optimizer: parameter {p.name!r} has dtype {p.dtype}, which has no gradient"
                    )
            wd = g.get("weight_decay", weight_decay)
            if isinstance(wd, bool) or not isinstance(wd, (int, float)) or wd < 0:
                raise ValueError(f"optimizer: weight_decay must be a float >= 0, got {wd!r}")
        return groups

    @staticmethod
    def _make_lr(lr, like, name):
        """A float Parameter, a float64 1-D constant tensor, or a schedule Cell."""
        if isinstance(lr, LearningRateSchedule):
            return lr
        if isinstance(lr, Tensor):
            lr = lr.asnumpy()
        if isinstance(lr, (list, tuple, np.ndarray)):
            arr = np.asarray(lr, dtype=np.float64)
            if arr.ndim == 0:
                lr = float(arr)
            else:
                if arr.ndim != 1 or arr.size == 0:
                    raise ValueError(
                        f"optimizer: a learning-rate list must be 1-D and non-empty, got shape {arr.shape}"
                    )
                if not np.all(np.isfinite(arr)) or np.any(arr < 0):
                    raise ValueError("optimizer: learning rates must be finite and >= 0")
                return _const_like(arr, like, np.float64)
        if isinstance(lr, bool) or not isinstance(lr, (int, float, np.floating, np.integer)):
            raise TypeError(
                f"optimizer: learning_rate must be a float, a list, a Tensor or a "
                f"LearningRateSchedule, got {type(lr).__name__}"
            )
        if not (np.isfinite(lr) and lr >= 0):
            raise ValueError(f"optimizer: learning_rate must be finite and >= 0, got {lr}")
        return _scalar_param(float(lr), np.float64, like, name)

    def _register_lr(self, name, lr):
        # Parameters and schedules register (checkpointed / walked); constant lists do not
        if isinstance(lr, (Parameter, Cell)):
            setattr(self, name, lr)
        else:
            object.__setattr__(self, name, lr)

    def _slots(self, prefix):
        """Register zero state ``<prefix>.<key>`` for every parameter; returns the holder."""
        holder = _Slots(prefix, self._keys, self.parameters)
        setattr(self, prefix, holder)
        return holder

    # ---- learning rate ----------------------------------------------------------------------
    @staticmethod
    def _lr_at(lr, step):
        if isinstance(lr, Parameter):
            return lr + 0.0  # a fresh value, not the Parameter itself
        if isinstance(lr, LearningRateSchedule):
            return ops.astype(lr(step), _dt.float64)
        n = lr.shape[0]
        return ops.take(lr, ops.minimum(step, n - 1))

    def get_lr(self):
        """The learning rate of the next update: a float64 0-d tensor, or a tuple (one per
        group) when groups set their own ``lr``."""
        step = self.global_step
        if not self.is_group_lr:
            return self._lr_at(self._group_lrs[0], step)
        return tuple(self._lr_at(lr, step) for lr in self._group_lrs)

    def get_lr_parameter(self, param):
        """The learning rate (0-d tensor) used for ``param`` at the next update."""
        for i, p in enumerate(self.parameters):
            if p is param:
                return self._lr_at(self._group_lrs[self._group_of[i]], self.global_step)
        raise ValueError(
            f"get_lr_parameter: {getattr(param, 'name', param)!r} is not optimized by this optimizer"
        )

    def lr_parameters(self):
        """The float learning-rate Parameters, one per group (shared ones once)."""
        out = []
        for lr in self._group_lrs:
            if not isinstance(lr, Parameter):
                raise TypeError(
                    f"{type(self).__name__}: the learning rate is a {type(lr).__name__}, not a float; "
                    "only float learning rates can be changed during training"
                )
            if all(lr is not o for o in out):
                out.append(lr)
        return out

    def set_lr(self, value):
        """Set every float learning rate to ``value`` (in place, also seen by compiled steps)."""
        for p in self.lr_parameters():
            p.set_data(ops.full_like(Tensor._wrap(p._value), float(value)))

    # ---- the update -------------------------------------------------------------------------
    def construct(self, grads):
        """Apply one update. ``grads``: tuple of tensors aligned with ``self.parameters``
        (None leaves that parameter and its state unchanged)."""
        grads = tuple(grads)
        if len(grads) != len(self.parameters):
            raise ValueError(
                f"{type(self).__name__}: got {len(grads)} gradients for {len(self.parameters)} parameters"
            )
        step = self.global_step + 0  # the value before this update
        group_lrs = [self._lr_at(lr, step) for lr in self._group_lrs]
        cast_cache = {}
        for i, (p, g) in enumerate(zip(self.parameters, grads, strict=True)):
            if g is None:
                continue
            if tuple(g.shape) != tuple(p.shape):
                raise ValueError(
                    f"{type(self).__name__}: gradient {i} has shape {tuple(g.shape)} but parameter "
                    f"{p.name!r} has shape {tuple(p.shape)}"
                )
            gi = self._group_of[i]
            rd = _dt.real_dtype(p.dtype)
            key = (gi, rd)
            lr = cast_cache.get(key)
            if lr is None:
                lr = cast_cache[key] = ops.astype(group_lrs[gi], rd)
            if g.dtype != p.dtype:
                g = ops.astype(g, p.dtype)
            if _dt.is_complex(p.dtype):
                g = ops.conj(g)
            self._update(i, p, g, lr, self._group_wd[gi], step)
        self.global_step.set_data(step + 1)
        return True

    def _update(self, i, param, grad, lr, weight_decay, step):
        raise NotImplementedError(f"{type(self).__name__} does not define _update")

    def extend_repr(self):
        return f"{len(self.parameters)} parameters"


# ---- complex helpers shared by the adaptive optimizers -------------------------------------------
def componentwise_square(g):
    """``g * g`` for real ``g``; ``re(g)^2 + 1j * im(g)^2`` for complex ``g`` (so that a complex
    parameter behaves exactly like its (re, im) pair of real parameters)."""
    if _dt.is_complex(g.dtype):
        re, im = ops.real(g), ops.imag(g)
        return ops.complex(re * re, im * im)
    return g * g


def componentwise_sqrt_plus(v, scale, eps):
    """``sqrt(v) / scale + eps`` per real component (``v`` as from :func:`componentwise_square`)."""
    if _dt.is_complex(v.dtype):
        return ops.complex(ops.sqrt(ops.real(v)) / scale + eps, ops.sqrt(ops.imag(v)) / scale + eps)
    return ops.sqrt(v) / scale + eps


def componentwise_div(m, d):
    """``m / d`` per real component."""
    if _dt.is_complex(m.dtype):
        return ops.complex(ops.real(m) / ops.real(d), ops.imag(m) / ops.imag(d))
    return m / d
