"""mindflow.pinn.Trainer: convergence, resume, NaN reports, jit vs eager, weighting schemes."""

import math
import os

import numpy as np
import pytest

from diffsci import core
from diffsci.core import nn, ops
from diffsci.mindflow.pinn import Trainer, hard_constraint

F64 = core.float64


def _poisson_model(seed=0, width=16):
    core.set_seed(seed)
    net = nn.SequentialCell(
        nn.Dense(1, width, dtype=F64),
        nn.Tanh(),
        nn.Dense(width, width, dtype=F64),
        nn.Tanh(),
        nn.Dense(width, 1, dtype=F64),
    )
    return hard_constraint(net, d=lambda x: x * (1.0 - x))  # u(0) = u(1) = 0 exactly


def _poisson_terms(model):
    """u'' = -pi^2 sin(pi x) on (0, 1): exact u = sin(pi x)."""

    def terms(x):
        def u_x(x):
            return core.grad(lambda x: model(x).sum())(x)  # [N, 1]

        u_xx = core.grad(lambda x: u_x(x).sum())(x)  # [N, 1]
        return {"pde": ((u_xx + math.pi**2 * ops.sin(math.pi * x)) ** 2).mean()}

    return terms


X = np.linspace(0.0, 1.0, 34)[1:-1, None]  # [32, 1] interior collocation points
X_REF = np.linspace(0.0, 1.0, 101)[:, None]


def test_poisson_1d_hard_constraint_converges():
    model = _poisson_model()
    tr = Trainer(
        _poisson_terms(model),
        model,
        lr=5e-3,
        adam_steps=200,
        lbfgs_steps=100,
        lbfgs_chunk=25,
        reference=(X_REF, np.sin(np.pi * X_REF)),
        eval_every=50,
        progress=False,
    )
    h = tr.fit(X)
    # boundary values are exact by construction
    with core.no_grad():
        ends = model(core.tensor(np.array([[0.0], [1.0]]))).asnumpy()
    np.testing.assert_array_equal(ends, 0.0)
    # the error is measured by us here too, against the closed form
    with core.no_grad():
        pred = model(core.tensor(X_REF)).asnumpy()
    err = np.linalg.norm(pred - np.sin(np.pi * X_REF)) / np.linalg.norm(np.sin(np.pi * X_REF))
    assert err < 1e-3
    assert h["error"][-1] == pytest.approx(err, rel=1e-12)
    assert h["error_step"][-1] == 300 and h["step"][-1] == 300
    assert h["total"][-1] < 1e-3 * h["total"][0]
    assert len(h["terms"]["pde"]) == len(h["step"]) == 200 + 4
    assert tr.lbfgs_iterations == 100 and tr.lbfgs_evaluations >= 100


def _state(model):
    return [p.asnumpy().copy() for p in model.trainable_params()]


def test_resume_continues_bit_for_bit(tmp_path):
    def run(stops, folder):
        model = _poisson_model(seed=3, width=8)
        x = X[::2]
        kwargs = dict(
            lr=5e-3,
            adam_steps=12,
            lbfgs_steps=10,
            lbfgs_chunk=4,
            weighting="gradnorm",
            weighting_options={"every": 3},
            checkpoint_dir=str(folder),
            checkpoint_every=4,
            progress=False,
        )

        def terms(batch):
            base = _poisson_terms(model)(batch)
            return {"pde": base["pde"], "anchor": (model(batch[:2]) ** 2).mean()}

        tr = Trainer(terms, model, **kwargs)
        for stop in stops:
            if stop is None:
                tr.fit(x)
            else:
                tr.fit(x, until=stop)
                # a new process: fresh network (another init) and trainer, resumed from disk
                model = _poisson_model(seed=99, width=8)
                tr = Trainer(terms, model, **kwargs)
                assert tr.resume() == stop
        return _state(model), tr.history, tr.weighting.weights.asnumpy()

    full = run([None], tmp_path / "a")
    for stops, name in (([8, None], "b"), ([16, None], "c"), ([4, 20, None], "d")):
        params, history, weights = run(stops, tmp_path / name)
        for a, b in zip(full[0], params, strict=True):
            np.testing.assert_array_equal(a, b)
        assert history == full[1]
        np.testing.assert_array_equal(weights, full[2])
    assert os.path.exists(tmp_path / "a" / "pinn.ckpt.h5")


def test_nan_names_term_and_step():
    w = core.Parameter(core.tensor([0.0025], dtype=F64), name="w")

    def terms(batch):
        good = (w**2).sum()
        bad = ops.where(w > 0, w, core.tensor(float("nan"), dtype=F64)).sum()  # NaN once w <= 0
        return {"data": good, "bad": bad}

    tr = Trainer(terms, [w], lr=1e-3, adam_steps=10, progress=False)
    with pytest.raises(FloatingPointError, match=r"loss term 'bad' is nan at step 4 \(adam\)"):
        tr.fit(core.tensor([0.0], dtype=F64))


def test_jit_and_eager_give_the_same_losses():
    runs = {}
    for jit in (True, False):
        model = _poisson_model(seed=1, width=8)
        base, calls = _poisson_terms(model), []

        def terms(x, base=base, calls=calls):
            calls.append(1)  # Python runs of the loss: traces under jit, evaluations without
            return base(x)

        tr = Trainer(
            terms, model, lr=5e-3, adam_steps=8, lbfgs_steps=6, lbfgs_chunk=3, jit=jit,
            progress=False,
        )  # fmt: skip
        tr.fit(X[::2], until=8)
        adam_calls = len(calls)
        h = tr.fit()
        runs[jit] = (np.array(h["total"]), _state(model))
        if jit:
            assert tr._adam_step.trace_count == 1  # one compiled Adam step, called 8 times
            assert adam_calls == 2  # the first (checking) call and the one trace
            # L-BFGS: one trace of loss + gradient per chunk, one of the terms for the history
            assert len(calls) - adam_calls == 2 + 1
        else:
            assert adam_calls == 1 + 8
            assert len(calls) - adam_calls > 6 + 2  # every line-search evaluation runs Python
    (lj, pj), (le, pe) = runs[True], runs[False]
    assert len(lj) == 8 + 2
    np.testing.assert_allclose(lj, le, rtol=1e-10, atol=0)
    for a, b in zip(pj, pe, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-12)


def test_fixed_weights_sum_as_given():
    w = core.Parameter(core.tensor([1.0, -2.0], dtype=F64), name="w")

    def terms(batch):
        return {"a": (w[0] ** 2).reshape(()), "b": ((w[1] - batch) ** 2).sum()}

    tr = Trainer(terms, [w], lr=1e-2, adam_steps=3, weights={"b": 10.0}, progress=False)
    h = tr.fit(core.tensor([0.5], dtype=F64))
    np.testing.assert_allclose(
        h["total"], np.array(h["terms"]["a"]) + 10.0 * np.array(h["terms"]["b"]), rtol=1e-14
    )
    assert h["weights"]["b"] == [10.0] * 3 and h["weights"]["a"] == [1.0] * 3
    with pytest.raises(ValueError, match=r"terms \['c'\] that loss_terms_fn does not return"):
        Trainer(terms, [w], adam_steps=1, weights={"c": 1.0}, progress=False).fit(
            core.tensor([0.5], dtype=F64)
        )


def test_mtl_weights_follow_the_uncertainty_formula():
    w = core.Parameter(core.tensor([0.3], dtype=F64), name="w")
    la, lb = 4.0, 0.25

    def terms(batch):
        z = 0.0 * w.sum()
        return {"a": z + la, "b": z + lb}

    lr = 1e-2
    tr = Trainer(terms, [w], lr=lr, adam_steps=1, weighting="mtl", progress=False)
    h = tr.fit(core.tensor([0.0], dtype=F64))
    # at s = 1: L = sum_i 0.5 L_i / s_i^2 + log(1 + s_i^2)
    assert h["total"][0] == pytest.approx(0.5 * la + 0.5 * lb + 2 * math.log(2.0), rel=1e-14)
    # dL/ds_i = -L_i / s^3 + 2 s / (1 + s^2) = 1 - L_i at s = 1: Adam's first step moves s_i by
    # -lr * sign(1 - L_i), so s_a = 1 + lr, s_b = 1 - lr, and the weights 0.5 / s_i^2 follow
    assert h["weights"]["a"][0] == pytest.approx(0.5 / (1 + lr) ** 2, rel=1e-6)
    assert h["weights"]["b"][0] == pytest.approx(0.5 / (1 - lr) ** 2, rel=1e-6)


def test_gradnorm_lambdas_match_hand_computation():
    w0 = np.array([0.7, -0.4])
    w = core.Parameter(core.tensor(w0, dtype=F64), name="w")

    def terms(batch):
        r = (w[0] - 1.0) ** 2 + 3.0 * w[1] ** 2
        b = 0.5 * (w[0] + w[1]) ** 2
        c = 2.0 * w[0] ** 2
        return {"res": r.reshape(()), "bc": b.reshape(()), "ic": c.reshape(())}

    def grads(v):  # hand-derived gradients of each term at v
        return (
            np.array([2 * (v[0] - 1), 6 * v[1]]),
            np.array([v[0] + v[1], v[0] + v[1]]),
            np.array([4 * v[0], 0.0]),
        )

    alpha = 0.9

    def update(lam, v):
        gr, gb, gc = grads(v)
        top = np.abs(gr).max()
        hat = np.array([1.0, top / np.abs(gb).mean(), top / np.abs(gc).mean()])
        out = (1 - alpha) * lam + alpha * hat
        out[0] = 1.0
        return out

    tr = Trainer(
        terms, [w], lr=1e-2, adam_steps=4, weighting="gradnorm",
        weighting_options={"every": 2, "alpha": alpha}, progress=False,
    )  # fmt: skip
    x = core.tensor([0.0], dtype=F64)
    tr.fit(x, until=1)  # updated before step 0 from w0
    lam = update(np.ones(3), w0)
    np.testing.assert_allclose(tr.weighting.weights.asnumpy(), lam, rtol=1e-12)
    tr.fit(x, until=2)  # step 1: no update (every 2)
    np.testing.assert_allclose(tr.weighting.weights.asnumpy(), lam, rtol=1e-12)
    v2 = w.asnumpy().copy()
    tr.fit(x, until=3)  # step 2: update from the parameters after two steps
    np.testing.assert_allclose(tr.weighting.weights.asnumpy(), update(lam, v2), rtol=1e-12)
    h = tr.history
    # the recorded total is the weighted sum with the weights in force
    np.testing.assert_allclose(
        h["total"][2],
        h["terms"]["res"][2] + lam[1] * 0 + h["weights"]["bc"][2] * h["terms"]["bc"][2]
        + h["weights"]["ic"][2] * h["terms"]["ic"][2],
        rtol=1e-14,
    )  # fmt: skip


def test_bad_input_messages():
    w = core.Parameter(core.tensor([1.0], dtype=F64), name="w")
    x = core.tensor([0.0], dtype=F64)
    with pytest.raises(TypeError, match="must return a non-empty dict"):
        Trainer(lambda b: (w**2).sum(), [w], adam_steps=1, progress=False).fit(x)
    with pytest.raises(TypeError, match=r"loss term 'r' must be a 0-d Tensor.*\(1,\)"):
        Trainer(lambda b: {"r": w**2}, [w], adam_steps=1, progress=False).fit(x)
    with pytest.raises(TypeError, match=r"parameter 'param0' is .*64 but dtype is"):
        Trainer(lambda b: {"r": (w**2).sum()}, [w], dtype=core.float32)
    with pytest.raises(ValueError, match="weighting must be"):
        Trainer(lambda b: {"r": (w**2).sum()}, [w], weighting="softadapt")
    with pytest.raises(ValueError, match="no batch given"):
        Trainer(lambda b: {"r": (w**2).sum()}, [w], adam_steps=1, progress=False).fit()


def test_plot_history_and_progress_bar(tmp_path, capsys):
    model = _poisson_model(seed=2, width=8)
    tr = Trainer(
        _poisson_terms(model), model, lr=5e-3, adam_steps=6, lbfgs_steps=4, lbfgs_chunk=2,
        reference=(X_REF, np.sin(np.pi * X_REF)), eval_every=3, progress=True,
    )  # fmt: skip
    h = tr.fit(X[::4])
    assert h["error_step"] == [3, 6, 10]  # L-BFGS chunk 8 -> 10 crosses 9
    path = tr.plot_history(str(tmp_path / "loss.png"))
    assert os.path.getsize(path) > 1000
    err = capsys.readouterr().err
    assert "pinn" in err and "err=" in err


def test_minibatch_function_and_resume(tmp_path):
    def batch_fn(step):  # 16 fresh collocation points per step, seeded by the step
        return np.sort(np.random.default_rng(step).uniform(0, 1, (16, 1)), axis=0)

    def run(stops):
        model = _poisson_model(seed=4, width=8)
        kwargs = dict(
            lr=5e-3, adam_steps=6, lbfgs_steps=4, lbfgs_chunk=2, checkpoint_dir=str(tmp_path),
            progress=False,
        )  # fmt: skip
        tr = Trainer(_poisson_terms(model), model, **kwargs)
        for stop in stops:
            tr.fit(batch_fn, until=stop)
            if stop is not None:
                model = _poisson_model(seed=5, width=8)
                tr = Trainer(_poisson_terms(model), model, **kwargs)
                tr.resume()
        return _state(model), tr.history, tr.batch

    params, history, batch = run([None])
    np.testing.assert_array_equal(batch.asnumpy(), batch_fn(6))  # L-BFGS: batch(adam_steps)
    # the Adam losses are those of the per-step batches: recompute the first one by hand
    model = _poisson_model(seed=4, width=8)
    first = _poisson_terms(model)(core.tensor(batch_fn(0)))["pde"]
    assert history["total"][0] == pytest.approx(float(first.asnumpy()), rel=1e-12)
    for stops in ([3, None], [8, None], [7, None]):
        p2, h2, _ = run(stops)
        for a, b in zip(params, p2, strict=True):
            np.testing.assert_array_equal(a, b)
        if stops[0] == 7:  # stopped inside an L-BFGS chunk: one more record, at step 7
            assert h2["step"] == [*history["step"][:6], 7, 8, 10]
        else:
            assert h2 == history
    with pytest.raises(ValueError, match="resampling needs a fixed batch"):
        Trainer(_poisson_terms(model), model, resample=lambda tr, s, b: b, progress=False).fit(
            batch_fn
        )


def test_lbfgs_converged_finishes_early():
    w = core.Parameter(core.tensor([3.0, -1.0], dtype=F64), name="w")

    def terms(batch):  # a quadratic: L-BFGS reaches the minimum in a few iterations
        return {"q": ((w - batch) ** 2).sum() + 0.5 * (w[0] * w[1]) ** 2}

    tr = Trainer(terms, [w], adam_steps=2, lbfgs_steps=500, lbfgs_chunk=50, progress=False)
    h = tr.fit(core.tensor([1.0, 2.0], dtype=F64))
    assert 0 < tr.lbfgs_iterations < 50
    assert tr.step == 502 and h["step"] == [1, 2, 502]
    from scipy.optimize import minimize

    best = minimize(
        lambda v: ((v - [1.0, 2.0]) ** 2).sum() + 0.5 * (v[0] * v[1]) ** 2, [3.0, -1.0],
        method="BFGS", options={"gtol": 1e-12},
    )  # fmt: skip
    assert h["total"][-1] == pytest.approx(best.fun, rel=1e-10)
    np.testing.assert_allclose(w.asnumpy(), best.x, rtol=1e-6)
