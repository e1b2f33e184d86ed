"""Pipeline-wide settings, as ``mindspore.dataset.config``: the shuffling seed, the prefetch depth
and the default number of map workers.

The seed a shuffle uses is, in order of precedence: the ``seed=`` argument of the dataset, the
value given to :func:`set_seed` here, the value given to ``core.set_seed``; with none of them a
dataset draws its seed from the operating system once, when it is created (shuffles then differ
from run to run, as without a seed in MindSpore).
"""

from diffsci import core

_STATE = {"seed": None, "prefetch_size": 16, "num_parallel_workers": 1}


def set_seed(seed):
    """Seed every shuffle of the pipeline (``mindspore.dataset.config.set_seed``); ``None``
    clears it, so that ``core.set_seed`` applies again."""
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or seed < 0):
        raise ValueError(f"datasets.config.set_seed: expected a non-negative int, got {seed!r}")
    _STATE["seed"] = seed


def get_seed():
    """The seed shuffles use when a dataset has no ``seed=`` argument: this module's
    :func:`set_seed` value, else ``core.set_seed``'s, else None."""
    if _STATE["seed"] is not None:
        return _STATE["seed"]
    return core.get_seed()


def set_prefetch_size(size):
    """How many chunks of rows (one batch each after ``batch``) the background thread keeps
    ready ahead of the consumer (``mindspore.dataset.config.set_prefetch_size``). 0 turns
    the background thread off: the pipeline then runs in the consumer's thread."""
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise ValueError(f"datasets.config.set_prefetch_size: expected an int >= 0, got {size!r}")
    _STATE["prefetch_size"] = size


def get_prefetch_size():
    """The prefetch depth in chunks (default 16)."""
    return _STATE["prefetch_size"]


def set_num_parallel_workers(num):
    """Default worker count of ``map`` when its ``num_parallel_workers`` is None."""
    if not isinstance(num, int) or isinstance(num, bool) or num < 1:
        raise ValueError(
            f"datasets.config.set_num_parallel_workers: expected an int >= 1, got {num!r}"
        )
    _STATE["num_parallel_workers"] = num


def get_num_parallel_workers():
    """Default worker count of ``map`` (1 unless set)."""
    return _STATE["num_parallel_workers"]
