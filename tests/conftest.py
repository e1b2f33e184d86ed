import importlib.util

import numpy as np
import pytest

import core


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
