"""Each domain on the GPU (cupy) gives the CPU's values: FDTD fields and gradients, FNO
forward, gradients and jit training steps, a Pairformer block, Sod's shock tube, a PINN's
jit training steps. Skipped without cupy and a CUDA GPU."""

import numpy as np
import pytest

from diffsci import core
from diffsci.core import nn, ops

from ._gpu import build_on_both, needs_gpu, on_gpu

pytestmark = needs_gpu


# ---- mindelec.fdtd ------------------------------------------------------------------------------
def _fdtd_loss(shape, dtype, steps):
    """``loss(eps) -> (scalar, probe trace)`` of a soft point source's run with a CPML."""
    from diffsci.mindelec import fdtd
    from diffsci.mindelec.fdtd.waveforms import Gaussian

    spacing = (1e-3,) * len(shape)
    mode = "TMz" if len(shape) == 2 else None

    def loss(eps):
        grid = fdtd.Grid(shape, spacing, mode=mode, dtype=dtype)
        e = grid.e_components[-1]
        mid = tuple(n // 2 for n in shape)
        near = tuple(n // 2 + 3 for n in shape)
        far = tuple(n // 2 - 4 for n in shape)
        sim = fdtd.Simulation(
            grid,
            fdtd.Materials(eps_r=eps),
            fdtd.CPML(6),
            sources=[fdtd.PointSource(e, mid, Gaussian(2e10))],
            monitors=[fdtd.PointProbes(e, [near, far], name="probes")],
        )
        _, res = sim.run(steps)
        trace = res["probes"]
        return (trace**2).sum(), trace

    return loss


def test_fdtd_2d_fields_and_gradient_match_cpu():
    shape, steps = (40, 36), 120
    loss = _fdtd_loss(shape, "float64", steps)
    eps = 1 + np.random.default_rng(0).random(shape)

    def value_and_grad(eps_array):
        return core.value_and_grad(lambda e: loss(e)[0])(core.tensor(eps_array, dtype="float64"))

    value_cpu, grad_cpu = value_and_grad(eps)
    trace_cpu = loss(core.tensor(eps, dtype="float64"))[1].asnumpy()
    with on_gpu():
        value_gpu, grad_gpu = value_and_grad(eps)
        trace_gpu = loss(core.tensor(eps, dtype="float64"))[1]
        assert trace_gpu.device == "GPU" and grad_gpu.device == "GPU"
    np.testing.assert_allclose(
        trace_gpu.asnumpy(), trace_cpu, rtol=1e-9, atol=1e-12 * abs(trace_cpu).max()
    )
    np.testing.assert_allclose(float(value_gpu), float(value_cpu), rtol=1e-10)
    g_cpu, g_gpu = grad_cpu.asnumpy(), grad_gpu.asnumpy()
    np.testing.assert_allclose(g_gpu, g_cpu, rtol=1e-8, atol=1e-10 * abs(g_cpu).max())


def test_fdtd_3d_float32_fields_match_cpu():
    shape, steps = (24, 22, 20), 80
    loss = _fdtd_loss(shape, "float32", steps)
    eps = np.ones(shape, dtype=np.float32)
    trace_cpu = loss(core.tensor(eps))[1].asnumpy()
    with on_gpu():
        trace_gpu = loss(core.tensor(eps))[1].asnumpy()
    scale = abs(trace_cpu).max()
    assert scale > 0
    # float32 rounding differs (the GPU contracts multiply-adds): 80 steps leave ~1e-4 of
    # the peak (measured on an H100: 5.6e-5)
    np.testing.assert_allclose(trace_gpu, trace_cpu, atol=3e-4 * scale)


# ---- mindflow neural operators ------------------------------------------------------------------
def _fno2d(dtype):
    from diffsci.mindflow.cell import FNO2D

    def build():
        core.set_seed(0)
        return FNO2D(1, 1, n_modes=[5, 5], resolutions=[16, 16], hidden_channels=8,
                     n_layers=2, projection_channels=16, dft_compute_dtype=dtype,
                     fno_compute_dtype=dtype)  # fmt: skip

    return build


def test_fno2d_forward_and_gradient_match_cpu():
    cpu, gpu = build_on_both(_fno2d(core.float64))
    x = np.random.default_rng(1).standard_normal((3, 16, 16, 1))

    def run(net):
        xt = core.tensor(x, dtype="float64")
        params = net.trainable_params()
        out = net(xt)
        value, grads = core.value_and_grad(lambda: (net(xt) ** 2).mean(), None, params)()
        return out.asnumpy(), float(value), [g.asnumpy() for g in grads]

    out_c, v_c, g_c = run(cpu)
    with on_gpu():
        out_g, v_g, g_g = run(gpu)
    np.testing.assert_allclose(out_g, out_c, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(v_g, v_c, rtol=1e-10)
    for a, b in zip(g_g, g_c, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-12 * max(1.0, abs(b).max()))


def test_operator_trainer_jit_steps_on_gpu_match_cpu():
    from diffsci.mindflow.train import OperatorTrainer, PairSource

    rng = np.random.default_rng(2)
    a = rng.standard_normal((16, 16, 16, 1)).astype(np.float32)
    u = np.cumsum(a, axis=1) / 4
    losses = {}
    # the same weights on both devices (each device has its own random stream)
    nets = dict(zip(("CPU", "GPU"), build_on_both(_fno2d(core.float32)), strict=True))
    for device, net in nets.items():
        core.set_device(device)
        try:
            trainer = OperatorTrainer(
                net,
                PairSource(a[:12], u[:12], n_spatial=2),
                PairSource(a[12:], u[12:], n_spatial=2),
                lr=3e-3,
                epochs=6,
                batch_size=4,
                normalize=False,
                progress=False,
            )
            trainer.fit()
            losses[device] = list(trainer.history["epoch_loss"])
            losses[device + "_test"] = float(trainer.evaluate().relative_l2)
        finally:
            core.set_device("CPU")
    assert losses["GPU"][-1] < losses["GPU"][0]
    np.testing.assert_allclose(losses["GPU"], losses["CPU"], rtol=2e-3)
    np.testing.assert_allclose(losses["GPU_test"], losses["CPU_test"], rtol=2e-3)


# ---- protenix ----------------------------------------------------------------------------------
def test_pairformer_block_matches_cpu():
    from diffsci.protenix.model.modules.pairformer import PairformerBlock

    def build():
        core.set_seed(0)
        blk = PairformerBlock(n_heads=2, c_z=16, c_s=24, c_hidden_mul=16, c_hidden_pair_att=8,
                              no_heads_pair=2)  # fmt: skip
        rng = np.random.default_rng(3)
        for p in blk.get_parameters():  # non-zero weights everywhere (Protenix zero-inits some)
            p.set_data(core.Tensor(0.2 * rng.standard_normal(p.shape).astype(np.float32)))
        blk.set_train(False)
        return blk

    cpu, gpu = build_on_both(build)
    rng = np.random.default_rng(4)
    n = 24
    s = rng.standard_normal((n, 24)).astype(np.float32)
    z = rng.standard_normal((n, n, 16)).astype(np.float32)

    def run(blk):
        with core.no_grad():
            s1, z1 = blk(core.tensor(s), core.tensor(z), ops.ones((n, n)))
        return s1.asnumpy(), z1.asnumpy()

    s_c, z_c = run(cpu)
    with on_gpu():
        s_g, z_g = run(gpu)
    for got, want in ((s_g, s_c), (z_g, z_c)):
        assert np.linalg.norm(got - want) <= 1e-4 * np.linalg.norm(want)


# ---- mindflow.cfd ------------------------------------------------------------------------------
def test_sod_weno5_hllc_matches_cpu():
    from tests.mindflow.cfd._helpers import load_example

    sod = load_example("sod")
    cpu = sod.main(nx=100, plot=False, verbose=False)
    with on_gpu():
        gpu = sod.main(nx=100, plot=False, verbose=False)
    np.testing.assert_allclose(
        np.asarray(gpu["pri_var"]), np.asarray(cpu["pri_var"]), rtol=1e-9, atol=1e-12
    )
    assert gpu["errors"]["rho"] == pytest.approx(cpu["errors"]["rho"], rel=1e-8)


# ---- mindelec PINN -----------------------------------------------------------------------------
def test_pinn_solver_jit_steps_match_cpu():
    from diffsci.mindelec.solver import Solver
    from tests.mindelec.pinn.test_library import _poisson_setup

    def setup():
        core.set_seed(3)
        return _poisson_setup()

    # the CPU's points and weights for both: the sampler's seed and the initial weights come
    # from the current device's random stream
    _data, train, net, weights, constraints = setup()
    batch = [b.asnumpy() for b in next(iter(train.create_tuple_iterator(num_epochs=1)))]
    values = [p.asnumpy() for p in (*net.get_parameters(), *weights.get_parameters())]
    losses = {}
    for device in ("CPU", "GPU"):
        core.set_device(device)
        try:
            _data, _train, net, weights, constraints = setup()
            for p, value in zip(
                (*net.get_parameters(), *weights.get_parameters()), values, strict=True
            ):
                p.set_data(core.Tensor(value))
            opt = nn.Adam(net.trainable_params() + weights.trainable_params(), learning_rate=1e-2)
            solver = Solver(net, opt, mode="PINNs", train_constraints=constraints,
                            mtl_weighted_cell=weights, jit=True)  # fmt: skip
            tensors = [core.Tensor(b) for b in batch]
            assert tensors[0].device == device
            losses[device] = [float(solver.train_step(*tensors)) for _ in range(3)]
        finally:
            core.set_device("CPU")
    np.testing.assert_allclose(losses["GPU"], losses["CPU"], rtol=1e-9)
