"""Polynomial transforms for the spectral neural operator (MindFlow's ``mindflow/cell/sno_utils.py``).

SNO (Fanaskov & Oseledets 2023, "Spectral Neural Operators", arXiv 2205.10573) represents a
function on ``[-1, 1]`` by its values at the ``n`` Gauss points of an orthogonal polynomial
family ``{P_k}`` and moves between values and expansion coefficients with two matrices:

- analysis ``A [n_modes, n]``: ``c_k = sum_j w_j P_k(x_j) f(x_j) / sum_j w_j P_k(x_j)^2``
  (Gauss quadrature of the projection ``<f, P_k> / <P_k, P_k>``);
- synthesis ``S [n, n_modes]``: ``f(x_j) = sum_k c_k P_k(x_j)``.

An ``n``-point Gauss rule integrates polynomials of degree ``<= 2n - 1`` exactly, so for a
polynomial ``f`` of degree ``< n`` the coefficients are exact, ``S A f = f`` whenever the degree
is below ``n_modes``, and ``A S = I`` (``[n_modes, n_modes]``) for every ``n_modes <= n``.

For Chebyshev polynomials of the first kind (the default) the matrices are closed forms: with
``x_j = -cos((2j + 1) pi / (2n))`` (ascending, as scipy orders them), ``T_k(x_j) =
(-1)^k cos(k (2j + 1) pi / (2n))``, the weights are ``pi / n`` and ``A`` is the DCT-II matrix
``A_kj = (2 - delta_k0) / n * T_k(x_j)``. Legendre, Chebyshev of the second kind and Jacobi
``(alpha, beta)`` use scipy's Gauss rules and the same quadrature formula.

The matrices are constants (numpy), built once per resolution; the model applies them with core
ops. ``interpolate_1d_dataset`` / ``interpolate_2d_dataset`` move data from a uniform grid on
``[-1, 1]`` to the Gauss points (spline interpolation, scipy).
"""

import numpy as np
import scipy.special as scp
from scipy.interpolate import interp1d

__all__ = ["get_poly_transform", "interpolate_1d_dataset", "interpolate_2d_dataset", "poly_data"]

_POLY_TYPES = ("Chebyshev_t", "Chebyshev_u", "Legendre", "Jacobi")


def _jacobi_ab(alpha, where):
    if alpha is None or len(alpha) != 2:
        raise ValueError(
            f"{where}: poly_type='Jacobi' needs alpha=[alpha, beta] (two numbers > -1), got "
            f"{alpha!r}"
        )
    a, b = float(alpha[0]), float(alpha[1])
    if a <= -1.0 or b <= -1.0:
        raise ValueError(f"{where}: Jacobi parameters must be > -1, got alpha={alpha!r}")
    return a, b


def _check_poly_type(poly_type, where):
    if poly_type not in _POLY_TYPES:
        raise ValueError(f"{where}: poly_type must be one of {_POLY_TYPES}, got {poly_type!r}")


# MindFlow's table of Gauss points by family: ``poly_data[poly_type](n, alpha) -> [n]`` ascending
poly_data = {
    "Legendre": lambda n, alpha: scp.roots_legendre(n)[0],
    "Chebyshev_u": lambda n, alpha: scp.roots_chebyu(n)[0],
    "Chebyshev_t": lambda n, alpha: scp.roots_chebyt(n)[0],
    "Jacobi": lambda n, alpha: scp.roots_jacobi(n, *_jacobi_ab(alpha, "poly_data"))[0],
}


def _gauss_rule(n, poly_type, alpha):
    """Points ``[n]`` (ascending), weights ``[n]`` and ``P_k(x_j)`` as ``[n (k), n (j)]``."""
    if poly_type == "Chebyshev_t":
        j = np.arange(n)
        theta = (2 * j + 1) * np.pi / (2 * n)  # [n]
        points = -np.cos(theta)  # ascending; x_j = cos(pi - theta_j)
        weights = np.full(n, np.pi / n)
        k = np.arange(n)[:, None]
        sign = np.where(k % 2 == 0, 1.0, -1.0)  # T_k(-x) = (-1)^k T_k(x)
        values = sign * np.cos(k * theta[None, :])  # [n, n]: T_k(x_j)
        return points, weights, values
    if poly_type == "Chebyshev_u":
        points, weights = scp.roots_chebyu(n)
        evaluate = scp.eval_chebyu
    elif poly_type == "Legendre":
        points, weights = scp.roots_legendre(n)
        evaluate = scp.eval_legendre
    else:
        a, b = _jacobi_ab(alpha, "get_poly_transform")
        points, weights = scp.roots_jacobi(n, a, b)

        def evaluate(k, x):
            return scp.eval_jacobi(k, a, b, x)

    values = np.stack([evaluate(k, points) for k in range(n)])  # [n, n]: P_k(x_j)
    return points, weights, values


def get_poly_transform(n_spatial, n_modes, poly_type="Chebyshev_t", alpha=None):
    r"""Analysis and synthesis matrices of a polynomial transform on ``n_spatial`` Gauss points.

    Args:
        n_spatial: number of Gauss points (the spatial resolution), ``>= 1``.
        n_modes: number of expansion coefficients kept, ``1 <= n_modes <= n_spatial``.
        poly_type: ``'Chebyshev_t'`` (default), ``'Chebyshev_u'``, ``'Legendre'`` or ``'Jacobi'``.
        alpha: ``[alpha, beta]`` for ``'Jacobi'``.

    Returns:
        dict of float64 numpy arrays: ``'points' [n_spatial]`` (ascending, in ``(-1, 1)``),
        ``'weights' [n_spatial]``, ``'analysis' [n_modes, n_spatial]`` (values to
        coefficients), ``'synthesis' [n_spatial, n_modes]`` (coefficients to values).

    Raises:
        ValueError: ``n_modes`` larger than ``n_spatial`` (name both), a non-positive size, or an
            unknown ``poly_type``.
    """
    for name, v in (("n_spatial", n_spatial), ("n_modes", n_modes)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"get_poly_transform: {name} must be a positive int, got {v!r}")
    if n_modes > n_spatial:
        raise ValueError(
            f"get_poly_transform: n_modes={n_modes} exceeds n_spatial={n_spatial}; a resolution "
            f"of n points resolves at most n polynomial modes (lower n_modes or refine the grid)"
        )
    _check_poly_type(poly_type, "get_poly_transform")
    points, weights, values = _gauss_rule(int(n_spatial), poly_type, alpha)
    norms = values**2 @ weights  # [n]: <P_k, P_k> by quadrature (exact: degree 2k <= 2n - 2)
    analysis = (values * weights[None, :] / norms[:, None])[:n_modes]  # [n_modes, n]
    synthesis = values[:n_modes].T  # [n, n_modes]
    return {
        "weights": np.asarray(weights, dtype=np.float64),
        "points": np.asarray(points, dtype=np.float64),
        "analysis": np.ascontiguousarray(analysis, dtype=np.float64),
        "synthesis": np.ascontiguousarray(synthesis, dtype=np.float64),
    }


def _gauss_points(n, poly_type, alpha, where):
    _check_poly_type(poly_type, where)
    if poly_type == "Jacobi":
        _jacobi_ab(alpha, where)
    return poly_data[poly_type](n, alpha)


def interpolate_1d_dataset(data, poly_type="Chebyshev_t", kind="cubic", alpha=None):
    """Values on a uniform grid of ``[-1, 1]`` (end points included) interpolated to the Gauss
    points of ``poly_type``.

    Args:
        data: ``[n, length]`` array (samples on ``linspace(-1, 1, length)``).
        poly_type, alpha: as :func:`get_poly_transform`.
        kind: scipy ``interp1d`` kind (``'cubic'`` default).

    Returns:
        float32 ``[n, length]``: each sample at the ``length`` Gauss points.
    """
    data = np.asarray(data)
    if data.ndim != 2:
        raise ValueError(
            f"interpolate_1d_dataset: data must be [n, length], got shape {data.shape}"
        )
    res = data.shape[1]
    x_unif = np.linspace(-1.0, 1.0, res)
    x_poly = _gauss_points(res, poly_type, alpha, "interpolate_1d_dataset")
    return interp1d(x_unif, data, kind=kind, axis=1)(x_poly).astype(np.float32)


def interpolate_2d_dataset(data, poly_type="Chebyshev_t", kind="cubic", alpha=None):
    """Values on a uniform ``[-1, 1]^2`` grid interpolated to the tensor grid of Gauss points.

    The interpolant is the tensor product of 1-D splines of ``kind`` (along the height, then the
    width); MindFlow uses scipy's ``interp2d``, which newer scipy no longer has.

    Args:
        data: ``[n, height, width]`` array.
        poly_type, kind, alpha: as :func:`interpolate_1d_dataset`.

    Returns:
        float32 ``[n, height, width]``.
    """
    data = np.asarray(data)
    if data.ndim != 3:
        raise ValueError(
            f"interpolate_2d_dataset: data must be [n, height, width], got shape {data.shape}"
        )
    out = data
    for axis in (1, 2):
        res = data.shape[axis]
        x_unif = np.linspace(-1.0, 1.0, res)
        x_poly = _gauss_points(res, poly_type, alpha, "interpolate_2d_dataset")
        out = interp1d(x_unif, out, kind=kind, axis=axis)(x_poly)
    return out.astype(np.float32)
