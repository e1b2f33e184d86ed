"""Exact solution of the Riemann problem for the 1-D Euler equations (Toro ch. 4), vacuum-aware.

Numpy float64 only: this is the reference the solver is verified against, not part of the
differentiable state path.
"""

import numpy as np

__all__ = ["exact_riemann", "star_state"]


def _pressure_function(p, rho_k, p_k, c_k, gamma):
    """Toro's f_K(p) and its derivative (eqs. 4.6-4.7, 4.37)."""
    if p > p_k:  # shock
        a_k = 2.0 / ((gamma + 1.0) * rho_k)
        b_k = (gamma - 1.0) / (gamma + 1.0) * p_k
        root = np.sqrt(a_k / (b_k + p))
        return (p - p_k) * root, root * (1.0 - 0.5 * (p - p_k) / (b_k + p))
    # rarefaction
    ratio = p / p_k
    f = 2.0 * c_k / (gamma - 1.0) * (ratio ** ((gamma - 1.0) / (2.0 * gamma)) - 1.0)
    df = ratio ** (-(gamma + 1.0) / (2.0 * gamma)) / (rho_k * c_k)
    return f, df


def star_state(left, right, gamma, tol=1e-14, max_iter=100):
    """Star-region pressure and velocity (p*, u*) by Newton's method (Toro sec. 4.3).

    Args:
        left, right: (rho, u, p) of each side, both with rho > 0 and p >= 0.
        gamma: heat ratio.

    Returns:
        (p_star, u_star) as floats.

    Raises:
        ValueError: the data generate vacuum (the pressure positivity condition, Toro 4.40, fails);
            :func:`exact_riemann` handles that case.
    """
    rho_l, u_l, p_l = map(float, left)
    rho_r, u_r, p_r = map(float, right)
    c_l, c_r = np.sqrt(gamma * p_l / rho_l), np.sqrt(gamma * p_r / rho_r)
    du = u_r - u_l
    if 2.0 * (c_l + c_r) / (gamma - 1.0) <= du:
        raise ValueError(f"left={left}, right={right}: the data generate vacuum (Toro 4.40)")
    # Initial guess: PVRS, falling back to the two-rarefaction estimate (Toro sec. 4.3.2).
    p_pv = 0.5 * (p_l + p_r) - 0.125 * du * (rho_l + rho_r) * (c_l + c_r)
    z = (gamma - 1.0) / (2.0 * gamma)
    p_tr = ((c_l + c_r - 0.5 * (gamma - 1.0) * du) / (c_l / p_l**z + c_r / p_r**z)) ** (1.0 / z)
    p = max(p_pv, 1e-8 * min(p_l, p_r)) if p_pv > 0 else p_tr
    for _ in range(max_iter):
        f_l, df_l = _pressure_function(p, rho_l, p_l, c_l, gamma)
        f_r, df_r = _pressure_function(p, rho_r, p_r, c_r, gamma)
        p_new = p - (f_l + f_r + du) / (df_l + df_r)
        if p_new <= 0.0:
            p_new = 0.5 * p  # Newton overshot below zero: halve instead (stays on the root's side)
        change = 2.0 * abs(p_new - p) / (p_new + p)
        p = p_new
        if change < tol:
            break
    f_l, _ = _pressure_function(p, rho_l, p_l, c_l, gamma)
    f_r, _ = _pressure_function(p, rho_r, p_r, c_r, gamma)
    return p, 0.5 * (u_l + u_r) + 0.5 * (f_r - f_l)


def _fan(side, s, rho_k, u_k, p_k, c_k, gamma):
    """State inside a rarefaction fan at speed s = x/t (Toro 4.56 left, 4.63 right)."""
    sign = 1.0 if side == "left" else -1.0
    g1 = gamma - 1.0
    c = 2.0 / (gamma + 1.0) + sign * g1 / ((gamma + 1.0) * c_k) * (u_k - s)
    rho = rho_k * c ** (2.0 / g1)
    u = 2.0 / (gamma + 1.0) * (sign * c_k + 0.5 * g1 * u_k + s)
    p = p_k * c ** (2.0 * gamma / g1)
    return rho, u, p


def _sample_side(side, s, state, p_star, u_star, gamma):
    """Sample the wave pattern on one side of the contact (Toro sec. 4.5, fig. 4.14)."""
    rho_k, u_k, p_k = state
    c_k = np.sqrt(gamma * p_k / rho_k)
    sign = 1.0 if side == "left" else -1.0  # left waves move with u - c, right with u + c
    g1, g2 = gamma - 1.0, gamma + 1.0
    out = np.empty((3, s.size))
    if p_star > p_k:  # shock
        s_shock = u_k - sign * c_k * np.sqrt(g2 / (2 * gamma) * p_star / p_k + g1 / (2 * gamma))
        ratio = p_star / p_k
        rho_star = rho_k * (ratio + g1 / g2) / (g1 / g2 * ratio + 1.0)
        before = sign * (s - s_shock) < 0  # still in the unperturbed state
        out[:, before] = np.array([[rho_k], [u_k], [p_k]])
        out[:, ~before] = np.array([[rho_star], [u_star], [p_star]])
        return out
    # rarefaction
    c_star = c_k * (p_star / p_k) ** (g1 / (2 * gamma))
    s_head = u_k - sign * c_k
    s_tail = u_star - sign * c_star
    head = sign * (s - s_head) < 0
    tail = sign * (s - s_tail) >= 0
    fan = ~head & ~tail
    out[:, head] = np.array([[rho_k], [u_k], [p_k]])
    out[:, tail] = np.array([[rho_k * (p_star / p_k) ** (1.0 / gamma)], [u_star], [p_star]])
    out[:, fan] = np.stack(_fan(side, s[fan], rho_k, u_k, p_k, c_k, gamma))
    return out


def _vacuum(s, left, right, gamma):
    """Solutions with vacuum (Toro sec. 4.6): left or right vacuum state, or vacuum generation."""
    out = np.zeros((3, s.size))
    g1 = gamma - 1.0
    left_vac, right_vac = left[0] <= 0.0, right[0] <= 0.0
    if not left_vac:
        rho_l, u_l, p_l = left
        c_l = np.sqrt(gamma * p_l / rho_l)
        s_head_l, s_tail_l = u_l - c_l, u_l + 2.0 * c_l / g1  # tail = front into the vacuum
    if not right_vac:
        rho_r, u_r, p_r = right
        c_r = np.sqrt(gamma * p_r / rho_r)
        s_head_r, s_tail_r = u_r + c_r, u_r - 2.0 * c_r / g1
    if not left_vac:
        limit = s_tail_l if right_vac else min(s_tail_l, s_tail_r)
        head = s <= s_head_l
        fan = (s > s_head_l) & (s < limit)
        out[:, head] = np.array([[rho_l], [u_l], [p_l]])
        out[:, fan] = np.stack(_fan("left", s[fan], rho_l, u_l, p_l, c_l, gamma))
    if not right_vac:
        limit = s_tail_r if left_vac else max(s_tail_l, s_tail_r)
        head = s >= s_head_r
        fan = (s < s_head_r) & (s > limit)
        out[:, head] = np.array([[rho_r], [u_r], [p_r]])
        out[:, fan] = np.stack(_fan("right", s[fan], rho_r, u_r, p_r, c_r, gamma))
    return out


def exact_riemann(left, right, gamma, x, t, x0=0.0):
    """Exact solution of the Euler Riemann problem sampled at points `x` and time `t`.

    Implements Toro, *Riemann Solvers and Numerical Methods for Fluid Dynamics*, ch. 4: Newton
    iteration for p* (sec. 4.3), sampling (sec. 4.5), and the vacuum cases (sec. 4.6): a left
    or right vacuum state (rho = 0 on that side) and vacuum generated between two rarefactions
    (2 (c_L + c_R) / (gamma - 1) <= u_R - u_L). In vacuum rho = u = p = 0.

    Args:
        left, right: (rho, u, p) on each side of the initial discontinuity (rho = 0: vacuum).
        gamma: heat ratio.
        x: sample points, any shape.
        t: time >= 0 (t = 0 returns the initial data).
        x0: position of the initial discontinuity.

    Returns:
        (rho, u, p): three float64 arrays shaped like `x`.
    """
    left = tuple(float(v) for v in left)
    right = tuple(float(v) for v in right)
    for name, st in (("left", left), ("right", right)):
        if st[0] < 0.0 or st[2] < 0.0 or (st[0] > 0.0 and st[2] <= 0.0):
            raise ValueError(f"{name} state {st}: need rho >= 0 and p > 0 where rho > 0")
    if left[0] == 0.0 and right[0] == 0.0:
        raise ValueError("both states are vacuum")
    x = np.asarray(x, dtype=np.float64)
    flat = x.reshape(-1)
    if t < 0:
        raise ValueError(f"t must be >= 0, got {t}")
    if t == 0:
        out = np.where(flat[None, :] < x0, np.array(left)[:, None], np.array(right)[:, None])
        if left[0] == 0.0:
            out[:, flat < x0] = 0.0
        return tuple(out[k].reshape(x.shape) for k in range(3))
    s = (flat - x0) / t
    c_l = np.sqrt(gamma * left[2] / left[0]) if left[0] > 0 else 0.0
    c_r = np.sqrt(gamma * right[2] / right[0]) if right[0] > 0 else 0.0
    vacuum = (
        left[0] == 0.0 or right[0] == 0.0 or 2.0 * (c_l + c_r) / (gamma - 1.0) <= right[1] - left[1]
    )
    if vacuum:
        out = _vacuum(s, left, right, gamma)
    else:
        p_star, u_star = star_state(left, right, gamma)
        out = np.empty((3, s.size))
        on_left = s <= u_star
        out[:, on_left] = _sample_side("left", s[on_left], left, p_star, u_star, gamma)
        out[:, ~on_left] = _sample_side("right", s[~on_left], right, p_star, u_star, gamma)
    return tuple(out[k].reshape(x.shape) for k in range(3))
