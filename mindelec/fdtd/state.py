"""The field state: a registered dataclass pytree that flows through jit, grad and scan.

``FieldState`` holds the six Yee components (``None`` for those the grid's dimension or mode
lacks; shapes are the grid's shape, see ``grid``), the CPML auxiliary convolutions ``psi``
and a free ``aux`` dict in which sources, monitors and dispersive materials keep state of their
own (lumped-element currents, ADE polarisation currents...). Between two steps the state holds
``E^n`` and ``H^{n-1/2}``.
"""

from __future__ import annotations

import dataclasses

from diffsci import core

__all__ = ["FieldState"]

_NAMES = ("ex", "ey", "ez", "hx", "hy", "hz")


@core.tree.register_dataclass
@dataclasses.dataclass
class FieldState:
    """E (V/m) and H (A/m) components, CPML ``psi`` terms and auxiliary state.

    Attributes:
        ex, ey, ez: electric field components, ``grid.shape`` each, or None.
        hx, hy, hz: magnetic field components, ``grid.shape`` each, or None.
        psi: CPML convolution terms keyed ``"<component>_<axis>"`` (for example ``"ez_x"``:
            the term added to ``d/dx`` in the ``ez`` update), each on the PML slabs of its
            axis only (``grid.shape`` with ``low + high`` cells along the axis, low slab first;
            ``yee.psi_shapes``); A/m^2 for E updates, V/m^2 for H updates.
        aux: anything else, keyed by its owner's name; every value a Tensor or a pytree.
    """

    ex: core.Tensor | None = None
    ey: core.Tensor | None = None
    ez: core.Tensor | None = None
    hx: core.Tensor | None = None
    hy: core.Tensor | None = None
    hz: core.Tensor | None = None
    psi: dict = dataclasses.field(default_factory=dict)
    aux: dict = dataclasses.field(default_factory=dict)

    @classmethod
    def zeros(cls, grid, psi_shapes=None) -> FieldState:
        """All components of ``grid`` (and the ``psi`` terms, ``{key: shape}``) set to zero."""
        fields = {name: grid.zeros() for name in grid.components}
        psi = {
            key: core.ops.zeros(shape, dtype=grid.dtype)
            for key, shape in (psi_shapes or {}).items()
        }
        return cls(**fields, psi=psi)

    def replace(self, **changes) -> FieldState:
        """A copy with the given fields replaced (``dataclasses.replace``)."""
        return dataclasses.replace(self, **changes)

    def get(self, component: str) -> core.Tensor:
        """The named component; ``KeyError`` naming the present ones if it is absent."""
        value = getattr(self, component, None) if component in _NAMES else None
        if value is None:
            present = [n for n in _NAMES if getattr(self, n) is not None]
            raise KeyError(f"field component {component!r} is not in this state; it has {present}")
        return value

    def components(self) -> dict[str, core.Tensor]:
        """The present components by name, E first."""
        return {n: getattr(self, n) for n in _NAMES if getattr(self, n) is not None}
