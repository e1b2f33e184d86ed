"""core.backend.cc.address: the data pointer read from the array object equals numpy's own."""
import numpy as np
import pytest

from diffsci.core.backend import cc


def _cases():
    base = np.arange(120, dtype=np.float32)
    return [
        base,
        base[7:],
        base[::4],
        base.reshape(10, 12)[3:, 2:],
        base.reshape(10, 12).T,
        np.zeros((0,), np.float64),
        np.asfortranarray(np.ones((5, 3))),
        np.empty(3, np.complex128)[1:],
    ]


@pytest.mark.parametrize("k", range(len(_cases())))
def test_address_matches_array_interface(k):
    array = _cases()[k]
    assert cc.address(array) == array.__array_interface__["data"][0]
    assert cc.address(array) == array.ctypes.data


def test_address_of_subclass_and_readonly():
    class Sub(np.ndarray):
        pass

    base = np.arange(10.0)
    view = base[2:].view(Sub)
    assert cc.address(view) == base[2:].ctypes.data
    ro = base[3:]
    ro.flags.writeable = False
    assert cc.address(ro) == base.ctypes.data + 3 * base.itemsize


def test_offset_was_confirmed():
    # this CPython/numpy has the documented layout; a mismatch would fall back, not fail
    assert cc._DATA_OFFSET in (None, object.__basicsize__)
