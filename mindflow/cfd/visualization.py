"""Plots of 1D profiles and 2D fields (MindFlow's ``vis_1d``/``vis_2d``; needs matplotlib)."""

import os
import stat

import numpy as np

from diffsci.core.atomic import atomic_path

__all__ = ["vis_1d", "vis_2d"]


def _to_numpy(var):
    return np.asarray(var.asnumpy() if hasattr(var, "asnumpy") else var)


def _save(fig, file_name, permission):
    """Write to a temp file in the same folder, then rename (never a half-written plot)."""
    import matplotlib.pyplot as plt

    suffix = os.path.splitext(file_name)[1] or ".png"
    try:
        with atomic_path(file_name, suffix=suffix) as tmp:
            fig.savefig(tmp)
    finally:
        plt.close(fig)
    os.chmod(file_name, permission)


def vis_1d(
    pri_var,
    file_name="vis.jpg",
    permission=stat.S_IREAD + stat.S_IWRITE,
    x=None,
    reference=None,
    reference_label="exact",
):
    """Plot density, velocity and pressure of a 1D state.

    Args:
        pri_var (Tensor): ``[5, nx, 1, 1]`` primitive variables.
        file_name (str): output image.
        permission (int): file mode set after writing.
        x (array): ``[nx]`` cell centres; default uniform on [0, 1].
        reference (tuple): optional ``(x_ref, rho_ref, u_ref, p_ref)`` drawn as lines.
        reference_label (str): the legend of those lines ("exact", or e.g. "N=1600 run").
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = _to_numpy(pri_var)
    nx = data.shape[1]
    if x is None:
        x = (np.arange(nx) + 0.5) / nx
    fig, ax = plt.subplots(ncols=3, figsize=(15, 4.5))
    for k, (i, name) in enumerate(((0, "rho"), (1, "u"), (4, "p"))):
        ax[k].set_title(name)
        ax[k].plot(x, data[i, :, 0, 0], "o", ms=3, label="mindflow.cfd")
        if reference is not None:
            ax[k].plot(reference[0], reference[1 + k], "k-", lw=1, label=reference_label)
            ax[k].legend()
    fig.tight_layout()
    _save(fig, file_name, permission)


def vis_2d(pri_var, file_name="vis.jpg", permission=stat.S_IREAD + stat.S_IWRITE):
    """Plot density, x/y velocity and pressure of a 2D state ``[5, nx, ny, 1]``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = _to_numpy(pri_var)
    fig, axes = plt.subplots(2, 2, figsize=(12, 11))
    for ax, (i, name) in zip(
        axes.flat, ((0, "rho"), (1, "velocity-x"), (2, "velocity-y"), (4, "pressure"))
    ):
        im = ax.imshow(data[i, :, :, 0].T, origin="lower", extent=(0, 1, 0, 1), cmap="gray")
        ax.set_title(name)
        fig.colorbar(im, ax=ax)
    fig.tight_layout()
    _save(fig, file_name, permission)
