"""Physical (inviscid) Euler flux and the primitive/sound-speed helpers the Riemann solvers share.

Everything here acts on core Tensors with core ops, so it is differentiable and jittable; the
state layout is MindFlow's: conservative ``[5, ...]`` = (rho, rho*u, rho*v, rho*w, E) and
primitive ``[5, ...]`` = (rho, u, v, w, p).
"""

from diffsci.core import ops

__all__ = ["gamma_of", "normal_and_tangents", "physical_flux", "primitive_of", "sound_speed"]


def gamma_of(material):
    """The heat ratio of `material` (MindFlow's ``IdealGas.gamma``; ``heat_ratio`` also accepted)."""
    gamma = getattr(material, "gamma", None)
    if gamma is None:
        gamma = getattr(material, "heat_ratio", None)
    if gamma is None:
        raise TypeError(f"material {type(material).__name__} has neither 'gamma' nor 'heat_ratio'")
    return gamma


def normal_and_tangents(axis):
    """Component indices (normal, tangent_1, tangent_2) of the velocity for a face normal to `axis`."""
    if axis not in (0, 1, 2):
        raise ValueError(f"axis must be 0, 1 or 2 (x, y, z), got {axis!r}")
    normal = axis + 1
    t1, t2 = (i for i in (1, 2, 3) if i != normal)
    return normal, t1, t2


def primitive_of(con_var, gamma):
    """Conservative ``[5, ...]`` -> primitive ``[5, ...]`` (rho, u, v, w, p) for an ideal gas."""
    rho = con_var[0]
    u, v, w = con_var[1] / rho, con_var[2] / rho, con_var[3] / rho
    p = (gamma - 1.0) * (con_var[4] - 0.5 * rho * (u * u + v * v + w * w))
    return ops.stack([rho, u, v, w, p], axis=0)


def sound_speed(pri_var, gamma):
    """Ideal-gas sound speed sqrt(gamma p / rho) of primitive ``[5, ...]`` -> ``[...]``."""
    return ops.sqrt(gamma * pri_var[4] / pri_var[0])


def physical_flux(con_var, axis, material, pri_var=None):
    """Inviscid Euler flux through a face normal to `axis` (0, 1, 2 = x, y, z).

    F_n(U) = (rho u_n, rho u_n u + p e_n, u_n (E + p)).

    Args:
        con_var: conservative variables ``[5, ...]``.
        axis: 0, 1 or 2.
        material: object with ``gamma`` (helper-1's IdealGas).
        pri_var: the primitive variables ``[5, ...]`` if already at hand.

    Returns:
        Tensor ``[5, ...]``.
    """
    normal, _, _ = normal_and_tangents(axis)
    if pri_var is None:
        pri_var = primitive_of(con_var, gamma_of(material))
    mass = con_var[normal]  # rho u_n
    u_n, p = pri_var[normal], pri_var[4]
    comps = [mass, mass * pri_var[1], mass * pri_var[2], mass * pri_var[3], u_n * (con_var[4] + p)]
    comps[normal] = comps[normal] + p
    return ops.stack(comps, axis=0)
