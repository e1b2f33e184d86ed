"""runner.build_network from a checkpoint: built without drawing its initial values
(core.nn.init.skip_init), every parameter then equals the checkpoint's; one the checkpoint
lacks is an error (strict) or gets its usual initial value (not strict): none stays at zero."""

import numpy as np
import pytest

from diffsci import core
from diffsci.protenix.cli import predict, runner
from diffsci.protenix.model.protenix import Protenix
from diffsci.protenix.model.weights import WeightsError


def _checkpoint(cfg, path, drop=None):
    core.random.set_seed(5)
    ref = Protenix(cfg)
    runner._redraw_zero_weights(ref)
    state = {n: p.asnumpy().copy() for n, p in ref.parameters_and_names() if n != drop}
    core.save_checkpoint({n: core.tensor(v) for n, v in state.items()}, str(path))
    return state


def test_loaded_network_has_the_checkpoint_values(tmp_path):
    cfg = predict.get_model_config("protenix_mini_default_v0.5.0")  # tiny sizes: conftest
    state = _checkpoint(cfg, tmp_path / "w.h5")
    runner._NETWORK.clear()
    model = runner.build_network(cfg, str(tmp_path / "w.h5"))
    names = [n for n, _ in model.parameters_and_names()]
    assert sorted(names) == sorted(state)
    for n, p in model.parameters_and_names():
        np.testing.assert_array_equal(p.asnumpy(), state[n], err_msg=n)
    runner._NETWORK.clear()


def test_missing_parameter(tmp_path):
    """strict: an error naming it; not strict (the mini model's load_strict False): it gets
    the initial value that building the network without skip_init would have drawn."""
    cfg = predict.get_model_config("protenix_mini_default_v0.5.0")
    assert cfg["load_strict"] is False
    drop = "confidence_head.pairformer_stack.blocks.0.tri_mul_in.linear_a_p.weight"
    state = _checkpoint(cfg, tmp_path / "w.h5", drop=drop)
    runner._NETWORK.clear()
    core.random.set_seed(9)
    model = runner.build_network(cfg, str(tmp_path / "w.h5"))
    core.random.set_seed(9)
    ref = dict(Protenix(cfg).parameters_and_names())
    for n, p in model.parameters_and_names():
        np.testing.assert_array_equal(p.asnumpy(), state[n] if n != drop else ref[n].asnumpy())
    assert dict(model.parameters_and_names())[drop].asnumpy().any()
    cfg["load_strict"] = True
    runner._NETWORK.clear()
    with pytest.raises(WeightsError, match=r"missing keys.*tri_mul_in\.linear_a_p"):
        runner.build_network(cfg, str(tmp_path / "w.h5"))
    runner._NETWORK.clear()
