"""``nn.DistributedGradReducer``: data-parallel gradients all-reduced in buckets.

Gradients are packed by dtype into flat buckets of at most ``bucket_mb`` megabytes, in reverse
parameter order (the order a backward pass produces them), each bucket all-reduced with one
``core.communication.all_reduce`` (one MPI message per bucket instead of one per parameter),
divided by the number of ranks when ``mean``, and unpacked. It is written with core ops, so it
runs eagerly, inside ``core.jit`` (each bucket is one opaque equation) and under ``grad``.
The reduction starts after the backward pass: it does not overlap with it.
"""

import numpy as np

from .. import ops
from .. import parallel as _parallel
from ..communication import management as _m
from ..communication.comm_func import all_reduce
from .cell import Cell

__all__ = ["DistributedGradReducer", "reducer_from_context"]


class DistributedGradReducer(Cell):
    """All-reduce a tuple of gradients across the ranks of ``group`` (MindSpore's name).

    Args:
        parameters: the Parameters the gradients belong to (their order and shapes).
        mean: divide the sum by ``degree`` (the gradient of the mean loss over the global batch
            when each rank's loss is the mean over its shard of equal size).
        degree: the divisor; the group size by default.
        fusion_type: accepted for MindSpore compatibility (bucketing is by size).
        group: a group name (the world by default).
        bucket_mb: the largest bucket in MB (default: the context's ``comm_fusion`` or 25).

    ``construct(grads)``: grads is a tuple aligned with ``parameters`` (None entries stay
    None); returns the reduced tuple, same shapes and dtypes.
    """

    def __init__(
        self, parameters, mean=True, degree=None, fusion_type=1, group=None, bucket_mb=None
    ):
        super().__init__(auto_prefix=False)
        params = tuple(parameters)
        object.__setattr__(self, "_shapes", tuple(tuple(p.shape) for p in params))
        self.group = group
        n = _m.get_group_size(group)
        self.degree = n if degree is None else int(degree)
        if self.degree < 1:
            raise ValueError(f"DistributedGradReducer: degree must be >= 1, got {degree}")
        self.mean = bool(mean)
        mb = _parallel.bucket_mb() if bucket_mb is None else float(bucket_mb)
        self.bucket_bytes = int(mb * (1 << 20))
        self._group_size = n

    def buckets(self, grads):
        """Index lists, one per bucket: same dtype, reverse order, at most bucket_bytes
        each (a gradient larger than that is a bucket by itself)."""
        out, open_by_dtype = [], {}
        for i in reversed(range(len(grads))):
            g = grads[i]
            if g is None:
                continue
            nbytes = int(np.prod(g.shape)) * np.dtype(g.dtype).itemsize
            key = np.dtype(g.dtype)
            cur = open_by_dtype.get(key)
            if cur is None or cur[1] + nbytes > self.bucket_bytes:
                cur = open_by_dtype[key] = [[], 0]
                out.append(cur)
            cur[0].append(i)
            cur[1] += nbytes
        return [b[0] for b in out]

    def construct(self, grads):
        grads = tuple(grads)
        if len(grads) != len(self._shapes):
            raise ValueError(
                f"DistributedGradReducer: got {len(grads)} gradients for {len(self._shapes)} "
                "parameters"
            )
        if self._group_size == 1 and (not self.mean or self.degree == 1):
            return grads
        result = list(grads)
        for idx in self.buckets(grads):
            flat = ops.concat([ops.reshape(grads[i], (-1,)) for i in idx], 0)  # [bucket]
            total = all_reduce(flat, "sum", self.group)
            if self.mean:
                total = total / self.degree
            start = 0
            for i in idx:
                size = int(np.prod(grads[i].shape))
                result[i] = ops.reshape(total[start : start + size], grads[i].shape)
                start += size
        return tuple(result)


def reducer_from_context(parameters):
    """A DistributedGradReducer when the parallel context says data parallel, else None."""
    if not _parallel.data_parallel():
        return None
    mean = bool(_parallel.get_auto_parallel_context("gradients_mean"))
    return DistributedGradReducer(parameters, mean=mean)
