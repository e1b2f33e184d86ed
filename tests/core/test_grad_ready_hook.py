"""core.autodiff.reverse.grad_ready_hook: each Parameter's gradient reported during the sweep,
complete (equal to what value_and_grad returns), and only by a user-level pass."""

import numpy as np

from diffsci import core
from diffsci.core import nn, ops
from diffsci.core.autodiff.reverse import grad_ready_hook


def _net(recompute=False):
    core.set_seed(0)
    layers = [nn.Dense(3, 8), nn.Tanh(), nn.Dense(8, 8), nn.Tanh(), nn.Dense(8, 2)]
    net = nn.SequentialCell(layers)
    if recompute:
        for cell in layers[:4]:
            cell.recompute()
    return net


def _loss(net):
    x = core.tensor(np.random.default_rng(0).random((5, 3)).astype(np.float32))

    def loss():
        h = net(x)
        return (h**2).sum() + (net[0].weight ** 2).sum()  # a second, later read

    return loss


def test_reported_gradients_are_final_and_come_during_the_sweep():
    for recompute in (False, True):
        net = _net(recompute)
        params = net.trainable_params()
        fn = core.value_and_grad(_loss(net), None, params)
        seen = []

        def record(p, g, seen=seen):
            seen.append((p.name, g.asnumpy().copy()))

        with grad_ready_hook(record):
            _, grads = fn()
        names = [n for n, _ in seen]
        assert sorted(names) == sorted(p.name for p in params), names
        # the last layer's gradients are complete before the first layer's
        assert names.index("4.weight") < names.index("0.bias")
        # 0.weight is read at the start and again at the end: reported once, complete
        final = {p.name: g.asnumpy() for p, g in zip(params, grads)}
        for name, g in seen:
            np.testing.assert_array_equal(g, final[name], err_msg=f"{name} recompute={recompute}")


def test_no_reports_outside_the_block_or_inside_transformations():
    net = _net()
    params = net.trainable_params()
    fn = core.value_and_grad(_loss(net), None, params)
    seen = []
    fn()
    assert seen == []
    with grad_ready_hook(lambda p, g: seen.append(p.name)):
        core.jit(lambda: fn()[0])()  # traced: the gradients are symbolic
    assert seen == []


def test_hook_sees_unused_parameters_not():
    a = core.Parameter(core.tensor(np.ones(3)), name="a")
    b = core.Parameter(core.tensor(np.ones(3)), name="b")
    fn = core.value_and_grad(lambda: ops.sum(a * 2.0), None, [a, b])
    seen = []
    with grad_ready_hook(lambda p, g: seen.append(p.name)):
        _, (_, gb) = fn()
    assert seen == ["a"]
    np.testing.assert_array_equal(gb.asnumpy(), np.zeros(3))
