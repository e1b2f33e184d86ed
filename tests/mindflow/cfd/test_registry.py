"""Every scheme registry rejects an unknown name the same way (mindflow.cfd.registry.lookup)."""

import pytest

from diffsci.mindflow.cfd.boundary_conditions.boundary_manager import define_boundary
from diffsci.mindflow.cfd.integrator import define_integrator
from diffsci.mindflow.cfd.material import define_material
from diffsci.mindflow.cfd.space_solver.reconstructor import define_reconstructor
from diffsci.mindflow.cfd.space_solver.riemann_computer import define_riemann_computer

CASES = [
    (lambda: define_boundary({"type": "Bogus"}), "boundary type", "Neumann, Wall"),
    (lambda: define_integrator({"type": "Bogus"}), "integrator type", "RungeKutta3, Euler"),
    (lambda: define_material({"type": "Bogus"}), "material type", "IdealGas"),
    (lambda: define_reconstructor("Bogus"), "space_solver.reconstructor", "WENO3, WENO5"),
    (
        lambda: define_riemann_computer("Bogus"),
        "space_solver.riemann_computer",
        "HLL, HLLC, Roe, Rusanov",
    ),
]


@pytest.mark.parametrize(("call", "what", "accepted"), CASES)
def test_unknown_name_names_key_and_accepted_values(call, what, accepted):
    with pytest.raises(ValueError, match=rf"^{what}: unknown value 'Bogus'; accepted values: "):
        call()
    with pytest.raises(ValueError, match=accepted):
        call()


def test_unhashable_name_is_a_value_error():
    with pytest.raises(ValueError, match=r"unknown value \['HLL'\]"):
        define_riemann_computer(["HLL"])
