"""2D TMz inverse scattering with a differentiable FDTD (MindElec's ``AD_FDTD/fdtd_inverse``).

The case, as MindElec sets it up (``solve.py``, ``src/transverse_magnetic.py``): a 1 m x 1 m
domain of 100 x 100 cells of 1 cm, CFS-CPML 10 cells thick (order 4, sigma factor 1.5,
kappa_max 11, alpha 0), dt at Courant number 0.9 of the 2D limit; two dielectric discs of
eps_r = 4 (centre (0.40, 0.40) m radius 0.05 m, centre (0.55, 0.55) m radius 0.06 m: a cell is
inside when its centre is) in vacuum; 4 Jz point sources at nodes (20, 50), (50, 20), (80, 50),
(50, 80) fired one at a time with a Gaussian pulse (``tau = 0.5 / fmax``, ``t0 = 4.5 tau``,
``fmax`` = 1.4 GHz); E_z recorded at 8 receivers (25, 25) ... (75, 75) for 350 steps. The
unknown is ``rho`` on the inversion domain 0.3 <= x, y <= 0.7 (cells 30..69) with MindElec's map
``eps_r = 1 + elu(rho, alpha=1e-2)`` (``mindelec.fdtd.design_permittivity``); cell values are
averaged onto the E_z nodes by MindElec's 2 x 2 smoothing (zero padding). The loss is the sum
of squared differences of the 4 x 8 received traces (``nn.MSELoss(reduction='sum')``), minimised
by Adam (lr 0.1; 200 epochs by default, MindElec runs 100) on gradients from ``core.value_and_grad``
through ``mindelec.fdtd.Simulation`` (checkpointed scan), one compiled ``core.jit`` step.

A current source J_z enters Ampere's law as ``E^{n+1} = Ca E^n + Cb (curl H - J)``; at a
vacuum node (``Ca = 1``, ``Cb = dt / eps0``) it is a soft E_z source of amplitude
``-dt / eps0`` per ampere, and MindElec samples ``J`` at ``(n + 1/2) dt`` where our E-side
injection reads its waveform at ``(n + 1) dt``: the pulse is delayed by ``dt / 2`` to match.
With that our forward run reproduces MindElec's own ``ez_labels.npy`` to 3e-5 relative
(float32; ``tests/examples/test_mindelec_inverse.py``).

The synthetic measurements are our own forward run on the true map (the "inverse crime": same
solver, same grid, no noise, as in MindElec, whose labels come from its own FDTD).

Metrics on the 100 x 100 cell map against the true one, data range ``L = max - min = 3``:

- PSNR ``= 20 log10(L / sqrt(mean((x - y)^2)))`` (MindElec's ``metric.psnr``);
- SSIM (Wang, Bovik, Sheikh & Simoncelli, IEEE TIP 13(4) 2004, eqs. 13 and 15 with the
  Gaussian window of sec. III-C: 11 x 11, sigma 1.5, normalised; ``C1 = (0.01 L)^2``,
  ``C2 = (0.03 L)^2``; the mean of the SSIM map over the windows that fit inside the image);
- MindElec's ``metric.ssim`` for comparison: the same formula evaluated once over the whole
  image (one global window) with ``C1 = 0.01 L`` and ``C2 = 0.03 L`` (not squared, as it is
  written there).

MindElec reports PSNR 27.84 dB and SSIM 0.9636 (its global definition) after 100 epochs; this
script's loss at epoch 0 is MindElec's (0.2114) and its epoch-100 scores are 27.84 dB / 0.9636
too; 200 epochs reach about 28.75 dB, SSIM 0.981 (Wang) / 0.971 (MindElec's).
Writes ``<out-dir>/`` (default ``./inverse_scattering_out``): ``maps.png`` (true,
reconstructed, error), ``loss.png`` and ``history.json``.

    python examples/mindelec/fdtd/inverse_scattering/inverse_scattering.py              # 100 x 100
    python examples/mindelec/fdtd/inverse_scattering/inverse_scattering.py --epochs 100  # MindElec's
    python examples/mindelec/fdtd/inverse_scattering/inverse_scattering.py --tiny       # 40 x 40
"""

import json
import pathlib
import time

import numpy as np

from diffsci import core
from diffsci.core import nn, ops
from diffsci.mindelec import fdtd
from diffsci.scripts import ArgumentParser, default_out_dir

# MindElec's setup, in fractions of the 1 m domain (node/cell index = fraction * n)
SIZE = 1.0  # m
FMAX = 1.4e9  # Hz, for 100 cells of 1 cm
CFL = 0.9
SOURCES = ((0.20, 0.50), (0.50, 0.20), (0.80, 0.50), (0.50, 0.80))
RECEIVERS = (
    (0.25, 0.25),
    (0.25, 0.50),
    (0.25, 0.75),
    (0.50, 0.25),
    (0.50, 0.75),
    (0.75, 0.25),
    (0.75, 0.50),
    (0.75, 0.75),
)
DISCS = ((0.40, 0.40, 0.05), (0.55, 0.55, 0.06))  # (x, y, radius) in m
EPS_DISC = 4.0
DESIGN = (0.3, 0.7)  # the inversion domain along x and y, m


class Setup:
    """MindElec's inverse-scattering problem on ``n x n`` cells of ``1 / n`` m.

    ``n = 100`` is MindElec's grid. Smaller ``n`` is the same problem in cell units (``fmax``
    scaled by ``n / 100``, so the pulse spans as many cells per wavelength), for quick runs.

    Args:
        n: cells per side.
        nt: time steps per source.
        npml: CPML cells.
        dtype: ``"float32"`` (MindElec's) or ``"float64"``.

    Attributes:
        grid, dt (s), sources, receivers (node indices), design (slice of cells), wave
        (``Gaussian`` delayed by ``dt / 2``), amplitude (``-dt / eps0``, V/m per A).
    """

    def __init__(self, n=100, nt=350, npml=10, dtype="float32"):
        d = SIZE / n
        self.n, self.nt, self.npml = n, nt, npml
        self.dt = CFL * d / (fdtd.C0 * np.sqrt(2.0))  # MindElec's estimate_time_interval
        self.grid = fdtd.Grid((n, n), d, dt=self.dt, dtype=dtype)
        self.sources = [tuple(round(f * n) for f in p) for p in SOURCES]
        self.receivers = [tuple(round(f * n) for f in p) for p in RECEIVERS]
        lo, hi = (round(f * n) for f in DESIGN)
        self.design = slice(lo, hi)
        tau = 0.5 / (FMAX * n / 100)
        # J sampled at (n + 1/2) dt in MindElec, our E-side injection at (n + 1) dt
        self.wave = fdtd.Gaussian(tau=tau, t0=4.5 * tau + 0.5 * self.dt)
        self.amplitude = -self.dt / fdtd.EPS0

    @property
    def design_shape(self):
        m = self.design.stop - self.design.start
        return (m, m)

    def true_permittivity(self) -> np.ndarray:
        """The true cell map ``[n, n]``: eps_r = 4 in the cells whose centre is in a disc."""
        c = (np.arange(self.n) + 0.5) * (SIZE / self.n)
        x, y = np.meshgrid(c, c, indexing="ij")
        inside = np.zeros((self.n, self.n), dtype=bool)
        for cx, cy, r in DISCS:
            inside |= (x - cx) ** 2 + (y - cy) ** 2 <= r**2
        return np.where(inside, EPS_DISC, 1.0)

    def cell_map(self, rho):
        """``eps_r = 1 + elu(rho)`` on the design cells, 1 elsewhere: ``[m, m] -> [n, n]``."""
        eps = fdtd.design_permittivity(rho)  # [m, m]
        lo, hi = self.design.start, self.n - self.design.stop
        return ops.pad(eps - 1.0, ((lo, hi), (lo, hi))) + 1.0  # [n, n]

    def node_map(self, cells):
        """MindElec's 2 x 2 smoothing of a cell map onto the E_z nodes (zero padding):
        node ``(i, j)`` is the mean of cells ``i-1..i, j-1..j``. ``[n, n] -> [n, n]``."""
        if not isinstance(cells, core.Tensor):
            cells = core.tensor(np.asarray(cells, dtype=np.float64), dtype=self.grid.dtype)
        n = self.n
        p = ops.pad(cells, ((1, 1), (1, 1)))  # [n + 2, n + 2]
        avg = 0.25 * (p[:-1, :-1] + p[1:, :-1] + p[:-1, 1:] + p[1:, 1:])  # [n + 1, n + 1]
        return avg[:n, :n]  # node n is the closing wall (deep in the CPML)

    def receive(self, eps_nodes, source, checkpoint=None):
        """E_z at the receivers for one source: Tensor ``[nt, n_receivers]`` (V/m).

        ``checkpoint``: the time loop's checkpointing under ``core.grad`` (``Simulation.run``).
        """
        sim = fdtd.Simulation(
            self.grid,
            fdtd.Materials(eps_r=eps_nodes),
            fdtd.CPML(self.npml),
            sources=[fdtd.PointSource("ez", source, self.wave, amplitude=self.amplitude)],
            monitors=[fdtd.PointProbes("ez", self.receivers, name="receivers")],
        )
        _, res = sim.run(self.nt, checkpoint=checkpoint)
        return res["receivers"]

    def measure(self, eps_nodes, checkpoint=None):
        """All sources: Tensor ``[nt, n_sources, n_receivers]`` (MindElec's label layout)."""
        return ops.stack([self.receive(eps_nodes, s, checkpoint) for s in self.sources], axis=1)


# ---- metrics ------------------------------------------------------------------------------
def psnr(x, y) -> float:
    """PSNR (dB) of ``x`` against the reference ``y`` (same shape), data range ``max - min``
    of ``|y|`` (MindElec's ``metric.psnr``)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    data_range = np.abs(y).max() - np.abs(y).min()
    return float(20.0 * np.log10(data_range / np.sqrt(np.mean((x - y) ** 2))))


def gaussian_window(size=11, sigma=1.5) -> np.ndarray:
    """The normalised 1D Gaussian of Wang et al. 2004 sec. III-C: ``[size]``, sums to 1."""
    r = np.arange(size) - (size - 1) / 2
    w = np.exp(-(r**2) / (2 * sigma**2))
    return w / w.sum()


def _filter_valid(a, w):
    """Separable 2D correlation of ``a`` ``[H, W]`` with ``w ⊗ w``, windows inside only:
    ``[H - k + 1, W - k + 1]``."""
    k = len(w)
    rows = sum(w[i] * a[i : a.shape[0] - k + 1 + i, :] for i in range(k))
    return sum(w[j] * rows[:, j : a.shape[1] - k + 1 + j] for j in range(k))


def ssim(x, y, size=11, sigma=1.5, k1=0.01, k2=0.03) -> float:
    """Mean SSIM of ``x`` against the reference ``y`` (Wang et al., IEEE TIP 2004, eqs. 13, 15).

    Local means, variances and covariance are weighted by the Gaussian window (``size``,
    ``sigma``) at every position where it fits in the image; ``C1 = (k1 L)^2``,
    ``C2 = (k2 L)^2`` with ``L`` the data range of ``y`` (``max |y| - min |y|``).

    Args:
        x, y: ``[H, W]`` arrays, ``H, W >= size``.

    Returns:
        the mean of the SSIM map, a float in [-1, 1] (1 for ``x == y``).
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 2 or min(x.shape) < size:
        raise ValueError(
            f"ssim: need two equal [H, W] images with H, W >= {size}; got {x.shape} and {y.shape}"
        )
    data_range = np.abs(y).max() - np.abs(y).min()
    c1, c2 = (k1 * data_range) ** 2, (k2 * data_range) ** 2
    w = gaussian_window(size, sigma)
    mx, my = _filter_valid(x, w), _filter_valid(y, w)
    sxx = _filter_valid(x * x, w) - mx * mx
    syy = _filter_valid(y * y, w) - my * my
    sxy = _filter_valid(x * y, w) - mx * my
    ssim_map = ((2 * mx * my + c1) * (2 * sxy + c2)) / ((mx**2 + my**2 + c1) * (sxx + syy + c2))
    return float(ssim_map.mean())


def ssim_global(x, y) -> float:
    """MindElec's ``metric.ssim``: eq. 13 of Wang et al. over the whole image as one window,
    population statistics, ``C1 = 0.01 L``, ``C2 = 0.03 L`` (as written there, not squared)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    mx, my = x.mean(), y.mean()
    vx, vy = ((x - mx) ** 2).mean(), ((y - my) ** 2).mean()
    cov = ((x - mx) * (y - my)).mean()
    data_range = np.abs(y).max() - np.abs(y).min()
    c1, c2 = 1e-2 * data_range, 3e-2 * data_range
    return float(((2 * mx * my + c1) * (2 * cov + c2)) / ((mx**2 + my**2 + c1) * (vx + vy + c2)))


def scores(rec, true) -> dict:
    """``{"psnr", "ssim", "ssim_mindelec"}`` of the reconstructed cell map against the truth."""
    return {
        "psnr": psnr(rec, true),
        "ssim": ssim(rec, true),
        "ssim_mindelec": ssim_global(rec, true),
    }


# ---- the inversion ------------------------------------------------------------------------
def main(
    n=100,
    nt=350,
    npml=10,
    epochs=200,
    lr=0.1,
    dtype="float32",
    time_budget=None,
    out_dir=None,
    plot=True,
    verbose=True,
    tiny=False,
):
    """Reconstruct eps_r from the synthetic measurements; score it against the truth.

    Args:
        n: cells per side (100: MindElec's grid); nt: steps per source; npml: CPML cells.
        epochs: Adam iterations (one gradient of the 4-source loss each); lr: learning rate.
        dtype: field dtype; time_budget: stop after this many seconds (None: run all epochs).
        out_dir: folder for the plots and ``history.json`` (default
            ``inverse_scattering_out/`` in the current working directory).
        tiny: 40 x 40 cells, 200 steps, CPML 6, 5 epochs (overrides those arguments).

    Returns:
        dict: ``loss`` (per epoch, before its update), ``psnr``/``ssim``/``ssim_mindelec``
        (final), ``history`` (epoch, loss and metrics at epoch 0 and every 10th), ``epochs_run``,
        ``seconds_per_epoch`` (median, after the first, compiling, one), ``eps`` (``[n, n]``
        reconstruction), ``eps_true``, ``initial`` (metrics of the starting map eps_r = 1).
    """
    if tiny:
        n, nt, npml, epochs = 40, 200, 6, 5
    setup = Setup(n, nt, npml, dtype)
    true = setup.true_permittivity()
    measured = setup.measure(setup.node_map(true))  # [nt, 4, 8]

    rho = core.Parameter(core.zeros(setup.design_shape, dtype=setup.grid.dtype), name="rho")
    optimizer = nn.Adam([rho], learning_rate=lr)

    def loss_fn(rho):
        predicted = setup.measure(setup.node_map(setup.cell_map(rho)))
        return ((predicted - measured) ** 2).sum()

    grad_fn = core.value_and_grad(loss_fn, None, optimizer.parameters)

    @core.jit
    def train_step():
        loss, grads = grad_fn(rho)
        optimizer(grads)
        return loss

    def current():
        return setup.cell_map(rho).asnumpy().astype(np.float64)

    initial = scores(current(), true)
    losses, history, times = [], [], []
    start = time.perf_counter()
    for epoch in range(epochs):
        t0 = time.perf_counter()
        losses.append(float(train_step()))
        times.append(time.perf_counter() - t0)
        last = epoch == epochs - 1
        if epoch == 0 or (epoch + 1) % 10 == 0 or last:
            row = {"epoch": epoch, "loss": losses[-1], **scores(current(), true)}
            history.append(row)
            if verbose:
                print(
                    f"Epoch: [{epoch:4d} / {epochs}], loss: {losses[-1]:.6e}  PSNR "
                    f"{row['psnr']:.3f} dB  SSIM {row['ssim']:.4f} (MindElec's: "
                    f"{row['ssim_mindelec']:.4f})  {times[-1]:.2f} s",
                    flush=True,
                )
        if time_budget is not None and time.perf_counter() - start > time_budget and not last:
            if verbose:
                print(f"time budget {time_budget:g} s reached after {epoch + 1} epochs")
            break
    eps = current()
    final = scores(eps, true)
    result = {
        "loss": losses,
        **final,
        "history": history,
        "epochs_run": len(losses),
        "seconds_per_epoch": float(np.median(times[1:] if len(times) > 1 else times)),
        "eps": eps,
        "eps_true": true,
        "initial": initial,
    }
    if verbose:
        print(
            f"[epsr] PSNR: {final['psnr']:.6f} dB, SSIM: {final['ssim']:.6f} (Wang, Gaussian 11, "
            f"1.5), MindElec's global SSIM: {final['ssim_mindelec']:.6f}  after "
            f"{len(losses)} epochs, {result['seconds_per_epoch']:.2f} s/epoch"
        )
    if plot:
        folder = pathlib.Path(out_dir or default_out_dir("inverse_scattering"))
        _plot(folder, setup, result)
        if verbose:
            print(f"wrote {folder}/maps.png, loss.png, history.json")
    return result


def _plot(folder, setup, result):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    ext = [0, SIZE, 0, SIZE]
    true, eps = result["eps_true"], result["eps"]
    err = max(0.05, float(np.abs(eps - true).max()))  # symmetric colour range of the error
    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    panels = (
        ("true eps_r", true, "viridis", (1, EPS_DISC)),
        (
            f"reconstructed: PSNR {result['psnr']:.2f} dB, SSIM {result['ssim']:.4f}",
            eps,
            "viridis",
            (1, EPS_DISC),
        ),
        ("reconstructed - true", eps - true, "RdBu_r", (-err, err)),
    )
    for ax, (title, data, cmap, (lo, hi)) in zip(axes, panels, strict=True):
        im = ax.imshow(data.T, origin="lower", extent=ext, cmap=cmap, vmin=lo, vmax=hi)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("x (m)")
        ax.set_ylabel("y (m)")
        fig.colorbar(im, ax=ax, fraction=0.046)
    h = SIZE / setup.n
    for sx, sy in setup.sources:
        axes[0].plot(sx * h, sy * h, "r^", ms=6)
    for rx, ry in setup.receivers:
        axes[0].plot(rx * h, ry * h, "o", color="lime", ms=5)
    lo, hi = setup.design.start * h, setup.design.stop * h
    axes[0].plot([lo, hi, hi, lo, lo], [lo, lo, hi, hi, lo], "w--", lw=0.8)
    fig.tight_layout()
    fig.savefig(folder / "maps.png", dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 4))
    ax.semilogy(np.arange(len(result["loss"])), result["loss"])
    ax.set_xlabel("epoch (Adam step)")
    ax.set_ylabel("loss: sum of squared E_z misfits (V/m)^2")
    ax.set_title(f"{setup.n} x {setup.n} cells, {setup.nt} steps x {len(setup.sources)} sources")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(folder / "loss.png", dpi=110)
    plt.close(fig)

    keep = {
        k: result[k]
        for k in (
            "psnr",
            "ssim",
            "ssim_mindelec",
            "epochs_run",
            "seconds_per_epoch",
            "history",
            "initial",
        )
    }
    (folder / "history.json").write_text(json.dumps({**keep, "loss": result["loss"]}, indent=1))


if __name__ == "__main__":
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=200)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--nt", type=int, default=350, help="time steps per source")
    parser.add_argument("--n", type=int, default=100, help="cells per side")
    parser.add_argument("--dtype", default="float32", choices=("float32", "float64"))
    parser.add_argument(
        "--time-budget", aliases=["--time-limit", "--time_limit"], type=float, default=None,
        help="seconds",
    )
    parser.add_argument("--tiny", action="store_true", help="40 x 40 cells, 200 steps, 5 epochs")
    parser.add_argument(
        "--out-dir", aliases=["--out"], default=default_out_dir("inverse_scattering")
    )
    parser.add_argument("--no-plot", action="store_true")
    args = parser.parse_args()
    main(
        n=args.n,
        nt=args.nt,
        epochs=args.epochs,
        lr=args.lr,
        dtype=args.dtype,
        time_budget=args.time_budget,
        out_dir=args.out_dir,
        plot=not args.no_plot,
        tiny=args.tiny,
    )
