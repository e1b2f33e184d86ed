"""Verification helpers: errors of cell averages against exact solutions, observed orders,
relative L2 errors of fields.

Numpy float64 (results are reported, not differentiated).
"""

import numpy as np

__all__ = ["cell_averages", "convergence_order", "l1_error", "l2_error", "relative_l2"]

_GAUSS_POINTS = 4


def cell_averages(exact_fn, x_edges, n_sub=64):
    """Mean of ``exact_fn`` over each cell [x_edges[i], x_edges[i+1]].

    Each cell is split into `n_sub` equal sub-cells with a 4-point Gauss-Legendre rule on each,
    so smooth parts are integrated to round-off and a discontinuity inside a cell costs at most
    one sub-cell's share of its jump (1/n_sub).

    Args:
        exact_fn: vectorised callable, points ``[m]`` -> values ``[m]``.
        x_edges: cell edges ``[n + 1]``, increasing.
        n_sub: sub-cells per cell.

    Returns:
        float64 ``[n]``.
    """
    edges = np.asarray(x_edges, dtype=np.float64)
    if edges.ndim != 1 or edges.size < 2 or np.any(np.diff(edges) <= 0):
        raise ValueError(f"x_edges must be increasing, shape [n + 1]; got shape {edges.shape}")
    nodes, weights = np.polynomial.legendre.leggauss(_GAUSS_POINTS)
    h = np.diff(edges)
    # [n, n_sub, 1] sub-cell left edges and widths, quadrature points [n, n_sub, q]
    frac = np.arange(n_sub) / n_sub
    left = edges[:-1, None, None] + h[:, None, None] * frac[None, :, None]
    sub_h = (h / n_sub)[:, None, None]
    pts = left + 0.5 * sub_h * (nodes[None, None, :] + 1.0)
    values = np.asarray(exact_fn(pts.reshape(-1)), dtype=np.float64).reshape(pts.shape)
    return (values * weights).sum(axis=(1, 2)) * 0.5 / n_sub


def _diff(cell_values, exact_fn, x_edges, n_sub):
    values = np.asarray(cell_values, dtype=np.float64).reshape(-1)
    edges = np.asarray(x_edges, dtype=np.float64)
    if values.size != edges.size - 1:
        raise ValueError(
            f"{values.size} cell values need {values.size + 1} edges, got {edges.size}"
        )
    return values - cell_averages(exact_fn, edges, n_sub), np.diff(edges)


def l1_error(cell_averages_, exact_fn, x_edges, n_sub=64):
    """sum_i |u_i - mean of exact over cell i| * dx_i (the L1 norm of the cell-average error)."""
    d, h = _diff(cell_averages_, exact_fn, x_edges, n_sub)
    return float(np.sum(np.abs(d) * h))


def l2_error(cell_averages_, exact_fn, x_edges, n_sub=64):
    """sqrt(sum_i (u_i - mean of exact over cell i)^2 * dx_i)."""
    d, h = _diff(cell_averages_, exact_fn, x_edges, n_sub)
    return float(np.sqrt(np.sum(d * d * h)))


def convergence_order(ns, errors, pairwise=False):
    """Observed order p of errors ~ C n^-p over a refinement series.

    Args:
        ns: resolutions (cells), at least two, increasing.
        errors: the errors at those resolutions, all > 0.
        pairwise: return the orders between consecutive resolutions instead of the fit.

    Returns:
        The least-squares slope of -log(error) against log(n) (a float), or the
        ``[len(ns) - 1]`` pairwise orders.
    """
    n = np.asarray(ns, dtype=np.float64)
    e = np.asarray(errors, dtype=np.float64)
    if n.shape != e.shape or n.size < 2:
        raise ValueError(f"need matching series of >= 2 values, got {n.shape} and {e.shape}")
    if np.any(e <= 0) or np.any(n <= 0):
        raise ValueError("resolutions and errors must be > 0")
    if pairwise:
        return -np.diff(np.log(e)) / np.diff(np.log(n))
    slope = np.polyfit(np.log(n), np.log(e), 1)[0]
    return float(-slope)


def relative_l2(pred, ref, axis=None):
    """Relative L2 error ``||pred - ref||_2 / ||ref||_2`` (what MindFlow and DeepXDE report).

    Args:
        pred: prediction, any array-like (``core.Tensor`` included).
        ref: reference of the same shape.
        axis: None for one number over all entries; an axis (``0`` for ``[N, m]`` fields) for
            one error per remaining index (per output component).

    Returns:
        A float (``axis=None``) or a float64 array.
    """
    p = np.asarray(pred, dtype=np.float64)
    r = np.asarray(ref, dtype=np.float64)
    if p.shape != r.shape:
        raise ValueError(f"relative_l2: pred has shape {p.shape} but ref has shape {r.shape}")
    num = np.sqrt(np.sum((p - r) ** 2, axis=axis))
    den = np.sqrt(np.sum(r * r, axis=axis))
    if np.any(den == 0):
        raise ValueError("relative_l2: the reference is zero (relative error undefined)")
    out = num / den
    return float(out) if axis is None else out
