"""Module-level functions for the pipeline's process-pool tests: a worker process imports this
module to unpickle them, so it stays light (numpy and os only)."""

import os

import numpy as np


def double_with_pid(x):
    """[..] -> (2 x, the worker's pid)."""
    return x * 2, np.int64(os.getpid())


def fail_at_37(x):
    """x unchanged, except that sample value 37 raises."""
    if int(x) == 37:
        raise ValueError("bad sample value 37")
    return x


class Squares:
    """A picklable random-access source: sample i is (i, i**2) as int64 arrays."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return np.int64(i), np.int64(i * i)


class Pairs:
    """Random access: sample i is (x_i [3] float32 filled with i, label i as int64); counts its
    reads."""

    def __init__(self, n):
        self.n = n
        self.reads = 0

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        self.reads += 1
        return np.full(3, i, np.float32), np.int64(i)


def two_epochs_of_labels(seed):
    """In a fresh process: core.set_seed(seed), then two epochs of a buffered shuffle."""
    from diffsci import core
    from diffsci import datasets

    core.set_seed(seed)
    ds = datasets.GeneratorDataset(Pairs(50), ["x", "y"]).shuffle(7)
    out = []
    for _ in range(2):
        it = ds.create_tuple_iterator(num_epochs=1, output_numpy=True)
        out.append([int(y) for _, y in it])
    return out


def die_at_5(x):
    """The worker process exits abruptly on sample value 5 (as a crash would)."""
    if int(x) == 5:
        os._exit(3)
    return x
