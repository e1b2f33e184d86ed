"""Helpers the mindflow.cfd tests share: loading an example script, a space_solver section."""

import importlib.util
import pathlib

EXAMPLES = pathlib.Path(__file__).resolve().parents[3] / "examples" / "mindflow" / "cfd"


def load_example(name):
    """The module ``examples/mindflow/cfd/<name>/<name>.py``, loaded from its file."""
    path = EXAMPLES / name / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"example_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def space_solver(reconstructor, riemann_computer, variables, viscous=False):
    """A ``space_solver`` config section with the convective flux on."""
    return {
        "is_convective_flux": True,
        "convective_flux": {
            "reconstructor": reconstructor,
            "riemann_computer": riemann_computer,
            "reconstruction_variables": variables,
        },
        "is_viscous_flux": viscous,
    }
