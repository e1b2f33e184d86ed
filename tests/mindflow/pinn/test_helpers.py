"""mindflow.pinn helpers: output transforms, adaptive resampling, residual maps."""

import numpy as np
import pytest

from diffsci import core
from diffsci.core import nn, ops
from diffsci.datasets.geometry import Interval, Rectangle
from diffsci.mindflow.pinn import OutputTransform, Resampler, Trainer, hard_constraint, residual_map

F64 = core.float64


def test_output_transform_is_g_plus_d_times_net():
    core.set_seed(0)
    net = nn.Dense(2, 3, dtype=F64)
    g = lambda x: ops.sin(x[:, 0:1]) + x[:, 1:2]  # noqa: E731  [N, 1], broadcast over 3 outputs
    d = lambda x: x[:, 0:1] * (1.0 - x[:, 0:1])  # noqa: E731
    model = hard_constraint(net, g, d)
    x = np.random.default_rng(0).uniform(0, 1, (7, 2))
    xt = core.tensor(x)
    w, b = net.weight.asnumpy(), net.bias.asnumpy()
    expected = (np.sin(x[:, :1]) + x[:, 1:]) + x[:, :1] * (1 - x[:, :1]) * (x @ w.T + b)
    np.testing.assert_allclose(model(xt).asnumpy(), expected, rtol=1e-13)
    # on x0 = 0 the output is g whatever the weights
    x0 = core.tensor(np.array([[0.0, 0.3], [0.0, -1.0]]))
    np.testing.assert_array_equal(model(x0).asnumpy(), np.repeat([[0.3], [-1.0]], 3, axis=1))
    # the transform's parameters are the network's, and gradients reach them
    assert [p.name for p in model.trainable_params()] == [p.name for p in net.trainable_params()]
    gw = core.grad(lambda: model(xt).sum(), None, model.trainable_params())()
    assert np.abs(gw[0].asnumpy()).sum() > 0
    custom = OutputTransform(net, transform=lambda x, out: out * 2.0)
    np.testing.assert_allclose(custom(xt).asnumpy(), 2 * (x @ w.T + b), rtol=1e-13)
    with pytest.raises(ValueError, match="either transform or g/d"):
        OutputTransform(net, g=g, transform=lambda x, out: out)
    with pytest.raises(ValueError, match=r"d\(x\) has shape \(7,\)"):
        hard_constraint(net, d=lambda x: x[:, 0])(xt)


def test_rar_resampler_adds_points_where_the_residual_peaks():
    core.set_seed(0)
    net = nn.SequentialCell(nn.Dense(1, 8, dtype=F64), nn.Tanh(), nn.Dense(8, 1, dtype=F64))

    def terms(x):
        return {"fit": (net(x) ** 2).mean()}

    def residual(x):  # a spike at x = 0.3 (what a real PDE residual would show)
        return ops.exp(-(((x - 0.3) / 0.01) ** 2))

    line = Interval("line", 0.0, 1.0)
    hook = Resampler(line, residual, every=2, method="rar", n_candidates=2000, n_add=5, seed=1)
    x0 = core.tensor(np.linspace(0, 1, 10)[:, None])
    tr = Trainer(terms, net, lr=1e-3, adam_steps=5, resample=hook, progress=False)
    tr.fit(x0)
    x = tr.batch.asnumpy()
    assert x.shape == (20, 1) and x.dtype == np.float64  # +5 at steps 2 and 4
    np.testing.assert_array_equal(x[:10], x0.asnumpy())
    assert np.abs(x[10:] - 0.3).max() < 0.01
    assert hook.history == [(2, 15), (4, 20)]


def test_rad_resampler_on_a_dict_batch_and_cap():
    core.set_seed(0)
    net = nn.SequentialCell(nn.Dense(2, 4, dtype=F64), nn.Tanh(), nn.Dense(4, 1, dtype=F64))

    def terms(batch):
        return {"pde": (net(batch["x"]) ** 2).mean(), "bc": (net(batch["xb"]) ** 2).mean()}

    square = Rectangle("sq", [0.0, 0.0], [1.0, 1.0])

    def residual(x):  # the upper-right quarter has all the residual
        return ops.where((x[:, 0] > 0.5) & (x[:, 1] > 0.5), ops.ones_like(x[:, 0]), x[:, 0] * 0.0)

    hook = Resampler(
        square, residual, key="x", every=1, method="rad", n_candidates=4000, k=1.0, c=0.0
    )
    batch = {"x": np.random.default_rng(0).uniform(0, 1, (64, 2)), "xb": np.zeros((4, 2))}
    tr = Trainer(terms, net, adam_steps=2, resample=hook, progress=False)
    tr.fit(batch)
    x = tr.batch["x"].asnumpy()
    assert x.shape == (64, 2)
    assert (x > 0.5).all()  # c = 0: every RAD draw lies where the residual is
    cap = Resampler(square, residual, key="x", every=1, method="rar-d", n_add=10, max_points=70)
    tr2 = Trainer(terms, net, adam_steps=3, resample=cap, progress=False)
    tr2.fit(batch)
    assert tr2.batch["x"].shape == (70, 2)
    with pytest.raises(ValueError, match="method must be one of"):
        Resampler(square, residual, method="rare")


def test_residual_map_per_term():
    pts = np.stack(np.meshgrid(np.linspace(0, 1, 5), np.linspace(0, 2, 4), indexing="ij"), -1)
    pts = pts.reshape(-1, 2)
    maps = residual_map(
        {"a": lambda x: x[:, 0] - x[:, 1], "b": lambda x: ops.stack([x[:, 0], -x[:, 1]], axis=1)},
        pts,
        batch_size=7,
        shape=(5, 4),
    )
    np.testing.assert_allclose(maps["a"], np.abs(pts[:, 0] - pts[:, 1]).reshape(5, 4))
    np.testing.assert_allclose(maps["b"], (np.abs(pts[:, 0]) + np.abs(pts[:, 1])).reshape(5, 4))
    with pytest.raises(ValueError, match=r"returned shape \(1,\) for 7 points"):
        residual_map(lambda x: x.sum(axis=0, keepdims=True)[:1, 0], pts, batch_size=7)


def test_resume_keeps_the_resampled_points(tmp_path):
    line = Interval("line", 0.0, 1.0)
    x0 = np.linspace(0, 1, 10)[:, None]

    def build():
        core.set_seed(0)
        net = nn.SequentialCell(nn.Dense(1, 8, dtype=F64), nn.Tanh(), nn.Dense(8, 1, dtype=F64))

        def terms(x):
            return {"fit": ((net(x) - ops.sin(3.0 * x)) ** 2).mean()}

        def residual(x):
            return net(x) - ops.sin(3.0 * x)

        hook = Resampler(line, residual, every=2, n_candidates=500, n_add=3, seed=5)
        return net, Trainer(
            terms, net, lr=1e-2, adam_steps=7, resample=hook, checkpoint_dir=str(tmp_path),
            progress=False,
        )  # fmt: skip

    net, tr = build()
    tr.fit(x0)
    full = [p.asnumpy().copy() for p in net.trainable_params()], tr.batch.asnumpy()
    net, tr = build()
    tr.fit(x0, until=3)  # points added at step 2: 13 of them now
    net, tr = build()
    tr.resume()
    tr.fit(x0)  # the checkpoint's 13 points win over x0
    assert tr.batch.shape == (19, 1)
    np.testing.assert_array_equal(tr.batch.asnumpy(), full[1])
    for a, p in zip(full[0], net.trainable_params(), strict=True):
        np.testing.assert_array_equal(a, p.asnumpy())


def test_distance_functions_vanish_on_the_boundary():
    from diffsci.mindflow.pinn import ball_distance, box_distance

    rect = Rectangle("r", [0.0, -1.0], [2.0, 1.0])
    bnd = np.asarray(rect.sample_boundary(50, seed=0)[0], dtype=np.float64)
    inner = np.asarray(rect.sample_interior(50, seed=1), dtype=np.float64)
    d = box_distance([0.0, -1.0], [2.0, 1.0])
    np.testing.assert_allclose(d(core.tensor(bnd)).asnumpy(), 0.0, atol=1e-6)
    assert (d(core.tensor(inner)).asnumpy() > 0).all()
    assert d(core.tensor(np.array([[1.0, 0.0]]))).asnumpy()[0, 0] == pytest.approx(1.0)
    # (x, t) input: only the x axis is bounded
    dx = box_distance([-1.0], [1.0], axes=[0])
    np.testing.assert_allclose(
        dx(core.tensor(np.array([[-1.0, 0.3], [1.0, 0.9], [0.0, 0.5]]))).asnumpy()[:, 0],
        [0.0, 0.0, 1.0],
    )
    ball = ball_distance([0.5, 0.5], 0.5)
    theta = np.linspace(0, 2 * np.pi, 9)
    circle = np.c_[0.5 + 0.5 * np.cos(theta), 0.5 + 0.5 * np.sin(theta)]
    np.testing.assert_allclose(ball(core.tensor(circle)).asnumpy(), 0.0, atol=1e-15)
    with pytest.raises(ValueError, match="coord_min < coord_max"):
        box_distance([1.0], [0.0])
