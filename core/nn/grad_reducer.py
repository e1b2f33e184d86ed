"""``nn.DistributedGradReducer``: data-parallel gradients all-reduced in buckets.

Gradients are packed by dtype into flat buckets of at most ``bucket_mb`` megabytes, in reverse
parameter order (the order a backward pass produces them), each bucket all-reduced with one
``core.communication.all_reduce`` (one MPI message per bucket instead of one per parameter),
divided by the number of ranks when ``mean``, and unpacked. It is written with core ops, so it
runs eagerly, inside ``core.jit`` (each bucket is one opaque equation) and under ``grad``.

Overlap with the backward pass (eager steps, as ``nn.TrainOneStepCell`` and ``core.train.Model``
run them): ``with reducer.overlap() as pending: grads = grad_fn(...)`` then
``pending.finish(grads)``. Inside the block the backward sweep reports each Parameter's
gradient as soon as it is final (``core.autodiff.reverse.grad_ready_hook``); a bucket (laid out from the
parameters, last layers first) whose gradients are all in starts its non-blocking MPI
all-reduce at once, while the sweep goes on into earlier layers, and every later report lets
MPI progress the transfers in flight (MPICH progresses non-blocking collectives when it is
called). ``finish`` starts what the sweep did not (parameters without a gradient), waits and
unpacks. The sums are the blocking path's (elementwise over ranks; the bucket layout does not
change them). Under ``core.jit`` nothing is reported during the trace and ``finish`` runs the
blocking path.
"""

import numpy as np

from .. import backend as _backend
from .. import ops
from .. import parallel as _parallel
from ..autodiff.reverse import grad_ready_hook
from ..communication import management as _m
from ..communication._prims import PendingAllReduce
from ..communication.comm_func import all_reduce
from ..tensor import Tensor
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
        object.__setattr__(self, "_param_ids", tuple(id(p) for p in params))
        object.__setattr__(self, "_dtypes", tuple(np.dtype(p.dtype) for p in params))
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

    def overlap(self):
        """A context for one eager step whose bucket all-reduces start during the backward
        sweep (see the module docstring); its ``finish(grads)`` returns what
        ``construct(grads)`` would."""
        return _OverlappedReduction(self)

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


class _OverlappedReduction:
    """One step's bucket all-reduces, started as the backward sweep reports gradients."""

    def __init__(self, reducer):
        self.reducer = reducer
        self.active = reducer._group_size > 1
        shapes = reducer._shapes
        specs = [_Spec(s, d) for s, d in zip(shapes, reducer._dtypes, strict=True)]
        self.buckets = reducer.buckets(specs)  # the parameters' order, sizes and dtypes
        self.where = {}
        for b, idx in enumerate(self.buckets):
            for i in idx:
                self.where[reducer._param_ids[i]] = (b, i)
        self.arrived = [{} for _ in self.buckets]
        self.pending = {}  # bucket -> PendingAllReduce
        self._ctx = None

    def __enter__(self):
        if self.active:
            self._ctx = grad_ready_hook(self._on_ready)
            self._ctx.__enter__()
        return self

    def __exit__(self, *exc):
        if self._ctx is not None:
            self._ctx.__exit__(*exc)
            self._ctx = None
        return False

    def _on_ready(self, param, ct):
        loc = self.where.get(id(param))
        if loc is None or not isinstance(ct, Tensor):
            return
        b, i = loc
        self.arrived[b][i] = ct
        for q in self.pending.values():
            q.test()  # MPI progresses the buckets in flight
        if len(self.arrived[b]) == len(self.buckets[b]):
            self._start(b, [self.arrived[b][i] for i in self.buckets[b]])

    def _start(self, b, grads):
        arrays = [g._value.reshape(-1) for g in grads]
        xp = _backend.backend_of(arrays[0]).xp
        flat = arrays[0] if len(arrays) == 1 else xp.concatenate(arrays)  # [bucket]
        self.pending[b] = PendingAllReduce(xp, flat, "sum", self.reducer.group)

    def finish(self, grads):
        """The reduced gradients (a tuple aligned with the parameters)."""
        grads = tuple(grads)
        r = self.reducer
        if not self.pending or any(g is None for g in grads) or len(grads) != len(r._shapes):
            return r(grads)  # nothing started (traced step, one rank): the blocking path
        for b, idx in enumerate(self.buckets):  # same order on every rank
            if b not in self.pending:
                self._start(b, [grads[i] for i in idx])
        result = list(grads)
        for b, idx in enumerate(self.buckets):
            total = self.pending.pop(b).wait()
            if r.mean:
                total = total / r.degree
            start = 0
            for i in idx:
                size = int(np.prod(r._shapes[i]))
                piece = total[start : start + size].reshape(r._shapes[i])
                result[i] = Tensor(piece.astype(grads[i].dtype, copy=False))
                start += size
        return tuple(result)


class _Spec:
    """Shape and dtype of a parameter, for ``DistributedGradReducer.buckets``."""

    def __init__(self, shape, dtype):
        self.shape, self.dtype = shape, dtype


def reducer_from_context(parameters):
    """A DistributedGradReducer when the parallel context says data parallel, else None."""
    if not _parallel.data_parallel():
        return None
    mean = bool(_parallel.get_auto_parallel_context("gradients_mean"))
    return DistributedGradReducer(parameters, mean=mean)
