"""Pytrees (core.tree): the registry, treedefs, and user state types through every transform.

Every value is checked against numpy or exact math; gradients also with finite differences.
"""

import dataclasses
from typing import NamedTuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffsci import core
from diffsci.core import ops, tree
from diffsci.core.testing import gradcheck

# ---- state types used below -----------------------------------------------------------------


@tree.register_dataclass
@dataclasses.dataclass(frozen=True)
class Frozen:
    """A solver state: two tensors and a static step size."""

    u: core.Tensor
    v: core.Tensor
    dt: float = dataclasses.field(default=0.5, metadata={"static": True})


@dataclasses.dataclass
class Mutable:
    u: core.Tensor
    scale: core.Tensor
    name: str = "m"


tree.register_dataclass(Mutable, meta_fields=["name"])


class Pair(NamedTuple):
    a: core.Tensor
    b: core.Tensor


@dataclasses.dataclass(frozen=True)
class Unregistered:
    u: core.Tensor


@dataclasses.dataclass
class UnregisteredMutable:
    u: core.Tensor


def t64(a):
    return core.tensor(np.asarray(a, dtype=np.float64))


def close(actual, expected, tol=1e-12):
    np.testing.assert_allclose(np.asarray(actual.asnumpy()), expected, rtol=tol, atol=tol)


# ---- registry and treedefs ------------------------------------------------------------------


def test_dataclass_flattens_data_fields_and_keeps_static_ones_in_the_treedef():
    s = Frozen(t64([1.0]), t64([2.0, 3.0]), dt=0.25)
    leaves, treedef = tree.flatten(s)
    assert [x.shape for x in leaves] == [(1,), (2,)]
    assert treedef.num_leaves == 2
    assert repr(treedef) == "PyTreeDef(Frozen(u=*, v=*, dt=0.25))"
    back = tree.unflatten(treedef, [10, 20])
    assert type(back) is Frozen and (back.u, back.v, back.dt) == (10, 20, 0.25)


def test_treedefs_compare_and_hash_by_structure():
    a = tree.tree_structure(Frozen(t64(1.0), t64(2.0)))
    b = tree.tree_structure(Frozen(t64([5.0]), t64(7.0)))
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != tree.tree_structure(Frozen(t64(1.0), t64(2.0), dt=0.1))  # static field differs
    assert a != tree.tree_structure(Pair(t64(1.0), t64(2.0)))
    assert tree.tree_structure((1, 2)) != tree.tree_structure([1, 2])
    assert tree.tree_structure({"a": 1}) != tree.tree_structure({"b": 1})


def test_register_dataclass_field_selection_and_errors():
    @dataclasses.dataclass
    class D:
        x: object
        y: object
        z: object = 3

    tree.register_dataclass(D, data_fields=["x"])
    assert tree.tree_leaves(D(1, 2)) == [1]
    assert tree.tree_structure(D(1, 2)) != tree.tree_structure(D(1, 5))

    @dataclasses.dataclass
    class E:
        x: object

    with pytest.raises(ValueError, match=r"meta_fields names \['w'\]"):
        tree.register_dataclass(E, meta_fields=["w"])
    with pytest.raises(TypeError, match="not a dataclass"):
        tree.register_dataclass(Pair)
    with pytest.raises(ValueError, match="registered already"):
        tree.register_dataclass(Frozen)
    with pytest.raises(ValueError, match="built-in"):
        tree.register_pytree_node(dict, None, None)


def test_unflatten_skips_init_so_tracers_and_gradients_fit():
    @tree.register_dataclass
    @dataclasses.dataclass
    class Checked:
        u: object

        def __post_init__(self):
            if not isinstance(self.u, np.ndarray):
                raise TypeError("u must be an array")

    s = Checked(np.ones(2))
    assert tree.tree_map(lambda x: "not an array", s).u == "not an array"


def test_register_pytree_node_custom_class():
    class Box:
        def __init__(self, items, tag):
            self.items, self.tag = items, tag

    tree.register_pytree_node(
        Box, lambda b: (b.items, b.tag), lambda tag, children: Box(list(children), tag)
    )
    leaves, treedef = tree.flatten(Box([1, (2, 3)], "t"))
    assert leaves == [1, 2, 3]
    back = tree.unflatten(treedef, [4, 5, 6])
    assert back.items == [4, (5, 6)] and back.tag == "t"


def test_tree_map_checks_structures_and_unflatten_checks_leaf_count():
    assert tree.tree_map(lambda a, b: a + b, {"x": 1, "y": (2,)}, {"x": 10, "y": (20,)}) == {
        "x": 11,
        "y": (22,),
    }
    with pytest.raises(ValueError, match="tree 1 has structure"):
        tree.tree_map(lambda a, b: a, (1, 2), [1, 2])
    with pytest.raises(ValueError, match="takes 2 leaves, got 3"):
        tree.unflatten(tree.tree_structure((1, 2)), [1, 2, 3])


def test_flatten_with_path_names_fields():
    s = {"state": Mutable(t64(1.0), t64(2.0)), "p": Pair(1, [2, None])}
    paths = [p for p, _ in tree.tree_flatten_with_path(s)[0]]
    assert paths == [("state", "u"), ("state", "scale"), ("p", "a"), ("p", "b", 0)]


# random nested trees: every node kind, leaves are ints (their identity is checked)
_leaf = st.integers(-5, 5)


def _nodes(children):
    return st.one_of(
        st.tuples(children, children),
        st.lists(children, max_size=3),
        st.dictionaries(st.sampled_from("abc"), children, max_size=3),
        st.builds(Pair, children, children),
        st.builds(Frozen, children, children, st.sampled_from([0.1, 0.2])),
        st.builds(Mutable, children, children),
        st.none(),
    )


@settings(max_examples=60, deadline=None)
@given(st.recursive(_leaf, _nodes, max_leaves=12))
def test_flatten_unflatten_round_trip(t):
    leaves, treedef = tree.flatten(t)
    assert all(isinstance(x, int) for x in leaves)
    assert treedef.num_leaves == len(leaves)
    assert tree.unflatten(treedef, leaves) == t
    shifted = tree.unflatten(treedef, [x + 100 for x in leaves])
    assert tree.flatten(shifted) == ([x + 100 for x in leaves], treedef)
    assert hash(tree.tree_structure(shifted)) == hash(treedef)


# ---- core.jit -------------------------------------------------------------------------------


def test_jit_frozen_dataclass_is_traced_once_and_nothing_is_baked_in():
    @core.jit
    def step(s):
        return Frozen(s.u + s.dt * s.v, s.v * 2.0, s.dt)

    u, v = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    s = Frozen(t64(u), t64(v))
    for _ in range(3):
        s = step(s)
        u, v = u + 0.5 * v, v * 2.0
    assert step.trace_count == 1
    assert isinstance(s, Frozen) and s.dt == 0.5
    close(s.u, u)
    close(s.v, v)
    # new values in the same structure: same graph, new result (the tensors were not constants)
    out = step(Frozen(t64([7.0, 8.0]), t64([1.0, 1.0])))
    close(out.u, [7.5, 8.5])
    assert step.trace_count == 1
    step(Frozen(t64([7.0, 8.0]), t64([1.0, 1.0]), dt=0.1))  # a new static value retraces
    assert step.trace_count == 2


def test_jit_mutable_dataclass_and_namedtuple_in_and_out():
    f = core.jit(lambda s, p: (Mutable(s.u * s.scale, s.scale, s.name + "!"), Pair(p.b, p.a)))
    m, p = f(Mutable(t64([1.0, 2.0]), t64(3.0)), Pair(t64(1.0), t64(2.0)))
    close(m.u, [3.0, 6.0])
    assert m.name == "m!" and isinstance(p, Pair)
    close(p.a, 2.0)
    f(Mutable(t64([5.0, 5.0]), t64(1.0)), Pair(t64(0.0), t64(0.0)))
    assert f.trace_count == 1


def test_jit_static_argument_holding_a_tensor_is_an_error():
    f = core.jit(lambda x, s: x * s.u, static_argnums=1)
    with pytest.raises(
        TypeError, match=r"argument 1 \(s\) is static .* Tensor \(at Unregistered\.u\)"
    ):
        f(t64(1.0), Unregistered(t64(2.0)))
    g = core.jit(lambda x, scale: x * scale, static_argnames="scale")
    with pytest.raises(TypeError, match=r"argument 'scale' is static .*traced argument"):
        g(t64(1.0), scale=t64(2.0))


def test_jit_unregistered_dataclasses_say_to_register():
    f = core.jit(lambda s: s.u * 2.0)
    with pytest.raises(TypeError, match=r"Unregistered.*register_dataclass"):
        f(Unregistered(t64(1.0)))
    with pytest.raises(TypeError, match=r"dataclass UnregisteredMutable.*register_dataclass"):
        f(UnregisteredMutable(t64(1.0)))


# ---- autodiff ----------------------------------------------------------------------------------


def _energy(s):
    # E = sum(u^2 * scale) + sum(sin(u))
    return (s.u**2 * s.scale).sum() + ops.sin(s.u).sum()


def test_grad_with_respect_to_a_dataclass_is_a_dataclass_of_gradients():
    u = np.array([0.3, -1.2, 2.0])
    s = Mutable(t64(u), t64(1.5), name="keep")
    for g in (core.grad(_energy)(s), core.jit(core.grad(_energy))(s)):
        assert isinstance(g, Mutable) and g.name == "keep"
        close(g.u, 2 * u * 1.5 + np.cos(u))
        close(g.scale, (u**2).sum())
    value, g = core.value_and_grad(_energy)(s)
    close(value, (u**2 * 1.5).sum() + np.sin(u).sum())
    gradcheck(lambda u, c: _energy(Mutable(u, c)), [t64(u), t64(1.5)])


def test_vjp_and_jvp_with_namedtuples():
    a, b = np.array([1.0, 2.0]), np.array([0.5, -3.0])
    _, vjp_fn = core.vjp(lambda p: Pair(p.a * p.b, ops.exp(p.a)), Pair(t64(a), t64(b)))
    (ct,) = vjp_fn(Pair(t64([1.0, 1.0]), t64([1.0, 0.0])))
    assert isinstance(ct, Pair)
    close(ct.a, b + np.array([np.exp(1.0), 0.0]))
    close(ct.b, a)
    _, tangent = core.jvp(
        lambda p: Pair(p.a * p.b, p.b),
        (Pair(t64(a), t64(b)),),
        (Pair(t64([1.0, 0.0]), t64([0.0, 1.0])),),
    )
    assert isinstance(tangent, Pair)
    close(tangent.a, [b[0], a[1]])


# ---- vmap, recompute, chunk_map ------------------------------------------------------------------


def test_vmap_with_an_axis_per_dataclass_field():
    u = np.arange(6.0).reshape(3, 2)
    v = np.array([1.0, -1.0])
    step = core.vmap(
        lambda s: Frozen(s.u + s.dt * s.v, s.v, s.dt),
        in_axes=(Frozen(0, None),),
        out_axes=Frozen(1, None),
    )
    out = step(Frozen(t64(u), t64(v)))
    assert isinstance(out, Frozen)
    close(out.u, (u + 0.5 * v).T)  # batch axis moved to 1
    close(out.v, v)  # not batched


def test_recompute_with_dataclass_arguments_gives_the_same_gradient():
    u = np.array([0.1, 0.7, -0.4])
    block = core.recompute(lambda s, k: Mutable(ops.tanh(s.u * s.scale) * k, s.scale))

    def loss(u, c):
        return (block(Mutable(u, c), 2.0).u ** 2).sum()

    gu, gc = core.grad(loss, grad_position=(0, 1))(t64(u), t64(0.9))
    y = np.tanh(0.9 * u)
    close(gu, 2 * (2 * y) * 2 * (1 - y**2) * 0.9)
    close(gc, (2 * (2 * y) * 2 * (1 - y**2) * u).sum())
    gradcheck(loss, [t64(u), t64(0.9)])


def test_chunk_map_over_a_dataclass_and_a_namedtuple_output():
    u = np.arange(10.0).reshape(5, 2)
    fn = core.chunk_map(
        lambda s: Pair(s.u * s.scale, (s.u**2).sum(axis=1)),
        chunk_size=2,
        in_axes=(Mutable(0, None),),
        out_axes=Pair(0, 0),
    )
    out = fn(Mutable(t64(u), t64(3.0)))
    assert isinstance(out, Pair)
    close(out.a, u * 3.0)
    close(out.b, (u**2).sum(axis=1))


# ---- checkpoints ----------------------------------------------------------------------------------


def test_checkpoint_round_trip_of_state_pytrees(tmp_path):
    state = {
        "fluid": Frozen(t64([1.0, 2.0]), core.tensor([3.0], dtype=core.float32), dt=0.1),
        "pair": Pair(t64(4.0), core.tensor([1, 2], dtype=core.int32)),
        "step": 7,
    }
    path = tmp_path / "state.ckpt.h5"
    core.save_checkpoint(state, path)
    flat = core.load_checkpoint(path)
    assert list(flat) == ["fluid.u", "fluid.v", "pair.a", "pair.b", "step"]
    like = tree.tree_map(lambda x: x * 0 if isinstance(x, core.Tensor) else 0, state)
    back = core.load_checkpoint(path, target=like)
    assert tree.tree_structure(back) == tree.tree_structure(state)
    for a, b in zip(tree.tree_leaves(back), tree.tree_leaves(state), strict=True):
        if isinstance(b, core.Tensor):
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
        else:
            assert a == b and type(a) is type(b)
    core.save_checkpoint(Mutable(t64([1.0]), t64(2.0)), path)
    assert core.load_checkpoint(path, target=Mutable(t64([0.0]), t64(0.0))).scale.item() == 2.0
    with pytest.raises(core.serialization.CheckpointError, match=r"'u' is float64\[1\].*\[3\]"):
        core.load_checkpoint(path, target=Mutable(t64([0.0, 0.0, 0.0]), t64(0.0)))


# ---- control flow carries ------------------------------------------------------------------------


def _advance(i, s):
    # u <- u + dt * sin(u) * v, v <- 0.9 v: a nonlinear step with a static dt
    return Frozen(s.u + s.dt * ops.sin(s.u) * s.v, s.v * 0.9, s.dt)


def test_fori_loop_with_a_dataclass_carry_under_jit_and_grad():
    u0, v0 = np.array([0.4, 1.1]), np.array([0.5, -1.0])
    u, v = u0.copy(), v0.copy()
    for _ in range(6):
        u, v = u + 0.5 * np.sin(u) * v, v * 0.9
    run = core.jit(lambda s: ops.fori_loop(0, 6, _advance, s))
    out = run(Frozen(t64(u0), t64(v0)))
    assert isinstance(out, Frozen) and out.dt == 0.5
    close(out.u, u)
    close(out.v, v)

    def loss(u, v):
        return (ops.fori_loop(0, 6, _advance, Frozen(u, v)).u ** 2).sum()

    gradcheck(loss, [t64(u0), t64(v0)])
    g_eager = core.grad(loss, grad_position=(0, 1))(t64(u0), t64(v0))
    g_jit = core.jit(core.grad(loss, grad_position=(0, 1)))(t64(u0), t64(v0))
    for a, b in zip(g_eager, g_jit, strict=True):
        close(a, b.asnumpy())


def test_scan_while_loop_and_cond_with_pytree_carries():
    def step(c, x):
        return Pair(c.a + x.a, c.b * x.b), c.a * x.b

    xa, xb = np.arange(4.0), np.linspace(1.0, 2.0, 4)
    c, ys = core.jit(lambda c, xs: ops.scan(step, c, xs))(
        Pair(t64(0.0), t64(1.0)), Pair(t64(xa), t64(xb))
    )
    assert isinstance(c, Pair)
    close(c.a, xa.sum())
    close(c.b, xb.prod())
    close(ys, np.concatenate([[0.0], np.cumsum(xa)[:-1]]) * xb)

    def grow(s):
        return Mutable(s.u * 2.0, s.scale, s.name)

    out = core.jit(lambda s: ops.while_loop(lambda s: s.u.sum() < 10.0, grow, s))(
        Mutable(t64([1.0, 1.5]), t64(0.0), "w")
    )
    assert isinstance(out, Mutable) and out.name == "w"
    close(out.u, [4.0, 6.0])  # sums 2.5, 5, 10: stops at 10

    swap = core.jit(lambda p, s: ops.cond(p, lambda s: Pair(s.b, s.a), lambda s: s, s))
    assert swap(t64(1.0) > 0, Pair(t64(1.0), t64(2.0))).a.item() == 2.0
    assert swap(t64(-1.0) > 0, Pair(t64(1.0), t64(2.0))).a.item() == 1.0
