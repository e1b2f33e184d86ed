"""``mindelec.fdtd.distributed``: the x-slab decomposition on two MPI ranks (native update
on each slab unless marked) against the serial ``Simulation`` (run here): a 2D TMz case with
CPML on every face, an eps map, a probe and a DFT plane; a 3D case whose low-x CPML straddles
the cut, with periodic y; TF/SF plane waves (aligned: auxiliary grid, oblique: incident
tables) with flux, energy and DFT monitors across the cut; a 3D case with Mur and CPML x
faces, Mur y faces, Drude and Lorentz media, a lumped port and resistor spanning the cut, port
V/I monitors and flux boxes spanning the cut (composite and native); the microstrip filter
example on 2 ranks (its S-matrices and port signals); gradients with respect to an eps map
(periodic x: the ranks are a ring; a lumped port's S11 and a flux) and to the amplitude of a
port and two plane waves; the error on every rank for a world size that does not divide the
grid. Fields, sums and the port and amplitude gradients to 1e-12 (float64). Skipped, with the
reason, only where MPI cannot start.
"""

import pathlib

import numpy as np
import pytest

from diffsci import core
from diffsci.mindelec import fdtd
from diffsci.mindelec.fdtd.distributed import DistributedSimulation

from ... import _mpi
from . import _distributed_cases as cases

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[2]


MPIEXEC, needs_mpi = _mpi.MPIEXEC, _mpi.needs_mpi


@pytest.fixture(scope="module")
def launched(tmp_path_factory):
    out = tmp_path_factory.mktemp("fdtd_distributed")
    cases_run = ("2d", "3d", "tfsf", "mixed", "mixed_native", "grad", "port_grad", "amp_grad",
                 "bad")  # fmt: skip
    _mpi.mpirun(HERE / "_distributed_worker.py", out, *cases_run, wall=300, check=True)
    return out


def _serial(make):
    grid, materials, kw, steps = make()
    return fdtd.Simulation(grid, materials, native=False, **kw).run(steps)


@needs_mpi
@pytest.mark.parametrize("case", ["2d", "3d", "tfsf"])
def test_two_ranks_equal_serial(launched, case):
    make = {"2d": cases.case_2d, "3d": cases.case_3d, "tfsf": cases.case_tfsf}[case]
    state, results = _serial(make)
    cut = state.get("ez").shape[0] // 2
    for r in range(2):
        got = np.load(launched / f"{case}_rank{r}.npz")
        assert list(got["slab"]) == [r * cut, (r + 1) * cut]
        for name, want in state.components().items():
            want = want.asnumpy()
            assert np.abs(want[cut - 1 : cut + 1]).max() > 0  # the wave crossed the cut
            np.testing.assert_allclose(got[name], want, rtol=1e-13, atol=1e-13 * abs(want).max())
        for name, want in results.items():
            want = want.asnumpy()
            if r == 0:  # the monitors are reduced to rank 0
                assert np.abs(want).max() > 0
                np.testing.assert_allclose(
                    got[f"m_{name}"], want, rtol=1e-13, atol=1e-13 * abs(want).max()
                )
            else:
                np.testing.assert_array_equal(got[f"m_{name}"], 0 * want)


def _close(got, want, rtol=1e-12):
    want = np.asarray(want)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * np.abs(want).max())


@needs_mpi
@pytest.mark.parametrize("case", ["mixed", "mixed_native"])
def test_mur_dispersive_lumped_flux_two_ranks_equal_serial(launched, case):
    grid, materials, kw, media, steps = cases.case_mixed()
    native = case == "mixed_native"
    sim = fdtd.Simulation(grid, materials, dispersive=media, native=native, **kw)
    assert bool(sim._plans) == native or not native
    state, results = sim.run(steps)
    cut = grid.shape[0] // 2
    for r in range(2):
        got = np.load(launched / f"{case}_rank{r}.npz")
        for name, want in state.components().items():
            want = want.asnumpy()
            assert np.abs(want[cut - 1 : cut + 1]).max() > 0  # the wave crossed the cut
            _close(got[name], want)
        for name, want in results.items():
            want = want.asnumpy()
            if r == 0:  # every monitor is reduced to rank 0
                assert np.abs(want).max() > 0, name
                _close(got[f"m_{name}"], want)
            else:
                np.testing.assert_array_equal(got[f"m_{name}"], 0 * want)


@needs_mpi
def test_microstrip_example_two_ranks_s_parameters_equal_serial(tmp_path):
    """``microstrip_filter_mpi.py --tiny`` on 2 ranks (native update on each slab): the port
    and reference-plane signals and both S-matrices equal the serial ``Simulation``'s."""
    script = ROOT / "examples" / "mindelec" / "fdtd" / "microstrip_filter"
    _mpi.mpirun(script / "microstrip_filter_mpi.py", "--tiny", "--out", tmp_path, wall=300,
                check=True)  # fmt: skip
    got = np.load(tmp_path / "microstrip_filter_mpi.npz")
    assert (tmp_path / "microstrip_filter_mpi.s2p").stat().st_size > 1000
    sims = cases.microstrip_sims()
    dt = sims[0].grid.dt
    results = [{k: v.asnumpy() for k, v in sim.run(cases.MICROSTRIP_STEPS)[1].items()}
               for sim in sims]  # fmt: skip
    for e, res in enumerate(results):
        for name, want in res.items():
            if np.abs(want).max() > 0:
                _close(got[f"e{e}_{name}"], want)
    s = cases.microstrip_s(results, dt, got["freqs"])
    for key, stored in (("planes", "s"), ("ports", "s_ports")):
        assert np.abs(s[key][:, 1, 0]).max() > 1e-2  # the wave went through the filter
        _close(got[stored], s[key])


@needs_mpi
def test_port_gradient_two_ranks_native_equal_serial(launched):
    def loss(eps):
        grid, materials, kw, steps = cases.case_port_grad(eps)
        sim = fdtd.Simulation(grid, materials, native=False, **kw)
        return cases.port_grad_loss(sim.run(steps)[1], grid.dt)

    eps0 = cases.port_grad_eps0()
    want = core.grad(loss)(eps0).asnumpy()
    for half in (want[:8], want[8:]):  # both slabs matter
        assert np.abs(half).max() > 1e-3 * np.abs(want).max()
    for r in range(2):  # all_ranks=True: the loss and its gradient on both ranks
        got = np.load(launched / f"port_grad_rank{r}.npz")
        np.testing.assert_allclose(got["loss"], loss(eps0).asnumpy(), rtol=1e-12)
        np.testing.assert_allclose(got["g"], want, rtol=1e-12, atol=1e-12 * abs(want).max())


@needs_mpi
def test_amplitude_gradient_port_and_plane_waves_two_ranks_equal_serial(launched):
    def loss(amp):
        grid, kw, steps = cases.case_amp_grad(amp)
        return cases.amp_grad_loss(fdtd.Simulation(grid, native=False, **kw).run(steps)[1])

    amp = core.tensor(1.3, dtype=core.float64)
    want = core.grad(loss)(amp).asnumpy()
    assert abs(want) > 0
    got = np.load(launched / "amp_grad_rank0.npz")
    np.testing.assert_allclose(got["loss"], loss(amp).asnumpy(), rtol=1e-12)
    for r in range(2):
        np.testing.assert_allclose(np.load(launched / f"amp_grad_rank{r}.npz")["g"], want,
                                   rtol=1e-12)  # fmt: skip


@needs_mpi
def test_gradient_two_ranks_equal_serial(launched):
    def loss(eps):
        grid, materials, kw, steps = cases.case_grad(eps)
        sim = fdtd.Simulation(grid, materials, native=False, **kw)
        return cases.grad_loss(sim.run(steps)[1])

    eps0 = cases.grad_eps0()
    want = core.grad(loss)(eps0).asnumpy()
    assert np.abs(want[:8]).max() > 1e-3 * np.abs(want).max()  # both slabs matter
    got0 = np.load(launched / "grad_rank0.npz")
    np.testing.assert_allclose(got0["loss"], loss(eps0).asnumpy(), rtol=1e-12)
    for r in range(2):
        got = np.load(launched / f"grad_rank{r}.npz")
        np.testing.assert_allclose(got["g"], want, rtol=1e-10, atol=1e-12 * abs(want).max())


@needs_mpi
def test_bad_world_size_errors_on_every_rank(launched):
    for r in range(2):
        assert "2 ranks do not divide the 25 cells" in (launched / f"bad_rank{r}.txt").read_text()


class _Dipole(fdtd.PointSource):
    """A user's own source class (not one the slabs know)."""

    def __init__(self):
        super().__init__("ez", (12, 8), cases.Gaussian(1.4e10), name="dipole")


def test_world_of_one_equals_serial_and_rejects_unsupported():
    """One rank: the composite loop equals the serial one bit for bit; the features not on
    slabs raise, naming themselves."""
    grid, materials, kw, _ = cases.case_2d()
    state, results = DistributedSimulation(grid, materials, jit=False, **kw).run(12)
    ref_state, ref = fdtd.Simulation(grid, materials, native=False, **kw).run(12)
    np.testing.assert_array_equal(state.get("ez").asnumpy(), ref_state.get("ez").asnumpy())
    np.testing.assert_array_equal(results["probe"].asnumpy(), ref["probe"].asnumpy())
    with pytest.raises(NotImplementedError, match=r"source 'dipole' \(_Dipole\)"):
        DistributedSimulation(grid, materials, sources=[_Dipole()])
    with pytest.raises(NotImplementedError, match=r"monitor 'dft_x'.*unit-step slice"):
        DistributedSimulation(grid, materials, monitors=[
            fdtd.DFTMonitor("ez", cases.FREQS, region=(slice(6, 12, 2), 4), name="dft_x")])


def test_world_of_one_periodic_x_native_equals_serial():
    """One rank with periodic x is a ring of one: the native kernel on the slab plus the
    cut-layer corrections from its own far layer (the path of every rank on several) equal
    the serial native run to round-off."""
    grid, materials, kw, steps = cases.case_grad(cases.grad_eps0())
    sim = DistributedSimulation(grid, materials, **kw)
    state, results = sim.run(steps)
    ref_state, ref = fdtd.Simulation(grid, materials, **kw).run(steps)
    assert (sim.prev, sim.next) == (0, 0)
    for name, want in ref_state.components().items():
        _close(state.get(name).asnumpy(), want.asnumpy())
    for name, want in ref.items():
        _close(results[name].asnumpy(), want.asnumpy())
