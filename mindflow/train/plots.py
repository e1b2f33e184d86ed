"""Loss curves and sample predictions (matplotlib, imported only when a plot is asked for)."""

import numpy as np

__all__ = ["plot_history", "plot_sample"]


def _pyplot():
    try:
        import matplotlib
    except ImportError as e:  # an optional dependency
        raise ImportError("mindflow.train plots need matplotlib: pip install matplotlib") from e
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def plot_history(history, steps_per_epoch, path, title=None):
    """Training loss per step (thin) and per epoch (thick), test relative L2 per evaluated
    epoch, on a log scale against epochs. Returns ``path``."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    loss = np.asarray(history["loss"])
    if loss.size:
        ax.semilogy(
            np.arange(1, loss.size + 1) / steps_per_epoch,
            loss,
            lw=0.5,
            alpha=0.5,
            label="training loss (step)",
        )
    epoch_loss = np.asarray(history["epoch_loss"])
    if epoch_loss.size:
        ax.semilogy(
            np.arange(1, epoch_loss.size + 1), epoch_loss, lw=2, label="training loss (epoch)"
        )
    if history["test_rel_l2"]:
        ax.semilogy(history["test_epoch"], history["test_rel_l2"], "o-", label="test relative L2")
    ax.set_xlabel("epoch")
    ax.legend()
    if title:
        ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_sample(true, pred, path, unsteady=True, t_in=1, channel=0, max_frames=4):
    """Truth, prediction and error of one sample, channel ``channel``.

    Args:
        true, pred: ``[*spatial, T', C]`` (trajectories: the predicted frames) or
            ``[*spatial, C]`` (pairs); 1 or 2 spatial axes.
        path: the image file. unsteady: whether there is a time axis. t_in: the number of
            the first predicted frame (for the titles). max_frames: frames shown.
    """
    plt = _pyplot()
    true = np.asarray(true)[..., channel]
    pred = np.asarray(pred)[..., channel]
    if not unsteady:
        true, pred = true[..., None], pred[..., None]
    n_t = true.shape[-1]
    frames = sorted(set(np.linspace(0, n_t - 1, min(max_frames, n_t)).round().astype(int)))
    if true.ndim == 2:  # 1-D space: lines
        fig, axes = plt.subplots(1, len(frames), figsize=(3.2 * len(frames), 3.0), squeeze=False)
        x = np.arange(true.shape[0]) / true.shape[0]
        for ax, k in zip(axes[0], frames, strict=True):
            ax.plot(x, true[:, k], "k-", label="truth")
            ax.plot(x, pred[:, k], "r--", label="prediction")
            ax.set_title(f"frame {t_in + k}" if unsteady else "output")
        axes[0][0].legend()
    elif true.ndim == 3:  # 2-D: truth / prediction / error images per frame
        if len(frames) == 1:  # one output (pairs): truth, prediction and error side by side
            fig, grid = plt.subplots(1, 3, figsize=(10.0, 3.0), squeeze=False)
            axes = [[grid[0][i]] for i in range(3)]
        else:  # a column per frame
            fig, axes = plt.subplots(
                3, len(frames), figsize=(3.0 * len(frames), 8.4), squeeze=False
            )
        for j, k in enumerate(frames):
            lo, hi = true[..., k].min(), true[..., k].max()
            for i, (img, name) in enumerate(
                (
                    (true[..., k], "truth"),
                    (pred[..., k], "prediction"),
                    (pred[..., k] - true[..., k], "error"),
                )
            ):
                kw = {} if name == "error" else {"vmin": lo, "vmax": hi}
                im = axes[i][j].imshow(img.T, origin="lower", cmap="RdBu_r", **kw)
                axes[i][j].set_title(f"{name}, frame {t_in + k}" if unsteady else name)
                axes[i][j].set_xticks([])
                axes[i][j].set_yticks([])
                fig.colorbar(im, ax=axes[i][j], fraction=0.046)
    else:
        raise ValueError(f"plot_sample: 1 or 2 spatial axes, got a sample of shape {true.shape}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
