"""MindSpore 1.x names MindFlow's scripts use: ops.reduce_mean/sum/max/min, core.common paths."""

import numpy as np

from diffsci import core
from diffsci.core import ops


def test_reduce_names_follow_mindspore_axis_convention():
    a = np.arange(12.0).reshape(3, 4)
    x = core.tensor(a)
    np.testing.assert_allclose(ops.reduce_mean(x).asnumpy(), a.mean())  # axis=(): all axes
    np.testing.assert_allclose(ops.reduce_mean(x, 1, True).asnumpy(), a.mean(1, keepdims=True))
    np.testing.assert_allclose(ops.reduce_sum(x, (0,)).asnumpy(), a.sum(0))
    np.testing.assert_allclose(ops.reduce_max(x, 1).asnumpy(), a.max(1))
    np.testing.assert_allclose(ops.reduce_min(x).asnumpy(), a.min())


def test_common_module_paths():
    import diffsci.core.common.dtype as mstype
    from diffsci.core.common import Parameter, Tensor

    assert mstype.float32 == core.float32 and mstype.float64 == core.float64
    p = Parameter(core.tensor([1.0]), name="w")
    assert isinstance(p, Tensor) and p.name == "w"
