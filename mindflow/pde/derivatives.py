"""Input derivatives of any order of a point-wise network, shared across equations.

A PINN residual needs ``D^alpha u_j(x_n)`` for a few output columns ``j`` and multi-indices
``alpha`` (``u_t``, ``u_x``, ``u_xx``, ``u_xxxx``, ``u_xy``...) at every point ``x_n`` of a
batch ``x [N, d]``. The network acts on each row alone, so the gradient of the *sum over the
batch* of one column is every sample's own gradient at once:

    d/dx[n, a] sum_n' u[n', j] = du_j/dx_a (x_n),

and one reverse pass gives all ``d`` first derivatives of one column (MindFlow's
``batched_jacobian`` rests on the same fact). Higher orders repeat it: if
``G(j, p) [N, d]`` is the gradient of ``D^p u_j``, then ``D^{p + a} u_j = G(j, p)[:, a]`` and
``G(j, p + a)`` is one reverse pass over the computation of ``G(j, p)`` with the cotangent
``e_a`` (ones in column ``a``). This is what PyTorch users (DeepXDE) do with
``autograd.grad(..., create_graph=True)``; here each step is a ``core.vjp``.

:class:`DerivativePlan` decides which gradients ``G(j, p)`` a set of requested derivatives
needs, sharing lower orders (``u_xy`` reuses the gradient of ``u_x`` that ``u_xx`` takes);
:func:`evaluate` runs them. ``core.vjp`` differentiates a function, so the passes nest: the
function differentiated for the gradients of ``G(j, p)``'s entries returns ``G(j, p)`` as its
output and every value computed so far as auxiliary data, and calls the function of the
previous parent inside. One forward pass and one reverse pass per needed gradient, as with a
tape; under ``core.jit`` the whole tower is one graph.

Assumption (as in MindFlow and DeepXDE): rows do not interact (no batch norm or attention
across points); a model that mixes rows gets sums of cross-point terms.
"""

import numpy as np

from diffsci import core

__all__ = ["DerivativePlan", "evaluate", "normal_component"]


def _canonical(idx):
    return tuple(sorted(int(i) for i in idx))


class DerivativePlan:
    """The gradients needed for a set of derivatives of a network's output columns.

    Args:
        requests: iterable of ``(j, idx)``: output column ``j`` differentiated once with
            respect to each input index in ``idx`` (any order; ``()`` is ``u_j`` itself).
        n_in: the number of input columns ``d``.
        n_out: the number of output columns ``m``.
        gradients: extra ``(j, p)`` whose whole gradient ``G(j, p) [N, d]`` is wanted (a
            normal derivative needs ``G(j, ())``).

    Attributes:
        values: ``{(j, idx): None | ((j, p), a)}``: ``None`` for ``u_j`` itself, else the
            gradient ``G(j, p)`` and the column ``a`` that hold the derivative.
        base: the columns ``j`` whose first gradient ``G(j, ())`` is taken from the model.
        parents: ``[((j, p), [a, ...]), ...]``: each gradient that is differentiated again,
            with the directions of its children ``G(j, p + a)``, lowest order first.
        max_order: the highest derivative order requested.
    """

    def __init__(self, requests, n_in, n_out, gradients=()):
        self.n_in, self.n_out = int(n_in), int(n_out)
        self.values = {}
        self._needed = set()  # the gradients G(j, p)
        self._children = {}  # (j, p) -> {a: (j, p + a)}
        for j, idx in sorted({(int(j), _canonical(idx)) for j, idx in requests}):
            self._check(j, idx)
            if not idx:
                self.values[(j, idx)] = None
                continue
            a = self._pick(j, idx)
            p = _drop(idx, a)
            self._need(j, p)
            self.values[(j, idx)] = ((j, p), a)
        for j, p in gradients:
            self._check(int(j), _canonical(p))
            self._need(int(j), _canonical(p))
        self.base = sorted(j for j, p in self._needed if not p)
        order = sorted(self._children, key=lambda key: (len(key[1]), key))
        self.parents = [(key, sorted(self._children[key])) for key in order]
        self.max_order = max((len(idx) for _, idx in self.values), default=0)

    def _check(self, j, idx):
        if not 0 <= j < self.n_out:
            raise ValueError(f"output column {j} out of range for {self.n_out} outputs")
        for i in idx:
            if not 0 <= i < self.n_in:
                raise ValueError(f"input column {i} out of range for {self.n_in} inputs")

    def _pick(self, j, idx):
        """The direction ``a`` so that ``D^idx u_j = G(j, idx - a)[:, a]``: one whose gradient
        is already needed if there is one (``u_xy`` after ``u_xx`` reuses ``G(u, (x,))``),
        else the last index of the sorted multi-index."""
        for a in sorted(set(idx), reverse=True):
            if (j, _drop(idx, a)) in self._needed:
                return a
        return idx[-1]

    def _need(self, j, p):
        if (j, p) in self._needed:
            return
        self._needed.add((j, p))
        if p:
            a = self._pick(j, p)
            q = _drop(p, a)
            self._need(j, q)
            self._children.setdefault((j, q), {})[a] = (j, p)

    @property
    def gradients(self):
        """Every gradient ``G(j, p)`` the plan takes (one reverse pass each)."""
        return sorted(self._needed, key=lambda key: (len(key[1]), key))

    def __repr__(self):
        return (
            f"DerivativePlan(values={len(self.values)}, gradients={len(self._needed)}, "
            f"max_order={self.max_order})"
        )


def _drop(idx, a):
    """``idx`` with one occurrence of ``a`` removed."""
    k = idx.index(a)
    return idx[:k] + idx[k + 1 :]


def _unit(like, col):
    """A ``like``-shaped cotangent ``[N, c]`` with ones in column ``col``, zeros elsewhere."""
    if like.shape[1] == 1:
        return core.ops.ones_like(like)
    arr = np.zeros(tuple(like.shape))
    arr[:, col] = 1.0
    return core.tensor(arr, dtype=like.dtype)  # a constant on the current device


def _as_columns(out, x, fn):
    """``fn``'s output as ``[N, m]`` (a ``[N]`` output is one column)."""
    if not isinstance(out, core.Tensor):
        raise TypeError(f"the network {_name(fn)} must return a Tensor, got {type(out).__name__}")
    if out.ndim == 1 and out.shape[0] == x.shape[0]:
        return out.reshape((out.shape[0], 1))
    if out.ndim != 2 or out.shape[0] != x.shape[0]:
        raise ValueError(
            f"the network {_name(fn)} must map inputs [N, d] = {tuple(x.shape)} to outputs "
            f"[N, m]; it returned shape {tuple(out.shape)}"
        )
    return out


def _name(fn):
    return type(fn).__name__ if isinstance(fn, core.nn.Cell) else getattr(fn, "__name__", "fn")


def evaluate(fn, x, plan):
    """Run ``plan`` on the network ``fn`` at the points ``x``.

    Args:
        fn: a Cell or function mapping inputs ``[N, d]`` to outputs ``[N, m]`` row by row.
        x: the points, a float Tensor ``[N, d]``.
        plan: a :class:`DerivativePlan` for ``d`` inputs and ``m`` outputs.

    Returns:
        ``(out, derivs, grads)``: the network's output ``[N, m]``; ``{(j, idx): [N, 1]}`` for
        every requested derivative (canonical, sorted ``idx``); ``{(j, p): [N, d]}`` for every
        gradient taken. All of them stay differentiable with respect to the network's
        Parameters (and to ``x`` by any outer transformation).
    """
    if not isinstance(x, core.Tensor) or x.ndim != 2:
        shape = tuple(x.shape) if hasattr(x, "shape") else type(x).__name__
        raise ValueError(f"inputs must be a Tensor [N, d], got {shape}")
    if x.shape[1] != plan.n_in:
        raise ValueError(
            f"inputs have {x.shape[1]} columns but the equations have {plan.n_in} input variables"
        )
    if not core.dtypes.is_inexact(x.dtype):
        raise TypeError(f"inputs must be floating point to be differentiated, got {x.dtype}")

    def checked(x):
        out = _as_columns(fn(x), x, fn)
        if out.shape[1] != plan.n_out:
            raise ValueError(
                f"the network {_name(fn)} returns {out.shape[1]} output columns but the "
                f"equations have {plan.n_out} output variables"
            )
        return out

    def level0(x):
        # one forward pass; one reverse pass per column whose gradient is needed
        if not plan.base:
            return {"out": checked(x)}
        out, pull = core.vjp(checked, x)
        vals = {"out": out}
        for j in plan.base:
            vals[(j, ())] = pull(_unit(out, j))[0]
        return vals

    tower = level0
    for key, dirs in plan.parents:
        tower = _nest(tower, key, dirs)
    vals = tower(x)
    out = vals.pop("out")
    derivs = {}
    for (j, idx), where in plan.values.items():
        if where is None:
            derivs[(j, idx)] = out[:, j : j + 1]
        else:
            g, a = where
            derivs[(j, idx)] = vals[g][:, a : a + 1]
    return out, derivs, vals


def _nest(inner, key, dirs):
    """The tower one level up: differentiate ``G(key)`` (the output of ``inner``'s
    computation) once per direction in ``dirs``; everything else rides along as aux data."""
    j, p = key

    def level(x):
        def split(x):
            vals = inner(x)
            return vals[key], vals

        g, pull, (vals,) = core.vjp(split, x, has_aux=True)
        vals = dict(vals)
        for a in dirs:
            vals[(j, p + (a,))] = pull(_unit(g, a))[0]
        return vals

    return level


def normal_component(grad, normal, what="normal derivative"):
    """``grad . n`` per point: ``grad [N, d]``, ``normal [N, k]`` or ``[k]`` with ``k <= d``;
    the normal's ``k`` components pair with the first ``k`` inputs (spatial inputs before time,
    as the geometry samplers give them). Returns ``[N, 1]``."""
    if normal is None:
        raise ValueError(
            f"{what}: no normals given (pass norm= / normals= with the boundary batch)"
        )
    if not isinstance(normal, core.Tensor):
        normal = core.tensor(np.asarray(normal), dtype=grad.dtype)
    k = normal.shape[-1]
    if normal.ndim not in (1, 2) or k > grad.shape[1]:
        raise ValueError(
            f"{what}: normals must be [N, k] or [k] with k <= {grad.shape[1]} input columns, "
            f"got {tuple(normal.shape)}"
        )
    if normal.ndim == 2 and normal.shape[0] != grad.shape[0]:
        raise ValueError(
            f"{what}: {normal.shape[0]} normals for {grad.shape[0]} points "
            f"(normals {tuple(normal.shape)})"
        )
    if normal.dtype != grad.dtype:
        normal = normal.astype(grad.dtype)
    g = grad[:, :k] if k < grad.shape[1] else grad
    return (g * normal).sum(axis=1, keepdims=True)
