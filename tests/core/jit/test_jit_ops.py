"""``jit(f) == f`` and ``jit(grad(f)) == grad(f)`` for every op family, from one table.

Each case is a small function of a few random inputs. The compiled value must equal the eager
value (same dtypes and shapes; close to rounding, since fused kernels may evaluate
transcendental functions with another libm), and for differentiable cases the compiled
gradient of ``sum(out * cotangent)`` must equal the eager gradient: this runs every VJP rule
of the family through tracing, the passes and code generation. A case whose op is missing
(renamed, or dropped from ``core.ops``) fails with the missing name: never a silent skip.
"""

import zlib

import numpy as np
import pytest

from diffsci import core
from diffsci.core import ops

from ._helpers import assert_tree_close, leaves


class Case:
    def __init__(self, name, fn, make, needs=(), grad=True, rtol=1e-10, atol=1e-12):
        self.name, self.fn, self.make, self.needs = name, fn, make, needs
        self.grad, self.rtol, self.atol = grad, rtol, atol

    def require(self):
        missing = [n for n in self.needs if _lookup(n) is None]
        if missing:
            pytest.fail(f"{self.name}: core.ops has no {', '.join(missing)}")

    def inputs(self):
        rng = np.random.default_rng(zlib.crc32(self.name.encode()))
        return [core.tensor(a) if isinstance(a, np.ndarray) else a for a in self.make(rng)]


def _lookup(dotted):
    obj = ops
    for part in dotted.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


# ---- input makers: rng -> list of numpy arrays ----------------------------------------------------
def R(*shape):
    return lambda rng: rng.standard_normal(shape)


def POS(*shape):
    return lambda rng: rng.uniform(0.5, 2.0, shape)


def IDX(high, *shape):
    return lambda rng: rng.integers(0, high, shape).astype(np.int64)


def WELL(n, batch=()):
    def make(rng):
        a = rng.standard_normal((*batch, n, n))
        return a + 3.0 * n * np.eye(n) / np.sqrt(n)

    return make


def SPD(n):
    def make(rng):
        a = rng.standard_normal((n, n))
        return a @ a.T + n * np.eye(n)

    return make


def ins(*makers):
    return lambda rng: [m(rng) for m in makers]


# ---- the table ------------------------------------------------------------------------------------
def _setitem(x, v, idx):
    y = x * 1.0
    y[1] = v
    y[:, 0] = 0.0
    y[idx] = y[idx] * 2.0
    return y


ELEMENTWISE = [
    Case(
        "arith",
        lambda x, y: (x + y) * x - y / (ops.abs(x) + 1.0) - x // 1.0 * 0.0,
        ins(R(4, 5), R(4, 5)),
    ),
    Case("broadcast", lambda x, y: x * y + 2.0 - y, ins(R(4, 1, 3), R(5, 3))),
    Case("pow", lambda x, p: p**1.5 + x**2 + ops.pow(p, x) + ops.square(x), ins(R(6), POS(6))),
    Case(
        "transcendental",
        lambda x, p: (
            ops.exp(x),
            ops.log(p),
            ops.sqrt(p),
            ops.sin(x),
            ops.cos(x),
            ops.tanh(x),
            ops.sigmoid(x),
            ops.log1p(p),
            ops.expm1(x),
            ops.arctan(x),
            ops.sinh(x),
            ops.cosh(x),
            ops.rsqrt(p),
            ops.tan(x * 0.3),
            ops.reciprocal(p),
            ops.arctan2(x, p),
        ),
        ins(R(3, 4), POS(3, 4)),
    ),
    Case(
        "activations",
        lambda x: (
            ops.relu(x),
            ops.gelu(x),
            ops.gelu(x, approximate="tanh"),
            ops.softplus(x),
            ops.silu(x),
            ops.leaky_relu(x, 0.1),
            ops.erf(x),
        ),
        ins(R(5, 4)),
        needs=("gelu", "silu", "erf", "softplus", "leaky_relu"),
    ),
    Case(
        "where_clip_compare",
        lambda x, y: (
            ops.where(x > y, x * 2.0, ops.clip(y, -0.5, 0.5))
            + ops.maximum(x, 0.1)
            - ops.minimum(y, x)
        ),
        ins(R(64, 80), R(64, 80)),
    ),
    Case(
        "comparisons",
        lambda x, y: (
            x > y,
            x <= y,
            ops.equal(x, ops.round(x)),
            ops.not_equal(x, y),
            ops.logical_and(x > 0, y < 0),
            ops.logical_or(x > 1, y > 1),
            ops.logical_not(x > 0),
            ops.isfinite(x / y),
            ops.isnan(x),
        ),
        ins(R(3, 4), R(3, 4)),
        grad=False,
    ),
    Case(
        "integers",
        lambda a, b: (a // b, a % b, a * 3 - b, ops.sign(a - 5), ops.maximum(a, b), ops.abs(a - b)),
        lambda rng: [rng.integers(0, 10, (4, 3)), rng.integers(1, 5, (4, 3))],
        grad=False,
    ),
    Case(
        "casts_and_rounding",
        lambda x: (
            ops.astype(x, core.float32) * 2.0,
            ops.astype(x * 3.0, core.int32),
            ops.floor(x),
            ops.ceil(x),
            ops.round(x * 3.0),
            ops.sign(x),
        ),
        ins(R(3, 4)),
        grad=False,
        rtol=1e-6,
    ),
    Case(
        "cast_grad",
        lambda x: ops.astype(ops.astype(x, core.float32) * 2.0, core.float64),
        ins(R(5)),
        rtol=1e-6,
        atol=1e-6,
    ),
]

REDUCTIONS = [
    Case(
        "sums",
        lambda x: (
            ops.sum(x),
            ops.sum(x, axis=1),
            ops.mean(x, axis=(0, 2), keepdims=True),
            ops.prod(x, axis=2),
            ops.var(x, axis=0),
            ops.std(x, axis=-1),
            ops.logsumexp(x, axis=1),
            ops.norm(x),
        ),
        ins(R(3, 4, 5)),
    ),
    Case(
        "extrema",
        lambda x: (
            ops.max(x, axis=0),
            ops.min(x, axis=-1, keepdims=True),
            ops.amax(x),
            ops.amin(x, axis=1),
        ),
        ins(R(4, 6)),
    ),
    Case(
        "cumulative",
        lambda x: (
            ops.cumsum(x, axis=1),
            ops.cumprod(x, axis=0),
            ops.cumsum(x, axis=0, reverse=True),
        ),
        ins(R(3, 4)),
    ),
    Case(
        "arg_and_bool",
        lambda x: (
            ops.argmax(x, axis=1),
            ops.argmin(x),
            ops.all(x > -3.0, axis=0),
            ops.any(x > 1.0),
        ),
        ins(R(4, 5)),
        grad=False,
    ),
]

SHAPES = [
    Case(
        "reshape_transpose",
        lambda x: (
            ops.reshape(x, (6, 4)),
            ops.transpose(x, (2, 0, 1)),
            ops.permute(x, 1, 2, 0),
            x.T,
            ops.swapaxes(x, 0, 2),
            ops.moveaxis(x, 0, -1),
            ops.flatten(x),
            ops.expand_dims(x, 1),
            ops.squeeze(ops.expand_dims(x, 0), 0),
        ),
        ins(R(2, 3, 4)),
    ),
    Case(
        "join_split",
        lambda x, y: (
            ops.concat([x, y], axis=1),
            ops.stack([x, x * 2.0], axis=0),
            *ops.split(x, 2, axis=1),
            *ops.chunk(y, 3, axis=1),
        ),
        ins(R(3, 4), R(3, 6)),
    ),
    Case(
        "rearrange",
        lambda x: (
            ops.flip(x, axis=0),
            ops.roll(x, 2, axis=1),
            ops.pad(x, ((1, 0), (2, 1))),
            ops.tile(x, (2, 1)),
            ops.repeat(x, 2, axis=0),
            ops.broadcast_to(x[:, None, :], (3, 2, 4)),
            ops.tril(x),
            ops.triu(x, 1),
        ),
        ins(R(3, 4)),
    ),
]

INDEXING = [
    Case(
        "basic",
        lambda x: (x[1:, ::2], x[0], x[..., -1], x[None, :, 1], x[1:3, 1:-1]),
        ins(R(4, 5)),
    ),
    Case(
        "advanced",
        lambda x, i, j: (x[[0, 2]], x[i], x[i, j], x[:, [1, 0, 1]], x[i, 1:]),
        ins(R(4, 5), IDX(4, 6), IDX(5, 6)),
    ),
    Case("setitem", _setitem, ins(R(4, 5), R(5), IDX(4, 3))),
    Case(
        "scatter_gather",
        lambda x, i, u: (
            ops.index_add(x, i, u),
            ops.take(x, i, axis=0),
            ops.take_along_axis(x, i[:, None] % 5, axis=1),
            ops.index_update(x, i, u),
        ),
        lambda rng: [
            rng.standard_normal((4, 5)),
            np.array([0, 2, 2, 3]),
            rng.standard_normal((4, 5)),
        ],
    ),
    Case("one_hot", lambda i: ops.one_hot(i, 5), ins(IDX(5, 7)), grad=False),
]

CONTRACTIONS = [
    Case(
        "matmul",
        lambda a, b, v: (
            a @ b,
            ops.matmul(v, b[0]),
            ops.matmul(a, v),
            ops.dot(v, v),
            ops.outer(v, v),
            ops.inner(v, v),
        ),
        ins(R(2, 3, 4), R(2, 4, 5), R(4)),
    ),
    Case(
        "einsum",
        lambda a, b, m: (
            ops.einsum("bij,bjk->bik", a, b),
            ops.einsum("ij,ij->i", a[0], a[1]),
            ops.einsum("ii->", m),
            ops.einsum("bij->j", a),
            ops.tensordot(a, b, axes=([1, 2], [2, 1])),
        ),
        ins(R(2, 3, 4), R(2, 4, 3), R(4, 4)),
    ),
]

LINALG = [
    Case(
        "solve_inv_det",
        lambda w, b: (
            ops.inv(w),
            ops.solve(w, b),
            ops.det(w),
            ops.slogdet(w)[1],
            ops.solve_triangular(ops.tril(w), b),
        ),
        ins(WELL(4), R(4, 2)),
        rtol=1e-9,
    ),
    Case("cholesky_logdet", lambda s: (ops.cholesky(s), ops.logdet(s)), ins(SPD(4)), rtol=1e-9),
    Case("batched", lambda w: (ops.inv(w), ops.det(w)), ins(WELL(3, batch=(2,))), rtol=1e-9),
]

FFT = [
    Case(
        "fft",
        lambda x: (
            ops.fft.fft(x),
            ops.fft.ifft(x, axis=0),
            ops.fft.rfft(x),
            ops.fft.fft2(x),
            ops.fft.irfft(ops.fft.rfft(x), n=6),
        ),
        ins(R(4, 6)),
        needs=("fft.fft", "fft.ifft", "fft.rfft", "fft.irfft", "fft.fft2"),
    ),
    Case(
        "fftn",
        lambda x: (ops.fft.fftn(x), ops.fft.rfftn(x), ops.fft.ifftn(ops.fft.fftn(x))),
        ins(R(2, 3, 4)),
        needs=("fft.fftn", "fft.rfftn", "fft.ifftn"),
    ),
]

NN = [
    Case(
        "softmax_norms",
        lambda x, w, b: (
            ops.softmax(x),
            ops.log_softmax(x, axis=0),
            ops.layer_norm(x, (5,), w, b),
            ops.group_norm(x.reshape(1, 4, 5), 2),
        ),
        ins(R(4, 5), R(5), R(5)),
        needs=("softmax", "log_softmax", "layer_norm", "group_norm"),
    ),
    Case(
        "conv2d",
        lambda x, w, b, wg: (
            ops.conv2d(x, w, b, padding=1),
            ops.conv2d(x, w, stride=2, dilation=1),
            ops.conv2d(x, wg, groups=2, padding=1),
        ),
        ins(R(2, 2, 6, 6), R(3, 2, 3, 3), R(3), R(4, 1, 3, 3)),
        needs=("conv2d",),
        rtol=1e-9,
    ),
    Case(
        "conv_transpose_unfold",
        lambda x, w: (ops.conv_transpose2d(x, w, stride=2), ops.unfold(x, 2)),
        ins(R(1, 2, 4, 4), R(2, 3, 3, 3)),
        needs=("conv_transpose2d", "unfold"),
        rtol=1e-9,
    ),
    Case(
        "pooling",
        lambda x: (
            ops.max_pool2d(x, 2),
            ops.avg_pool2d(x, 3, stride=1, padding=1),
            ops.adaptive_avg_pool2d(x, (2, 3)),
        ),
        ins(R(2, 3, 6, 6)),
        needs=("max_pool2d", "avg_pool2d", "adaptive_avg_pool2d"),
    ),
    Case(
        "attention",
        lambda q, k, v: (
            ops.scaled_dot_product_attention(q, k, v),
            ops.scaled_dot_product_attention(q, k, v, is_causal=True),
        ),
        ins(R(2, 5, 4), R(2, 5, 4), R(2, 5, 3)),
        needs=("scaled_dot_product_attention",),
    ),
    Case(
        "losses",
        lambda logits, y, t: (
            ops.cross_entropy(logits, t),
            ops.mse_loss(logits, y),
            ops.smooth_l1_loss(logits, y),
        ),
        ins(R(6, 4), R(6, 4), IDX(4, 6)),
        needs=("cross_entropy", "mse_loss", "smooth_l1_loss"),
    ),
]

SORTING = [
    Case(
        "sort",
        lambda x: (ops.sort(x, axis=1), ops.sort(x, axis=0, descending=True)),
        ins(R(4, 5)),
        needs=("sort",),
    ),
    Case("topk", lambda x: ops.topk(x, 3), ins(R(4, 6)), needs=("topk",)),
    Case(
        "argsort", lambda x: ops.argsort(x, axis=-1), ins(R(4, 6)), needs=("argsort",), grad=False
    ),
]

FAMILIES = {
    "elementwise": ELEMENTWISE,
    "reduction": REDUCTIONS,
    "shape": SHAPES,
    "indexing": INDEXING,
    "contraction": CONTRACTIONS,
    "linalg": LINALG,
    "fft": FFT,
    "nn": NN,
    "sort": SORTING,
}
CASES = [pytest.param(c, id=f"{fam}-{c.name}") for fam, cases in FAMILIES.items() for c in cases]
GRAD_CASES = [p for p in CASES if p.values[0].grad]


@pytest.mark.parametrize("case", CASES)
def test_jit_equals_eager(case):
    case.require()
    args = case.inputs()
    jf = core.jit(case.fn)
    assert_tree_close(jf(*args), case.fn(*args), rtol=case.rtol, atol=case.atol)
    assert_tree_close(jf(*args), case.fn(*args), rtol=case.rtol, atol=case.atol)  # cached run
    assert jf.trace_count == 1


def _loss_of(fn, out_example, rng):
    """``sum over float outputs of sum(out * cotangent)`` (real and imaginary parts)."""
    cts = []
    for leaf in leaves(out_example):
        kind = leaf.dtype.kind
        if kind == "c":
            cts.append((rng.standard_normal(leaf.shape), rng.standard_normal(leaf.shape)))
        elif kind == "f":
            cts.append((rng.standard_normal(leaf.shape), None))
        else:
            cts.append(None)

    def loss(*args):
        total = 0.0
        for leaf, ct in zip(leaves(fn(*args)), cts, strict=True):
            if ct is None:
                continue
            re = ops.real(leaf) if ct[1] is not None else leaf
            total = total + ops.sum(re * core.tensor(ct[0], dtype=re.dtype))
            if ct[1] is not None:
                total = total + ops.sum(ops.imag(leaf) * core.tensor(ct[1], dtype=re.dtype))
        return total

    return loss


@pytest.mark.parametrize("case", GRAD_CASES)
def test_jit_of_grad_equals_grad(case):
    case.require()
    args = case.inputs()
    positions = tuple(
        i for i, a in enumerate(args) if isinstance(a, core.Tensor) and a.dtype.kind == "f"
    )
    loss = _loss_of(case.fn, case.fn(*args), np.random.default_rng(1))
    grad_fn = core.grad(loss, grad_position=positions)
    assert_tree_close(
        core.jit(grad_fn)(*args),
        grad_fn(*args),
        rtol=max(case.rtol, 1e-9),
        atol=max(case.atol, 1e-10),
    )


def test_boolean_mask_indexing_under_jit_says_what_to_do():
    x = core.tensor(np.array([1.0, -1.0, 2.0]))
    with pytest.raises(IndexError, match="where"):
        core.jit(lambda x: x[x > 0])(x)
