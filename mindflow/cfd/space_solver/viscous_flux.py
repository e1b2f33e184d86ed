"""Viscous (Navier-Stokes) face flux, MindFlow's ``ViscousFlux`` with fourth-order stencils.

Compared with MindFlow's: the cross derivatives use the fourth-order *cell-centred* stencil
(v_{-2} - 8 v_{-1} + 8 v_{+1} - v_{+2}) / (12 dx_i) with the cell size of the derivative's own
axis (MindFlow applies the face stencil and the face axis' cell size there), and Fourier heat
conduction k dT/dn is added to the energy flux (MindFlow omits it; it is zero for
``thermal_conductivity: 0``, so MindFlow's configs give the same flux).
"""

from diffsci.core import ops

from .flux import gamma_of, primitive_of

__all__ = ["ViscousFlux"]

_ACCEPTED = {
    "interpolator": ("CentralFourthOrderInterpolator",),
    "face_derivative_computer": ("FourthOrderFaceDerivativeComputer",),
    "central_derivative_computer": ("FourthOrderCentralDerivativeComputer",),
}
_DEFAULTS = {key: names[0] for key, names in _ACCEPTED.items()}


def _shift(var, dim, start, length):
    return ops.slice_axis(var, dim, start, start + length)


class ViscousFlux:
    """Viscous flux through the faces normal to one axis.

    F_v = (0, tau_n1, tau_n2, tau_n3, tau_n . u + k dT/dn), tau = mu (grad u + grad u^T)
    + (mu_b - 2/3 mu) (div u) I, evaluated at the faces with fourth-order stencils:
    face values (-v_{-2} + 9 v_{-1} + 9 v_{+1} - v_{+2}) / 16, normal derivatives
    (v_{-2} - 27 v_{-1} + 27 v_{+1} - v_{+2}) / (24 dx), tangential derivatives at cell centres
    (fourth order) interpolated to the faces. The space solver subtracts it from the
    convective flux.

    Args:
        material: the fluid (``dynamic_viscosity(pri_var)``, ``bulk_viscosity``,
            ``thermal_conductivity(pri_var)``, ``temperature(pri_var)``, ``gamma``).
        mesh_info: the grid (``pad`` >= 2, ``active_axis``, ``number_of_cells``, ``cell_sizes``).
        config: the ``viscous_flux`` section (MindFlow's keys; each has one accepted value).
    """

    def __init__(self, material, mesh_info, config=None):
        config = dict(config or {})
        for key, value in config.items():
            if key not in _ACCEPTED:
                raise ValueError(
                    f"space_solver.viscous_flux: unknown key {key!r}; accepted keys: "
                    f"{', '.join(_ACCEPTED)}"
                )
            if value not in _ACCEPTED[key]:
                raise ValueError(
                    f"space_solver.viscous_flux.{key}: unknown value {value!r}; accepted values: "
                    f"{', '.join(_ACCEPTED[key])}"
                )
        self.config = {**_DEFAULTS, **config}
        if mesh_info.pad < 2:
            raise ValueError(
                f"mesh pad_size = {mesh_info.pad}: the fourth-order viscous stencils need >= 2"
            )
        self.material = material
        self.mesh_info = mesh_info
        self.pad = mesh_info.pad
        self.active_axis = list(mesh_info.active_axis)
        self.number_of_cells = list(mesh_info.number_of_cells)
        self.cell_sizes = list(mesh_info.cell_sizes)

    def _interior(self, var, skip):
        """Drop the ghost cells of every active axis except those in `skip`."""
        for axis in self.active_axis:
            if axis not in skip:
                var = _shift(var, axis + 1, self.pad, self.number_of_cells[axis])
        return var

    def _face_stencil(self, var, axis, weights, scale):
        """sum_k weights[k] var[cell j - 2 + k] * scale at the n + 1 faces along `axis`."""
        dim, n = axis + 1, self.number_of_cells[axis]
        out = None
        for k, wk in enumerate(weights):
            term = wk * _shift(var, dim, self.pad - 2 + k, n + 1)
            out = term if out is None else out + term
        return out * scale

    def _interpolate(self, var, axis):
        return self._face_stencil(var, axis, (-1.0, 9.0, 9.0, -1.0), 1.0 / 16.0)

    def _face_derivative(self, var, axis):
        h = self.cell_sizes[axis]
        return self._face_stencil(var, axis, (1.0, -27.0, 27.0, -1.0), 1.0 / (24.0 * h))

    def _central_derivative(self, var, axis):
        dim, n, h = axis + 1, self.number_of_cells[axis], self.cell_sizes[axis]
        b2, b1 = _shift(var, dim, self.pad - 2, n), _shift(var, dim, self.pad - 1, n)
        f1, f2 = _shift(var, dim, self.pad + 1, n), _shift(var, dim, self.pad + 2, n)
        return (b2 - 8.0 * b1 + 8.0 * f1 - f2) / (12.0 * h)

    def compute_flux(self, con_var, axis):
        """Viscous flux at the faces normal to `axis`.

        Args:
            con_var: padded conservative variables ``[5, nx + 2 pad, ...]`` (ghost cells on every
                active axis, corners included for the cross derivatives).
            axis: 0, 1, 2.

        Returns:
            Tensor ``[5, ...]`` with n + 1 faces along `axis` and the interior cells elsewhere.
        """
        material = self.material
        pri_var = primitive_of(con_var, gamma_of(material))
        velocity = pri_var[1:4]  # [3, padded...]
        face_pri = self._interior(self._interpolate(pri_var, axis), skip=(axis,))
        face_velocity = face_pri[1:4]
        # grad[j][k] = d u_k / d x_j at the faces, for active j
        grad = {}
        for j in self.active_axis:
            if j == axis:
                grad[j] = self._interior(self._face_derivative(velocity, axis), skip=(axis,))
            else:
                cross = self._central_derivative(velocity, j)  # interior along j
                grad[j] = self._interior(self._interpolate(cross, axis), skip=(axis, j))
        mu = material.dynamic_viscosity(face_pri)
        lam = material.bulk_viscosity - 2.0 / 3.0 * mu
        divergence = None
        for j in self.active_axis:
            term = grad[j][j]
            divergence = term if divergence is None else divergence + term
        zero = ops.zeros_like(face_pri[0])
        stress = []
        for k in range(3):
            if k in self.active_axis:
                tau = mu * (grad[k][axis] + grad[axis][k])
                if k == axis:
                    tau = tau + lam * divergence
            else:
                # an inactive direction has no gradient, but u_k may vary along active ones
                tau = mu * grad[axis][k]
            stress.append(tau)
        energy = stress[0] * face_velocity[0] + stress[1] * face_velocity[1]
        energy = energy + stress[2] * face_velocity[2]
        conductivity = getattr(material, "thermal_conductivity", None)
        heat = conductivity(face_pri) if callable(conductivity) else conductivity
        if not (isinstance(heat, (int, float)) and heat == 0.0) and heat is not None:
            temperature = ops.expand_dims(material.temperature(pri_var), 0)  # [1, padded...]
            d_temp = self._interior(self._face_derivative(temperature, axis), skip=(axis,))
            energy = energy + heat * d_temp[0]
        return ops.stack([zero, stress[0], stress[1], stress[2], energy], axis=0)
