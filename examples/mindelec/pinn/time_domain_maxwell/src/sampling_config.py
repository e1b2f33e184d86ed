"""Sampling of the time-domain Maxwell case (MindElec's ``src/sampling_config.py``, plain dicts
instead of EasyDict): the source disc and the rest of the square get ``domain`` (equation) and
``IC`` points, the square's edges ``BC`` points; ``time`` samples the interval."""

import copy

src_sampling_config = {
    "domain": {"random_sampling": True, "size": 65536, "sampler": "uniform"},
    "IC": {"random_sampling": True, "size": 65536, "sampler": "uniform"},
    "time": {"random_sampling": True, "size": 65536, "sampler": "uniform"},
}

no_src_sampling_config = copy.deepcopy(src_sampling_config)

bc_sampling_config = {
    "BC": {"random_sampling": True, "size": 65536, "sampler": "uniform", "with_normal": False},
    "time": {"random_sampling": True, "size": 65536, "sampler": "uniform"},
}


def scaled(config, size):
    """A copy of a sampling config with every ``size`` replaced (the tiny and bench runs)."""
    out = copy.deepcopy(config)
    for entry in out.values():
        entry["size"] = size
    return out
