"""Every primitive from one table (as JAX's ``lax_autodiff_test``): value against numpy,
derivatives of order 1 and 2 in reverse and forward mode against finite differences (float64),
vmap against a per-example loop, and the abstract (shape/dtype) rule against the eager output.

A coverage test keeps the rule tables complete for every primitive in ``core.prims.ALL``.
"""

import functools
import re

import numpy as np
import pytest
import scipy.special as sps
from hypothesis import given, settings
from hypothesis import strategies as st

from diffsci import core
from diffsci.core import ops
from diffsci.core.autodiff.forward import jvp_rules
from diffsci.core.autodiff.reverse import vjp_rules
from diffsci.core.jit.lowering import lowerings
from diffsci.core.primitive import ShapedArray
from diffsci.core.prims import ALL
from diffsci.core.prims import decomp as prims_decomp
from diffsci.core.prims import elementwise as prims_elementwise
from diffsci.core.prims import indexing as prims_indexing
from diffsci.core.prims import linalg as prims_linalg
from diffsci.core.prims import reduction as prims_reduction
from diffsci.core.prims import shape as prims_shape
from diffsci.core.prims import special as prims_special
from diffsci.core.testing import gradcheck
from diffsci.core.vmap import batch_rules

from ._helpers import away_from_zero, cnormal, normal, positive


# ---- input generators: rng -> numpy array (normal, cnormal, positive, unit, away_from_zero: _helpers)
def distinct(*shape):
    """Values with no ties and gaps >= 0.1 (max/min/argmax are smooth there)."""
    n = int(np.prod(shape))
    return lambda rng: (rng.permutation(n) * 0.37 - n * 0.15 + rng.uniform(0, 0.05, n)).reshape(
        shape
    )


def offset(gen, delta):
    """``gen`` shifted by ``delta``: with ``distinct`` (a grid of step 0.37) no value of one
    input comes within 0.1 of the other's."""
    return lambda rng: gen(rng) + delta


def ints(lo, hi, *shape):
    return lambda rng: rng.integers(lo, hi, shape)


def bools(*shape):
    return lambda rng: rng.random(shape) < 0.5


def with_zeros(*shape):
    """Normal values with one or two exact zeros (products must differentiate exactly)."""

    def make(rng):
        a = rng.standard_normal(shape)
        flat = a.reshape(-1)
        flat[rng.integers(0, flat.size)] = 0.0
        return a

    return make


class Case:
    """One row of the table.

    Args:
        prim: the primitive.
        args: generators of the inputs.
        params: static params passed to the primitive.
        ref: numpy reference ``ref(*arrays) -> array``.
        grad: run gradcheck (order 1 and 2, reverse and forward).
        vmap_axes: in_axes variants to test (None = only the default ``0`` for all args).
        id: test id.
    """

    def __init__(
        self,
        prim,
        args,
        ref,
        params=None,
        grad=True,
        vmap_axes=None,
        id=None,
        rtol=1e-10,
        order2=True,
        fn=None,
    ):
        self.prim = prim
        self._fn = fn
        self.args = args
        self.params = params or {}
        self.ref = ref
        self.grad = grad and prim.differentiable
        self.vmap_axes = vmap_axes
        self.id = id or prim.name
        self.rtol = rtol
        self.order2 = order2

    def make(self, seed=0):
        rng = np.random.default_rng(seed)
        return [g(rng) for g in self.args]

    def fn(self, *xs):
        if self._fn is not None:
            return self._fn(*xs)
        return self.prim(*xs, **self.params)


def _np_scalar_fn(f):
    return lambda *a: np.asarray(f(*a))


U, B = (2, 3), (3,)  # a small unary shape and a broadcasting partner
UNARY = [
    Case(prims_elementwise.neg, [normal(*U)], np.negative),
    Case(prims_elementwise.exp, [normal(*U)], np.exp),
    Case(prims_elementwise.exp, [cnormal(*U)], np.exp, id="exp_complex"),
    Case(prims_elementwise.expm1, [normal(*U)], np.expm1),
    Case(prims_elementwise.log, [positive(*U)], np.log),
    Case(prims_elementwise.log, [cnormal(*U)], np.log, id="log_complex"),
    Case(prims_elementwise.log1p, [positive(*U)], np.log1p),
    Case(prims_elementwise.sqrt, [positive(*U)], np.sqrt),
    Case(prims_elementwise.sin, [normal(*U)], np.sin),
    Case(prims_elementwise.sin, [cnormal(*U)], np.sin, id="sin_complex"),
    Case(prims_elementwise.cos, [normal(*U)], np.cos),
    Case(prims_elementwise.cos, [cnormal(*U)], np.cos, id="cos_complex"),
    Case(prims_elementwise.sqrt, [cnormal(*U)], np.sqrt, id="sqrt_complex"),
    Case(prims_elementwise.tanh, [cnormal(*U)], np.tanh, id="tanh_complex"),
    Case(prims_elementwise.expm1, [cnormal(*U)], np.expm1, id="expm1_complex"),
    Case(prims_elementwise.log1p, [cnormal(*U)], np.log1p, id="log1p_complex"),
    Case(prims_elementwise.erf, [cnormal(*U)], sps.erf, id="erf_complex"),
    Case(
        prims_elementwise.logistic,
        [cnormal(*U)],
        lambda z: 1 / (1 + np.exp(-z)),
        id="logistic_complex",
    ),
    Case(prims_elementwise.neg, [cnormal(*U)], np.negative, id="neg_complex"),
    Case(prims_elementwise.tanh, [normal(*U)], np.tanh),
    Case(prims_elementwise.tanh_backward, [normal(*U), normal(*U)], lambda g, t: g * (1 - t * t)),
    Case(
        prims_elementwise.tanh_backward,
        [normal(*U), normal(3)],
        lambda g, t: g * (1 - t * t),
        id="tanh_backward_bcast",
    ),
    Case(
        prims_elementwise.tanh_backward_t,
        [normal(*U), normal(*U), normal(*U)],
        lambda c, g, t: -2 * c * g * t,
    ),
    Case(
        prims_elementwise.tanh_backward_t,
        [normal(*U), normal(3), normal(1, 3)],
        lambda c, g, t: -2 * c * g * t,
        id="tanh_backward_t_bcast",
    ),
    Case(prims_elementwise.logistic, [normal(*U)], sps.expit),
    Case(prims_elementwise.erf, [normal(*U)], sps.erf),
    Case(prims_elementwise.gelu, [normal(*U)], lambda x: x * sps.ndtr(x)),
    Case(
        prims_elementwise.gelu_backward,
        [normal(*U), normal(*U)],
        lambda g, x: g * (sps.ndtr(x) + x * np.exp(-0.5 * x * x) / np.sqrt(2 * np.pi)),
    ),
    Case(
        prims_elementwise.gelu_tanh,
        [normal(*U)],
        lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3))),
    ),
    Case(
        prims_elementwise.gelu_tanh_backward,
        [normal(*U), normal(*U)],
        lambda g, x: g
        * (
            0.5 * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
            + 0.5
            * x
            * (1 - np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)) ** 2)
            * np.sqrt(2 / np.pi)
            * (1 + 3 * 0.044715 * x**2)
        ),
    ),
    Case(prims_elementwise.abs, [away_from_zero(*U)], np.abs),
    Case(prims_elementwise.abs, [cnormal(*U)], np.abs, id="abs_complex"),
    Case(prims_elementwise.sign, [away_from_zero(*U)], np.sign),
    Case(prims_elementwise.floor, [normal(*U)], np.floor),
    Case(prims_elementwise.ceil, [normal(*U)], np.ceil),
    Case(prims_elementwise.round, [normal(*U)], np.round),
    Case(prims_elementwise.logical_not, [bools(*U)], np.logical_not),
    Case(prims_elementwise.bitwise_not, [ints(-5, 5, *U)], np.invert),
    Case(
        prims_elementwise.isfinite,
        [lambda rng: np.array([1.0, np.inf, -np.inf, np.nan, 0.0, 2.0]).reshape(U)],
        np.isfinite,
    ),
    Case(prims_elementwise.stop_gradient, [normal(*U)], lambda x: x),
    Case(prims_elementwise.real, [cnormal(*U)], np.real),
    Case(prims_elementwise.imag, [cnormal(*U)], np.imag),
    Case(prims_elementwise.real, [normal(*U)], np.real, id="real_of_real"),
    Case(prims_elementwise.imag, [normal(*U)], np.imag, id="imag_of_real", grad=False),
    Case(prims_elementwise.conj, [cnormal(*U)], np.conj),
    Case(
        prims_elementwise.convert,
        [normal(*U)],
        lambda x: x.astype(np.complex128),
        params={"dtype": np.dtype("complex128")},
        id="convert_to_complex",
    ),
    Case(
        prims_elementwise.convert,
        [cnormal(*U)],
        lambda x: x.real,
        params={"dtype": np.dtype("float64")},
        id="convert_complex_to_real",
    ),
    Case(
        prims_elementwise.convert,
        [normal(*U)],
        lambda x: x.astype(np.float32),
        params={"dtype": np.dtype("float32")},
        id="convert_to_f32",
        grad=False,
    ),
    Case(
        prims_elementwise.convert,
        [normal(*U)],
        lambda x: x.astype(np.int32),
        params={"dtype": np.dtype("int32")},
        id="convert_to_int",
        grad=False,
    ),
]

BINARY = [
    Case(prims_elementwise.add, [normal(*U), normal(*B)], np.add),
    Case(prims_elementwise.add, [cnormal(*U), cnormal(*U)], np.add, id="add_complex"),
    Case(prims_elementwise.sub, [normal(2, 1), normal(1, 3)], np.subtract),
    Case(prims_elementwise.sub, [cnormal(2, 1), cnormal(1, 3)], np.subtract, id="sub_complex"),
    Case(prims_elementwise.pow, [cnormal(*U), cnormal(*B)], np.power, id="pow_complex"),
    Case(
        prims_elementwise.select,
        [bools(*U), cnormal(*U), cnormal(*B)],
        np.where,
        id="select_complex",
    ),
    Case(prims_elementwise.mul, [normal(*U), normal(*B)], np.multiply),
    Case(prims_elementwise.mul, [cnormal(*U), cnormal(*B)], np.multiply, id="mul_complex"),
    Case(prims_elementwise.div, [normal(*U), positive(*B)], np.true_divide),
    Case(prims_elementwise.div, [cnormal(*U), cnormal(*U)], np.true_divide, id="div_complex"),
    Case(prims_elementwise.pow, [positive(*U), normal(*B)], np.power),
    # a negative base with a constant integer exponent (no derivative in the exponent there)
    Case(
        prims_elementwise.pow,
        [normal(*U)],
        lambda x: np.power(x, [2.0, 3.0, 1.0]),
        id="pow_integer_exponent",
        fn=lambda x: prims_elementwise.pow(x, core.Tensor(np.array([2.0, 3.0, 1.0]))),
    ),
    Case(
        prims_elementwise.pow,
        [
            lambda rng: np.array([[0.0, 1.5, 0.7], [2.0, 0.0, 1.2]]),
            lambda rng: np.array([2.5, 3.0, 1.5]),
        ],
        np.power,
        id="pow_zero_base",
        grad=False,
    ),
    Case(prims_elementwise.maximum, [distinct(*U), offset(distinct(*U), 0.18)], np.maximum),
    Case(prims_elementwise.minimum, [distinct(*U), offset(distinct(*B), 0.18)], np.minimum),
    Case(prims_elementwise.atan2, [normal(*U), positive(*U)], np.arctan2),
    Case(
        prims_elementwise.rem,
        [positive(*U), lambda rng: np.array([0.3, 0.7, 1.1])],
        np.mod,
        id="rem",
    ),
    Case(
        prims_elementwise.rem,
        [lambda rng: rng.uniform(-2, 2, U), lambda rng: np.array([-0.7, 0.9, 0.45])],
        np.mod,
        id="rem_signs",
    ),
    Case(prims_elementwise.floor_divide, [normal(*U), positive(*B)], np.floor_divide),
    Case(
        prims_elementwise.floor_divide,
        [ints(-9, 9, *U), ints(1, 4, *B)],
        np.floor_divide,
        id="floor_divide_int",
    ),
    Case(prims_elementwise.rem, [ints(-9, 9, *U), ints(1, 4, *B)], np.mod, id="rem_int"),
    Case(prims_elementwise.equal, [ints(0, 2, *U), ints(0, 2, *B)], np.equal),
    Case(prims_elementwise.not_equal, [ints(0, 2, *U), ints(0, 2, *B)], np.not_equal),
    Case(prims_elementwise.less, [normal(*U), normal(*B)], np.less),
    Case(prims_elementwise.less_equal, [ints(0, 3, *U), ints(0, 3, *B)], np.less_equal),
    Case(prims_elementwise.greater, [normal(*U), normal(*B)], np.greater),
    Case(prims_elementwise.greater_equal, [ints(0, 3, *U), ints(0, 3, *B)], np.greater_equal),
    Case(prims_elementwise.logical_and, [bools(*U), bools(*B)], np.logical_and),
    Case(prims_elementwise.logical_or, [bools(*U), bools(*B)], np.logical_or),
    Case(prims_elementwise.logical_xor, [bools(*U), bools(*B)], np.logical_xor),
    Case(prims_elementwise.bitwise_and, [ints(0, 16, *U), ints(0, 16, *B)], np.bitwise_and),
    Case(prims_elementwise.bitwise_or, [ints(0, 16, *U), ints(0, 16, *B)], np.bitwise_or),
    Case(prims_elementwise.bitwise_xor, [ints(0, 16, *U), ints(0, 16, *B)], np.bitwise_xor),
    Case(prims_elementwise.select, [bools(*U), normal(*U), normal(*B)], np.where),
    Case(prims_elementwise.complex, [normal(*U), normal(*B)], lambda a, b: a + 1j * b),
]

REDUCTION = [
    Case(
        prims_reduction.reduce_sum,
        [normal(2, 3, 2)],
        lambda x: np.sum(x, axis=(0, 2)),
        params={"axes": (0, 2), "keepdims": False},
    ),
    Case(
        prims_reduction.reduce_sum,
        [normal(2, 3)],
        lambda x: np.sum(x, axis=1, keepdims=True),
        params={"axes": (1,), "keepdims": True},
        id="reduce_sum_keepdims",
    ),
    Case(
        prims_reduction.reduce_sum,
        [normal(2, 3)],
        lambda x: np.sum(x, axis=()),
        params={"axes": (), "keepdims": False},
        id="reduce_sum_no_axes",
    ),
    Case(
        prims_reduction.reduce_sum,
        [cnormal(2, 3)],
        lambda x: np.sum(x, axis=(0, 1)),
        params={"axes": (0, 1), "keepdims": False},
        id="reduce_sum_complex",
    ),
    Case(
        prims_reduction.reduce_max,
        [distinct(2, 3, 2)],
        lambda x: np.max(x, axis=(1,)),
        params={"axes": (1,), "keepdims": False},
    ),
    Case(
        prims_reduction.reduce_max,
        [distinct(2, 3)],
        lambda x: np.max(x, axis=(0, 1), keepdims=True),
        params={"axes": (0, 1), "keepdims": True},
        id="reduce_max_all_keepdims",
    ),
    Case(
        prims_reduction.reduce_min,
        [distinct(2, 3, 2)],
        lambda x: np.min(x, axis=(0, 2)),
        params={"axes": (0, 2), "keepdims": False},
    ),
    Case(
        prims_reduction.reduce_prod,
        [normal(2, 3, 2)],
        lambda x: np.prod(x, axis=(1,)),
        params={"axes": (1,), "keepdims": False},
    ),
    Case(
        prims_reduction.reduce_prod,
        [with_zeros(2, 3)],
        lambda x: np.prod(x, axis=(0, 1)),
        params={"axes": (0, 1), "keepdims": False},
        id="reduce_prod_with_zero",
    ),
    Case(
        prims_reduction.reduce_prod,
        [lambda rng: np.array([[0.0, 0.0, 1.5], [0.7, -1.2, 2.0]])],
        lambda x: np.prod(x, axis=(1,), keepdims=True),
        params={"axes": (1,), "keepdims": True},
        id="reduce_prod_two_zeros",
    ),
    Case(
        prims_reduction.reduce_prod,
        [cnormal(2, 3)],
        lambda x: np.prod(x, axis=(1,)),
        params={"axes": (1,), "keepdims": False},
        id="reduce_prod_complex",
    ),
    Case(
        prims_reduction.reduce_sum,
        [lambda rng: rng.integers(-5, 5, (2, 3)).astype(np.int32)],
        lambda x: np.sum(x, axis=(1,), dtype=np.int32),
        params={"axes": (1,), "keepdims": False},
        id="reduce_sum_int32",
    ),
    Case(
        prims_reduction.reduce_prod,
        [lambda rng: rng.integers(-5, 5, (2, 3)).astype(np.int32)],
        lambda x: np.prod(x, axis=(0,), dtype=np.int32),
        params={"axes": (0,), "keepdims": False},
        id="reduce_prod_int32",
    ),
    Case(
        prims_reduction.reduce_max,
        [lambda rng: rng.integers(-5, 5, (2, 3)).astype(np.int32)],
        lambda x: np.max(x, axis=(0, 1)),
        params={"axes": (0, 1), "keepdims": False},
        id="reduce_max_int32",
    ),
    Case(
        prims_reduction.cumsum,
        [lambda rng: rng.integers(-5, 5, (2, 3)).astype(np.int32)],
        lambda x: np.cumsum(x, axis=1, dtype=np.int32),
        params={"axis": 1, "reverse": False},
        id="cumsum_int32",
    ),
    Case(
        prims_reduction.cumprod,
        [lambda rng: rng.integers(-5, 5, (2, 3)).astype(np.int32)],
        lambda x: np.cumprod(x[::-1], axis=0, dtype=np.int32)[::-1],
        params={"axis": 0, "reverse": True},
        id="cumprod_int32",
    ),
    Case(
        prims_reduction.argmax,
        [distinct(2, 3, 4)],
        lambda x: np.argmax(x, axis=1),
        params={"axis": 1, "keepdims": False},
    ),
    Case(
        prims_reduction.argmin,
        [distinct(2, 3)],
        lambda x: np.argmin(x, axis=0, keepdims=True),
        params={"axis": 0, "keepdims": True},
    ),
    Case(
        prims_reduction.cumsum,
        [normal(2, 3)],
        lambda x: np.cumsum(x, axis=1),
        params={"axis": 1, "reverse": False},
    ),
    Case(
        prims_reduction.cumsum,
        [normal(3, 2)],
        lambda x: np.cumsum(x[::-1], axis=0)[::-1],
        params={"axis": 0, "reverse": True},
        id="cumsum_reverse",
    ),
    Case(
        prims_reduction.cumprod,
        [away_from_zero(2, 3)],
        lambda x: np.cumprod(x, axis=1),
        params={"axis": 1, "reverse": False},
    ),
    Case(
        prims_reduction.cumprod,
        [away_from_zero(3, 2)],
        lambda x: np.cumprod(x[::-1], axis=0)[::-1],
        params={"axis": 0, "reverse": True},
        id="cumprod_reverse",
    ),
    Case(
        prims_reduction.cumprod,
        [with_zeros(2, 5)],
        lambda x: np.cumprod(x, axis=1),
        params={"axis": 1, "reverse": False},
        id="cumprod_with_zero",
    ),
    Case(
        prims_reduction.cumprod,
        [lambda rng: np.array([[1.2, 0.0, -0.7, 0.0, 1.1]])],
        lambda x: np.cumprod(x[:, ::-1], axis=1)[:, ::-1],
        params={"axis": 1, "reverse": True},
        id="cumprod_reverse_two_zeros",
    ),
    Case(
        prims_reduction.cumprod,
        [cnormal(3, 2)],
        lambda x: np.cumprod(x, axis=0),
        params={"axis": 0, "reverse": False},
        id="cumprod_complex",
    ),
    Case(
        prims_reduction.cumprod,
        [normal(1, 2)],
        lambda x: np.cumprod(x, axis=0),
        params={"axis": 0, "reverse": False},
        id="cumprod_length_one",
    ),
]

SHAPE = [
    Case(
        prims_shape.reshape,
        [normal(2, 3)],
        lambda x: x.reshape(3, 1, 2),
        params={"shape": (3, 1, 2)},
    ),
    Case(
        prims_shape.reshape,
        [normal(1, 1)],
        lambda x: x.reshape(()),
        params={"shape": ()},
        id="reshape_to_scalar",
    ),
    Case(
        prims_shape.transpose,
        [normal(2, 3, 4)],
        lambda x: x.transpose(2, 0, 1),
        params={"perm": (2, 0, 1)},
    ),
    Case(
        prims_shape.broadcast_to,
        [normal(3, 1)],
        lambda x: np.broadcast_to(x, (2, 3, 4)),
        params={"shape": (2, 3, 4)},
    ),
    Case(
        prims_shape.concatenate,
        [normal(2, 1), normal(2, 3), normal(2, 2)],
        lambda *xs: np.concatenate(xs, axis=1),
        params={"axis": 1},
    ),
    Case(
        prims_shape.pad,
        [normal(2, 3)],
        lambda x: np.pad(x, ((1, 0), (2, 1)), constant_values=0.5),
        params={"pads": ((1, 0), (2, 1)), "value": 0.5},
    ),
    Case(prims_linalg.matmul, [normal(2, 3), normal(3, 4)], np.matmul),
    Case(prims_linalg.matmul, [normal(2, 2, 3), normal(3, 2)], np.matmul, id="matmul_batched"),
    Case(
        prims_linalg.matmul, [normal(2, 1, 2, 3), normal(3, 3, 2)], np.matmul, id="matmul_broadcast"
    ),
    Case(prims_linalg.matmul, [cnormal(2, 3), cnormal(3, 2)], np.matmul, id="matmul_complex"),
]


def _index_case(prim, x_shape, index, id, v_shape=None, index_gens=None, vmap_axes=None):
    """A getitem/index_add/index_update case for ``index`` (with ``ArrayGen`` entries)."""
    gens = index_gens or []
    template = []
    k = 0
    for e in index:
        if e == "A":
            template.append(("array", k))
            k += 1
        elif isinstance(e, slice):
            template.append(("slice", e.start, e.stop, e.step))
        else:
            template.append(e)
    template = tuple(template)
    if prim is prims_indexing.getitem:
        args = [normal(*x_shape), *gens]

        def ref(x, *arrays):
            return x[prims_indexing.realize(template, arrays)]
    else:
        args = [normal(*x_shape), normal(*v_shape), *gens]

        def ref(x, v, *arrays):
            out = x.copy()
            idx = prims_indexing.realize(template, arrays)
            if prim is prims_indexing.index_add:
                np.add.at(out, idx, np.broadcast_to(v, x[idx].shape))
            else:
                out[prims_indexing.realize(template, arrays)] = v
            return out

    return Case(prim, args, ref, params={"index": template}, id=id, vmap_axes=vmap_axes)


S_ = slice
INDEXING = [
    _index_case(prims_indexing.getitem, (4, 3), (1,), "getitem_int"),
    _index_case(prims_indexing.getitem, (4, 3), (S_(1, None, 2), -1), "getitem_slice_int"),
    _index_case(
        prims_indexing.getitem,
        (4, 3, 2),
        (Ellipsis, None, S_(None, None, -1)),
        "getitem_ellipsis_newaxis_flip",
    ),
    _index_case(
        prims_indexing.getitem, (4, 3), ("A",), "getitem_array", index_gens=[ints(-4, 4, 2, 3)]
    ),
    _index_case(
        prims_indexing.getitem,
        (4, 3),
        ("A",),
        "getitem_array_repeats",
        index_gens=[lambda rng: np.array([1, 1, 3, 1])],
    ),
    _index_case(
        prims_indexing.getitem,
        (4, 3, 5),
        (S_(None), "A", S_(1, 4)),
        "getitem_slice_array_slice",
        index_gens=[ints(0, 3, 2)],
    ),
    _index_case(
        prims_indexing.getitem,
        (4, 3, 5),
        ("A", S_(None), "A"),
        "getitem_separated_arrays",
        index_gens=[ints(0, 4, 2, 1), ints(0, 5, 3)],
    ),
    _index_case(
        prims_indexing.getitem,
        (4, 3, 5),
        (S_(None), "A", "A"),
        "getitem_adjacent_arrays",
        index_gens=[ints(0, 3, 2, 1), ints(0, 5, 1, 2)],
    ),
    _index_case(
        prims_indexing.getitem,
        (4, 3, 5),
        (S_(None), 1, "A"),
        "getitem_int_array_adjacent",
        index_gens=[ints(0, 5, 2)],
    ),
    _index_case(
        prims_indexing.getitem,
        (4, 3, 5),
        ("A", S_(None), 0),
        "getitem_array_int_separated",
        index_gens=[ints(0, 4, 2)],
    ),
    _index_case(
        prims_indexing.getitem,
        (4, 3, 5),
        (None, "A", Ellipsis, "A"),
        "getitem_newaxis_ellipsis_arrays",
        index_gens=[ints(0, 4, 2), ints(0, 5, 2)],
    ),
    _index_case(
        prims_indexing.getitem,
        (4, 3, 5),
        (S_(None), "A", None, S_(None, 2)),
        "getitem_array_then_newaxis",
        index_gens=[ints(0, 3, 2, 2)],
    ),
    _index_case(prims_indexing.index_add, (4, 3), (S_(1, 3),), "index_add_slice", v_shape=(3,)),
    _index_case(
        prims_indexing.index_add,
        (4, 3),
        ("A",),
        "index_add_repeats",
        v_shape=(5, 3),
        index_gens=[lambda rng: np.array([0, 2, 0, 3, 0])],
    ),
    _index_case(
        prims_indexing.index_add,
        (4, 3, 5),
        (S_(None), "A", "A"),
        "index_add_adjacent_arrays",
        v_shape=(4, 2, 2),
        index_gens=[ints(0, 3, 2, 1), ints(0, 5, 2)],
    ),
    _index_case(
        prims_indexing.index_add,
        (4, 3, 5),
        ("A", S_(None), "A"),
        "index_add_separated_arrays",
        v_shape=(2, 3),
        index_gens=[ints(0, 4, 2), ints(0, 5, 2)],
    ),
    _index_case(
        prims_indexing.index_add,
        (4, 3, 5),
        (S_(None), 2, "A"),
        "index_add_int_array",
        v_shape=(1,),
        index_gens=[ints(0, 5, 3)],
    ),
    # values that broadcast along a leading dim of x[index] (numpy 2.x's add.at gets this wrong)
    _index_case(
        prims_indexing.index_add,
        (2,),
        ("A",),
        "index_add_leading_broadcast",
        v_shape=(2,),
        index_gens=[lambda rng: np.zeros((2, 2), np.int64)],
    ),
    _index_case(
        prims_indexing.index_update, (4, 3), (S_(None), 1), "index_update_column", v_shape=(1,)
    ),
    _index_case(
        prims_indexing.index_update,
        (4, 3),
        ("A",),
        "index_update_rows",
        v_shape=(2, 3),
        index_gens=[lambda rng: rng.permutation(4)[:2]],
    ),
    _index_case(
        prims_indexing.index_update,
        (4, 3, 5),
        (S_(None), "A", S_(1, 3)),
        "index_update_array_middle",
        v_shape=(2, 2),
        index_gens=[lambda rng: rng.permutation(3)[:2]],
    ),
    _index_case(
        prims_indexing.index_update,
        (4, 3, 5),
        ("A", Ellipsis, "A"),
        "index_update_ellipsis_arrays",
        v_shape=(2, 3),
        index_gens=[lambda rng: rng.permutation(4)[:2], lambda rng: rng.permutation(5)[:2]],
    ),
]

TABLE = UNARY + BINARY + REDUCTION + SHAPE + INDEXING


# ---- special functions (core/prims/special.py) and log2/log10 ----------------------------------
def _uniform(lo, hi, *shape):
    return lambda rng: rng.uniform(lo, hi, shape)


SPECIAL = [
    Case(prims_elementwise.log2, [positive(*U)], np.log2),
    Case(prims_elementwise.log10, [positive(*U)], np.log10),
    Case(prims_special.gammaln, [positive(*U)], sps.gammaln),
    Case(prims_special.gammaln, [_uniform(-2.9, -2.1, *U)], sps.gammaln, id="gammaln_negative"),
    Case(prims_special.polygamma, [positive(*U)], sps.digamma, params={"n": 0}, id="digamma"),
    Case(prims_special.polygamma, [positive(*U)], lambda x: sps.polygamma(1, x), params={"n": 1}),
    Case(
        prims_special.polygamma,
        [positive(*U)],
        lambda x: sps.polygamma(3, x),
        params={"n": 3},
        id="polygamma_3",
    ),
    Case(prims_special.erfc, [normal(*U)], sps.erfc),
    Case(prims_special.erfc, [_uniform(4.0, 8.0, *U)], sps.erfc, id="erfc_tail"),
    Case(prims_special.erfc, [cnormal(*U)], sps.erfc, id="erfc_complex"),
    Case(prims_special.erfcx, [normal(*U)], sps.erfcx),
    Case(prims_special.erfcx, [_uniform(5.0, 50.0, *U)], sps.erfcx, id="erfcx_large"),
    Case(prims_special.erfinv, [_uniform(-0.8, 0.8, *U)], sps.erfinv),
    Case(prims_special.erfcinv, [_uniform(0.2, 1.8, *U)], sps.erfcinv),
    Case(prims_special.log_ndtr, [normal(*U)], sps.log_ndtr),
    # the lower tail: ndtr underflows below -38, log_ndtr and its Mills-ratio derivative do not
    Case(prims_special.log_ndtr, [_uniform(-60.0, -30.0, *U)], sps.log_ndtr, id="log_ndtr_tail"),
    Case(prims_special.i0, [normal(*U)], sps.i0),
    Case(prims_special.i1, [normal(*U)], sps.i1),
    Case(prims_special.i1, [with_zeros(*U)], sps.i1, id="i1_at_zero"),  # i1' = i0 - i1 / x at x = 0
    Case(prims_special.i0e, [away_from_zero(*U)], sps.i0e),  # exp(-|x|): a kink at 0
    Case(prims_special.i1e, [away_from_zero(*U)], sps.i1e),
    Case(prims_special.i0e, [_uniform(700.0, 800.0, *U)], sps.i0e, id="i0e_large"),
]
TABLE += SPECIAL


# ---- decompositions and matrix functions (core/prims/decomp.py) ----------------------------------
# Eigen- and singular vectors have an arbitrary phase (sign, for real matrices): the table checks
# them with the phase fixed so that each vector's first entry is real and positive, a smooth
# function of the factors that finite differences can follow. The packed layouts are in decomp.py.
def _phase_np(first_row):
    return np.conj(first_row) / np.abs(first_row)


def _phase(first_row):
    return ops.conj(first_row) / ops.abs(first_row)


def _herm_np(a):
    return 0.5 * (a + np.conj(np.swapaxes(a, -1, -2)))


def _herm(a):
    return 0.5 * (a + ops.conj(ops.swapaxes(a, -1, -2)))


def _eigh_ref(a):
    w, v = np.linalg.eigh(_herm_np(a))
    v = v * _phase_np(v[..., :1, :])
    return np.concatenate([w[..., None, :].astype(v.dtype), v], axis=-2)


def _eigh_fn(a):
    out = prims_decomp.eigh(_herm(a))
    v = out[..., 1:, :]
    return ops.concat([out[..., :1, :], v * _phase(v[..., :1, :])], axis=-2)


def _eig_ref(a):
    w, v = np.linalg.eig(a)
    v = v * _phase_np(v[..., :1, :])
    return np.concatenate([w[..., None, :], v], axis=-2).astype(np.result_type(a, 1j))


def _eig_fn(a):
    out = prims_decomp.eig(a)
    v = out[..., 1:, :]
    return ops.concat([out[..., :1, :], v * _phase(v[..., :1, :])], axis=-2)


def _svd_ref(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    c = _phase_np(u[..., :1, :])  # u_j and v_j share one phase
    v = np.conj(np.swapaxes(vh, -1, -2))
    return np.concatenate([u * c, s[..., None, :].astype(u.dtype), v * c], axis=-2)


def _svd_fn(a):
    m = a.shape[-2]
    out = prims_decomp.svd(a, full_matrices=False)
    c = _phase(out[..., :1, :])
    return ops.concat([out[..., :m, :] * c, out[..., m : m + 1, :], out[..., m + 1 :, :] * c], -2)


def _qr_ref(a, full):
    """numpy's Q and R packed as decomp.qr packs them: [..., m + k, max(k, n)]."""
    m, n = a.shape[-2:]
    q, r = np.linalg.qr(a, mode="complete" if full else "reduced")
    width = max(q.shape[-1], n)
    out = np.zeros(a.shape[:-2] + (m + q.shape[-1], width), dtype=a.dtype)
    out[..., :m, : q.shape[-1]] = q
    out[..., m:, :n] = r
    return out


def _spd(*shape):
    """Hermitian positive definite (sqrtm has a real root)."""

    def make(rng):
        a = rng.standard_normal(shape)
        return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])

    return make


def _sqrtm_ref(a):
    import scipy.linalg as sla

    out = np.stack([sla.sqrtm(m) for m in a.reshape(-1, *a.shape[-2:])]).reshape(a.shape)
    return out.real if not np.iscomplexobj(a) else out


def _expm_ref(a):
    import scipy.linalg as sla

    return sla.expm(a)


DECOMP = [
    Case(prims_decomp.eigh, [normal(3, 3)], _eigh_ref, fn=_eigh_fn),
    Case(prims_decomp.eigh, [normal(2, 3, 3)], _eigh_ref, fn=_eigh_fn, id="eigh_batched"),
    Case(prims_decomp.eigh, [cnormal(3, 3)], _eigh_ref, fn=_eigh_fn, id="eigh_complex"),
    Case(prims_decomp.eig, [normal(3, 3)], _eig_ref, fn=_eig_fn),
    Case(prims_decomp.eig, [cnormal(2, 3, 3)], _eig_ref, fn=_eig_fn, id="eig_complex_batched"),
    Case(prims_decomp.svd, [normal(3, 3)], _svd_ref, params={"full_matrices": False}, fn=_svd_fn),
    Case(
        prims_decomp.svd,
        [normal(4, 2)],
        _svd_ref,
        params={"full_matrices": False},
        fn=_svd_fn,
        id="svd_tall",
    ),
    Case(
        prims_decomp.svd,
        [normal(2, 2, 3)],
        _svd_ref,
        params={"full_matrices": False},
        fn=_svd_fn,
        id="svd_wide_batched",
    ),
    Case(
        prims_decomp.svd,
        [cnormal(3, 2)],
        _svd_ref,
        params={"full_matrices": False},
        fn=_svd_fn,
        id="svd_complex",
    ),
    Case(
        prims_decomp.qr,
        [normal(4, 3)],
        lambda a: _qr_ref(a, False),
        params={"full_matrices": False},
    ),
    Case(
        prims_decomp.qr,
        [cnormal(2, 3, 3)],
        lambda a: _qr_ref(a, False),
        params={"full_matrices": False},
        id="qr_complex",
    ),
    Case(
        prims_decomp.qr,
        [normal(2, 4)],
        lambda a: _qr_ref(a, True),
        params={"full_matrices": True},
        id="qr_wide_complete",
    ),
    Case(prims_decomp.pinv, [normal(3, 2)], np.linalg.pinv, params={"rcond": None}),
    Case(
        prims_decomp.pinv,
        [cnormal(2, 2, 3)],
        np.linalg.pinv,
        params={"rcond": None},
        id="pinv_complex_batched",
    ),
    Case(prims_decomp.expm, [normal(3, 3)], _expm_ref),
    Case(prims_decomp.expm, [cnormal(2, 2, 2)], _expm_ref, id="expm_complex_batched"),
    Case(prims_decomp.sqrtm, [_spd(3, 3)], _sqrtm_ref),
    Case(prims_decomp.sqrtm, [_spd(2, 2, 2)], _sqrtm_ref, id="sqrtm_batched"),
]
TABLE += DECOMP


def _cases(kind=None):
    return [pytest.param(c, id=c.id) for c in TABLE]


def _tensors(arrays):
    return [core.Tensor(a) for a in arrays]


def _assert_matches(out, ref, rtol=1e-10, atol=1e-12, check_dtype=True):
    got = out.asnumpy()
    ref = np.asarray(ref)
    assert got.shape == ref.shape, f"shape {got.shape} != numpy {ref.shape}"
    if check_dtype:
        assert got.dtype == ref.dtype, f"dtype {got.dtype} != numpy {ref.dtype}"
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=atol, equal_nan=True)


# ---- the table tests ---------------------------------------------------------------------------
@pytest.mark.parametrize("case", _cases())
def test_value_against_numpy(case):
    arrays = case.make()
    out = case.fn(*_tensors(arrays))
    _assert_matches(out, case.ref(*[a.copy() for a in arrays]), rtol=case.rtol)


@pytest.mark.parametrize("case", _cases())
def test_abstract_rule_matches_eager(case):
    arrays = case.make()
    tensors = _tensors(arrays)
    out = case.fn(*tensors)
    aval = case.prim.abstract(*[ShapedArray(t.shape, t.dtype) for t in tensors], **case.params)
    assert aval == ShapedArray(out.shape, out.dtype), (
        f"abstract {aval} != eager {out.dtype}{list(out.shape)}"
    )


GRAD_CASES = [pytest.param(c, id=c.id) for c in TABLE if c.grad]


@pytest.mark.parametrize("case", GRAD_CASES)
def test_gradcheck_order1(case):
    gradcheck(case.fn, _tensors(case.make()), order=1)


@pytest.mark.parametrize("case", [p for p in GRAD_CASES if p.values[0].order2])
def test_gradcheck_order2(case):
    gradcheck(case.fn, _tensors(case.make()), order=2)


def _vmap_variants(case, n_args):
    if case.vmap_axes is not None:
        return case.vmap_axes
    variants = [(0,) * n_args]
    if n_args > 1:
        variants.append((0,) + (None,) * (n_args - 1))
        variants.append((None,) * (n_args - 1) + (0,))
    variants.append(("last",) + (None,) * (n_args - 1))
    return variants


@pytest.mark.parametrize("case", _cases())
def test_vmap_against_loop(case):
    n_batch = 3
    examples = [case.make(seed) for seed in range(n_batch)]
    n_args = len(examples[0])
    for axes in _vmap_variants(case, n_args):
        in_axes, batched_args = [], []
        for i in range(n_args):
            ax = axes[i]
            if ax is None:
                in_axes.append(None)
                batched_args.append(core.Tensor(examples[0][i]))
                continue
            if ax == "last":
                ax = examples[0][i].ndim
            in_axes.append(ax)
            batched_args.append(core.Tensor(np.stack([ex[i] for ex in examples], axis=ax)))
        out = core.vmap(case.fn, in_axes=tuple(in_axes))(*batched_args)
        expected = []
        for k in range(n_batch):
            args = [examples[0][i] if in_axes[i] is None else examples[k][i] for i in range(n_args)]
            expected.append(case.fn(*_tensors(args)).asnumpy())
        try:
            _assert_matches(out, np.stack(expected))
        except AssertionError as err:
            raise AssertionError(f"vmap with in_axes={tuple(in_axes)}: {err}") from None


def test_pow_derivatives_at_zero_base():
    # x**y at x == 0 with y > 1: d/dx = y x^(y-1) = 0, and d/dy is defined as the limit 0
    x = core.Tensor(np.array([0.0, 0.0, 2.0]))
    y = core.Tensor(np.array([2.5, 1.0, 1.5]))
    gx, gy = core.grad(lambda x, y: prims_elementwise.pow(x, y).sum(), (0, 1))(x, y)
    np.testing.assert_allclose(gx.asnumpy(), [0.0, 1.0, 1.5 * np.sqrt(2.0)])
    np.testing.assert_allclose(gy.asnumpy(), [0.0, 0.0, 2.0**1.5 * np.log(2.0)])
    assert np.all(
        np.isfinite(core.hessian(lambda x: prims_elementwise.pow(x, y).sum())(x).asnumpy())
    )


# ---- dtypes: every float dtype keeps its dtype through unary math ------------------------------
FLOAT_UNARY = [
    prims_elementwise.neg,
    prims_elementwise.exp,
    prims_elementwise.expm1,
    prims_elementwise.log,
    prims_elementwise.log1p,
    prims_elementwise.sqrt,
    prims_elementwise.sin,
    prims_elementwise.cos,
    prims_elementwise.tanh,
    prims_elementwise.logistic,
    prims_elementwise.erf,
    prims_elementwise.abs,
]
NP_OF = {
    "neg": np.negative,
    "exp": np.exp,
    "expm1": np.expm1,
    "log": np.log,
    "log1p": np.log1p,
    "sqrt": np.sqrt,
    "sin": np.sin,
    "cos": np.cos,
    "tanh": np.tanh,
    "logistic": sps.expit,
    "erf": sps.erf,
    "abs": np.abs,
}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("prim", FLOAT_UNARY, ids=lambda p: p.name)
def test_unary_keeps_low_precision_dtype(prim, dtype):
    dt = core.dtypes.canonical(dtype)
    x64 = np.random.default_rng(1).uniform(0.5, 2.0, (5,))
    x = core.Tensor(x64.astype(dt))
    out = prim(x)
    assert out.dtype == dt
    assert prim.abstract(ShapedArray(x.shape, x.dtype)) == ShapedArray(out.shape, out.dtype)
    tol = {"float16": 3e-3, "bfloat16": 2e-2, "float32": 1e-6}[dtype]
    ref = NP_OF[prim.name](x.asnumpy().astype(np.float64))
    np.testing.assert_allclose(out.asnumpy().astype(np.float64), ref, rtol=tol, atol=tol)


# ---- coverage: every primitive has all of its rules --------------------------------------------
@pytest.mark.parametrize("prim", ALL, ids=lambda p: p.name)
def test_every_primitive_has_all_rules(prim):
    missing = []
    if prim.differentiable:
        if prim not in vjp_rules:
            missing.append("VJP")
        if prim not in jvp_rules:
            missing.append("JVP")
    if prim not in batch_rules:
        missing.append("batching")
    if not callable(prim.abstract):
        missing.append("abstract")
    assert not missing, f"primitive {prim.name} has no {', '.join(missing)} rule"


def test_table_covers_every_primitive_of_these_families():
    families = {prims_elementwise, prims_reduction, prims_shape, prims_indexing, prims_special}
    declared = {
        p
        for p in ALL
        if any(p is getattr(m, p.name, None) or p in vars(m).values() for m in families)
    }
    declared.add(prims_linalg.matmul)
    tested = {c.prim for c in TABLE}
    untested = sorted(p.name for p in declared - tested)
    assert not untested, f"primitives without a table entry: {untested}"


# ---- coverage: the compiler's record of every primitive (core/jit/lowering.py) -----------------
def _family(module):
    return [p for p in ALL if p is getattr(module, p.name, None) or p in vars(module).values()]


# what the fusion pass may see: every elementwise primitive (the special functions are too)
ELEMENTWISE = _family(prims_elementwise) + _family(prims_special)


@pytest.mark.parametrize("prim", ELEMENTWISE, ids=lambda p: p.name)
def test_every_elementwise_primitive_has_a_lowering_record(prim):
    rec = lowerings.get(prim)
    assert rec is not None, (
        f"elementwise primitive {prim.name} has no lowering record: register one with "
        "deflowering() in its core/rules module (templates, or unfused= with the reason)"
    )
    assert rec.fusible or rec.unfused, f"{prim.name}: a record without templates needs `unfused`"


def _real_case(prim):
    """Inputs for ``prim`` from the first table case with real (or bool) arrays, as float64."""
    for case in TABLE:
        if case.prim is prim:
            arrays = case.make()
            if all(a.dtype.kind in "fib" for a in arrays):
                arrays = [a if a.dtype == bool else a.astype(np.float64) for a in arrays]
                return arrays, case.params
    raise AssertionError(f"{prim.name}: no table case with real inputs to check its lowering")


RECORDS = sorted(lowerings.items(), key=lambda kv: kv[0].name)
TEMPLATED = [pytest.param(p, r, id=p.name) for p, r in RECORDS if r.fusible]


@pytest.mark.parametrize("prim, rec", TEMPLATED)
def test_lowering_math_names_the_functions_its_c_template_calls(prim, rec):
    called = set(re.findall(r"\b([A-Za-z_]\w*)\(", rec.c))
    assert called == set(rec.math), f"{prim.name}: C template calls {called}, math={rec.math}"
    names = [f"x{k}" for k in range(10)]
    for k in range(10):  # an input read twice must be a name, never an inlined expression
        reads = [rec.c.format(*names).count(f"x{k}")]
        if rec.numexpr is not None:
            reads.append(rec.numexpr.format(*names).count(f"x{k}"))
        assert max(reads) <= 1 or k in rec.name_args, f"{prim.name}: input {k} read twice"


def _as(dtype, arrays):
    return [a if a.dtype == bool else a.astype(dtype) for a in arrays]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("prim, rec", TEMPLATED)
def test_lowering_templates_compute_the_reference(prim, rec, dtype):
    """numexpr and (with a compiler) native C evaluate each template to the reference value."""
    import numexpr

    from diffsci.core.backend import cc
    from diffsci.core.backend.cpu_fusion import NativeFused
    from diffsci.core.jit.fusion import FusedKernel

    arrays, params = _real_case(prim)
    arrays = _as(dtype, arrays)
    want = prim.reference(np, *arrays, **params)
    tol = 1e-12 if dtype == np.float64 else 2e-6
    names = [f"x{k}" for k in range(len(arrays))]
    if rec.numexpr is not None:
        got = numexpr.evaluate(rec.numexpr.format(*names), dict(zip(names, arrays)))
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    if cc.available():
        kernel = FusedKernel(
            None,
            rec.c.format(*names),
            names,
            [a.dtype for a in arrays],
            want.dtype,
            1,
            native=True,
            math=rec.math,
        )
        got = NativeFused(kernel)(*arrays)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize(
    "prim, rec", [pytest.param(p, r, id=p.name) for p, r in RECORDS if r.ufunc or r.emit]
)
def test_lowering_calls_compute_the_reference(prim, rec):
    """The ufunc (and the emitted expression) codegen writes for a primitive is its value."""
    arrays, params = _real_case(prim)
    want = prim.reference(np, *arrays, **params)
    names = [f"x{k}" for k in range(len(arrays))]
    if rec.ufunc is not None:
        np.testing.assert_array_equal(getattr(np, rec.ufunc)(*arrays), want)
    if rec.emit is not None:
        got = eval(rec.emit(names, params), {"xp": np, **dict(zip(names, arrays))})
        np.testing.assert_array_equal(got, want)


# the jit's own primitives (fused) have no table case
@pytest.mark.parametrize(
    "prim",
    [pytest.param(p, id=p.name) for p, r in RECORDS if r.fresh and p in {c.prim for c in TABLE}],
)
def test_lowering_fresh_results_share_no_memory_with_inputs(prim):
    arrays, params = _real_case(prim)
    out = prim.impl(np, *arrays, **params)
    assert not any(np.shares_memory(out, a) for a in arrays), f"{prim.name} is not fresh"


def test_primitive_names_are_unique():
    names = [p.name for p in ALL]
    dups = sorted({n for n in names if names.count(n) > 1})
    assert not dups, f"primitive names declared twice: {dups}"


# ---- hypothesis: shapes that vary --------------------------------------------------------------
@st.composite
def broadcastable_pair(draw):
    rank = draw(st.integers(0, 3))
    shape = draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank))
    a, b = list(shape), list(shape)
    for i in range(rank):
        which = draw(st.integers(0, 2))
        if which == 1:
            a[i] = 1
        elif which == 2:
            b[i] = 1
    a = a[draw(st.integers(0, rank)) :]
    b = b[draw(st.integers(0, rank)) :]
    return tuple(a), tuple(b)


BROADCAST_PRIMS = [
    (prims_elementwise.add, np.add),
    (prims_elementwise.sub, np.subtract),
    (prims_elementwise.mul, np.multiply),
    (prims_elementwise.div, np.true_divide),
    (prims_elementwise.atan2, np.arctan2),
    (prims_elementwise.maximum, np.maximum),
]


@settings(max_examples=15, deadline=None)
@given(
    shapes=broadcastable_pair(),
    which=st.integers(0, len(BROADCAST_PRIMS) - 1),
    seed=st.integers(0, 100),
)
def test_broadcasting_binary(shapes, which, seed):
    prim, ref = BROADCAST_PRIMS[which]
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shapes[0])
    b = rng.uniform(0.5, 2.0, shapes[1]) * rng.choice([-1.0, 1.0], shapes[1])
    out = prim(core.Tensor(a), core.Tensor(b))
    _assert_matches(out, ref(a, b))
    if prim is not prims_elementwise.maximum:
        gradcheck(prim, [core.Tensor(a), core.Tensor(b)], order=1)
    # vmap over the first operand only, against a loop
    stacked = np.stack([a, a * 0.5 + 1.0])
    vm = core.vmap(prim, in_axes=(0, None))(core.Tensor(stacked), core.Tensor(b))
    _assert_matches(vm, np.stack([ref(s, b) for s in stacked]))


@st.composite
def shape_and_axes(draw):
    rank = draw(st.integers(1, 4))
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank)))
    axes = tuple(sorted(draw(st.sets(st.integers(0, rank - 1)))))
    return shape, axes, draw(st.booleans())


REDUCE_PRIMS = [
    (prims_reduction.reduce_sum, np.sum),
    (prims_reduction.reduce_max, np.max),
    (prims_reduction.reduce_min, np.min),
    (prims_reduction.reduce_prod, np.prod),
]


@settings(max_examples=15, deadline=None)
@given(spec=shape_and_axes(), which=st.integers(0, len(REDUCE_PRIMS) - 1))
def test_reduction_over_random_axes(spec, which):
    shape, axes, keepdims = spec
    prim, ref = REDUCE_PRIMS[which]
    x = distinct(*shape)(np.random.default_rng(len(axes)))
    fn = functools.partial(prim, axes=axes, keepdims=keepdims)
    _assert_matches(fn(core.Tensor(x)), ref(x, axis=axes, keepdims=keepdims))
    gradcheck(fn, [core.Tensor(x)], order=1)
    stacked = np.stack([x, -x + 0.01], axis=-1)
    vm = core.vmap(fn, in_axes=-1)(core.Tensor(stacked))
    _assert_matches(
        vm,
        np.stack(
            [ref(x, axis=axes, keepdims=keepdims), ref(-x + 0.01, axis=axes, keepdims=keepdims)]
        ),
    )


@settings(max_examples=15, deadline=None)
@given(shape=st.lists(st.integers(1, 3), min_size=0, max_size=4), data=st.data())
def test_reshape_and_transpose_random(shape, data):
    shape = tuple(shape)
    x = np.random.default_rng(0).standard_normal(shape)
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    n = int(np.prod(shape))
    divisors = [d for d in range(1, n + 1) if n % d == 0]
    first = data.draw(st.sampled_from(divisors))
    new_shape = (first, n // first)
    for fn, ref in (
        (functools.partial(prims_shape.transpose, perm=perm), lambda a: a.transpose(perm)),
        (functools.partial(prims_shape.reshape, shape=new_shape), lambda a: a.reshape(new_shape)),
    ):
        out = fn(core.Tensor(x))
        _assert_matches(out, ref(x))
        # linear map: <vjp(g), x> == <g, f(x)>
        g = np.random.default_rng(1).standard_normal(out.shape)
        _, pull = core.vjp(fn, core.Tensor(x))
        (gx,) = pull(core.Tensor(g))
        np.testing.assert_allclose(
            np.sum(gx.asnumpy() * x), np.sum(g * ref(x)), rtol=1e-10, atol=1e-12
        )
        stacked = np.stack([x, 2 * x], axis=0)
        _assert_matches(core.vmap(fn)(core.Tensor(stacked)), np.stack([ref(x), ref(2 * x)]))


# ---- the checker itself: a wrong rule must fail it ----------------------------------------------
@pytest.mark.parametrize("mode", ["vjp", "jvp", "vjp_second", "jvp_second"])
def test_gradcheck_detects_wrong_rules(mode, monkeypatch):
    x = [core.Tensor(np.random.default_rng(0).standard_normal((2, 3)))]
    if mode == "vjp":
        monkeypatch.setitem(
            vjp_rules,
            prims_elementwise.sin,
            lambda g, out, x, **kw: (g * prims_elementwise.cos(x) * 1.001,),
        )
    elif mode == "jvp":
        monkeypatch.setitem(
            jvp_rules,
            prims_elementwise.sin,
            lambda ts, out, x: ts[0] * prims_elementwise.cos(x) * 1.001,
        )
    elif mode == "vjp_second":  # right first derivative, wrong second
        monkeypatch.setitem(
            vjp_rules,
            prims_elementwise.sin,
            lambda g, out, x, **kw: (g * ops.stop_gradient(prims_elementwise.cos(x)),),
        )
    else:
        monkeypatch.setitem(
            jvp_rules,
            prims_elementwise.sin,
            lambda ts, out, x: ts[0] * ops.stop_gradient(prims_elementwise.cos(x)),
        )
    with pytest.raises(AssertionError, match="gradcheck"):
        gradcheck(prims_elementwise.sin, x, order=1 if mode in ("vjp", "jvp") else 2)
