"""The IR and the passes of ``core.jit``: golden text, verify(), dead code, common
subexpressions, constant folding, algebraic simplification, elementwise fusion, and the buffer
reuse of the generated code (``out=``), including the cases where reuse would be wrong."""

import numpy as np
import pytest

from diffsci import core
from diffsci.core import ops
from diffsci.core.backend import cc
from diffsci.core.jit import passes
from diffsci.core.jit.fusion import fuse_elementwise, fused
from diffsci.core.jit.ir import Eqn, Graph, Var
from diffsci.core.primitive import ShapedArray
from diffsci.core.prims import elementwise as prims_elementwise
from diffsci.core.prims import shape as prims_shape

from . import _golden
from ._helpers import assert_tree_close


@pytest.fixture(autouse=True)
def _fuse_small_cpu_arrays(monkeypatch):
    # By default the CPU only fuses arrays of >= 1M elements (see test_cpu_fusion_policy_fuses_only_large_arrays);
    # these tests exercise the fusion pass on small arrays.
    from diffsci.core.jit import fusion

    monkeypatch.setattr(fusion, "_CPU_MIN", 0)


F64 = np.dtype("float64")


def prim_names(lowered):
    return [e.prim.name for e in lowered.graph.eqns]


def rand(*shape, seed=0):
    return core.tensor(np.random.default_rng(seed).standard_normal(shape))


# ---- golden IR text -----------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(_golden.CASES))
def test_golden_ir(name):
    expected = (_golden.GOLDEN_DIR / f"{name}.txt").read_text()
    assert _golden.render(name) == expected, (
        f"IR of {name} changed; if deliberate, run `python -m tests.core.jit._golden` and review "
        "the diff of tests/core/jit/golden by hand"
    )


def test_golden_normalize_renumbers_in_order_of_appearance():
    assert _golden.normalize("graph(%17) {\n  %20 = tanh %17\n  return %20\n}") == (
        "graph(%0) {\n  %1 = tanh %0\n  return %1\n}\n"
    )


def test_as_text_one_line_per_primitive_with_shapes():
    f = core.jit(lambda x, y: ops.sum(ops.exp(x) * y, axis=0), passes=())
    text = f.lower(rand(5, 3), rand(5, 3)).as_text()
    lines = text.splitlines()
    assert lines[0].startswith("graph(") and "float64[5, 3]" in lines[0]
    body = [ln for ln in lines[1:-2]]
    assert [ln.split(" = ")[1].split()[0] for ln in body] == ["exp", "mul", "reduce_sum"]
    assert "float64[3] = reduce_sum [axes=(0,), keepdims=False]" in text
    assert lines[-2].strip().startswith("return %")


# ---- verify -------------------------------------------------------------------------------------
def _aval(*shape):
    return ShapedArray(shape, F64)


def test_verify_rejects_malformed_graphs():
    x, y, z = Var(_aval(3)), Var(_aval(3)), Var(_aval(3))
    with pytest.raises(AssertionError, match="used before it is defined"):
        Graph([x], [Eqn(prims_elementwise.add, [x, y], {}, z)], [z]).verify()
    with pytest.raises(AssertionError, match="defined twice"):
        Graph(
            [x],
            [Eqn(prims_elementwise.neg, [x], {}, z), Eqn(prims_elementwise.neg, [x], {}, z)],
            [z],
        ).verify()
    with pytest.raises(AssertionError, match="never defined"):
        Graph([x], [], [y]).verify()
    with pytest.raises(AssertionError, match="appears twice"):
        Graph([x, x], [], [x]).verify()
    Graph([x], [Eqn(prims_elementwise.neg, [x], {}, z)], [z]).verify()


# ---- dead code ----------------------------------------------------------------------------------
def test_dead_code_drops_unused_chains_and_keeps_outputs():
    x = Var(_aval(3))
    a, b, c = Var(_aval(3)), Var(_aval(3)), Var(_aval(3))
    g = Graph(
        [x],
        [
            Eqn(prims_elementwise.exp, [x], {}, a),
            Eqn(prims_elementwise.sin, [a], {}, b),
            Eqn(prims_elementwise.cos, [x], {}, c),
        ],
        [c],
    )
    g = passes.dead_code(g).verify()
    assert [e.prim for e in g.eqns] == [prims_elementwise.cos]


def test_dead_code_in_jit():
    def f(x):
        ops.exp(x) * 3.0  # computed, never used
        return ops.sin(x)

    low = core.jit(f).lower(rand(4))
    assert prim_names(low) == ["sin"]


# ---- common subexpressions ----------------------------------------------------------------------
def test_cse_merges_identical_equations_only():
    def f(x):
        a = ops.sum(ops.exp(x), axis=0) + ops.sum(ops.exp(x), axis=0)
        b = ops.sum(ops.exp(x), axis=1)  # same prim, other params: kept apart
        return a, b

    low = core.jit(f, passes=[passes.common_subexpressions, passes.dead_code]).lower(rand(3, 4))
    assert prim_names(low).count("exp") == 1
    assert prim_names(low).count("reduce_sum") == 2
    x = rand(3, 4)
    assert_tree_close(core.jit(f)(x), f(x))


def test_cse_keeps_recomputed_work_apart():
    x, a, b, s = Var(_aval(3)), Var(_aval(3)), Var(_aval(3)), Var(_aval(3))
    eqns = [
        Eqn(prims_elementwise.exp, [x], {}, a),
        Eqn(prims_elementwise.exp, [x], {}, b, tag="recompute"),
        Eqn(prims_elementwise.add, [a, b], {}, s),
    ]
    g = passes.common_subexpressions(Graph([x], eqns, [s])).verify()
    assert len(g.eqns) == 3


def test_cse_never_merges_random_draws():
    f = core.jit(
        lambda x: (
            x
            + core.random.normal(x.shape, dtype=x.dtype)
            - core.random.normal(x.shape, dtype=x.dtype)
        )
    )
    x = ops.zeros((50,), dtype=core.float64)
    low = f.lower(x)
    assert prim_names(low).count("random_normal") == 2
    assert np.abs(f(x).asnumpy()).max() > 0  # two different draws do not cancel


# ---- constant folding ---------------------------------------------------------------------------
def test_fold_constants_evaluates_small_constant_subgraphs():
    c1 = Var(_aval(3), const=np.array([1.0, 2.0, 3.0]))
    c2 = Var(_aval(), const=np.array(2.0))
    x = Var(_aval(3))
    t, out = Var(_aval(3)), Var(_aval(3))
    eqns = [
        Eqn(prims_elementwise.mul, [c1, c2], {}, t),
        Eqn(prims_elementwise.add, [x, t], {}, out),
    ]
    g = passes.fold_constants(Graph([x], eqns, [out])).verify()
    assert [e.prim for e in g.eqns] == [prims_elementwise.add]
    folded = g.eqns[0].inputs[1]
    np.testing.assert_array_equal(folded.const, [2.0, 4.0, 6.0])
    assert "const [2.,4.,6.]" in g.as_text()


def test_fold_constants_leaves_big_results_alone():
    c = Var(_aval(1), const=np.array([1.0]))
    big = Var(ShapedArray((1 << 17,), F64))
    out = Var(ShapedArray((1 << 17,), F64))
    x = Var(ShapedArray((1 << 17,), F64))
    eqns = [
        Eqn(prims_shape.broadcast_to, [c], {"shape": (1 << 17,)}, big),
        Eqn(prims_elementwise.add, [x, big], {}, out),
    ]
    g = passes.fold_constants(Graph([x], eqns, [out])).verify()
    assert [e.prim for e in g.eqns] == [prims_shape.broadcast_to, prims_elementwise.add]


def test_fold_constants_output_and_run():
    c = Var(_aval(2), const=np.array([0.0, 1.0]))
    x, e_out, s_out = Var(_aval(2)), Var(_aval(2)), Var(_aval(2))
    g = Graph(
        [x],
        [
            Eqn(prims_elementwise.exp, [c], {}, e_out),
            Eqn(prims_elementwise.add, [x, e_out], {}, s_out),
        ],
        [s_out, e_out],
    )
    g = passes.fold_constants(g).verify()
    from diffsci.core.jit.codegen import lower

    out = lower(g).fn(np.array([1.0, 1.0]))
    np.testing.assert_allclose(out[0], 1.0 + np.exp([0.0, 1.0]))
    np.testing.assert_allclose(out[1], np.exp([0.0, 1.0]))


# ---- algebraic simplification -------------------------------------------------------------------
SIMPLIFY_CASES = {
    "x*1": (lambda x: x * 1.0, []),
    "1*x": (lambda x: 1.0 * x, []),
    "x+0": (lambda x: x + 0.0, []),
    "0+x": (lambda x: 0.0 + x, []),
    "x-0": (lambda x: x - 0.0, []),
    "x/1": (lambda x: x / 1.0, []),
    "neg neg": (lambda x: ops.neg(ops.neg(x)), []),
    "reshape reshape": (lambda x: ops.reshape(ops.reshape(x, (6, 4)), (4, 3, 2)), ["reshape"]),
    "reshape back": (lambda x: ops.reshape(ops.reshape(x, (24,)), (2, 3, 4)), []),
    "transpose transpose": (lambda x: ops.transpose(ops.transpose(x, (1, 2, 0)), (2, 0, 1)), []),
    "transpose compose": (
        lambda x: ops.transpose(ops.transpose(x, (1, 0, 2)), (0, 2, 1)),
        ["transpose"],
    ),
    "noop broadcast": (lambda x: ops.broadcast_to(x, (2, 3, 4)), []),
    "noop cast": (lambda x: ops.astype(x, core.float64), []),
}


@pytest.mark.parametrize("name", sorted(SIMPLIFY_CASES))
def test_simplify_identities(name):
    fn, expected = SIMPLIFY_CASES[name]
    x = rand(2, 3, 4)
    jf = core.jit(fn, passes=[passes.simplify, passes.dead_code])
    assert prim_names(jf.lower(x)) == expected
    assert_tree_close(jf(x), fn(x), rtol=0, atol=0)


def test_simplify_keeps_shape_changing_identities():
    # x * ones broadcasts x to a bigger shape: not an identity; x+0 with an int const keeps dtype
    fn = lambda x: x * ops.ones((2, 3), dtype=core.float64)  # noqa: E731
    x = rand(3)
    jf = core.jit(fn, passes=[passes.simplify, passes.dead_code])
    assert prim_names(jf.lower(x)) == ["mul"]
    assert_tree_close(jf(x), fn(x))
    fn2 = lambda x: ops.transpose(ops.transpose(x, (1, 0, 2)), (1, 2, 0))  # noqa: E731
    x3 = rand(2, 3, 4)
    jf2 = core.jit(fn2, passes=[passes.simplify, passes.dead_code])
    assert prim_names(jf2.lower(x3)) == ["transpose"]
    assert_tree_close(jf2(x3), fn2(x3), rtol=0, atol=0)


# ---- elementwise fusion -------------------------------------------------------------------------
def test_fusion_chain_becomes_one_fused_equation():
    fn = lambda x, y: ops.abs(x * y + 1.0) / (y * y + 2.0) - x  # noqa: E731
    x, y = rand(64, 64, seed=1), rand(64, 64, seed=2)
    low = core.jit(fn).lower(x, y)
    assert prim_names(low) == ["fused"]
    kernel = low.graph.eqns[0].params["kernel"]
    assert kernel.n_ops == 7
    assert_tree_close(core.jit(fn)(x, y), fn(x, y), rtol=1e-12, atol=1e-12)


def test_cpu_fusion_without_a_compiler_leaves_transcendentals_to_numpy():
    # numexpr's exp/sin/tanh are scalar libm loops, slower than numpy's SIMD ones: on the CPU
    # they stay separate equations and only the arithmetic around them is fused
    fn = lambda x, y: ops.tanh(ops.exp(x) * y + 1.0) - ops.sin(y)  # noqa: E731
    x, y = rand(64, 64, seed=1), rand(64, 64, seed=2)
    with cc.disabled():
        low = core.jit(fn).lower(x, y)
    names = prim_names(low)
    assert {"exp", "sin", "tanh", "fused"} <= set(names)
    for e in low.graph.eqns:
        if e.prim is fused:
            assert not any(f in e.params["kernel"].numexpr_src for f in ("exp", "sin", "tanh"))
    assert_tree_close(core.jit(fn)(x, y), fn(x, y), rtol=1e-12, atol=1e-12)


def test_fusion_float32_matches_eager():
    fn = lambda x: ops.sqrt(ops.abs(ops.sin(x) * 3.0) + 1.0) / (ops.cos(x) ** 2 + 2.0)  # noqa: E731
    x = core.tensor(np.random.default_rng(0).standard_normal((80, 80)).astype(np.float32))
    jf = core.jit(fn)
    assert "fused" in prim_names(jf.lower(x))
    out = jf(x)
    assert out.dtype == core.float32
    np.testing.assert_allclose(out.asnumpy(), fn(x).asnumpy(), rtol=2e-6, atol=1e-6)


def test_fusion_value_used_twice_outside_is_kept():
    def f(x):
        t = ops.exp(x) * 2.0
        return ops.sin(t) + 1.0, ops.sum(t)

    x = rand(100, 100)
    low = core.jit(f).lower(x)
    # t feeds a fused kernel and a reduction: it is materialized once, never computed twice
    assert prim_names(low).count("reduce_sum") == 1
    in_kernels = sum(
        e.params["kernel"].numexpr_src.count("exp") for e in low.graph.eqns if e.prim is fused
    )
    assert in_kernels + prim_names(low).count("exp") == 1
    assert_tree_close(core.jit(f)(x), f(x))


def test_fusion_keeps_nan_semantics_of_maximum_and_minimum():
    x = core.tensor(np.array([np.nan, -1.0, 2.0, 0.25] * 2048))
    y = core.tensor(np.array([1.0, np.nan, -2.0, 0.5] * 2048))
    for fn in (
        lambda x, y: ops.maximum(x * 2.0, y * 3.0) + 1.0,
        lambda x, y: ops.minimum(x * 2.0, y * 3.0) + 1.0,
        lambda x, y: ops.clip(x * 2.0 + y, -1.0, 1.0) * 3.0,
    ):
        jf = core.jit(fn)
        assert "fused" in prim_names(jf.lower(x, y))
        np.testing.assert_array_equal(jf(x, y).asnumpy(), fn(x, y).asnumpy())


def test_fusion_pass_on_a_hand_built_graph():
    x = Var(ShapedArray((100, 100), F64))
    a, b, c = (Var(ShapedArray((100, 100), F64)) for _ in range(3))
    g = Graph(
        [x],
        [
            Eqn(prims_elementwise.exp, [x], {}, a),
            Eqn(prims_elementwise.sin, [a], {}, b),
            Eqn(prims_elementwise.neg, [b], {}, c),
        ],
        [c],
    )
    g = fuse_elementwise(g, backend=_GPU_LIKE).verify()  # a GPU kernel also takes exp and sin
    assert [e.prim for e in g.eqns] == [fused]
    assert g.eqns[0].out is c


class _GPU_LIKE:
    """Stands for a GPU backend in a pass that only asks for its fusion policy."""

    array_type = object
    fuses_everything = True
    name = "GPU"


# ---- buffer reuse -------------------------------------------------------------------------------
def test_buffer_reuse_writes_into_dead_buffers():
    def chain(x, w):
        h = ops.tanh(x @ w)
        h = ops.tanh(h @ w)
        return ops.tanh(h @ w)

    x, w = rand(300, 300, seed=1), rand(300, 300, seed=2) * 0.05
    low = core.jit(chain).lower(x, w)
    assert "out=" in low.source
    x_before, w_before = x.asnumpy().copy(), w.asnumpy().copy()
    assert_tree_close(core.jit(chain)(x, w), chain(x, w))
    # inputs are never written
    np.testing.assert_array_equal(x.asnumpy(), x_before)
    np.testing.assert_array_equal(w.asnumpy(), w_before)


def test_buffer_reuse_source_has_one_line_per_equation_and_del():
    fn = lambda x: ops.sin(ops.exp(x) @ x) @ x  # noqa: E731
    low = core.jit(fn).lower(rand(50, 50))
    calls = [ln for ln in low.source.splitlines() if " = " in ln]
    assert len(calls) == len(low.graph.eqns)
    assert "del " in low.source


def test_buffer_reuse_never_overwrites_outputs():
    def f(x):
        a = ops.exp(x)  # an output, and consumed by the next equations
        b = ops.sin(a)
        c = ops.cos(b)
        return a, c, b

    x = rand(200, 200)
    for pipeline in (None, ()):
        assert_tree_close(core.jit(f, passes=pipeline)(x), f(x))


def test_buffer_reuse_with_an_input_that_is_an_output():
    def f(x, y):
        return x, ops.exp(y) + 1.0, y

    x, y = rand(128, 128, seed=1), rand(128, 128, seed=2)
    out = core.jit(f)(x, y)
    assert_tree_close(out, f(x, y))
    np.testing.assert_array_equal(out[0].asnumpy(), x.asnumpy())


def test_buffer_reuse_with_views():
    def f(x):
        t = ops.exp(x)
        v = ops.reshape(t, (-1,))  # a view of t is an output: t must survive
        u = ops.sin(t) * 2.0
        w = ops.cos(u) + 1.0
        return v, w

    x = rand(100, 100)
    assert_tree_close(core.jit(f)(x), f(x))


def test_buffer_reuse_never_writes_a_buffer_that_a_view_reads():
    # t and t.T are read by one kernel: writing the result into t would corrupt t.T midway
    def f(x):
        t = ops.exp(x)
        u = ops.transpose(t)
        return ops.sin(t) * ops.cos(u) + t * u

    def g(x):
        t = ops.exp(x)
        return ops.sin(ops.flip(t, axis=0)) + t

    x = rand(200, 200)
    assert_tree_close(core.jit(f)(x), f(x))
    assert_tree_close(core.jit(g)(x), g(x))


def test_buffer_reuse_on_scalars():
    # ufuncs on 0-d arrays return numpy scalars, which cannot be ``out=`` targets
    def f(x, s):
        a = ops.exp(s) + 1.0
        b = ops.sqrt(a) * 2.0 - 1.0
        return x * b, b

    x, s = rand(10), core.tensor(0.5, dtype=core.float64)
    assert_tree_close(core.jit(f)(x, s), f(x, s))


def test_zero_dim_values_stay_arrays_between_equations():
    # a 0-d ufunc result is a numpy scalar; an equation that assigns into it needs an array
    def f(s, v):
        a = ops.index_update(ops.exp(s) * 2.0, (), 5.0)
        d = ops.index_update(ops.matmul(v, v) + 1.0, (), 3.0)
        return a + d, ops.stack([ops.sum(v), ops.exp(s)])

    s, v = core.tensor(np.float64(0.3)), rand(4)
    assert_tree_close(core.jit(f)(s, v), f(s, v))


def test_no_passes_gives_the_raw_trace_and_same_results():
    fn = lambda x: ops.exp(x * 1.0 + 0.0)  # noqa: E731
    x = rand(5)
    assert prim_names(core.jit(fn, passes=()).lower(x)) == ["mul", "add", "exp"]
    assert_tree_close(core.jit(fn, passes=())(x), fn(x))
