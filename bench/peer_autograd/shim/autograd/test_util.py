"""Gradient checks with autograd's contract, written for diffsci: the reverse mode (VJP) and
forward mode (JVP) of ``f`` at ``x`` are compared with central differences along random
directions, and, for ``order=2``, the same check is applied to the VJP/JVP themselves."""

from itertools import product

import numpy as np

from ._core import make_jvp, make_vjp, tensor_tree, vspace
from .wrap_util import get_name, unary_to_nary

TOL = 1e-6
RTOL = 1e-6
EPS = 1e-6


def scalar_close(a, b):
    a, b = complex(np.asarray(a)), complex(np.asarray(b))
    return abs(a - b) < TOL or abs(a - b) / abs(a + b) < RTOL


def _numerical_jvp(f, x):
    """v -> (f(x + v eps/2) - f(x - v eps/2)) / eps, on numpy values."""
    x_vs = vspace(x)

    def jvp(v):
        plus = f(x_vs.add(x, x_vs.scalar_mul(v, EPS / 2)))
        minus = f(x_vs.add(x, x_vs.scalar_mul(v, -EPS / 2)))
        y_vs = vspace(plus)
        return y_vs.scalar_mul(y_vs.add(plus, y_vs.scalar_mul(minus, -1.0)), 1.0 / EPS)

    return jvp


def check_vjp(f, x):
    vjp, y = make_vjp(f, x)
    x_vs, y_vs = vspace(x), vspace(y)
    x_v, y_v = x_vs.randn(), y_vs.randn()
    vjp_y = x_vs.covector(vjp(y_vs.covector(y_v)))
    assert vspace(vjp_y) == x_vs, f"VJP of {get_name(f)}: {vspace(vjp_y)} for input {x_vs}"
    exact = x_vs.inner_prod(x_v, vjp_y)
    numeric = y_vs.inner_prod(y_v, _numerical_jvp(f, x)(x_v))
    assert scalar_close(numeric, exact), (
        f"Derivative (VJP) check of {get_name(f)} failed with arg {x}:\n"
        f"analytic: {exact}\nnumeric:  {numeric}"
    )


def check_jvp(f, x):
    x_v = vspace(x).randn()
    check_equivalent(make_jvp(f, x)(x_v)[1], _numerical_jvp(f, x)(x_v))


def check_equivalent(x, y):
    x_vs, y_vs = vspace(x), vspace(y)
    assert x_vs == y_vs, f"VSpace mismatch:\nx: {x_vs}\ny: {y_vs}"
    v = x_vs.randn()
    assert scalar_close(x_vs.inner_prod(x, v), x_vs.inner_prod(y, v)), (
        f"Value mismatch:\nx: {x}\ny: {y}"
    )


@unary_to_nary
def check_grads(f, x, modes=("fwd", "rev"), order=2):
    assert all(m in ("fwd", "rev") for m in modes)
    x = tensor_tree(x)
    if "fwd" in modes:
        check_jvp(f, x)
        if order > 1:

            def jvp_f(x, v):
                return make_jvp(f, x)(v)[1]

            jvp_f.__name__ = f"jvp_{get_name(f)}"
            check_grads(jvp_f, (0, 1), modes, order=order - 1)(x, vspace(x).randn())
    if "rev" in modes:
        check_vjp(f, x)
        if order > 1:

            def vjp_f(x, v):
                return make_vjp(f, x)[0](v)

            vjp_f.__name__ = f"vjp_{get_name(f)}"
            check_grads(vjp_f, (0, 1), modes, order=order - 1)(x, vspace(f(x)).randn())


def combo_check(fun, *args, **kwargs):
    """Check every combination of the listed argument values and keyword values."""

    def run(*arg_lists, **kwarg_lists):
        kw_items = [[(k, v) for v in vs] for k, vs in kwarg_lists.items()]
        for a in product(*arg_lists):
            for kw in product(*kw_items):
                check_grads(fun, *args, **kwargs)(*a, **dict(kw))

    return run
