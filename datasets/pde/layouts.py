"""The four HDF5 layouts PDEBench's files come in: their names, shapes, detection and checks.

PDEBench (Takamoto et al., NeurIPS 2022 Datasets and Benchmarks, github.com/pdebench/PDEBench)
ships its data in four layouts; the names below are the HDF5 names its files use, read from its
data generation (``data_gen/data_gen_NLE/Data_Merge.py``, ``data_gen/gen_diff_react.py``,
``gen_diff_sorp.py``, ``gen_radial_dam_break.py``) and its loaders (``models/fno/utils.py``:
``FNODatasetSingle`` reads the first three, ``FNODatasetMult`` / ``UNetDatasetMult`` the last).

``single``  one scalar field, many samples (1D advection, Burgers, 1D diffusion-reaction)::

    tensor        [N, Nt, Nx(, Ny)(, C)]
    x-coordinate  [Nx]            cell centres
    y-coordinate  [Ny]            optional, when the tensor is 2D in space
    t-coordinate  [Nt] or [Nt+1]  PDEBench's 1D files store Nt+1 times for Nt frames
                                  (e.g. Burgers: tensor [10000, 201, 1024], t [202])

``darcy``  steady 2D Darcy flow, coefficient -> solution::

    tensor        [N, 1, Nx, Ny]  the solution u (one "time" frame)
    nu            [N, Nx, Ny]     the diffusion coefficient a(x)
    x-coordinate  [Nx]
    y-coordinate  [Ny]

``cfd``  compressible Navier-Stokes, one dataset per primitive variable (1D, 2D or 3D)::

    density, pressure, Vx (, Vy (, Vz))   [N, Nt, Nx(, Ny(, Nz))]  Vy from 2D, Vz in 3D
    x-coordinate (, y-coordinate (, z-coordinate))  [Nx], [Ny], [Nz]
    t-coordinate  [Nt] or [Nt+1]

``seed_groups``  one group per sample, named by its seed (``"0000"``, ``"0001"``...; SWE radial
dam break, 2D diffusion-reaction, 1D diffusion-sorption)::

    <seed>/data    [Nt, Nx(, Ny(, Nz)), C]   channels last
    <seed>/grid/x  [Nx]  (grid/y [Ny] from 2D, grid/z [Nz] in 3D)
    <seed>/grid/t  [Nt] (or [Nt+1])
    <seed>.attrs["config"]  the run's configuration as a YAML string

Every check here works on shapes alone (``{name: shape}``), so the writer checks what it is
about to write and the reader checks what it opened with the same code.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = [
    "LAYOUTS",
    "Layout",
    "PDEBenchFormatError",
    "check_group_shapes",
    "check_shapes",
    "detect_layout",
]


class PDEBenchFormatError(ValueError):
    """A file (or the data about to be written) does not follow the PDEBench layout it should."""


@dataclass(frozen=True)
class Layout:
    """One PDEBench layout.

    Attributes:
        name: ``"single"``, ``"darcy"``, ``"cfd"`` or ``"seed_groups"``.
        description: one line, for error messages and ``repr``.
        fields: the per-sample datasets that every file of this layout has (the sample axis is
            axis 0; for ``seed_groups`` the sample is the group and these live inside it).
        optional_fields: per-sample datasets that some files have (``Vy``/``Vz`` by dimension).
        coords: coordinate datasets every file has (1-D arrays).
        optional_coords: coordinate datasets that some files have.
    """

    name: str
    description: str
    fields: tuple[str, ...]
    optional_fields: tuple[str, ...]
    coords: tuple[str, ...]
    optional_coords: tuple[str, ...]

    @property
    def names(self) -> tuple[str, ...]:
        """Every dataset name this layout knows, required ones first."""
        return self.fields + self.optional_fields + self.coords + self.optional_coords


LAYOUTS: dict[str, Layout] = {
    "single": Layout(
        "single",
        "`tensor` [N, Nt, Nx(, Ny)(, C)] + `x-coordinate` [Nx] + `t-coordinate` [Nt or Nt+1]",
        ("tensor",),
        (),
        ("x-coordinate", "t-coordinate"),
        ("y-coordinate", "z-coordinate"),
    ),
    "darcy": Layout(
        "darcy",
        "`tensor` [N, 1, Nx, Ny] + `nu` [N, Nx, Ny] + `x-coordinate` [Nx] + `y-coordinate` [Ny]",
        ("nu", "tensor"),
        (),
        ("x-coordinate", "y-coordinate"),
        (),
    ),
    "cfd": Layout(
        "cfd",
        "`density`, `pressure`, `Vx`(, `Vy`(, `Vz`)) [N, Nt, Nx(, Ny(, Nz))] + "
        "`x-coordinate`(, `y-coordinate`(, `z-coordinate`)) + `t-coordinate`",
        ("density", "pressure", "Vx"),
        ("Vy", "Vz"),
        ("x-coordinate", "t-coordinate"),
        ("y-coordinate", "z-coordinate"),
    ),
    "seed_groups": Layout(
        "seed_groups",
        'groups "0000", "0001"... each with `data` [Nt, Nx(, Ny(, Nz)), C], `grid/x`(, '
        "`grid/y`(, `grid/z`)), `grid/t` and a YAML `config` attribute",
        ("data",),
        (),
        ("grid/x", "grid/t"),
        ("grid/y", "grid/z"),
    ),
}

_CFD_VELOCITIES = ("Vx", "Vy", "Vz")
_SPACE_COORDS = ("x-coordinate", "y-coordinate", "z-coordinate")
_GRID_COORDS = ("grid/x", "grid/y", "grid/z")


def _expected_list() -> str:
    return "; ".join(f"{name}: {lay.description}" for name, lay in LAYOUTS.items())


def detect_layout(root_kinds: Mapping[str, str], where: str) -> str:
    """Which layout a file's root holds, from the names and kinds of its members.

    Args:
        root_kinds: ``{name: "dataset" | "group"}`` for every member of the file's root.
        where: the file's name, for the error message.

    Returns:
        the layout's name. Detection looks only at which names are present (``nu`` -> darcy,
        ``tensor`` -> single, any of ``density/pressure/Vx/Vy/Vz`` -> cfd, only groups ->
        seed_groups); :func:`check_shapes` then says what is missing or inconsistent.

    Raises:
        PDEBenchFormatError: naming the file, what its root holds and what each layout expects.
    """
    names = set(root_kinds)
    if "nu" in names:
        return "darcy"
    if "tensor" in names:
        return "single"
    if names & {"density", "pressure", *_CFD_VELOCITIES}:
        return "cfd"
    if names and all(kind == "group" for kind in root_kinds.values()):
        return "seed_groups"
    found = ", ".join(f"{k} ({v})" for k, v in sorted(root_kinds.items())) or "nothing"
    raise PDEBenchFormatError(
        f"{where}: not a PDEBench layout; its root holds {found}. Expected one of: "
        f"{_expected_list()}"
    )


def _problem_missing(layout: Layout, missing: list[str], shapes: Mapping, where: str) -> str:
    return (
        f"{where}: layout {layout.name!r} needs {', '.join(repr(m) for m in missing)} "
        f"but found only {sorted(shapes)} (expected {layout.description})"
    )


def _check_coord(problems: list, shapes: Mapping, name: str, n: int, what: str, t: bool = False):
    shape = tuple(shapes[name])
    ok = len(shape) == 1 and (shape[0] == n or (t and shape[0] == n + 1))
    if not ok:
        want = f"[{n}] or [{n + 1}]" if t else f"[{n}]"
        problems.append(f"{name!r} has shape {list(shape)}, expected {want} ({what})")


def check_shapes(layout: str, shapes: Mapping[str, tuple[int, ...]], where: str) -> int:
    """Check an array layout's datasets against each other; return the number of samples N.

    Args:
        layout: ``"single"``, ``"darcy"`` or ``"cfd"``.
        shapes: ``{dataset name: shape}`` of what the file holds (extra names are ignored).
        where: the file's name, for error messages.

    Returns:
        N, the length of the sample axis (axis 0) shared by every field.

    Raises:
        PDEBenchFormatError: naming the file, the dataset, its shape and the expected shape.
    """
    lay = LAYOUTS[layout]
    missing = [n for n in lay.fields + lay.coords if n not in shapes]
    if missing:
        raise PDEBenchFormatError(_problem_missing(lay, missing, shapes, where))
    problems: list[str] = []
    shp = {k: tuple(int(d) for d in v) for k, v in shapes.items()}
    if layout == "single":
        u = shp["tensor"]
        if len(u) < 3:
            raise PDEBenchFormatError(
                f"{where}: 'tensor' has shape {list(u)}, expected [N, Nt, Nx(, Ny)(, C)]"
            )
        n = u[0]
        _check_coord(problems, shp, "x-coordinate", u[2], "tensor axis 2")
        _check_coord(problems, shp, "t-coordinate", u[1], "tensor axis 1", t=True)
        for axis, name in ((3, "y-coordinate"), (4, "z-coordinate")):
            if name in shp:
                if len(u) <= axis:
                    problems.append(
                        f"{name!r} is present but 'tensor' {list(u)} has no axis {axis}"
                    )
                else:
                    _check_coord(problems, shp, name, u[axis], f"tensor axis {axis}")
    elif layout == "darcy":
        u, nu = shp["tensor"], shp["nu"]
        if len(u) != 4 or u[1] != 1:
            raise PDEBenchFormatError(
                f"{where}: 'tensor' has shape {list(u)}, expected [N, 1, Nx, Ny]"
            )
        n = u[0]
        if nu != (u[0], u[2], u[3]):
            problems.append(f"'nu' has shape {list(nu)}, expected {[u[0], u[2], u[3]]}")
        _check_coord(problems, shp, "x-coordinate", u[2], "tensor axis 2")
        _check_coord(problems, shp, "y-coordinate", u[3], "tensor axis 3")
    elif layout == "cfd":
        rho = shp["density"]
        dim = len(rho) - 2
        if dim not in (1, 2, 3):
            raise PDEBenchFormatError(
                f"{where}: 'density' has shape {list(rho)}, expected [N, Nt, Nx(, Ny(, Nz))]"
            )
        n = rho[0]
        need = ["pressure", *_CFD_VELOCITIES[:dim]]
        need_coords = list(_SPACE_COORDS[:dim])
        missing = [m for m in need + need_coords if m not in shp]
        if missing:
            raise PDEBenchFormatError(
                f"{where}: layout 'cfd' in {dim}D needs {', '.join(repr(m) for m in missing)} "
                f"but found only {sorted(shapes)} (expected {lay.description})"
            )
        for name in need:
            if shp[name] != rho:
                problems.append(f"{name!r} has shape {list(shp[name])}, expected {list(rho)}")
        for name in _CFD_VELOCITIES[dim:]:
            if name in shp:
                problems.append(f"{name!r} is present but 'density' {list(rho)} is {dim}D")
        for axis, name in enumerate(need_coords, start=2):
            _check_coord(problems, shp, name, rho[axis], f"density axis {axis}")
        _check_coord(problems, shp, "t-coordinate", rho[1], "density axis 1", t=True)
    else:
        raise ValueError(f"check_shapes: layout {layout!r} is not an array layout")
    if problems:
        raise PDEBenchFormatError(f"{where}: layout {layout!r}: " + "; ".join(problems))
    return n


def check_group_shapes(shapes: Mapping[str, tuple[int, ...]], where: str) -> int:
    """Check one seed group of the ``seed_groups`` layout; return its spatial dimension.

    Args:
        shapes: ``{"data": shape, "grid/x": shape, ...}`` of the group's datasets.
        where: ``"file.h5, group '0017'"``, for error messages.

    Returns:
        d, the number of space dimensions (``data`` is [Nt, Nx(, Ny(, Nz)), C]).

    Raises:
        PDEBenchFormatError: naming the file, group, dataset, its shape and the expected one.
    """
    lay = LAYOUTS["seed_groups"]
    if "data" not in shapes:
        raise PDEBenchFormatError(_problem_missing(lay, ["data"], shapes, where))
    data = tuple(int(d) for d in shapes["data"])
    dim = len(data) - 2
    if dim not in (1, 2, 3):
        raise PDEBenchFormatError(
            f"{where}: 'data' has shape {list(data)}, expected [Nt, Nx(, Ny(, Nz)), C]"
        )
    need = [*_GRID_COORDS[:dim], "grid/t"]
    missing = [m for m in need if m not in shapes]
    if missing:
        raise PDEBenchFormatError(_problem_missing(lay, missing, shapes, where))
    problems: list[str] = []
    for axis, name in enumerate(_GRID_COORDS[:dim], start=1):
        _check_coord(problems, shapes, name, data[axis], f"data axis {axis}")
    _check_coord(problems, shapes, "grid/t", data[0], "data axis 0", t=True)
    if problems:
        raise PDEBenchFormatError(f"{where}: " + "; ".join(problems))
    return dim
