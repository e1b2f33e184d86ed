"""2D Darcy flow on the unit square, the FNO paper's data (Li et al., ICLR 2021, Section 5.2).

    -div(a(x) grad u(x)) = f(x),   x in (0, 1)^2,   u = 0 on the boundary

Discretised on the nodes ``x_i = i h, y_j = j h`` (``h = 1 / (n - 1)``, boundary included) with
the standard five-point finite-volume/finite-difference scheme for variable coefficients
(e.g. LeVeque, "Finite Difference Methods for ODEs and PDEs", 2007, Section 2.15 and 3.1)::

    -[a_{i+1/2,j} (u_{i+1,j} - u_{ij}) - a_{i-1/2,j} (u_{ij} - u_{i-1,j})] / h^2
    -[a_{i,j+1/2} (u_{i,j+1} - u_{ij}) - a_{i,j-1/2} (u_{ij} - u_{i,j-1})] / h^2 = f_{ij}

where each face coefficient is the harmonic mean of the two nodes it joins,
``a_{i+1/2,j} = 2 a_ij a_{i+1,j} / (a_ij + a_{i+1,j})`` (the flux-continuous choice for
piecewise-constant media; second order for smooth a). The matrix is symmetric positive
definite; it is assembled with ``scipy.sparse`` and solved with ``spsolve`` (SuperLU, minimum
degree ordering).

:func:`generate_darcy` thresholds the FNO paper's Gaussian random field N(0, (-Δ + 9 I)^-2)
(zero-flux cosine expansion on the nodes, as FNO's generator): ``a = 12`` where the field is
``>= 0`` and ``3`` elsewhere, with ``f = 1``. FNO solves on 421 x 421 nodes and trains on every
r-th node (r = 2, 3, 5 give 211, 141, 85).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ._common import check_count, sample_batches, save
from .grf import neumann_grf

__all__ = ["darcy_matrix", "generate_darcy", "solve_darcy"]


def _harmonic(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    return 2.0 * p * q / (p + q)


def darcy_matrix(a) -> sp.csr_matrix:
    """The five-point operator ``-div(a grad .)`` on the interior nodes, Dirichlet u = 0 outside.

    Args:
        a: the coefficient at the nodes, float64 ``[n, n]`` (``n >= 3``), every entry > 0 and
            finite; axis 0 is x, axis 1 is y.

    Returns:
        ``[(n-2)^2, (n-2)^2]`` CSR, symmetric positive definite; unknown ``(i, j)`` (interior
        node ``(i+1, j+1)``) is row ``i (n-2) + j``.
    """
    a = np.asarray(a, dtype=np.float64)
    if a.ndim != 2 or a.shape[0] != a.shape[1] or a.shape[0] < 3:
        raise ValueError(
            f"darcy_matrix: a must be a square [n, n] node array with n >= 3, got {a.shape}"
        )
    if not np.all(np.isfinite(a)) or not np.all(a > 0):
        raise ValueError(
            f"darcy_matrix: a must be finite and > 0 everywhere, got min {np.nanmin(a)}, "
            f"{np.count_nonzero(~np.isfinite(a))} non-finite entries"
        )
    n = a.shape[0]
    m = n - 2
    inv_h2 = float(n - 1) ** 2
    c = a[1:-1, 1:-1]  # interior nodes [m, m]
    faces = {  # face coefficient towards each neighbour, [m, m]
        (1, 0): _harmonic(c, a[2:, 1:-1]),
        (-1, 0): _harmonic(c, a[:-2, 1:-1]),
        (0, 1): _harmonic(c, a[1:-1, 2:]),
        (0, -1): _harmonic(c, a[1:-1, :-2]),
    }
    idx = np.arange(m * m).reshape(m, m)
    rows, cols, vals = [idx.ravel()], [idx.ravel()], [sum(faces.values()).ravel() * inv_h2]
    for (di, dj), coef in faces.items():
        # neighbours inside the interior couple; boundary neighbours hold u = 0 and drop out
        src = idx[max(0, -di) : m - max(0, di), max(0, -dj) : m - max(0, dj)]
        dst = idx[max(0, di) : m + min(0, di), max(0, dj) : m + min(0, dj)]
        w = coef[max(0, -di) : m - max(0, di), max(0, -dj) : m - max(0, dj)]
        rows.append(src.ravel())
        cols.append(dst.ravel())
        vals.append(-w.ravel() * inv_h2)
    return sp.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(m * m, m * m)
    )


def solve_darcy(a, f=1.0) -> np.ndarray:
    """Solve -div(a grad u) = f on [0, 1]^2 with u = 0 on the boundary (see the module doc).

    Args:
        a: coefficient at the nodes, float64 ``[n, n]``, > 0 (axis 0 is x).
        f: source, a scalar or float64 ``[n, n]`` at the nodes (boundary values unused).

    Returns:
        u at the nodes, float64 ``[n, n]``, zero on the boundary.
    """
    a = np.asarray(a, dtype=np.float64)
    matrix = darcy_matrix(a)
    n = a.shape[0]
    f = np.asarray(f, dtype=np.float64)
    if f.ndim == 0:
        rhs = np.full((n - 2) ** 2, float(f))
    elif f.shape == a.shape:
        rhs = f[1:-1, 1:-1].ravel()
    else:
        raise ValueError(
            f"solve_darcy: f must be a scalar or shaped like a {a.shape}, got {f.shape}"
        )
    u = np.zeros((n, n))
    # minimum degree on A^T + A suits the symmetric five-point matrix: at 421^2 nodes it
    # factors in 2/3 of the time of the default COLAMD ordering
    solution = spla.spsolve(matrix.tocsc(), rhs, permc_spec="MMD_AT_PLUS_A")
    u[1:-1, 1:-1] = solution.reshape(n - 2, n - 2)
    return u


def generate_darcy(
    n_samples: int,
    *,
    resolution: int = 421,
    subsample: int = 1,
    a_high: float = 12.0,
    a_low: float = 3.0,
    f: float = 1.0,
    scale: float = 1.0,
    tau: float = 3.0,
    alpha: float = 2.0,
    seed: int = 0,
    path=None,
    overwrite: bool = False,
    dtype=np.float64,
    progress: bool = True,
) -> dict[str, np.ndarray]:
    """Generate a Darcy data set as in the FNO paper (Li et al. 2021, Section 5.2).

    Each sample: ``psi ~ N(0, scale (-Δ + tau^2 I)^(-alpha))`` (zero-flux cosine expansion, mean
    mode zero) on the ``resolution x resolution`` nodes, ``a = a_high`` where ``psi >= 0`` and
    ``a_low`` elsewhere, ``u = solve_darcy(a, f)``; both kept on every ``subsample``-th node.

    Args:
        n_samples: number of samples N.
        resolution: nodes per side on [0, 1] (boundary included; FNO: 421).
        subsample: keep every subsample-th node; must divide ``resolution - 1``.
        a_high, a_low: the coefficient's two values (> 0). f: the constant source.
        scale, tau, alpha: the GRF that is thresholded (see ``grf.neumann_grf``).
        seed: sample i is drawn from ``SeedSequence(seed).spawn(N)[i]``: same seed, same data.
        path: where to write the PDEBench "darcy" file; None writes nothing.
        overwrite: replace an existing file. dtype: the dtype written (numerics are float64).
        progress: show a tqdm bar over the samples.

    Returns:
        ``{"tensor": u [N, 1, Nx, Ny], "nu": a [N, Nx, Ny], "x-coordinate": [Nx],
        "y-coordinate": [Ny]}`` float64 with ``Nx = Ny = (resolution - 1) / subsample + 1``.
    """
    n_samples = check_count("n_samples", n_samples)
    resolution = check_count("resolution", resolution, 3)
    subsample = check_count("subsample", subsample)
    if (resolution - 1) % subsample:
        raise ValueError(
            f"generate_darcy: subsample must divide resolution - 1 so that both boundaries are "
            f"kept, got resolution={resolution}, subsample={subsample}"
        )
    if not (a_high > 0 and a_low > 0):
        raise ValueError(f"generate_darcy: a_high and a_low must be > 0, got {a_high}, {a_low}")
    x = np.linspace(0.0, 1.0, resolution)[::subsample]
    k = x.size
    tensor = np.empty((n_samples, 1, k, k))
    coeff = np.empty((n_samples, k, k))
    for start, _stop, (rng,) in sample_batches(seed, n_samples, 1, "darcy", progress):
        psi = neumann_grf(rng, (resolution, resolution), scale=scale, tau=tau, alpha=alpha)[0]
        a = np.where(psi >= 0, a_high, a_low)
        u = solve_darcy(a, f)
        tensor[start, 0] = u[::subsample, ::subsample]
        coeff[start] = a[::subsample, ::subsample]
    return save(
        {"tensor": tensor, "nu": coeff, "x-coordinate": x, "y-coordinate": x.copy()},
        path,
        "darcy",
        overwrite,
        dtype,
        pde="darcy2d",
        equation="2D Darcy -div(a grad u) = f on (0, 1)^2, u = 0 on the boundary",
        parameters={
            "f": f,
            "a": f"{a_high} where psi >= 0, {a_low} elsewhere",
            "psi": f"GRF N(0, {scale} (-Laplacian + {tau}^2 I)^-{alpha}), zero-flux cosine basis, zero mean",
            "method": "five-point finite differences, harmonic-mean face coefficients, scipy spsolve",
        },
        grid={
            "resolution": resolution,
            "subsample": subsample,
            "nx": k,
            "ny": k,
            "nodes": "boundary included",
        },
        generator="generate_darcy",
        seed=seed,
    )
