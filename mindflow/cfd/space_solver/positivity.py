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

The face-value limiter alone does not keep the cell averages admissible with characteristic
WENO5 on Toro's 123 problem (density < 0 near x = 0.5 at step 7, N=100, HLLC, CFL 0.5).
`limit_flux_positivity` is the flux-level limiter of Hu, Adams & Shu (J. Comput. Phys. 242
(2013) 169): each face flux is blended with the first-order Lax-Friedrichs flux,
F = theta F_high + (1 - theta) F_LF, theta per face the largest value in [0, 1] for which the
split updates of both adjacent cells stay admissible:

- along one axis, U_i^{n+1} = 1/2 (U_i + 2 lam F_{i-1/2}) + 1/2 (U_i - 2 lam F_{i+1/2}) with
  lam = dt / dx; each half uses one face, so face i+1/2 is limited so that
  U_i - 2 lam F and U_{i+1} + 2 lam F are admissible (density and pressure >= eps);
- we take 2 lam = 1 / alpha with alpha = max over the cells next to the faces of |u_n| + c
  (the largest lam for which the LF halves U_i -/+ F_LF / alpha are admissible); the halves
  are then admissible for every lam <= 1 / (2 alpha) too (U - 2 lam F is a convex combination of
  U and U - F / alpha), i.e. for forward Euler (hence every SSP-RK3 stage) with
  dt (|u| + c) / dx <= 1/2: the 1D CFL <= 0.5 bound, provided the stage's wave speeds do not
  exceed those the time step was computed from. In several dimensions the split weights
  lam_d alpha_d / sum_k lam_k alpha_k give the same bound with sum_d dt alpha_d / dx_d <= 1/2;
- density is linear in theta; pressure is concave in U, so p(U_LF + t (U_H - U_LF)) >=
  (1 - t) p_LF + t p_H and the bisection-free bound t = (p_LF - eps) / (p_LF - p_H) is safe
  (a conservative stand-in for the paper's quadratic root).

Where the high-order flux is admissible theta = 1 and the flux is returned bit for bit
(F = F_high - (1 - theta) (F_high - F_LF)); theta is computed under stop_gradient, so the
gradient is d F_high where theta = 1 and theta d F_high + (1 - theta) d F_LF elsewhere.
"""

from diffsci.core import ops

from .flux import gamma_of, physical_flux, primitive_of

__all__ = ["limit_flux_positivity", "limit_positivity"]


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
    faces = tuple(con_left.shape)
    if tuple(con_right.shape) != faces:
        raise ValueError(f"con_left {faces} and con_right {tuple(con_right.shape)} differ")
    mean_left, mean_right = _neighbours(con_var_cells, faces, axis)
    return _limit(mean_left, con_left, gamma, eps), _limit(mean_right, con_right, gamma, eps)


def _neighbours(con_var_cells, faces, axis):
    """Cell averages left and right of each face, cropped to the faces' extent."""
    dim = axis + 1
    cells = tuple(con_var_cells.shape)
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
    return mean_left, mean_right


def _half_theta(base, sign, f_lf, f_high, inv_alpha, gamma, eps):
    """Largest theta in [0, 1] with base + sign (F_LF + theta (F_H - F_LF)) / alpha admissible."""
    u_lf = base + sign * inv_alpha * f_lf
    u_h = base + sign * inv_alpha * f_high
    # density: linear in theta; the floor never exceeds the LF value (Hu et al.'s eps choice)
    floor = ops.minimum(u_lf[0], eps)
    theta = _theta(u_lf[0], u_h[0], floor)
    u_t = u_lf + theta * (u_h - u_lf)
    p_lf = _pressure(u_lf, gamma)
    floor = ops.minimum(p_lf, eps)
    return theta * _theta(p_lf, _pressure(u_t, gamma), floor)


def limit_flux_positivity(con_var_cells, flux_high, axis, material, eps=1e-13):
    """Blend face fluxes with Lax-Friedrichs so the split cell updates stay admissible.

    Hu, Adams & Shu (2013); see the module docstring for the bound and the time-step condition.

    Args:
        con_var_cells: admissible cell averages ``[5, nx', ny', nz']``, padded with ``pad >= 1``
            ghost cells on each side of `axis` (other axes are cropped to the faces' extent).
        flux_high: the high-order face fluxes ``[5, ...]``, n + 1 faces along `axis`.
        axis: 0, 1, 2.
        material: the fluid (``gamma``).
        eps: the floor for density and pressure (lowered to the LF value where that is smaller).

    Returns:
        The limited fluxes, same shape; ``flux_high`` itself (bit for bit) where admissible.
    """
    gamma = gamma_of(material)
    u_l, u_r = _neighbours(con_var_cells, tuple(flux_high.shape), axis)
    normal = axis + 1
    pri_l, pri_r = primitive_of(u_l, gamma), primitive_of(u_r, gamma)
    speed_l = ops.abs(pri_l[normal]) + ops.sqrt(gamma * pri_l[4] / pri_l[0])
    speed_r = ops.abs(pri_r[normal]) + ops.sqrt(gamma * pri_r[4] / pri_r[0])
    alpha = ops.max(ops.maximum(speed_l, speed_r))
    f_lf = 0.5 * (
        physical_flux(u_l, axis, material, pri_l) + physical_flux(u_r, axis, material, pri_r)
    ) - 0.5 * alpha * (u_r - u_l)
    finite = ops.all(ops.isfinite(flux_high), axis=0)
    f_high = ops.where(finite, flux_high, f_lf)
    c_l, c_r, lf, hi = (ops.stop_gradient(x) for x in (u_l, u_r, f_lf, f_high))
    inv_alpha = 1.0 / ops.stop_gradient(alpha)
    theta = ops.minimum(
        _half_theta(c_l, -1.0, lf, hi, inv_alpha, gamma, eps),
        _half_theta(c_r, 1.0, lf, hi, inv_alpha, gamma, eps),
    )
    theta = ops.where(finite, theta, ops.zeros_like(theta))
    return f_high - (1.0 - theta) * (f_high - f_lf)
