"""Collectives on Tensors (``mindspore.communication.comm_func`` style functions) and
MindSpore's primitive classes ``ops.AllReduce``, ``ops.AllGather``, ``ops.ReduceScatter``,
``ops.Broadcast``, ``ops.AlltoAll``, ``ops.Send``, ``ops.Receive``.

Shapes: every rank passes a tensor of the same shape and dtype (as MindSpore's primitives
require). In a world of one every collective returns its input (a copy).
"""

import numpy as np

from ..jit.trace import JitTrace
from ..ops.creation import zeros
from ..primitive import trace_stack
from ..tensor import Tensor
from . import _prims
from . import management as _m

__all__ = [
    "AllGather",
    "AllReduce",
    "AlltoAll",
    "Broadcast",
    "Receive",
    "ReduceOp",
    "ReduceScatter",
    "Send",
    "all_gather",
    "all_gather_into_tensor",
    "all_reduce",
    "all_to_all",
    "broadcast",
    "recv",
    "reduce",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "halo_exchange",
    "send",
    "sendrecv",
]


class ReduceOp:
    """MindSpore's ``ops.ReduceOp``: the reduction of ``all_reduce``/``reduce_scatter``."""

    SUM = "sum"
    MAX = "max"
    MIN = "min"
    PROD = "prod"


def _group(group):
    return _m.GlobalComm.WORLD_COMM_GROUP if group is None else str(group)


def _op(name, op):
    op = str(op).lower()
    if op not in ("sum", "max", "min", "prod"):
        raise ValueError(f"{name}: op must be ReduceOp.SUM, MAX, MIN or PROD, got {op!r}")
    return op


def _tensor(name, x):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}: expected a Tensor, got {type(x).__name__}")
    return x


def _axis(name, x, axis):
    nd = x.ndim
    if not -nd <= axis < nd:
        raise ValueError(f"{name}: axis {axis} is out of range for shape {tuple(x.shape)}")
    return axis + nd if axis < 0 else axis


def _root(name, root, group):
    n = _m.get_group_size(group)
    if not 0 <= int(root) < n:
        raise ValueError(f"{name}: root {root} is outside group {group!r} of {n} ranks")
    return int(root)


def _divisible(name, x, axis, group):
    n = _m.get_group_size(group)
    if x.shape[axis] % n:
        raise ValueError(
            f"{name}: axis {axis} of shape {tuple(x.shape)} has length {x.shape[axis]}, not a "
            f"multiple of the size {n} of group {group!r}"
        )


def all_reduce(tensor, op=ReduceOp.SUM, group=None):
    """``op`` over the ranks of ``group``, elementwise; every rank gets the result.

    Args:
        tensor: [...] the same shape and dtype on every rank.
        op: ``ReduceOp.SUM`` (default), ``MAX``, ``MIN`` or ``PROD``.
        group: a group name (the world by default).

    Returns:
        [...] the reduction, on every rank.
    """
    _tensor("all_reduce", tensor)
    return _prims.all_reduce_p(tensor, op=_op("all_reduce", op), group=_group(group))


def all_gather(tensor, group=None, axis=0):
    """Concatenation of every rank's tensor along ``axis``, in rank order.

    Args:
        tensor: [d0, ...] the same shape on every rank.

    Returns:
        [n * d0, ...] (``n`` ranks; along ``axis``).
    """
    _tensor("all_gather", tensor)
    axis = _axis("all_gather", tensor, axis)
    return _prims.all_gather_p(tensor, axis=axis, group=_group(group))


def reduce_scatter(tensor, op=ReduceOp.SUM, group=None, axis=0):
    """``op`` over the ranks, then block ``rank`` of ``n`` equal blocks along ``axis``.

    Args:
        tensor: [n * d0, ...] (the length along ``axis`` a multiple of the group size).

    Returns:
        [d0, ...] this rank's block of the reduction.
    """
    _tensor("reduce_scatter", tensor)
    axis = _axis("reduce_scatter", tensor, axis)
    op, group = _op("reduce_scatter", op), _group(group)
    _divisible("reduce_scatter", tensor, axis, group)
    return _prims.reduce_scatter_p(tensor, op=op, axis=axis, group=group)


def broadcast(tensor, src=0, group=None):
    """Rank ``src``'s tensor on every rank (the others' values are ignored; shape [...] the same)."""
    _tensor("broadcast", tensor)
    group = _group(group)
    return _prims.broadcast_p(tensor, root=_root("broadcast", src, group), group=group)


def reduce(tensor, dst=0, op=ReduceOp.SUM, group=None):
    """``op`` over the ranks on rank ``dst``; the other ranks get zeros."""
    _tensor("reduce", tensor)
    group = _group(group)
    root = _root("reduce", dst, group)
    return _prims.reduce_p(tensor, op=_op("reduce", op), root=root, group=group)


def all_to_all(tensor, split_axis=0, concat_axis=0, group=None):
    """Split ``tensor`` in ``n`` blocks along ``split_axis``, send block ``j`` to rank ``j``,
    concatenate the received blocks (rank order) along ``concat_axis``.

    Args:
        tensor: [..., n * s, ..., c, ...] (``split_axis`` a multiple of the group size).

    Returns:
        [..., s, ..., n * c, ...]: the transpose that pair-axis sharding uses.
    """
    _tensor("all_to_all", tensor)
    split_axis = _axis("all_to_all", tensor, split_axis)
    concat_axis = _axis("all_to_all", tensor, concat_axis)
    group = _group(group)
    _divisible("all_to_all", tensor, split_axis, group)
    return _prims.all_to_all_p(tensor, split_axis=split_axis, concat_axis=concat_axis, group=group)


# MindSpore's comm_func names for the axis-0 forms
all_gather_into_tensor = all_gather
reduce_scatter_tensor = reduce_scatter


def _eager_only(name):
    if any(isinstance(t, JitTrace) for t in trace_stack()):
        raise RuntimeError(
            f"{name}: point-to-point messages run eagerly only; inside core.jit the compiler "
            "may drop or reorder them (one side would wait forever). Call it outside the "
            "compiled function, or use all_to_all / all_gather"
        )


def send(tensor, dst, group=None, tag=0):
    """Send ``tensor``'s value to rank ``dst`` (eager, with the timeout; no derivative: the
    receiving side's value does not depend on this rank's tensors for ``grad``)."""
    _eager_only("send")
    _tensor("send", tensor)
    comm = _m.comm_of(_group(group))
    if comm is None:
        raise ValueError("send: a world of one process has nobody to send to")
    a, _, _ = _prims._buffers(np, tensor.asnumpy())
    _m.wait(comm.Isend(a, dest=int(dst), tag=int(tag)), f"send to rank {dst} (tag {tag})", comm)


def recv(tensor, src, group=None, tag=0):
    """Receive a tensor shaped like ``tensor`` from rank ``src`` (eager, with the timeout);
    returns a new Tensor (``tensor`` only gives the shape and dtype, as in ``torch.distributed``)."""
    _eager_only("recv")
    _tensor("recv", tensor)
    comm = _m.comm_of(_group(group))
    if comm is None:
        raise ValueError("recv: a world of one process has nobody to receive from")
    template = tensor.asnumpy()
    a, _, back = _prims._buffers(np, template)
    a = a.copy()  # a fresh buffer: ``tensor`` is left as it was
    what = f"recv {template.dtype.name}{list(template.shape)} from rank {src} (tag {tag})"
    _m.wait(comm.Irecv(a, source=int(src), tag=int(tag)), what, comm)
    return Tensor(back(a))  # on the CPU (host messages)


def sendrecv(tensor, dst, src, group=None, tag=0):
    """Send ``tensor`` to rank ``dst`` and receive a tensor of the same shape from rank
    ``src`` in one non-blocking exchange (``MPI_Isend`` + ``MPI_Irecv``): the halo (ghost-cell)
    exchange of domain decomposition. Unlike ``send``/``recv`` it is a differentiable
    primitive that also runs inside ``core.jit``: it is linear, its VJP is the reverse exchange
    ``sendrecv(g, dst=src, src=dst)`` and its JVP the same exchange of the tangent.

    Every rank of ``group`` must make the matching calls in the same order (SPMD code).

    Args:
        tensor: [...] this rank's outgoing data (``dst``'s matching call receives it).
        dst: the rank to send to, or None (nobody: a physical boundary).
        src: the rank to receive from, or None (nobody: the result is zeros).
        tag: the MPI tag (distinguish the exchanges of one step, e.g. one per direction).

    Returns:
        [...] the tensor ``src`` sent, or zeros when ``src`` is None.
    """
    _tensor("sendrecv", tensor)
    group = _group(group)
    n = _m.get_group_size(group)
    peers = []
    for what, peer in (("dst", dst), ("src", src)):
        if peer is None:
            peers.append(-1)
            continue
        if not 0 <= int(peer) < n:
            raise ValueError(f"sendrecv: {what}={peer} is outside group {group!r} of {n} ranks")
        peers.append(int(peer))
    return _prims.sendrecv_p(tensor, dst=peers[0], src=peers[1], tag=int(tag), group=group)


def halo_exchange(to_prev, to_next, prev, next, group=None, tag=0):
    """The ghost-cell exchange of a 1-D (slab) domain decomposition, both directions at once:
    ``to_prev`` goes to rank ``prev`` and ``to_next`` to rank ``next`` while this rank receives
    ``prev``'s ``to_next`` and ``next``'s ``to_prev`` (two ``MPI_Irecv`` and two ``MPI_Isend``
    posted together, then waited on with the timeout). One primitive: differentiable (linear;
    its VJP is the same exchange of the cotangents) and safe inside ``core.jit``, where an
    exchange whose result a boundary rank does not read is still kept (the other direction's
    is), so no rank drops a message its neighbour waits for. ``sendrecv`` has no such
    guarantee when a rank ignores its result.

    Args:
        to_prev, to_next: [...] (same shape and dtype) this rank's cells next to its low and
            high faces.
        prev, next: the neighbour ranks, or None at a physical boundary (nothing is sent, the
            received halo is zeros).
        tag: MPI tags ``tag`` (towards next) and ``tag + 1`` (towards prev) are used.

    Returns:
        [2, ...]: row 0 the halo below the low face (``prev``'s ``to_next``), row 1 the halo
        above the high face (``next``'s ``to_prev``).
    """
    _tensor("halo_exchange", to_prev)
    _tensor("halo_exchange", to_next)
    group = _group(group)
    n = _m.get_group_size(group)
    peers = []
    for what, peer in (("prev", prev), ("next", next)):
        if peer is None:
            peers.append(-1)
        elif not 0 <= int(peer) < n:
            raise ValueError(
                f"halo_exchange: {what}={peer} is outside group {group!r} of {n} ranks"
            )
        else:
            peers.append(int(peer))
    return _prims.halo_exchange_p(
        to_prev, to_next, prev=peers[0], next=peers[1], tag=int(tag), group=group
    )


# ---- MindSpore's primitive classes -------------------------------------------------------------
class AllReduce:
    """``ops.AllReduce(op=ReduceOp.SUM, group=GlobalComm.WORLD_COMM_GROUP)(x)``."""

    def __init__(self, op=ReduceOp.SUM, group=None):
        self.op, self.group = _op("AllReduce", op), group

    def __call__(self, x):
        return all_reduce(x, self.op, self.group)


class AllGather:
    """``ops.AllGather(group)(x)``: concatenation along axis 0."""

    def __init__(self, group=None):
        self.group = group

    def __call__(self, x):
        return all_gather(x, self.group)


class ReduceScatter:
    """``ops.ReduceScatter(op=ReduceOp.SUM, group)(x)``: blocks along axis 0."""

    def __init__(self, op=ReduceOp.SUM, group=None):
        self.op, self.group = _op("ReduceScatter", op), group

    def __call__(self, x):
        return reduce_scatter(x, self.op, self.group)


class Broadcast:
    """``ops.Broadcast(root_rank, group)((x, ...))``: a tuple in, a tuple out (MindSpore's)."""

    def __init__(self, root_rank, group=None):
        self.root_rank, self.group = int(root_rank), group

    def __call__(self, inputs):
        if isinstance(inputs, Tensor):
            raise TypeError("Broadcast: expects a tuple of Tensors, as MindSpore's does")
        return tuple(broadcast(x, self.root_rank, self.group) for x in inputs)


class AlltoAll:
    """``ops.AlltoAll(split_count, split_dim, concat_dim, group)(x)``."""

    def __init__(self, split_count, split_dim, concat_dim, group=None):
        self.split_count, self.split_dim, self.concat_dim = split_count, split_dim, concat_dim
        self.group = group

    def __call__(self, x):
        n = _m.get_group_size(_group(self.group))
        if self.split_count != n:
            raise ValueError(
                f"AlltoAll: split_count={self.split_count} but the group has {n} ranks"
            )
        return all_to_all(x, self.split_dim, self.concat_dim, self.group)


class Send:
    """``ops.Send(sr_tag, dest_rank, group)(x)``."""

    def __init__(self, sr_tag, dest_rank, group=None):
        self.tag, self.dest, self.group = int(sr_tag), int(dest_rank), group

    def __call__(self, x):
        send(x, self.dest, self.group, self.tag)
        return x


class Receive:
    """``ops.Receive(sr_tag, src_rank, shape, dtype, group)()``."""

    def __init__(self, sr_tag, src_rank, shape, dtype, group=None):
        self.tag, self.src, self.group = int(sr_tag), int(src_rank), group
        self.shape, self.dtype = tuple(shape), dtype

    def __call__(self, *unused):
        return recv(zeros(self.shape, self.dtype), self.src, self.group, self.tag)
