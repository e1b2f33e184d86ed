"""Conversions between primitive and conservative variables; YAML config loading
(``load_yaml_config`` is ``mindflow.utils``'s, shared with the PINN examples)."""

from diffsci.core import ops

from ..utils.load_config import load_yaml_config as load_yaml_config

__all__ = ["cal_con_var", "cal_flux", "cal_pri_var", "load_yaml_config"]


def cal_con_var(pri_var, material):
    """Conservative from primitive variables.

    Args:
        pri_var (Tensor): ``[5, ...]`` = (rho, u, v, w, p).
        material (Material): supplies ``total_energy``.

    Returns:
        Tensor ``[5, ...]`` = (rho, rho u, rho v, rho w, E).
    """
    rho = pri_var[0]
    return ops.stack(
        [rho, rho * pri_var[1], rho * pri_var[2], rho * pri_var[3], material.total_energy(pri_var)],
        axis=0,
    )


def cal_pri_var(con_var, material):
    """Primitive from conservative variables, ``p = (gamma - 1)(E - rho |u|^2 / 2)``.

    Args:
        con_var (Tensor): ``[5, ...]`` = (rho, rho u, rho v, rho w, E).
        material (Material): supplies ``gamma``.

    Returns:
        Tensor ``[5, ...]`` = (rho, u, v, w, p).
    """
    rho = con_var[0]
    u, v, w = con_var[1] / rho, con_var[2] / rho, con_var[3] / rho
    kinetic = 0.5 * (con_var[1] * u + con_var[2] * v + con_var[3] * w)
    pressure = (material.gamma - 1) * (con_var[4] - kinetic)
    return ops.stack([rho, u, v, w, pressure], axis=0)


def cal_flux(con_var, pri_var, axis):
    """Physical Euler flux along ``axis`` (0/1/2), ``[5, ...]``."""
    un = pri_var[axis + 1]
    mom = [con_var[1] * un, con_var[2] * un, con_var[3] * un]
    mom[axis] = mom[axis] + pri_var[4]
    return ops.stack([con_var[axis + 1], *mom, un * (con_var[4] + pri_var[4])], axis=0)
