"""Plots of the time-domain Maxwell case: prediction, reference and error of each field at a
few times, and the relative L2 error over time (MindElec's ``visual_result`` as still images)."""

import os

import numpy as np

__all__ = ["plot_fields", "plot_l2_over_time", "plot_loss"]

_NAMES = ("Ex", "Ey", "Hz")


def plot_fields(ref, pred, path, times=None):
    """``ref``/``pred``: ``[T, P, P, 3]`` on ``x`` (axis 1), ``y`` (axis 2); one figure per
    time index in ``times`` (default: 3 spread over the run), rows Ex/Ey/Hz, columns
    reference / prediction / |error|."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n_t = ref.shape[0]
    times = times if times is not None else sorted({n_t // 3, (2 * n_t) // 3, n_t - 1})
    files = []
    for k in times:
        fig, axes = plt.subplots(3, 3, figsize=(10, 9), layout="compressed")
        for f in range(3):
            vmax = np.abs(ref[k, ..., f]).max() or 1.0  # this snapshot's range
            panels = (ref[k, :, :, f], pred[k, :, :, f], np.abs(pred[k, :, :, f] - ref[k, :, :, f]))
            for j, (data, title) in enumerate(zip(panels, ("reference", "PINN", "|error|"))):
                ax = axes[f, j]
                kw = {"vmin": 0, "vmax": vmax} if j == 2 else {"vmin": -vmax, "vmax": vmax}
                im = ax.imshow(data.T, origin="lower", extent=(0, 1, 0, 1), cmap="RdBu_r", **kw)
                ax.set_title(f"{_NAMES[f]} {title}", fontsize=9)
                fig.colorbar(im, ax=ax, fraction=0.046)
        fig.suptitle(f"time sample {k} of {n_t - 1}")
        name = os.path.join(path, f"fields_t{k:03d}.png")
        fig.savefig(name, dpi=80)
        plt.close(fig)
        files.append(name)
    return files


def l2_over_time(ref, pred):
    """``[T, 3]``: the relative L2 error of each field at each time (nan where the reference
    is zero, e.g. t = 0)."""
    num = np.sqrt(np.sum((pred - ref) ** 2, axis=(1, 2)))
    den = np.sqrt(np.sum(ref**2, axis=(1, 2)))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / den, np.nan)


def plot_l2_over_time(t, ref, pred, path):
    """The relative L2 error of Ex, Ey, Hz per time sample (``t`` in s)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    err = l2_over_time(ref, pred)
    fig, ax = plt.subplots(figsize=(6, 4))
    for f in range(3):
        ax.semilogy(np.asarray(t) * 1e9, err[:, f], label=_NAMES[f])
    ax.set_xlabel("t (ns)")
    ax.set_ylabel("relative L2 error")
    ax.legend()
    ax.grid(True, which="both", alpha=0.3)
    name = os.path.join(path, "l2_error_over_time.png")
    fig.tight_layout()
    fig.savefig(name, dpi=90)
    plt.close(fig)
    return name


def plot_loss(losses, path):
    """Mean training loss per epoch."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(np.arange(1, len(losses) + 1), losses)
    ax.set_xlabel("epoch")
    ax.set_ylabel("loss (MTL-weighted)")
    ax.grid(True, alpha=0.3)
    name = os.path.join(path, "loss.png")
    fig.tight_layout()
    fig.savefig(name, dpi=90)
    plt.close(fig)
    return name
