"""Positivity-preserving limiter for reconstructed face values (Zhang & Shu 2010).

Each face value U_f reconstructed from cell i is pulled toward that cell's average U_i,
U_f <- U_i + theta (U_f - U_i), with the largest theta in [0, 1] for which density and pressure
at U_f stay >= eps (Zhang & Shu, J. Comput. Phys. 229 (2010) 8918, sec. 3, in the simplified
form of Wang, Zhang, Shu & Ning 2012):

- density is linear along the segment: theta_rho = (rho_i - eps) / (rho_i - rho_f) where
  rho_f < eps;
- pressure is a concave function of U for rho > 0, so p(U_i + t (U_f - U_i)) >=
  (1 - t) p_i + t p_f, and theta_p = (p_i - eps) / (p_i - p_f) where p_f < eps guarantees
  p >= eps (applied to the density-limited value).

With cell averages that are admissible, face values that satisfy the bounds are returned
unchanged (theta = 1, the identity), and a positivity-preserving flux (HLLC, HLL, Rusanov)
under the matching CFL restriction then keeps the next cell averages admissible (Hu, Adams &
Shu 2013 discuss the flux-level alternative for the same guarantee).
"""

from core import ops

from .flux import gamma_of

__all__ = ["limit_positivity"]


def _pressure(con, gamma):
    """(gamma - 1)(E - |m|^2 / (2 rho)), for ``[5, ...]`` -> ``[...]``."""
    m2 = con[1] * con[1] + con[2] * con[2] + con[3] * con[3]
    return (gamma - 1.0) * (con[4] - 0.5 * m2 / con[0])


def _theta(mean, value, eps):
    """Largest theta in [0, 1] with mean + theta (value - mean) >= eps (mean >= eps assumed)."""
    gap = mean - value
    bad = value < eps
    safe = ops.where(bad, gap, ops.ones_like(gap))  # gap > 0 wherever value < eps <= mean
    theta = ops.where(bad, (mean - eps) / safe, ops.ones_like(gap))
    return ops.clip(theta, 0.0, 1.0)


def _limit(mean, face, gamma, eps):
    theta = _theta(mean[0], face[0], eps)
    face = mean + theta * (face - mean)
    p_mean = _pressure(mean, gamma)
    p_face = _pressure(face, gamma)
    theta = _theta(p_mean, p_face, eps)
    return mean + theta * (face - mean)


def _slab(x, axis_dim, start, length):
    """x[..., start:start + length, ...] along tensor dimension `axis_dim`."""
    index = [slice(None)] * len(x.shape)
    index[axis_dim] = slice(start, start + length)
    return x[tuple(index)]


def limit_positivity(con_var_cells, con_left, con_right, axis, material, eps=1e-13):
    """Limit reconstructed face values so that density and pressure are >= `eps`.

    Args:
        con_var_cells: cell averages ``[5, nx', ny', nz']``, padded with ``pad >= 1`` ghost cells
            on each side of `axis` (the padded state the faces were reconstructed from; other
            axes may be padded too, they are cropped to the faces' extent).
        con_left: face values from the cell on the left of each face ``[5, ...]`` with
            n + 1 faces along `axis`.
        con_right: face values from the cell on the right of each face, same shape.
        axis: 0, 1, 2.
        material: the fluid (``gamma``).
        eps: the floor for density and pressure.

    Returns:
        (con_left, con_right) limited, same shapes.
    """
    gamma = gamma_of(material)
    dim = axis + 1
    faces = tuple(con_left.shape)
    cells = tuple(con_var_cells.shape)
    if tuple(con_right.shape) != faces:
        raise ValueError(f"con_left {faces} and con_right {tuple(con_right.shape)} differ")
    extra = cells[dim] - (faces[dim] - 1)
    if extra < 2 or extra % 2:
        raise ValueError(
            f"con_var_cells {cells} must carry the same number (>= 1) of ghost cells on each side "
            f"of axis {axis} around the {faces[dim] - 1} cells of faces {faces}"
        )
    pad = extra // 2
    for d in range(1, len(faces)):
        if d != dim and cells[d] != faces[d]:
            off = cells[d] - faces[d]
            if off < 0 or off % 2:
                raise ValueError(f"con_var_cells {cells} cannot be cropped to faces {faces}")
            con_var_cells = _slab(con_var_cells, d, off // 2, faces[d])
    mean_left = _slab(con_var_cells, dim, pad - 1, faces[dim])  # cell left of each face
    mean_right = _slab(con_var_cells, dim, pad, faces[dim])  # cell right of each face
    return _limit(mean_left, con_left, gamma, eps), _limit(mean_right, con_right, gamma, eps)
