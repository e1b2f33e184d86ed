"""cfd.riemann_initial_state: the shock-tube state along any axis, in either dtype."""

import numpy as np
import pytest

from diffsci import core
from diffsci.mindflow import cfd

LEFT, RIGHT = (1.0, 0.75, 1.0), (0.125, -0.5, 0.1)
GAMMA = 1.4


def _mesh(axis, n=8):
    counts = [1, 1, 1]
    counts[axis] = n
    config = {"dim": axis + 1, "pad_size": 0}
    for name, c in zip("xyz", counts):
        config[f"n{name}"] = c
        config[f"{name}_range"] = [0.0, 1.0]
    return cfd.MeshInfo(config)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_left_right_states_along_axis(axis):
    material = cfd.IdealGas({"heat_ratio": GAMMA, "specific_gas_constant": 1.0})
    con = cfd.riemann_initial_state(_mesh(axis), material, LEFT, RIGHT, 0.3, axis=axis)
    assert con.shape == (5, *(8 if a == axis else 1 for a in range(3)))
    pri = cfd.cal_pri_var(con, material).asnumpy().reshape(5, 8)
    x = (np.arange(8) + 0.5) / 8
    for k, j in ((0, 0), (1 + axis, 1), (4, 2)):
        np.testing.assert_allclose(pri[k], np.where(x < 0.3, LEFT[j], RIGHT[j]), rtol=1e-14)
    for k in {1, 2, 3} - {1 + axis}:
        np.testing.assert_array_equal(pri[k], 0.0)
    energy = RIGHT[2] / (GAMMA - 1) + 0.5 * RIGHT[0] * RIGHT[1] ** 2
    np.testing.assert_allclose(con.asnumpy().reshape(5, 8)[4, -1], energy, rtol=1e-14)


def test_float32_and_bad_axis():
    material = cfd.IdealGas({"heat_ratio": GAMMA, "specific_gas_constant": 1.0})
    mesh = _mesh(0)
    con = cfd.riemann_initial_state(mesh, material, LEFT, RIGHT, 0.5, dtype=core.float32)
    assert con.dtype == core.float32
    with pytest.raises(ValueError, match="axis must be 0, 1 or 2"):
        cfd.riemann_initial_state(mesh, material, LEFT, RIGHT, 0.5, axis=3)
