"""Generate a small Burgers data set (the FNO paper's setting), write it as a PDEBench file, read
it back lazily and feed it through the pipeline.

1. ``datasets.generate_burgers``: initial conditions from the GRF N(0, 625 (-Δ + 25 I)^-2),
   nu = 0.1, pseudo-spectral + ETDRK4 on ``resolution`` points, every ``subsample``-th point
   kept, ``n_time`` frames in [0, 1]; written atomically to ``<out-dir>/burgers.h5`` (PDEBench's
   "single" layout: ``tensor`` [N, Nt, Nx], ``x-coordinate``, ``t-coordinate``, with a card);
2. ``datasets.pde.open_pdebench``: read it back (lazily, one sample at a time) and compare;
3. ``datasets.GeneratorDataset`` over the file, shuffled and batched: (u0, u(T)) pairs as an
   operator-learning model would take them, as ``core.Tensor`` batches;
4. the solver against the exact Cole-Hopf solution at the same resolution and step;
5. a plot of a few samples, ``<out-dir>/burgers_samples.png`` (default ``--out-dir``:
   ``./burgers_dataset_out``).

    python examples/datasets/burgers_dataset.py                  # 32 samples, 1024 -> 256 points
    python examples/datasets/burgers_dataset.py --fno            # FNO's 8192 -> 1024, timed
    python examples/datasets/burgers_dataset.py --tiny --out-dir burgers_tiny_out
"""

import pathlib
import time

import numpy as np

from diffsci import datasets
from diffsci.datasets.pde import open_pdebench
from diffsci.datasets.pde.generators import cole_hopf_solution, solve_burgers
from diffsci.scripts import ArgumentParser, default_out_dir


def cole_hopf_error(resolution, nu=0.1, dt=1e-3, t_final=1.0):
    """Max |u - u_exact| at t_final for phi = 1 + 0.8 cos(2 pi x + 0.3) e^{-4 pi^2 nu t} + ...,
    solved exactly as the generator solves (same resolution, same step)."""
    modes = [(1, 0.8, 0.3), (2, 0.15, 1.0)]
    x = np.arange(resolution) / resolution
    u = solve_burgers(cole_hopf_solution(x, 0.0, nu, 1.0, modes), nu, [t_final], dt)[-1]
    return float(np.abs(u - cole_hopf_solution(x, t_final, nu, 1.0, modes)).max())


def plot_samples(data, path, n_show=3):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x, t, u = data["x-coordinate"], data["t-coordinate"], data["tensor"]
    frames = sorted({0, 1, len(t) // 2, len(t) - 1})
    fig, axes = plt.subplots(1, n_show, figsize=(4 * n_show, 3.2), sharey=True)
    for i, ax in enumerate(np.atleast_1d(axes)):
        for j in frames:
            ax.plot(x, u[i, j], label=f"t = {t[j]:.2f}")
        ax.set_title(f"sample {i}")
        ax.set_xlabel("x")
    np.atleast_1d(axes)[0].set_ylabel("u")
    np.atleast_1d(axes)[0].legend()
    fig.suptitle("Burgers, nu = 0.1, GRF initial conditions (FNO setting)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(
    tiny=False,
    out_dir=None,
    n_samples=32,
    resolution=1024,
    subsample=4,
    n_time=11,
    batch_size=8,
    seed=0,
    verbose=True,
):
    if tiny:
        n_samples, resolution, subsample, n_time, batch_size = 4, 64, 2, 3, 2
    say = print if verbose else (lambda *a, **k: None)
    out = pathlib.Path(out_dir or default_out_dir("burgers_dataset"))
    out.mkdir(parents=True, exist_ok=True)
    path = out / "burgers.h5"

    start = time.perf_counter()
    data = datasets.generate_burgers(
        n_samples,
        resolution=resolution,
        subsample=subsample,
        n_time=n_time,
        seed=seed,
        path=path,
        overwrite=True,
        progress=verbose,
    )
    seconds = time.perf_counter() - start
    say(
        f"generated {n_samples} samples at {resolution} points (stored at "
        f"{resolution // subsample}, subsample={subsample}), {n_time} frames in {seconds:.2f} s "
        f"({n_samples / seconds:.2f} samples/s incl. writing {path})"
    )

    with open_pdebench(path) as f:
        say(f"read back: {f!r}; card pde={f.card['pde']!r}, seed={f.card['seed']}")
        same = all(np.array_equal(f.sample(i)["tensor"], data["tensor"][i]) for i in range(len(f)))
        say(f"read back equals generated: {same}")
        source = f.to_source(fields=["tensor"])

    # operator learning pairs (u0, u(T)) through the pipeline, shuffled with a seed, batched
    pipeline = (
        datasets.GeneratorDataset(source, column_names=["u"], shuffle=True, seed=seed)
        .map(lambda u: (u[0], u[-1]), input_columns=["u"], output_columns=["u0", "uT"])
        .batch(batch_size)
    )
    shapes = []
    for u0, ut in pipeline.create_tuple_iterator(num_epochs=1):
        shapes.append((tuple(u0.shape), tuple(ut.shape)))
    say(
        f"pipeline: {pipeline.get_dataset_size()} batches; first batch u0 {shapes[0][0]}, "
        f"u(T) {shapes[0][1]} ({type(u0).__name__})"
    )

    err = cole_hopf_error(resolution)
    say(f"Cole-Hopf check at {resolution} points, dt=1e-3: max |u - u_exact| = {err:.2e}")

    plot = out / "burgers_samples.png"
    plot_samples(data, plot, n_show=min(3, n_samples))
    say(f"plot: {plot}")
    return {
        "path": path,
        "plot": plot,
        "tensor_shape": data["tensor"].shape,
        "read_back_equal": same,
        "batch_shapes": shapes,
        "cole_hopf_error": err,
        "seconds": seconds,
        "samples_per_second": n_samples / seconds,
    }


if __name__ == "__main__":
    parser = ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tiny", action="store_true", help="4 samples at 64 points")
    parser.add_argument("--fno", action="store_true", help="FNO's 8192 points, subsampled to 1024")
    parser.add_argument("--samples", type=int, default=32)
    parser.add_argument("--out-dir", aliases=["--out"], default=default_out_dir("burgers_dataset"))
    args = parser.parse_args()
    if args.fno:
        main(out_dir=args.out_dir, n_samples=args.samples, resolution=8192, subsample=8, n_time=11)
    else:
        main(tiny=args.tiny, out_dir=args.out_dir, n_samples=args.samples)
