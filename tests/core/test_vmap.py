"""core.vmap: in_axes/out_axes, nesting, composition with grad and Jacobians, and batched
advanced indexing (getitem, index_add, index_update) against per-example loops."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffsci import core
from diffsci.core import ops
from diffsci.core.prims import indexing as IX


def _np(t):
    return t.asnumpy()


def T(a):
    return core.Tensor(np.asarray(a))


RNG = np.random.default_rng(0)
XB = RNG.standard_normal((4, 3))  # a batch of 4 vectors of length 3
M = RNG.standard_normal((3, 2))


def loop(fn, *args, in_axes=0):
    """Stack fn over the mapped axis of every argument: the reference for vmap."""
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    n = next(np.asarray(a).shape[ax] for a, ax in zip(args, axes) if ax is not None)
    outs = []
    for k in range(n):
        ex = [T(a) if ax is None else T(np.take(a, k, axis=ax)) for a, ax in zip(args, axes)]
        outs.append(_np(fn(*ex)))
    return np.stack(outs)


# ---- in_axes / out_axes -------------------------------------------------------------------------
def test_in_axes_variants():
    f = lambda x, m: ops.tanh(x @ m)  # noqa: E731
    np.testing.assert_allclose(
        _np(core.vmap(f, in_axes=(0, None))(T(XB), T(M))), loop(f, XB, M, in_axes=(0, None))
    )
    np.testing.assert_allclose(
        _np(core.vmap(f, in_axes=(1, None))(T(XB.T), T(M))), loop(f, XB, M, in_axes=(0, None))
    )
    np.testing.assert_allclose(
        _np(core.vmap(f, in_axes=(-1, None))(T(XB.T), T(M))), loop(f, XB, M, in_axes=(0, None))
    )
    ms = np.stack([M, 2 * M, -M, M + 1])
    np.testing.assert_allclose(_np(core.vmap(f)(T(XB), T(ms))), loop(f, XB, ms))
    np.testing.assert_allclose(
        _np(core.vmap(f, in_axes=(None, 0))(T(XB[0]), T(ms))), loop(f, XB[0], ms, in_axes=(None, 0))
    )
    # a list works like a tuple
    np.testing.assert_allclose(
        _np(core.vmap(f, in_axes=[0, None])(T(XB), T(M))), loop(f, XB, M, in_axes=(0, None))
    )


def test_out_axes_variants():
    f = lambda x: ops.outer(x, x)  # noqa: E731
    ref = loop(f, XB)
    np.testing.assert_allclose(_np(core.vmap(f, out_axes=1)(T(XB))), np.moveaxis(ref, 0, 1))
    np.testing.assert_allclose(_np(core.vmap(f, out_axes=-1)(T(XB))), np.moveaxis(ref, 0, -1))
    g = lambda x: (x.sum(), x * 2.0)  # noqa: E731
    s, d = core.vmap(g, out_axes=(0, 1))(T(XB))
    np.testing.assert_allclose(_np(s), XB.sum(1))
    np.testing.assert_allclose(_np(d), 2 * XB.T)


def test_unbatched_output_is_broadcast_or_kept():
    out = core.vmap(lambda x: T(M))(T(XB))
    np.testing.assert_array_equal(_np(out), np.broadcast_to(M, (4, 3, 2)))
    a, b = core.vmap(lambda x: (x * 2.0, T(M)), out_axes=(0, None))(T(XB))
    np.testing.assert_array_equal(_np(b), M)
    np.testing.assert_allclose(_np(a), 2 * XB)


def test_pytree_arguments_and_outputs():
    def f(p, x):
        return {"y": p["w"] * x + p["b"][0], "n": (x * x).sum()}

    params = {"w": T(np.arange(12.0).reshape(4, 3)), "b": [T(np.ones((4, 3)))]}
    out = core.vmap(f)(params, T(XB))
    np.testing.assert_allclose(_np(out["y"]), np.arange(12.0).reshape(4, 3) * XB + 1)
    np.testing.assert_allclose(_np(out["n"]), (XB * XB).sum(1))
    shared = {"w": T(np.arange(3.0)), "b": [T(np.ones(3))]}
    out = core.vmap(f, in_axes=(None, 0))(shared, T(XB))
    np.testing.assert_allclose(_np(out["y"]), np.arange(3.0) * XB + 1)


def test_out_axes_prefix_of_nested_output():
    def f(x):
        return (x * 2.0, (x.sum(), x + 1.0))

    a, (b, c) = core.vmap(f, out_axes=(0, 1))(T(XB))
    np.testing.assert_allclose(_np(a), 2 * XB)
    np.testing.assert_allclose(_np(b), XB.sum(1))
    np.testing.assert_allclose(_np(c), (XB + 1).T)


def test_vmap_errors():
    with pytest.raises(ValueError, match="different sizes 4 and 3"):
        core.vmap(lambda a, b: a + b)(T(XB), T(M))
    with pytest.raises(ValueError, match="maps no argument"):
        core.vmap(lambda a: a, in_axes=None)(T(XB))
    with pytest.raises(ValueError, match="in_axes has 1 entries for 2 arguments"):
        core.vmap(lambda a, b: a, in_axes=(0,))(T(XB), T(XB))
    with pytest.raises(ValueError, match=r"vmap: in_axes 0 .* shape \(\)"):
        core.vmap(lambda a: a)(T(1.0))
    with pytest.raises(ValueError, match=r"vmap: in_axes 2 .* shape \(4, 3\)"):
        core.vmap(lambda a: a, in_axes=2)(T(XB))


def test_python_scalars_and_numpy_arguments():
    out = core.vmap(lambda x, s: x * s, in_axes=(0, None))(XB, 2.0)
    np.testing.assert_allclose(_np(out), 2 * XB)


# ---- nesting and composition --------------------------------------------------------------------
def test_nested_vmap():
    a = RNG.standard_normal((2, 3, 4))
    out = core.vmap(core.vmap(lambda x: ops.softplus(x).sum()))(T(a))
    np.testing.assert_allclose(_np(out), np.logaddexp(0, a).sum(-1))
    b = RNG.standard_normal((5, 4))
    pair = core.vmap(core.vmap(lambda x, y: (x * y).sum(), in_axes=(None, 0)), in_axes=(0, None))(
        T(a[0]), T(b)
    )
    np.testing.assert_allclose(_np(pair), a[0] @ b.T)
    inner_axis = core.vmap(core.vmap(lambda x: x * 2.0, in_axes=1, out_axes=1), in_axes=0)(T(a))
    np.testing.assert_allclose(_np(inner_axis), 2 * a)


def test_per_sample_gradients():
    w = T(M)

    def loss(w, x, y):
        return ((ops.tanh(x @ w) - y) ** 2).sum()

    ys = RNG.standard_normal((4, 2))
    per_sample = core.vmap(core.grad(loss), in_axes=(None, 0, 0))(w, T(XB), T(ys))
    expected = np.stack([_np(core.grad(loss)(w, T(XB[k]), T(ys[k]))) for k in range(4)])
    np.testing.assert_allclose(_np(per_sample), expected, rtol=1e-12)
    # their mean is the gradient of the mean loss
    mean_grad = core.grad(lambda w: core.vmap(loss, in_axes=(None, 0, 0))(w, T(XB), T(ys)).mean())(
        w
    )
    np.testing.assert_allclose(_np(mean_grad), expected.mean(0), rtol=1e-12)


def test_grad_of_vmap_and_vmap_of_jvp():
    f = lambda x: ops.sin(x) * x.sum()  # noqa: E731
    g = core.grad(lambda x: core.vmap(f)(x).sum())(T(XB))
    expected = np.stack([_np(core.grad(lambda r: f(r).sum())(T(r))) for r in XB])
    np.testing.assert_allclose(_np(g), expected, rtol=1e-12)
    _, tangents = core.vmap(lambda x, t: core.jvp(f, (x,), (t,)))(T(XB), T(np.ones_like(XB)))
    expected = np.stack([_np(core.jvp(f, (T(r),), (T(np.ones(3)),))[1]) for r in XB])
    np.testing.assert_allclose(_np(tangents), expected, rtol=1e-12)


def test_jacobian_via_vmap_of_vjp():
    def f(x):
        return ops.tanh(x @ T(M))

    x = T(XB[0])
    _, pull = core.vjp(f, x)
    jac = core.vmap(lambda c: pull(c)[0])(core.eye(2, dtype="float64"))
    np.testing.assert_allclose(_np(jac), _np(core.jacrev(f)(x)), rtol=1e-12)
    np.testing.assert_allclose(_np(jac), _np(core.jacfwd(f)(x)), rtol=1e-12)
    # per-example Jacobians and Hessians
    jacs = core.vmap(core.jacrev(f))(T(XB))
    np.testing.assert_allclose(
        _np(jacs), np.stack([_np(core.jacfwd(f)(T(r))) for r in XB]), rtol=1e-12
    )
    hess = core.vmap(core.hessian(lambda x: (ops.sin(x) * x[0]).sum()))(T(XB))
    assert hess.shape == (4, 3, 3)
    h0 = _np(core.hessian(lambda x: (ops.sin(x) * x[0]).sum())(T(XB[0])))
    np.testing.assert_allclose(_np(hess)[0], h0, rtol=1e-12)


def test_vmap_of_reductions_and_shape_ops_with_moved_axes():
    a = RNG.standard_normal((3, 4, 5))
    fns = [
        lambda x: ops.max(x, axis=0),
        lambda x: ops.cumsum(x, axis=-1),
        lambda x: ops.argmax(x, axis=1),
        lambda x: ops.transpose(x),
        lambda x: ops.reshape(x, (-1,)),
        lambda x: ops.concat([x, x * 2.0], axis=1),
        lambda x: ops.pad(x, ((1, 0), (0, 2))),
        lambda x: ops.broadcast_to(ops.expand_dims(x, 0), (2, *x.shape)) * 1.0,
        lambda x: ops.logsumexp(x, axis=1, keepdims=True),
        lambda x: ops.norm(x, axis=0),
        lambda x: ops.where(x > 0, x, T(np.arange(float(x.shape[-1])))),
        lambda x: ops.roll(x, 1, axis=0),
        lambda x: ops.einsum("ij,jk->ik", x, T(np.ones((x.shape[-1], 2)))),
    ]
    for fn in fns:
        for ax in (0, 1, 2):
            out = core.vmap(fn, in_axes=ax)(T(a))
            np.testing.assert_allclose(
                _np(out), loop(fn, a, in_axes=ax), rtol=1e-12, err_msg=f"in_axes={ax}"
            )


# ---- advanced indexing under vmap ---------------------------------------------------------------
X3 = RNG.standard_normal((4, 3, 5))
B = 3


@pytest.mark.parametrize(
    "index_fn",
    [
        lambda i: (i,),
        lambda i: (slice(None), i),
        lambda i: (i, slice(1, 3), i),
        lambda i: (slice(None), i, 0),
        lambda i: (0, slice(None), i),
        lambda i: (i, None, Ellipsis),
        lambda i: (Ellipsis, i, None),
        lambda i: (None, slice(None), i, slice(None, None, -1)),
        lambda i: (slice(None), i[:1], i),
    ],
    ids=range(9),
)
def test_getitem_with_batched_index_arrays(index_fn):
    idx = np.array([[0, 2], [1, 1], [2, 0]])  # one index vector per batch element
    x_batch = np.stack([X3 + k for k in range(B)])
    # batched data and batched index, batched index only, batched data only
    out = core.vmap(lambda x, i: x[index_fn(i)])(T(x_batch), T(idx))
    np.testing.assert_array_equal(
        _np(out), np.stack([x_batch[k][index_fn(idx[k])] for k in range(B)])
    )
    out = core.vmap(lambda i: T(X3)[index_fn(i)])(T(idx))
    np.testing.assert_array_equal(_np(out), np.stack([X3[index_fn(idx[k])] for k in range(B)]))
    out = core.vmap(lambda x: x[index_fn(T(idx[0]))])(T(x_batch))
    np.testing.assert_array_equal(
        _np(out), np.stack([x_batch[k][index_fn(idx[0])] for k in range(B)])
    )
    # batch axis of the index not in front
    out = core.vmap(lambda i: T(X3)[index_fn(i)], in_axes=1)(T(idx.T))
    np.testing.assert_array_equal(_np(out), np.stack([X3[index_fn(idx[k])] for k in range(B)]))


def _apply_update(kind, x, index, v):
    out = x.copy()
    if kind == "add":
        np.add.at(
            out, index, np.broadcast_to(v, x[index].shape)
        )  # numpy 2.x mis-broadcasts in add.at
    else:
        out[index] = v
    return out


@st.composite
def index_problem(draw):
    """A random x shape, an index with ints/slices/None/Ellipsis/arrays, and which operands are
    batched."""
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
    arr_shape = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=2)))
    n_consuming = draw(st.integers(1, rank))
    kinds = draw(
        st.lists(
            st.sampled_from(["int", "slice", "array", "array"]),
            min_size=n_consuming,
            max_size=n_consuming,
        )
    )
    for _ in range(draw(st.integers(0, 2))):  # new axes anywhere
        kinds.insert(draw(st.integers(0, len(kinds))), "none")
    if draw(st.booleans()):
        kinds.insert(draw(st.integers(0, len(kinds))), "ellipsis")
    # the dim each consuming entry indexes: from the front before an Ellipsis, from the back after
    consuming = [i for i, k in enumerate(kinds) if k not in ("none", "ellipsis")]
    ell = kinds.index("ellipsis") if "ellipsis" in kinds else len(kinds)
    before = [i for i in consuming if i < ell]
    after = [i for i in consuming if i > ell]
    dims = {i: d for d, i in enumerate(before)}
    dims.update({i: rank - len(after) + d for d, i in enumerate(after)})
    entries = []
    for i, kind in enumerate(kinds):
        if kind == "none":
            entries.append(None)
        elif kind == "ellipsis":
            entries.append(Ellipsis)
        else:
            n = shape[dims[i]]
            if kind == "int":
                entries.append(("int", draw(st.integers(-n, n - 1))))
            elif kind == "slice":
                entries.append(
                    (
                        "slice",
                        draw(
                            st.sampled_from(
                                [
                                    slice(None),
                                    slice(1, None),
                                    slice(None, None, -1),
                                    slice(0, None, 2),
                                ]
                            )
                        ),
                    )
                )
            else:
                entries.append(("array", n))
    batched = draw(st.lists(st.booleans(), min_size=3, max_size=3))
    if not any(batched):
        batched[draw(st.integers(0, 2))] = True
    return shape, arr_shape, tuple(entries), batched, draw(st.integers(0, 1000))


def _template(entries):
    """The primitive's index template for ``entries``."""
    out, k = [], 0
    for e in entries:
        if e is None or e is Ellipsis:
            out.append(e)
        elif e[0] == "array":
            out.append(("array", k))
            k += 1
        elif e[0] == "int":
            out.append(e[1])
        else:
            out.append(("slice", e[1].start, e[1].stop, e[1].step))
    return tuple(out)


def _realize(entries, arrays):
    out, k = [], 0
    for e in entries:
        if e is None or e is Ellipsis:
            out.append(e)
        elif e[0] == "array":
            out.append(arrays[k])
            k += 1
        else:
            out.append(e[1])
    return tuple(out)


@settings(max_examples=15, deadline=None)
@given(problem=index_problem())
def test_random_batched_indexing_against_loop(problem):
    shape, arr_shape, entries, batched, seed = problem
    rng = np.random.default_rng(seed)
    n_arrays = sum(1 for e in entries if isinstance(e, tuple) and e[0] == "array")
    sizes = [e[1] for e in entries if isinstance(e, tuple) and e[0] == "array"]
    xs = rng.standard_normal((B,) + shape)
    idx = [rng.integers(-n, n, (B,) + arr_shape) for n in sizes]
    x_b, i_b, v_b = batched
    if not n_arrays:
        i_b = False
        if not x_b and not v_b:
            x_b = True
    ex_x = lambda k: xs[k] if x_b else xs[0]  # noqa: E731
    ex_i = lambda k: [a[k] if i_b else a[0] for a in idx]  # noqa: E731
    result_shape = xs[0][_realize(entries, ex_i(0))].shape
    template = _template(entries)
    assert IX.result_shape(shape, [arr_shape] * n_arrays, template) == result_shape
    # v broadcasts against the result: drop a leading dim sometimes
    v_shape = result_shape[1:] if result_shape and seed % 2 else result_shape
    vs = rng.standard_normal((B,) + v_shape)
    ex_v = lambda k: vs[k] if v_b else vs[0]  # noqa: E731
    x_arg = T(xs) if x_b else T(xs[0])
    i_args = [T(a) if i_b else T(a[0]) for a in idx]
    v_arg = T(vs) if v_b else T(vs[0])
    in_i = 0 if i_b else None

    got = (
        core.vmap(
            lambda x, *ii: x[_realize(entries, ii)],
            in_axes=(0 if x_b else None, *[in_i] * n_arrays),
        )(x_arg, *i_args)
        if (x_b or i_b)
        else None
    )
    if got is not None:
        expected = np.stack([ex_x(k)[_realize(entries, ex_i(k))] for k in range(B)])
        np.testing.assert_array_equal(_np(got), expected)

    in_axes = (0 if x_b else None, 0 if v_b else None, *[in_i] * n_arrays)
    for kind, op in (("add", ops.index_add), ("update", ops.index_update)):
        if kind == "update" and n_arrays:
            # repeated indices make the written value ambiguous: keep the first occurrence
            # unique by using a permutation prefix per index array
            continue
        got = core.vmap(lambda x, v, *ii, op=op: op(x, _realize(entries, ii), v), in_axes=in_axes)(
            x_arg, v_arg, *i_args
        )
        expected = np.stack(
            [_apply_update(kind, ex_x(k), _realize(entries, ex_i(k)), ex_v(k)) for k in range(B)]
        )
        np.testing.assert_allclose(_np(got), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "index_fn",
    [
        lambda i: (i,),
        lambda i: (slice(None), i),
        lambda i: (i, 0),
        lambda i: (slice(None), 1, i),
        lambda i: (i, slice(None), i),
    ],
    ids=range(5),
)
def test_index_update_with_batched_unique_indices(index_fn):
    idx = np.array([[0, 2], [2, 1], [1, 0]])
    xs = np.stack([X3[:, :, :4] + k for k in range(B)])[:, :4, :3, :4]
    ref_shape = xs[0][index_fn(idx[0])].shape
    vs = RNG.standard_normal((B,) + ref_shape)
    out = core.vmap(lambda x, v, i: ops.index_update(x, index_fn(i), v))(T(xs), T(vs), T(idx))
    expected = np.stack([_apply_update("update", xs[k], index_fn(idx[k]), vs[k]) for k in range(B)])
    np.testing.assert_array_equal(_np(out), expected)

    # gradients of a batched update, through vmap
    def loss(x, v, i):
        return (ops.index_update(x, index_fn(i), v * v) ** 2).sum()

    gx, gv = core.vmap(core.grad(loss, (0, 1)))(T(xs), T(vs), T(idx))
    for k in range(B):
        ex, ev = core.grad(loss, (0, 1))(T(xs[k]), T(vs[k]), T(idx[k]))
        np.testing.assert_allclose(_np(gx)[k], _np(ex), rtol=1e-12)
        np.testing.assert_allclose(_np(gv)[k], _np(ev), rtol=1e-12)


def test_gather_and_scatter_add_under_vmap():
    x = RNG.standard_normal((B, 4, 3))
    idx = RNG.integers(0, 4, (B, 2, 3))
    out = core.vmap(lambda x, i: ops.take_along_axis(x, i, 0))(T(x), T(idx))
    np.testing.assert_array_equal(
        _np(out), np.stack([np.take_along_axis(x[k], idx[k], 0) for k in range(B)])
    )
    upd = RNG.standard_normal((B, 2, 3))
    out = core.vmap(lambda x, i, u: ops.scatter_add(x, i, u, 0))(T(x), T(idx), T(upd))
    expected = x.copy()
    for k in range(B):
        np.add.at(expected[k], (idx[k], np.arange(3)[None, :]), upd[k])
    np.testing.assert_allclose(_np(out), expected, rtol=1e-12)
    # the gradient of a batched gather is a batched scatter-add
    g = core.vmap(core.grad(lambda x, i: (ops.take(x, i, axis=0) ** 2).sum()))(T(x), T(idx[:, 0]))
    expected = np.zeros_like(x)
    for k in range(B):
        np.add.at(expected[k], idx[k, 0], 2 * x[k][idx[k, 0]])
    np.testing.assert_allclose(_np(g), expected, rtol=1e-12)


def test_advanced_position_rule_matches_numpy():
    x = np.zeros((2, 3, 4, 5))
    a = np.zeros((6, 7), dtype=np.int64)
    cases = [
        ((slice(None), "A", "A"), 1),
        (("A", slice(None), "A"), 0),
        ((slice(None), 0, "A"), 1),
        ((None, "A", Ellipsis), 1),
        ((slice(None), "A", Ellipsis, "A"), 0),
        ((Ellipsis, "A"), 3),
        (("A", None, "A"), 0),
        ((slice(None), slice(None), "A", 1), 2),
    ]
    for index, expected in cases:
        template = tuple(
            ("array", 0)
            if e == "A"
            else (("slice", None, None, None) if isinstance(e, slice) else e)
            for e in index
        )
        assert IX.advanced_position(template, x.ndim) == expected, index
        real = tuple(a if e == "A" else e for e in index)
        shape = x[real].shape
        k = expected
        assert shape[k : k + 2] == (6, 7), (index, shape)
