"""autograd's differential operators, each written on the shim's ``make_vjp`` / ``make_jvp``
(which call diffsci's ``core.vjp`` / ``core.jvp``)."""

import inspect

import numpy as np

from diffsci import core

from ._core import make_jvp as _make_jvp
from ._core import make_vjp as _make_vjp
from ._core import tensor_tree, vspace
from .wrap_util import unary_to_nary


def _dtype(x):
    """x's dtype without converting it (np.asarray of a traced tensor raises)."""
    return np.dtype(x.dtype) if hasattr(x, "dtype") else np.asarray(x).dtype


def _scalar_check(ans, op):
    """autograd's rule: one real element (any shape)."""
    if vspace(ans).size != 1 or _dtype(ans).kind == "c":
        raise TypeError(f"{op} applies to real scalar-output functions, got {vspace(ans)}")


@unary_to_nary
def grad(fun, x):
    vjp, ans = _make_vjp(fun, x)
    _scalar_check(ans, "grad")
    return vjp(vspace(ans).ones())


@unary_to_nary
def elementwise_grad(fun, x):
    vjp, ans = _make_vjp(fun, x)
    return vjp(vspace(ans).ones())


@unary_to_nary
def deriv(fun, x):
    return _make_jvp(fun, x)(vspace(x).ones())[1]


@unary_to_nary
def jacobian(fun, x):
    """Shape ``out.shape + x.shape``: one pullback per output element."""
    vjp, ans = _make_vjp(fun, x)
    out_shape = tuple(ans.shape)
    n = int(np.prod(out_shape))
    rows = []
    for k in range(n):
        e = np.zeros(n, dtype=_dtype(ans))
        e[k] = 1
        rows.append(vjp(e.reshape(out_shape)))
    x_shape = tuple(np.shape(x))
    return core.ops.reshape(core.ops.stack(rows), out_shape + x_shape)


@unary_to_nary
def holomorphic_grad(fun, x):
    vjp, ans = _make_vjp(fun, x)
    return vjp(vspace(ans).ones())


def grad_named(fun, argname):
    argnum = list(inspect.signature(fun).parameters).index(argname)
    return grad(fun, argnum)


hessian = lambda fun, argnum=0: jacobian(jacobian(fun, argnum), argnum)  # noqa: E731


@unary_to_nary
def make_hvp(fun, x):
    return _make_vjp(grad(fun), x)


def hessian_tensor_product(fun, argnum=0):
    fun_grad = grad(fun, argnum)

    def vector_dot_grad(*args, **kwargs):
        args, vector = args[:-1], args[-1]
        return core.ops.tensordot(fun_grad(*args, **kwargs), vector, np.ndim(vector))

    return grad(vector_dot_grad, argnum)


hessian_vector_product = hessian_tensor_product


def tensor_jacobian_product(fun, argnum=0):
    def vector_dot_fun(*args, **kwargs):
        args, vector = args[:-1], args[-1]
        return core.ops.tensordot(vector, fun(*args, **kwargs), np.ndim(vector))

    return jacobian(vector_dot_fun, argnum)


vector_jacobian_product = tensor_jacobian_product


@unary_to_nary
def make_jvp(fun, x):
    return _make_jvp(fun, x)


@unary_to_nary
def make_vjp(fun, x):
    return _make_vjp(fun, x)


def make_ggnvp(f, g=lambda x: 0.5 * core.ops.sum(x**2, axis=-1), f_argnum=0):
    """Generalized Gauss-Newton product ``J^T H_g J v`` (a vjp of a vjp gives the jvp)."""

    @unary_to_nary
    def _make_ggnvp(f, x):
        f_vjp, f_x = _make_vjp(f, x)
        g_hvp, grad_g_x = _make_vjp(grad(g), f_x)
        f_jvp, _ = _make_vjp(f_vjp, vspace(grad_g_x).zeros())
        return lambda v: f_vjp(g_hvp(f_jvp(v)))

    return _make_ggnvp(f, f_argnum)


@unary_to_nary
def value_and_grad(fun, x):
    vjp, ans = _make_vjp(fun, x)
    _scalar_check(ans, "value_and_grad")
    return ans, vjp(vspace(ans).ones())


@unary_to_nary
def grad_and_aux(fun, x):
    box = {}

    def main(x):
        out, box["aux"] = fun(x)
        return out

    vjp, ans = _make_vjp(main, x)
    return vjp(vspace(ans).ones()), box["aux"]


def multigrad_dict(fun):
    raise AttributeError("[peer-missing] autograd.multigrad_dict: not mapped")


def checkpoint(fun):
    return core.recompute(fun)


__all__ = [
    "checkpoint",
    "deriv",
    "elementwise_grad",
    "grad",
    "grad_and_aux",
    "grad_named",
    "hessian",
    "hessian_tensor_product",
    "hessian_vector_product",
    "holomorphic_grad",
    "jacobian",
    "make_ggnvp",
    "make_hvp",
    "make_jvp",
    "make_vjp",
    "multigrad_dict",
    "tensor_jacobian_product",
    "value_and_grad",
    "vector_jacobian_product",
    "tensor_tree",
]
