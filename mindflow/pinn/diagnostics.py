"""Diagnostics: per-term residual maps and loss-curve plots.

A low loss with a wrong answer shows up in two places: the error against a reference (reported
next to the loss by :class:`mindflow.pinn.Trainer`) and where the residual concentrates
(:func:`residual_map`).
"""

import numpy as np

from diffsci import core

__all__ = ["plot_history", "plot_residual_map", "residual_map"]


def residual_map(residual_fns, points, batch_size=None, shape=None):
    """Magnitudes of each residual term at ``points``.

    Args:
        residual_fns: ``{name: fn}`` with ``fn(x)`` taking a ``core.Tensor`` ``[m, dim]`` and
            returning ``[m]``, ``[m, 1]`` or ``[m, q]`` (components' magnitudes are summed), or
            one callable (named ``"residual"``).
        points: ``[N, dim]`` array or Tensor (e.g. a grid flattened row-major).
        batch_size: evaluate at most this many points per call.
        shape: reshape each map to this grid shape (``prod(shape) == N``).

    Returns:
        ``{name: float64 array [N]}`` (or of ``shape``).
    """
    if callable(residual_fns):
        residual_fns = {"residual": residual_fns}
    if isinstance(points, core.Tensor):
        dtype, pts = points.dtype, points.asnumpy()
    else:
        pts = np.asarray(points)
        dtype = core.float64 if pts.dtype == np.float64 else core.float32
    if pts.ndim != 2:
        raise ValueError(f"residual_map: points must have shape [N, dim], got {pts.shape}")
    n = len(pts)
    step = n if not batch_size else int(batch_size)
    maps = {}
    for name, fn in residual_fns.items():
        out = np.empty(n, dtype=np.float64)
        for start in range(0, n, max(step, 1)):
            chunk = core.tensor(pts[start : start + step], dtype=dtype)
            r = fn(chunk)
            r = np.abs(np.asarray(r.asnumpy() if isinstance(r, core.Tensor) else r, np.float64))
            m = len(chunk)
            if r.ndim == 0 or r.shape[0] != m or r.ndim > 2:
                raise ValueError(
                    f"residual_map: residual {name!r} returned shape {r.shape} for {m} points; "
                    f"expected [{m}], [{m}, 1] or [{m}, q]"
                )
            out[start : start + m] = r.reshape(m, -1).sum(axis=1)
        maps[name] = out.reshape(shape) if shape is not None else out
    return maps


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def plot_history(history, path, handoff=None, title=None):
    """Loss curves (log scale): the total and each term, and the error against the reference
    (right axis) when the history has one.

    Args:
        history: :class:`mindflow.pinn.Trainer`'s ``history`` dict.
        path: image file to write (the format follows the suffix).
        handoff: step where Adam handed over to L-BFGS (a dotted vertical line), or None.
        title: figure title.

    Returns:
        ``path``.
    """
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    steps = np.asarray(history["step"])
    if len(steps):
        ax.semilogy(steps, np.abs(history["total"]), "k-", lw=1.5, label="total")
        for name, values in history["terms"].items():
            ax.semilogy(steps, np.abs(values), lw=1.0, label=name)
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    lines, labels = ax.get_legend_handles_labels()
    if len(history.get("error", [])):
        ax2 = ax.twinx()
        ax2.semilogy(history["error_step"], history["error"], "r--o", ms=3, label="rel. L2 error")
        ax2.set_ylabel("relative L2 error", color="r")
        more_lines, more_labels = ax2.get_legend_handles_labels()
        lines, labels = lines + more_lines, labels + more_labels
    if handoff is not None:
        ax.axvline(handoff, color="gray", ls=":", lw=1)
    ax.legend(lines, labels, loc="upper right", fontsize=8)
    if title:
        ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_residual_map(x, y, maps, path):
    """Scatter plots (log color scale) of :func:`residual_map`'s maps over 2-D points.

    Args:
        x, y: ``[N]`` coordinates of the points.
        maps: ``{name: [N]}`` residual magnitudes.
        path: image file to write.
    """
    from matplotlib.colors import LogNorm

    plt = _pyplot()
    fig, axes = plt.subplots(1, len(maps), figsize=(4.5 * len(maps), 4), squeeze=False)
    for ax, (name, values) in zip(axes[0], maps.items(), strict=True):
        v = np.maximum(np.asarray(values, np.float64).reshape(-1), 1e-300)
        sc = ax.scatter(np.ravel(x), np.ravel(y), c=v, s=4, norm=LogNorm(), cmap="viridis")
        fig.colorbar(sc, ax=ax)
        ax.set_title(f"|{name}|")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
