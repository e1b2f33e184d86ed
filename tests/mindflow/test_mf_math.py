"""mindflow.core.math: MindFlow's grid helpers against the grids written out by hand."""

import numpy as np
import pytest

from diffsci.mindflow.core import get_grid_1d, get_grid_2d, get_grid_3d
from diffsci.mindflow.core.math import to_2tuple, to_3tuple


def test_grids_hold_the_coordinates_of_each_axis():
    g1 = get_grid_1d(5)
    assert g1.shape == (1, 5, 1)
    np.testing.assert_array_equal(g1[0, :, 0], [0, 0.25, 0.5, 0.75, 1])
    g2 = get_grid_2d([3, 5])
    assert g2.shape == (1, 3, 5, 2)
    for i in range(3):
        for j in range(5):
            np.testing.assert_array_equal(g2[0, i, j], [i / 2, j / 4])
    g3 = get_grid_3d(3)
    assert g3.shape == (1, 3, 3, 3, 3)
    np.testing.assert_array_equal(g3[0, 2, 0, 1], [1.0, 0.0, 0.5])


def test_tuple_helpers_and_errors():
    assert to_2tuple(4) == (4, 4) and to_3tuple([1, 2, 3]) == (1, 2, 3)
    with pytest.raises(ValueError, match=r"to_3tuple.*3 ints"):
        to_3tuple([1, 2])
    with pytest.raises(ValueError, match=r"get_grid_2d.*positive"):
        get_grid_2d([0, 3])
