import importlib.machinery
import importlib.util
import pathlib
import sys

import numpy as np
import pytest

from diffsci import core

REPO = pathlib.Path(__file__).resolve().parents[1]
FOLDERS = ("core", "datasets", "mindflow", "mindelec", "protenix")


class _BareImportGuard:
    """The suite runs from the repository root, whose folders ``core/``, ``datasets/``... are
    importable there as bare top-level names: such an import would load a second copy of a
    diffsci package (two ``Tensor`` classes, two RNG states). Refuse it loudly instead."""

    def find_spec(self, name, path=None, target=None):
        if path is not None or name not in FOLDERS:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name)
        if spec is not None and spec.origin and pathlib.Path(spec.origin).resolve().parents[1] == REPO:
            raise ImportError(
                f"bare 'import {name}' would load a second copy of diffsci.{name} from the "
                f"repository root; import diffsci.{name}", name=name)
        return None


sys.meta_path.insert(0, _BareImportGuard())


@pytest.fixture(autouse=True)
def _seed_and_device():
    core.set_device("CPU")
    core.set_seed(0)
    np.random.seed(0)
    numpy_errors = np.geterr()
    yield
    core.set_debug_nans(False)
    leaked = np.geterr()
    if leaked != numpy_errors:  # numpy's floating-point error modes are process state
        np.seterr(**numpy_errors)
        pytest.fail(f"the test changed numpy's error modes {numpy_errors} -> {leaked}")


def pytest_collection_modifyitems(config, items):
    """Without torch, the parity tests (marked ``parity``) skip, saying how to run them."""
    if importlib.util.find_spec("torch") is not None:
        return
    skip = pytest.mark.skip(
        reason="parity test: torch is not installed (make test-parity installs torch==2.13.0)"
    )
    for item in items:
        if item.get_closest_marker("parity") is not None:
            item.add_marker(skip)
