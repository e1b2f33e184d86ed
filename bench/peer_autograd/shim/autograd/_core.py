"""The shim's differentiation on diffsci's ``core.vjp`` / ``core.jvp`` (autograd's contracts:
one argument, any pytree of arrays; ``make_vjp(fun, x) -> (vjp, ans)``)."""

import builtins

import numpy as np

from diffsci import core
from diffsci.core import tree as _tree


def to_tensor(x):
    """A leaf as a tensor: numpy's dtype rules (Python floats are float64, as in autograd)."""
    if isinstance(x, core.Tensor):
        return x
    return core.tensor(np.asarray(x))


def tensor_tree(x):
    leaves, treedef = _tree.flatten(x)
    return _tree.unflatten(treedef, [to_tensor(v) for v in leaves])


def _flat_call(fun, treedef):
    def flat_fun(*leaves):
        return fun(_tree.unflatten(treedef, list(leaves)))

    return flat_fun


def make_vjp(fun, x):
    """``(vjp, ans)``: ``vjp(g)`` pulls a cotangent of the output back to ``x``'s structure."""
    leaves, treedef = _tree.flatten(tensor_tree(x))
    ans, pullback = core.vjp(_flat_call(fun, treedef), *leaves)

    def vjp(g):
        g = _cotangent_like(ans, g)
        cts = pullback(g)
        return _tree.unflatten(treedef, list(cts))

    return vjp, ans


def make_jvp(fun, x):
    """``jvp(v) -> (ans, tangent)``."""
    leaves, treedef = _tree.flatten(tensor_tree(x))

    def jvp(v):
        tangents = [to_tensor(t).astype(p.dtype) for t, p in zip(_tree.flatten(v)[0], leaves)]
        return core.jvp(_flat_call(fun, treedef), tuple(leaves), tuple(tangents))

    return jvp


def _cotangent_like(ans, g):
    a_leaves, a_def = _tree.flatten(ans)
    g_leaves = _tree.flatten(g)[0]
    if len(g_leaves) != len(a_leaves):
        raise ValueError(
            f"cotangent has {len(g_leaves)} leaves for an output with {len(a_leaves)} leaves"
        )
    out = []
    for a, gl in zip(a_leaves, g_leaves):
        gl = to_tensor(gl)
        if a.dtype.kind != "c" and gl.dtype.kind == "c":
            gl = core.ops.real(gl)
        out.append(core.ops.broadcast_to(gl.astype(a.dtype), tuple(a.shape)))
    res = _tree.unflatten(a_def, out)
    return (
        res if builtins.isinstance(ans, (builtins.tuple, builtins.list, builtins.dict)) else out[0]
    )


# ---- a minimal vector space over pytrees of arrays (autograd's ``vspace``) ------------------


class VSpace:
    """Shapes and dtypes of a pytree of arrays, with the operations the gradient checks need."""

    def __init__(self, value):
        leaves, self.treedef = _tree.flatten(value)
        # shapes and dtypes only: np.asarray of a traced tensor raises (it would drop derivatives)
        arrays = [
            v if hasattr(v, "shape") and hasattr(v, "dtype") else np.asarray(v) for v in leaves
        ]
        self.specs = [(tuple(a.shape), _float_dtype(a.dtype)) for a in arrays]

    def __eq__(self, other):
        return builtins.isinstance(other, VSpace) and (self.treedef, self.specs) == (
            other.treedef,
            other.specs,
        )

    def __repr__(self):
        return f"VSpace({self.specs})"

    @property
    def size(self):
        return builtins.sum(int(np.prod(s)) for s, _ in self.specs)

    def _build(self, make):
        return _tree.unflatten(self.treedef, [make(s, d) for s, d in self.specs])

    def zeros(self):
        return self._build(lambda s, d: np.zeros(s, d))

    def ones(self):
        return self._build(lambda s, d: np.ones(s, d))

    def randn(self):
        def draw(s, d):
            r = np.random.randn(*s)
            if np.dtype(d).kind == "c":
                r = r + 1j * np.random.randn(*s)
            return np.asarray(r, dtype=d)

        return self._build(draw)

    def _map(self, fn, *trees):
        flat = [[np.asarray(v) for v in _tree.flatten(t)[0]] for t in trees]
        return _tree.unflatten(self.treedef, [fn(*vs) for vs in zip(*flat)])

    def add(self, x, y):
        return self._map(lambda a, b: a + b, x, y)

    def scalar_mul(self, x, c):
        return self._map(lambda a: a * c, x)

    def covector(self, x):
        return self._map(np.conj, x)

    def inner_prod(self, x, y):
        xs = [np.asarray(v) for v in _tree.flatten(x)[0]]
        ys = [np.asarray(v) for v in _tree.flatten(y)[0]]
        return float(builtins.sum(np.real(np.vdot(a, b)) for a, b in zip(xs, ys)))


def _float_dtype(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind in "iub":
        return np.dtype(np.float64)
    return dtype


def vspace(value):
    return VSpace(value)
