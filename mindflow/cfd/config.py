"""Validation of MindFlow-format CFD configs (the YAML sections of ``Simulator(config)``).

Every key and every named choice is checked against the accepted set, so a typo such as
``reconstructor: WENO9`` fails at construction with the key and the accepted values, instead
of surfacing later as a ``KeyError`` or silent garbage.
"""

__all__ = ["REQUIRED_PAD", "validate_config"]

# Ghost cells each reconstructor's stencil reads on each side of a face.
REQUIRED_PAD = {"WENO3": 2, "WENO5": 3, "WENO7": 4, "WENO5-Z": 3, "TENO5": 3}
# The fourth-order face derivatives / interpolations of the viscous flux read two cells.
VISCOUS_PAD = 2

_SECTIONS = ("mesh", "material", "runtime", "integrator", "space_solver", "boundary_conditions")
_MESH_KEYS = ("dim", "nx", "ny", "nz", "x_range", "y_range", "z_range", "pad_size", "gamma")
_MATERIAL_KEYS = (
    "type",
    "heat_ratio",
    "specific_heat_ratio",
    "specific_gas_constant",
    "gas_constant",
    "dynamic_viscosity",
    "bulk_viscosity",
    "thermal_conductivity",
    "sutherland",
    "sutherland_parameters",
    "prandtl_conductivity",
    "prandtl_number",
)
_RUNTIME_KEYS = ("CFL", "current_time", "end_time", "fixed_timestep", "timestep")
_INTEGRATORS = ("Euler", "RungeKutta3")
_SPACE_KEYS = (
    "is_convective_flux",
    "convective_flux",
    "is_viscous_flux",
    "viscous_flux",
    "positivity",
)
_CONVECTIVE_KEYS = ("reconstructor", "riemann_computer", "reconstruction_variables", "positivity")
_RIEMANN = ("Rusanov", "HLL", "HLLC", "Roe")
_VARIABLES = ("characteristic", "primitive", "conservative")
_VISCOUS_KEYS = ("interpolator", "face_derivative_computer", "central_derivative_computer")
_BOUNDARY_TYPES = ("Neumann", "Periodic", "Symmetry", "Wall")
_BOUNDARY_KEYS = ("type", "velocity_x", "velocity_y", "velocity_z")
_FACES = (("x_min", "x_max"), ("y_min", "y_max"), ("z_min", "z_max"))


def _unknown_keys(section, given, accepted):
    extra = sorted(set(given) - set(accepted))
    if extra:
        raise ValueError(
            f"config[{section!r}]: unknown key {extra[0]!r}; accepted keys: {', '.join(accepted)}"
        )


def _choice(where, value, accepted):
    if value not in accepted:
        raise ValueError(
            f"{where}: unknown value {value!r}; accepted values: {', '.join(accepted)}"
        )


def _require(section, cfg, key):
    if key not in cfg:
        raise ValueError(f"config[{section!r}]: missing key {key!r}")
    return cfg[key]


def validate_config(config):
    """Check a whole MindFlow CFD config; raise ``ValueError`` naming the first bad entry.

    Args:
        config (dict): sections ``mesh``, ``material``, ``runtime``, ``integrator``,
            ``space_solver``, ``boundary_conditions`` as in MindFlow's YAML files.
    """
    if not isinstance(config, dict):
        raise TypeError(f"config must be a dict of sections, got {type(config).__name__}")
    _unknown_keys("<top level>", config, _SECTIONS)
    for section in ("mesh", "material", "integrator", "space_solver", "boundary_conditions"):
        _require("<top level>", config, section)
    mesh = config["mesh"]
    validate_mesh(mesh)
    validate_material(config["material"])
    if "runtime" in config:
        validate_runtime(config["runtime"])
    integrator = config["integrator"]
    _unknown_keys("integrator", integrator, ("type",))
    _choice(
        "config['integrator']['type']", _require("integrator", integrator, "type"), _INTEGRATORS
    )
    validate_space_solver(config["space_solver"], mesh.get("pad_size", 0))
    validate_boundaries(config["boundary_conditions"], mesh["dim"])


def validate_mesh(mesh):
    """Check the ``mesh`` section: dim 1..3, positive cell counts, increasing ranges."""
    _unknown_keys("mesh", mesh, _MESH_KEYS)
    dim = _require("mesh", mesh, "dim")
    _choice("config['mesh']['dim']", dim, (1, 2, 3))
    for axis, name in enumerate("xyz"):
        n = mesh.get(f"n{name}", 1)
        if not isinstance(n, int) or n < 1:
            raise ValueError(f"config['mesh']['n{name}'] must be a positive integer, got {n!r}")
        if axis < dim:
            lo, hi = _require("mesh", mesh, f"{name}_range")
            if not hi > lo:
                raise ValueError(f"config['mesh']['{name}_range'] must increase, got [{lo}, {hi}]")
    pad = mesh.get("pad_size", 0)
    if not isinstance(pad, int) or pad < 0:
        raise ValueError(f"config['mesh']['pad_size'] must be a non-negative integer, got {pad!r}")


def validate_material(material):
    """Check the ``material`` section: IdealGas with heat_ratio > 1, non-negative transport."""
    _unknown_keys("material", material, _MATERIAL_KEYS)
    _choice("config['material']['type']", _require("material", material, "type"), ("IdealGas",))
    gamma = _require("material", material, "heat_ratio")
    if not gamma > 1.0:
        raise ValueError(f"config['material']['heat_ratio'] must be > 1, got {gamma!r}")
    for key in ("dynamic_viscosity", "bulk_viscosity", "thermal_conductivity"):
        if material.get(key, 0.0) < 0.0:
            raise ValueError(f"config['material'][{key!r}] must be >= 0, got {material[key]!r}")


def validate_runtime(runtime):
    """Check the ``runtime`` section: 0 < CFL <= 1, a positive timestep when fixed."""
    _unknown_keys("runtime", runtime, _RUNTIME_KEYS)
    cfl = runtime.get("CFL", 0.0)
    fixed = runtime.get("fixed_timestep", False)
    if not fixed and not 0.0 < cfl <= 1.0:
        raise ValueError(f"config['runtime']['CFL'] must be in (0, 1], got {cfl!r}")
    if fixed and not runtime.get("timestep", 0.0) > 0.0:
        raise ValueError(
            "config['runtime']['timestep'] must be > 0 when fixed_timestep is true, "
            f"got {runtime.get('timestep')!r}"
        )


def validate_space_solver(space, pad):
    """Check ``space_solver``: flux choices and enough ghost cells for the stencils."""
    _unknown_keys("space_solver", space, _SPACE_KEYS)
    if space.get("is_convective_flux", "convective_flux" in space):
        conv = _require("space_solver", space, "convective_flux")
        _unknown_keys("space_solver.convective_flux", conv, _CONVECTIVE_KEYS)
        rec = _require("space_solver.convective_flux", conv, "reconstructor")
        _choice(
            "config['space_solver']['convective_flux']['reconstructor']", rec, tuple(REQUIRED_PAD)
        )
        _choice(
            "config['space_solver']['convective_flux']['riemann_computer']",
            _require("space_solver.convective_flux", conv, "riemann_computer"),
            _RIEMANN,
        )
        _choice(
            "config['space_solver']['convective_flux']['reconstruction_variables']",
            conv.get("reconstruction_variables", "characteristic"),
            _VARIABLES,
        )
        if pad < REQUIRED_PAD[rec]:
            raise ValueError(
                f"config['mesh']['pad_size'] = {pad} is too few ghost cells for {rec}, "
                f"which needs pad_size >= {REQUIRED_PAD[rec]}"
            )
    if space.get("is_viscous_flux", False):
        visc = space.get("viscous_flux", {})
        _unknown_keys("space_solver.viscous_flux", visc, _VISCOUS_KEYS)
        if pad < VISCOUS_PAD:
            raise ValueError(
                f"config['mesh']['pad_size'] = {pad} is too few ghost cells for the viscous "
                f"flux, which needs pad_size >= {VISCOUS_PAD}"
            )


def validate_boundaries(bcs, dim):
    """Check ``boundary_conditions``: a known type on both faces of every active axis."""
    faces = [f for pair in _FACES for f in pair]
    _unknown_keys("boundary_conditions", bcs, faces)
    for axis in range(dim):
        for face in _FACES[axis]:
            bc = _require("boundary_conditions", bcs, face)
            _unknown_keys(f"boundary_conditions.{face}", bc, _BOUNDARY_KEYS)
            _choice(
                f"config['boundary_conditions'][{face!r}]['type']",
                _require(f"boundary_conditions.{face}", bc, "type"),
                _BOUNDARY_TYPES,
            )
        kinds = {bcs[f]["type"] == "Periodic" for f in _FACES[axis]}
        if len(kinds) != 1:
            raise ValueError(
                f"boundary_conditions {_FACES[axis][0]!r}/{_FACES[axis][1]!r}: Periodic must be "
                "set on both faces of an axis or on neither"
            )
