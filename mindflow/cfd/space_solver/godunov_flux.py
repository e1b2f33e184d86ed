"""Godunov-type convective flux: reconstruct face states, then solve a Riemann problem."""

from diffsci import core
from diffsci.core import ops

__all__ = ["GodunovFlux"]


@core.jit_class
class GodunovFlux:
    """Convective flux ``F(U_L, U_R)`` at every face along an axis (MindFlow's ``GodunovFlux``).

    Beyond MindFlow: the reconstruction acts on ``reconstruction_variables`` (characteristic
    by default for WENO5/7, WENO5-Z, TENO5; component-wise for WENO3; or primitive / conservative). ``positivity: true`` (or
    ``"flux"``) applies the Zhang-Shu limiter to the face states before the Riemann solver and
    then the Hu-Adams-Shu flux limiter (Lax-Friedrichs blending) to the face fluxes, which keeps
    the cell averages positive under CFL <= 0.5; ``positivity: "face"`` applies the face-state
    limiter only (no guarantee for the cell averages).

    Args:
        material (Material): the fluid.
        mesh_info (MeshInfo): grid and ``pad``.
        config (dict): ``convective_flux`` section: ``reconstructor``, ``riemann_computer``,
            ``reconstruction_variables``, ``positivity``.
        net_dict (dict): unused; MindFlow's slot for learnable Riemann solvers.
        native (bool): let a native loop compute the flux's value where one exists
            (characteristic WENO5/WENO5-Z with HLLC/Rusanov on the CPU; derivatives always
            come from the composite); False: the composite only.
    """

    def __init__(self, material, mesh_info, config, net_dict=None, native=True):
        from .reconstructor import default_reconstruction_variables, define_reconstructor
        from .riemann_computer import define_riemann_computer

        self.material = material
        self.mesh_info = mesh_info
        self.variables = config.get("reconstruction_variables") or (
            default_reconstruction_variables(config["reconstructor"])
        )
        positivity = config.get("positivity", False)
        if positivity not in (True, False, None, "flux", "face"):
            raise ValueError(
                f"convective_flux positivity must be true, false, 'flux' or 'face', got {positivity!r}"
            )
        self.positivity = bool(positivity)
        self.flux_positivity = positivity is True or positivity == "flux"
        self.reconstructor = define_reconstructor(config["reconstructor"])(mesh_info)
        self.riemann_solver = define_riemann_computer(config["riemann_computer"])(
            material, net_dict
        )
        # the native loop (space_solver.native_flux) computes the value where it can; the
        # composite below stays the definition that grad, vmap and other backends use
        self.native = bool(native) and self.variables == "characteristic" and not self.positivity
        self._kernels = {}  # (axis, gamma) -> kernel or None

    def compute_flux(self, con_var, axis):
        """Face fluxes along ``axis``.

        Args:
            con_var (Tensor): padded conservative variables ``[5, nx + 2 pad, ...]``.
            axis (int): 0/1/2.

        Returns:
            Tensor ``[5, ...]``: ``n + 1`` faces along ``axis``, interior cells elsewhere.
        """
        kernel = self._native_kernel(axis)
        if kernel is not None:
            shape = [5]
            for k in range(3):
                n = int(self.mesh_info.number_of_cells[k])
                shape.append(n + 1 if k == axis else n)
            return ops.kernel_call(
                lambda c: self._composite_flux(c, axis), kernel, con_var, shape=shape
            )
        return self._composite_flux(con_var, axis)

    def _native_kernel(self, axis):
        """The native kernel for ``axis`` at the material's current gamma, or None (a gamma
        that is a tensor, e.g. one being differentiated, keeps the composite)."""
        gamma = self.material.gamma
        if not self.native or not isinstance(gamma, (int, float)):
            return None
        key = (axis, float(gamma))
        if key not in self._kernels:
            from .native_flux import face_flux_kernel
            from .reconstructor import WENO5, WENO5Z
            from .riemann_computer import HLLC, Rusanov

            # exact classes only: a subclass may change the formulas the kernel hard-codes
            schemes = {WENO5: "WENO5", WENO5Z: "WENO5-Z"}
            solvers = {HLLC: "HLLC", Rusanov: "Rusanov"}
            scheme = schemes.get(type(self.reconstructor))
            solver = solvers.get(type(self.riemann_solver))
            self._kernels[key] = (
                face_flux_kernel(self.mesh_info, float(gamma), axis, scheme, solver)
                if scheme and solver
                else None
            )
        return self._kernels[key]

    def _composite_flux(self, con_var, axis):
        """``compute_flux`` written with core ops (the definition; see ``native``)."""
        from .projection import reconstruct_faces

        con_left, con_right = reconstruct_faces(
            con_var, axis, self.mesh_info, self.material, self.reconstructor, self.variables
        )
        if self.positivity:
            from .positivity import limit_positivity

            con_left, con_right = limit_positivity(
                con_var, con_left, con_right, axis, self.material
            )
        flux = self.riemann_solver.compute_riemann_flux(con_left, con_right, axis)
        if self.flux_positivity:
            from .positivity import limit_flux_positivity

            flux = limit_flux_positivity(con_var, flux, axis, self.material)
        return flux
