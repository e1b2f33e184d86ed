import numpy as np
import pytest

import core


@pytest.fixture(autouse=True)
def _seed_and_device():
    core.set_device("CPU")
    core.set_seed(0)
    np.random.seed(0)
    yield
    core.set_debug_nans(False)
