"""CFD benchmark: cell-updates per second of mindflow.cfd against pyro-hydro and Clawpack.

Two cases, both a fixed number of steps with a fixed time step (no CFL loop in the timing):

- ``sod``: 1D Sod shock tube, N = 10^4 cells, WENO5 (characteristic) + HLLC, SSP-RK3.
- ``riemann2d``: Lax-Liu 2D Riemann configuration 3, 256^2 cells, WENO5 (characteristic) +
  HLLC, SSP-RK3 (the example's yaml uses Rusanov; HLLC here so that both cases use the
  same flux).

Rows: ours eager (``Simulator.integration_step``), ours jit (``Simulator.compiled_step``,
compiled once before timing), and the anchors present here:

- pyro-hydro (``pip install pyro-hydro``): its ``compressible`` solver, unsplit CTU
  (Colella 1990) with piecewise-linear reconstruction, characteristic tracing, HLLC, numba.
  The 1D case runs on a 10^4 x 4 grid (pyro is 2D only); cell updates count nx * ny.
- Clawpack (``pip install clawpack``, needs gfortran): SharpClaw's WENO5 (component-wise,
  ``char_decomp = 0``; ours is characteristic-wise, more work per face) + SSP-RK3 with the
  Roe Euler Riemann solvers (``euler_with_efix_1D``, ``euler_4wave_2D``, Fortran), fixed dt.

Cell-updates/s = cells x steps / seconds (one step = all RK stages), best of 3 repeats after
one warm-up step (which compiles our jit graph and pyro's numba kernels). A missing anchor is
a skipped row. Run:

    python -m bench.cfd                       # both cases, float64
    python -m bench.cfd --case sod --steps 20
    python -m bench.cfd --tiny                # toy sizes (what tests/bench runs)
"""

import argparse
import contextlib
import copy
import importlib.util
import os
import tempfile
import time

import numpy as np

from diffsci import core

__all__ = ["CASES", "main", "run_case"]

GAMMA = 1.4

_BASE = {
    "material": {
        "type": "IdealGas",
        "heat_ratio": GAMMA,
        "specific_heat_ratio": GAMMA,
        "specific_gas_constant": 1.0,
    },
    "runtime": {"CFL": 0.5, "current_time": 0.0, "end_time": 0.2},
    "integrator": {"type": "RungeKutta3"},
    "space_solver": {
        "is_convective_flux": True,
        "convective_flux": {
            "reconstructor": "WENO5",
            "riemann_computer": "HLLC",
            "reconstruction_variables": "characteristic",
        },
        "is_viscous_flux": False,
    },
}

# name: cells per axis, default steps, fixed dt (about CFL 0.5 at the initial state)
CASES = {
    "sod": {"shape": (10_000,), "steps": 10, "tiny_shape": (64,), "dt_cfl": 0.5},
    "riemann2d": {"shape": (256, 256), "steps": 5, "tiny_shape": (16, 16), "dt_cfl": 0.5},
}

QUADRANTS = (  # Lax-Liu configuration 3: (rho, u, v, p) in quadrants 1..4
    (1.5, 0.0, 0.0, 1.5),
    (0.5323, 1.206, 0.0, 0.3),
    (0.138, 1.206, 1.206, 0.029),
    (0.5323, 0.0, 1.206, 0.3),
)


def _config(case, shape):
    cfg = copy.deepcopy(_BASE)
    if case == "sod":
        cfg["mesh"] = {"dim": 1, "nx": shape[0], "gamma": GAMMA, "x_range": [0, 1], "pad_size": 4}
        cfg["boundary_conditions"] = {"x_min": {"type": "Neumann"}, "x_max": {"type": "Neumann"}}
    else:
        cfg["mesh"] = {
            "dim": 2,
            "nx": shape[0],
            "ny": shape[1],
            "gamma": GAMMA,
            "x_range": [0, 1],
            "y_range": [0, 1],
            "pad_size": 3,
        }
        cfg["boundary_conditions"] = {
            face: {"type": "Neumann"} for face in ("x_min", "x_max", "y_min", "y_max")
        }
    return cfg


def initial_primitive(case, shape):
    """Cell-centred primitive state ``[5, *shape]`` (numpy float64) on [0, 1]^d."""
    centres = [(np.arange(n) + 0.5) / n for n in shape]
    if case == "sod":
        x = centres[0]
        left = x < 0.5
        pri = np.zeros((5, shape[0]))
        pri[0] = np.where(left, 1.0, 0.125)
        pri[4] = np.where(left, 1.0, 0.1)
        return pri
    x, y = np.meshgrid(*centres, indexing="ij")
    east, north = x >= 0.5, y >= 0.5
    pri = np.zeros((5, *shape))
    for mask, (rho, u, v, p) in zip(
        (east & north, ~east & north, ~east & ~north, east & ~north), QUADRANTS
    ):
        for k, value in ((0, rho), (1, u), (2, v), (4, p)):
            pri[k] = np.where(mask, value, pri[k])
    return pri


def fixed_dt(case, shape):
    """A fixed step at CFL ``dt_cfl`` from the initial state's max (|u| + c) / dx summed."""
    pri = initial_primitive(case, shape)
    c = np.sqrt(GAMMA * pri[4] / pri[0])
    rate = sum(np.max(np.abs(pri[1 + k]) + c) * n for k, n in enumerate(shape))
    return CASES[case]["dt_cfl"] / rate


REPEATS = 3


def _timed(fn, steps):
    """Best of ``REPEATS`` timings of ``steps`` calls, after one warm-up call."""
    fn()  # warm-up (compiles the jit step, numba, caches)
    best = float("inf")
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        for _ in range(steps):
            fn()
        best = min(best, time.perf_counter() - t0)
    return best


# ---- ours ------------------------------------------------------------------------------------


def ours(case, shape, steps, jit, dtype=core.float64):
    """Seconds for ``steps`` steps of mindflow.cfd (eager or ``compiled_step``)."""
    from diffsci.mindflow.cfd import Simulator, cal_con_var

    sim = Simulator(_config(case, shape))
    pri = initial_primitive(case, shape).reshape(5, *shape, *([1] * (3 - len(shape))))
    con0 = cal_con_var(core.tensor(pri).astype(dtype), sim.material)
    dt = fixed_dt(case, shape)
    step = sim.compiled_step if jit else sim.integration_step
    dt_arg = core.tensor(dt, dtype=dtype) if jit else dt
    state = {"u": con0}

    def one():
        state["u"] = step(state["u"], dt_arg)
        state["u"].asnumpy()  # wait for the result (a device backend may be asynchronous)

    seconds = _timed(one, steps)
    rho = np.asarray(state["u"].asnumpy())[0]
    if not np.all(np.isfinite(rho)) or rho.min() <= 0:
        raise FloatingPointError(f"ours ({'jit' if jit else 'eager'}) {case}: bad density")
    return seconds


# ---- pyro-hydro ------------------------------------------------------------------------------


@contextlib.contextmanager
def _in_tempdir():
    # pyro writes inputs.auto into the working directory
    old = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            yield
        finally:
            os.chdir(old)


def pyro_hydro(case, shape, steps):
    """Seconds for ``steps`` steps of pyro's compressible solver and the cell count."""
    from pyro import Pyro

    with _in_tempdir():
        sim = Pyro("compressible")
        common = {"driver.max_steps": 10**9, "driver.tmax": 1e30, "compressible.riemann": "HLLC"}
        if case == "sod":
            nx, ny = shape[0], 4
            params = {
                "mesh.nx": nx,
                "mesh.ny": ny,
                "mesh.xmax": 1.0,
                "mesh.ymax": ny / nx,
                "sod.direction": "x",
                "compressible.limiter": 2,
            }
            sim.initialize_problem("sod", inputs_dict={**common, **params})
        else:
            nx, ny = shape
            params = {"mesh.nx": nx, "mesh.ny": ny, "compressible.limiter": 2}
            sim.initialize_problem("quad", inputs_dict={**common, **params})

        seconds = _timed(sim.single_step, steps)
    return seconds, nx * ny


# ---- Clawpack / SharpClaw --------------------------------------------------------------------


def clawpack(case, shape, steps):
    """Seconds for ``steps`` fixed-dt SharpClaw steps (WENO5, SSP-RK3, Roe)."""
    with _in_tempdir():  # importing pyclaw opens pyclaw.log in the working directory
        from clawpack import pyclaw, riemann

    if case == "sod":
        solver = pyclaw.SharpClawSolver1D(riemann.euler_with_efix_1D)
        solver.bc_lower[0] = solver.bc_upper[0] = pyclaw.BC.extrap
        domain = pyclaw.Domain([pyclaw.Dimension(0.0, 1.0, shape[0], name="x")])
    else:
        solver = pyclaw.SharpClawSolver2D(riemann.euler_4wave_2D)
        for k in range(2):
            solver.bc_lower[k] = solver.bc_upper[k] = pyclaw.BC.extrap
        domain = pyclaw.Domain(
            [
                pyclaw.Dimension(0.0, 1.0, shape[0], name="x"),
                pyclaw.Dimension(0.0, 1.0, shape[1], name="y"),
            ]
        )
    solver.weno_order = 5
    solver.time_integrator = "SSP33"
    solver.lim_type = 2  # WENO
    solver.char_decomp = 0
    solver.dt_variable = False
    solver.dt_initial = solver.dt = fixed_dt(case, shape)  # dt is set from dt_initial in __init__
    solver.cfl_max = 1e9
    solver.cfl_desired = 1e9
    solver.max_steps = 10**9
    state = pyclaw.State(domain, solver.num_eqn)
    state.problem_data["gamma"] = GAMMA
    state.problem_data["gamma1"] = GAMMA - 1.0
    pri = initial_primitive(case, shape)
    rho, p = pri[0], pri[4]
    vel = pri[1 : 1 + len(shape)]
    state.q[0] = rho
    for k in range(len(shape)):
        state.q[1 + k] = rho * vel[k]
    state.q[1 + len(shape)] = p / (GAMMA - 1.0) + 0.5 * rho * np.sum(vel**2, axis=0)
    solution = pyclaw.Solution(state, domain)
    solver.setup(solution)
    dt = solver.dt_initial

    def one():
        solver.step(solution, take_one_step=True, tstart=solution.t, tend=solution.t + dt)
        solution.t += dt

    seconds = _timed(one, steps)
    rho = np.asarray(solution.state.q[0])
    if not np.all(np.isfinite(rho)) or rho.min() <= 0:
        raise FloatingPointError(f"clawpack {case}: bad density")
    return seconds


# ---- table -----------------------------------------------------------------------------------


def _have(module):
    return importlib.util.find_spec(module) is not None


def run_case(case, steps=None, tiny=False, anchors=True, dtype=core.float64):
    """Rows ``(name, scheme, cell_updates_per_s or None, note)`` for one case."""
    spec = CASES[case]
    shape = spec["tiny_shape"] if tiny else spec["shape"]
    steps = steps or (2 if tiny else spec["steps"])
    cells = int(np.prod(shape))
    scheme = "WENO5 char + HLLC, SSP-RK3"
    rows = [
        ("ours eager", scheme, cells * steps / ours(case, shape, steps, False, dtype), ""),
        ("ours jit", scheme, cells * steps / ours(case, shape, steps, True, dtype), ""),
    ]
    if not anchors:
        return rows
    pyro_scheme = "unsplit CTU, PLM (4th-order MC limiter) + HLLC"
    if _have("pyro"):
        seconds, pcells = pyro_hydro(case, shape, steps)
        note = f"grid {shape[0]}x4" if case == "sod" else ""
        rows.append(("pyro-hydro", pyro_scheme, pcells * steps / seconds, note))
    else:
        rows.append(("pyro-hydro", pyro_scheme, None, "not installed (pip install pyro-hydro)"))
    claw_scheme = "SharpClaw WENO5 componentwise + SSP-RK3, Roe (Fortran)"
    if _have("clawpack"):
        try:
            rows.append(("clawpack", claw_scheme, cells * steps / clawpack(case, shape, steps), ""))
        except ImportError as err:
            rows.append(("clawpack", claw_scheme, None, f"import failed: {err}"))
    else:
        rows.append(("clawpack", claw_scheme, None, "not installed (needs gfortran)"))
    return rows


def format_table(case, rows):
    """The rows with ours-jit / anchor and ours-eager / anchor ratios."""
    speeds = {name: s for name, _, s, _ in rows}
    lines = [
        f"== {case} ==",
        f"{'row':<12} {'cell-upd/s':>12} {'jit/row':>8} {'eager/row':>9}  scheme / note",
    ]
    for name, scheme, speed, note in rows:
        if speed is None:
            lines.append(f"{name:<12} {'skipped':>12} {'':>8} {'':>9}  {scheme}; {note}")
            continue
        jit = speeds["ours jit"] / speed
        eager = speeds["ours eager"] / speed
        extra = f"; {note}" if note else ""
        lines.append(f"{name:<12} {speed:12.3e} {jit:8.3f} {eager:9.3f}  {scheme}{extra}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=[*CASES, "all"], default="all")
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--tiny", action="store_true", help="toy sizes")
    parser.add_argument("--no-anchors", action="store_true", help="our rows only")
    parser.add_argument("--float32", action="store_true")
    args = parser.parse_args(argv)
    dtype = core.float32 if args.float32 else core.float64
    cases = list(CASES) if args.case == "all" else [args.case]
    print(f"backend: {core.get_device() if hasattr(core, 'get_device') else 'cpu'}, dtype {dtype}")
    tables = {}
    for case in cases:
        rows = run_case(case, args.steps, args.tiny, not args.no_anchors, dtype)
        tables[case] = rows
        print(format_table(case, rows), flush=True)
    return tables


if __name__ == "__main__":
    main()
