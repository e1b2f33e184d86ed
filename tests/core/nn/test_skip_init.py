"""core.nn.init.skip_init: random initializers give zeros without drawing, constants keep
their values, the generator is untouched, nesting and errors restore the normal behaviour."""

import numpy as np
import pytest

from diffsci import core
from diffsci.core.nn import init

RANDOM = [init.Normal(), init.Uniform(), init.TruncatedNormal(), init.XavierUniform(),
          init.XavierNormal(), init.HeUniform(), init.HeNormal(), init.Orthogonal()]


@pytest.mark.parametrize("ini", RANDOM, ids=lambda i: type(i).__name__)
def test_random_initializers_give_zeros(ini):
    with init.skip_init():
        w = ini((6, 5), core.float32)
    assert tuple(w.shape) == (6, 5) and w.dtype == core.float32
    assert not w.asnumpy().any()
    assert ini((6, 5), core.float32).asnumpy().any()  # drawn again outside


def test_constants_keep_their_values_and_the_generator_is_untouched():
    core.set_seed(3)
    ref = init.Normal(sigma=1.0)((4, 4)).asnumpy()
    core.set_seed(3)
    with init.skip_init(), init.skip_init():  # nested
        assert (init.One()((2, 3)).asnumpy() == 1).all()
        assert (init.Constant(2.5)((3,)).asnumpy() == 2.5).all()
        np.testing.assert_array_equal(init.Identity()((3, 3)).asnumpy(), np.eye(3))
        assert not init.initializer("he_uniform", (3, 3), core.float64).asnumpy().any()
        layer = core.nn.Dense(4, 3)
        assert not layer.weight.asnumpy().any()
    np.testing.assert_array_equal(init.Normal(sigma=1.0)((4, 4)).asnumpy(), ref)


def test_state_restored_after_an_error():
    with pytest.raises(RuntimeError, match="boom"), init.skip_init():
        raise RuntimeError("boom")
    assert init.Normal(sigma=1.0)((8,)).asnumpy().any()
