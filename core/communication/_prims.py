"""The collectives as primitives, with their VJP, JVP and batching rules.

Each collective is one primitive: eagerly it runs MPI on the backend arrays; under
``core.jit`` it is one opaque equation of the graph (its ``impl`` runs when the compiled graph
does); under ``grad``/``vjp``/``jvp`` its rules below, written with core primitives (the
collectives themselves), give derivatives of any order. The rules follow from linearity, with
the convention of SPMD training that the objective is the sum over ranks of each rank's loss:

    all_reduce(sum)        y_r = sum_s x_s              VJP: all_reduce(sum) of g
    all_reduce(max|min)    y_r = max_s x_s              VJP: all_reduce(sum) of g, to the
                                                        ranks that hold the extremum (ties split)
    all_reduce(prod)       y_r = prod_s x_s             VJP: all_reduce(sum)(g) * y / x
    all_gather(axis)       y = concat_s x_s             VJP: reduce_scatter(sum) of g
    reduce_scatter(sum)    y_r = (sum_s x_s)[block r]   VJP: all_gather of g
    broadcast(root)        y_r = x_root                 VJP: reduce(sum) of g to root
    reduce(sum, root)      y_root = sum_s x_s, else 0   VJP: broadcast of g from root
    all_to_all(a -> b)     block j of axis a to rank j  VJP: all_to_all(b -> a) of g

Every rank must take the same path through these rules (same tensors differentiated): that is
what SPMD code does; a rank that skips a collective the others call is caught by the signature
check and the timeout of ``management``.
"""

import os
import zlib

import numpy as np

from ..primitive import ShapedArray
from ..prims._define import defprim
from ..prims.elementwise import convert, div, equal, mul
from ..rules._define import defjvp, defvjp
from ..vmap import batch_rules, to_front
from . import management as _m

_OPS = ("sum", "max", "min", "prod")
_CODES = {
    "all_reduce": 2,
    "all_gather": 3,
    "reduce_scatter": 4,
    "broadcast": 5,
    "reduce": 6,
    "all_to_all": 7,
}


def _mpi_op(op):
    mpi = _m._State.mpi
    return {"sum": mpi.SUM, "max": mpi.MAX, "min": mpi.MIN, "prod": mpi.PROD}[op]


def _cuda_aware():
    """``DIFFSCI_CUDA_AWARE_MPI=1``: hand GPU (cupy) buffers to MPI directly (an MPI built with
    CUDA support); otherwise they are staged through host memory."""
    return os.environ.get("DIFFSCI_CUDA_AWARE_MPI", "0") == "1"


def _buffers(xp, x):
    """``(a, bx, back)``: ``x`` as a C-contiguous array MPI can send, the array namespace of
    the buffers (numpy, or cupy for CUDA-aware MPI), and a function that turns a result back
    into ``x``'s array type and dtype. float16, bfloat16 and bool travel as float32 / uint8
    (MPI has no portable type for them)."""
    dtype = x.dtype
    on_device = xp is not np
    if on_device and _cuda_aware():
        bx = xp
        xp.cuda.get_current_stream().synchronize()  # MPI reads the buffer outside the stream
    else:
        bx = np
        if on_device:
            x = x.get()
    a = bx.asarray(x)
    if (dtype.kind == "f" and dtype.itemsize == 2) or dtype.name == "bfloat16":
        a = a.astype(np.float32)
    elif dtype == np.bool_:
        a = a.astype(np.uint8)
    a = a if a.flags.c_contiguous else a.copy(order="C")  # (ascontiguousarray makes 0-d 1-d)

    def back(out):
        out = out.astype(dtype, copy=False)
        return xp.asarray(out) if bx is not xp else out

    return a, bx, back


def _signature(name, x, *params):
    code = [_CODES[name], x.dtype.num, x.ndim, *list(x.shape)[:5]]
    code += [zlib.crc32(p.encode()) if isinstance(p, str) else int(p) for p in params]
    return code[:12]


def _describe(name, x, **params):
    args = ", ".join(f"{k}={v!r}" for k, v in params.items())
    return f"{name}({x.dtype.name}{list(x.shape)}, {args})"


def _comm(name, x, **params):
    """The communicator of ``params["group"]`` after the same-call check, or None for the
    identity (a world or group of one)."""
    comm = _m.comm_of(params["group"])
    if comm is None or comm.Get_size() == 1:
        return None
    text = _describe(name, x, **params)
    _m.check_same_call(comm, _signature(name, x, *params.values()), text)
    return comm, text


def _size(group):
    return _m.get_group_size(group)


# ---- implementations --------------------------------------------------------------------------
class PendingAllReduce:
    """A started non-blocking all-reduce of one backend array (eager; not a primitive: no
    derivatives, no jit). ``test()`` lets MPI progress it; ``wait()`` returns the result.
    Data-parallel training starts one per gradient bucket during the backward sweep
    (``nn.DistributedGradReducer.overlap``)."""

    def __init__(self, xp, x, op="sum", group=None):
        self._req, self._result = None, None
        group = _m.GlobalComm.WORLD_COMM_GROUP if group is None else str(group)
        c = _comm("all_reduce", x, op=op, group=group)
        if c is None:
            self._result = xp.array(x, copy=True)
            return
        self._comm, self._text = c
        self._send, bx, self._back = _buffers(xp, x)  # the send buffer lives until done
        self._out = bx.empty_like(self._send)
        self._req = self._comm.Iallreduce(self._send, self._out, _mpi_op(op))

    def test(self):
        """True when done (MPI progresses the transfer while it is asked)."""
        return self._req is None or self._req.Test()

    def wait(self):
        """The reduced array (same type and dtype as the input)."""
        if self._req is not None:
            _m.wait(self._req, self._text, self._comm)
            self._result = self._back(self._out)
            self._req = self._send = self._out = None
        return self._result


def _all_reduce_impl(xp, x, op, group):
    return PendingAllReduce(xp, x, op, group).wait()


def _all_gather_impl(xp, x, axis, group):
    c = _comm("all_gather", x, axis=axis, group=group)
    if c is None:
        return xp.array(x, copy=True)
    comm, text = c
    a, bx, back = _buffers(xp, x)
    buf = bx.empty((comm.Get_size(), *a.shape), dtype=a.dtype)
    _m.wait(comm.Iallgather(a, buf), text, comm)
    return back(bx.concatenate(list(buf), axis=axis))


def _reduce_scatter_impl(xp, x, op, axis, group):
    c = _comm("reduce_scatter", x, op=op, axis=axis, group=group)
    if c is None:
        return xp.array(x, copy=True)
    comm, text = c
    n = comm.Get_size()
    a, bx, back = _buffers(xp, x)
    front = bx.ascontiguousarray(bx.moveaxis(a, axis, 0))
    out = bx.empty((front.shape[0] // n, *front.shape[1:]), dtype=a.dtype)
    _m.wait(comm.Ireduce_scatter_block(front, out, _mpi_op(op)), text, comm)
    return back(bx.moveaxis(out, 0, axis))


def _broadcast_impl(xp, x, root, group):
    c = _comm("broadcast", x, root=root, group=group)
    if c is None:
        return xp.array(x, copy=True)
    comm, text = c
    a, _, back = _buffers(xp, x)
    buf = a.copy()
    _m.wait(comm.Ibcast(buf, root=root), text, comm)
    return back(buf)


def _reduce_impl(xp, x, op, root, group):
    c = _comm("reduce", x, op=op, root=root, group=group)
    if c is None:
        return xp.array(x, copy=True)
    comm, text = c
    a, bx, back = _buffers(xp, x)
    out = bx.zeros_like(a)
    _m.wait(comm.Ireduce(a, out, _mpi_op(op), root=root), text, comm)
    return back(out)


def _all_to_all_impl(xp, x, split_axis, concat_axis, group):
    c = _comm("all_to_all", x, split_axis=split_axis, concat_axis=concat_axis, group=group)
    if c is None:
        return xp.array(x, copy=True)
    comm, text = c
    n = comm.Get_size()
    a, bx, back = _buffers(xp, x)
    send = bx.ascontiguousarray(bx.stack(bx.split(a, n, axis=split_axis)))  # [n, *block]
    recv = bx.empty_like(send)
    _m.wait(comm.Ialltoall(send, recv), text, comm)
    return back(bx.concatenate(list(recv), axis=concat_axis))


# ---- shape rules ------------------------------------------------------------------------------
def _check_axis(name, x, axis):
    if not -x.ndim <= axis < x.ndim if x.ndim else axis != 0:
        raise ValueError(f"{name}: axis {axis} is out of range for shape {tuple(x.shape)}")


def _divisible(name, x, axis, n, group):
    if x.shape[axis] % n:
        raise ValueError(
            f"{name}: axis {axis} of shape {tuple(x.shape)} has length {x.shape[axis]}, not a "
            f"multiple of the size {n} of group {group!r}"
        )


def _all_reduce_abstract(x, op, group):
    if op not in _OPS:
        raise ValueError(f"all_reduce: op must be one of {_OPS}, got {op!r}")
    return ShapedArray(x.shape, x.dtype)


def _all_gather_abstract(x, axis, group):
    _check_axis("all_gather", x, axis)
    shape = list(x.shape)
    shape[axis] *= _size(group)
    return ShapedArray(shape, x.dtype)


def _reduce_scatter_abstract(x, op, axis, group):
    if op not in _OPS:
        raise ValueError(f"reduce_scatter: op must be one of {_OPS}, got {op!r}")
    _check_axis("reduce_scatter", x, axis)
    n = _size(group)
    _divisible("reduce_scatter", x, axis, n, group)
    shape = list(x.shape)
    shape[axis] //= n
    return ShapedArray(shape, x.dtype)


def _rooted_abstract(name):
    def rule(x, root, group, op=None):
        n = _size(group)
        if not 0 <= root < n:
            raise ValueError(f"{name}: root {root} is outside group {group!r} of {n} ranks")
        return ShapedArray(x.shape, x.dtype)

    return rule


def _all_to_all_abstract(x, split_axis, concat_axis, group):
    _check_axis("all_to_all", x, split_axis)
    _check_axis("all_to_all", x, concat_axis)
    n = _size(group)
    _divisible("all_to_all", x, split_axis, n, group)
    shape = list(x.shape)
    shape[split_axis] //= n
    shape[concat_axis] *= n
    return ShapedArray(shape, x.dtype)


all_reduce_p = defprim("all_reduce", _all_reduce_impl, _all_reduce_abstract)
all_gather_p = defprim("all_gather", _all_gather_impl, _all_gather_abstract)
reduce_scatter_p = defprim("reduce_scatter", _reduce_scatter_impl, _reduce_scatter_abstract)
broadcast_p = defprim("comm_broadcast", _broadcast_impl, _rooted_abstract("broadcast"))
reduce_p = defprim("comm_reduce", _reduce_impl, _rooted_abstract("reduce"))
all_to_all_p = defprim("all_to_all", _all_to_all_impl, _all_to_all_abstract)


# ---- derivative rules (core primitives only: differentiable again) --------------------------
def _extremum_share(x, out, group):
    """1/k on the ranks whose ``x`` equals the extremum ``out`` (k of them), else 0."""
    hit = convert(equal(x, out), dtype=x.dtype)
    return div(hit, all_reduce_p(hit, op="sum", group=group))


def _all_reduce_vjp(g, out, x, op, group):
    total = all_reduce_p(g, op="sum", group=group)
    if op == "sum":
        return (total,)
    if op == "prod":
        return (div(mul(total, out), x),)
    return (mul(total, _extremum_share(x, out, group)),)


def _all_reduce_jvp(ts, out, x, op, group):
    (t,) = ts
    if t is None:
        return None
    if op == "sum":
        return all_reduce_p(t, op="sum", group=group)
    if op == "prod":
        return mul(out, all_reduce_p(div(t, x), op="sum", group=group))
    return all_reduce_p(mul(t, _extremum_share(x, out, group)), op="sum", group=group)


def _no_grad_op(name, op):
    raise NotImplementedError(
        f"{name}: derivatives are defined for op='sum' only (got op={op!r}); reduce with "
        "op='sum', or all_gather and reduce locally"
    )


def _reduce_scatter_vjp(g, out, x, op, axis, group):
    if op != "sum":
        _no_grad_op("reduce_scatter", op)
    return (all_gather_p(g, axis=axis, group=group),)


def _reduce_scatter_jvp(ts, out, x, op, axis, group):
    if op != "sum":
        _no_grad_op("reduce_scatter", op)
    return None if ts[0] is None else reduce_scatter_p(ts[0], op="sum", axis=axis, group=group)


def _reduce_vjp(g, out, x, op, root, group):
    if op != "sum":
        _no_grad_op("reduce", op)
    return (broadcast_p(g, root=root, group=group),)


def _reduce_jvp(ts, out, x, op, root, group):
    if op != "sum":
        _no_grad_op("reduce", op)
    return None if ts[0] is None else reduce_p(ts[0], op="sum", root=root, group=group)


defvjp(all_reduce_p, _all_reduce_vjp)
defvjp(
    all_gather_p,
    lambda g, out, x, axis, group: (reduce_scatter_p(g, op="sum", axis=axis, group=group),),
)
defvjp(reduce_scatter_p, _reduce_scatter_vjp)
defvjp(broadcast_p, lambda g, out, x, root, group: (reduce_p(g, op="sum", root=root, group=group),))
defvjp(reduce_p, _reduce_vjp)
defvjp(
    all_to_all_p,
    lambda g, out, x, split_axis, concat_axis, group: (
        all_to_all_p(g, split_axis=concat_axis, concat_axis=split_axis, group=group),
    ),
)

defjvp(all_reduce_p, _all_reduce_jvp)
defjvp(
    all_gather_p,
    lambda ts, out, x, axis, group: (
        None if ts[0] is None else all_gather_p(ts[0], axis=axis, group=group)
    ),
)
defjvp(reduce_scatter_p, _reduce_scatter_jvp)
defjvp(
    broadcast_p,
    lambda ts, out, x, root, group: (
        None if ts[0] is None else broadcast_p(ts[0], root=root, group=group)
    ),
)
defjvp(reduce_p, _reduce_jvp)
defjvp(
    all_to_all_p,
    lambda ts, out, x, split_axis, concat_axis, group: (
        None
        if ts[0] is None
        else all_to_all_p(ts[0], split_axis=split_axis, concat_axis=concat_axis, group=group)
    ),
)


# ---- batching: the batch axis goes first and the collective acts one axis further in --------
def _same_bdim(prim):
    def rule(args, bdims, **params):
        return prim(args[0], **params), bdims[0]

    return rule


def _norm(axis, ndim):
    return axis + ndim if axis < 0 else axis


def _axis_batch(prim, keys):
    def rule(args, bdims, **params):
        x = to_front(args[0], bdims[0])
        for k in keys:
            params[k] = _norm(params[k], x.ndim - 1) + 1
        return prim(x, **params), 0

    return rule


batch_rules[all_reduce_p] = _same_bdim(all_reduce_p)
batch_rules[broadcast_p] = _same_bdim(broadcast_p)
batch_rules[reduce_p] = _same_bdim(reduce_p)
batch_rules[all_gather_p] = _axis_batch(all_gather_p, ("axis",))
batch_rules[reduce_scatter_p] = _axis_batch(reduce_scatter_p, ("axis",))
batch_rules[all_to_all_p] = _axis_batch(all_to_all_p, ("split_axis", "concat_axis"))


# ---- neighbour exchange (halo cells of domain decomposition) ---------------------------------
def _sendrecv_impl(xp, x, dst, src, tag, group):
    """Send ``x`` to rank ``dst`` and return what rank ``src`` sent (same shape and dtype);
    ``-1`` for either means nobody (the result is zeros when ``src`` is -1). Both messages are
    non-blocking (``Isend``/``Irecv``) and polled against the deadline of ``management.wait``.
    No signature check: the ranks call it with different peers by design."""
    comm = _m.comm_of(group)
    if comm is None or comm.Get_size() == 1:
        if src == -1:
            return xp.zeros_like(x)
        if src != 0 or dst != 0:
            raise ValueError(f"sendrecv: a world of one has only rank 0, got dst={dst} src={src}")
        return xp.array(x, copy=True)
    a, bx, back = _buffers(xp, x)
    out = bx.zeros_like(a)
    text = f"sendrecv({x.dtype.name}{list(x.shape)}, dst={dst}, src={src}, tag={tag})"
    recv = comm.Irecv(out, source=src, tag=tag) if src != -1 else None
    send = comm.Isend(a, dest=dst, tag=tag) if dst != -1 else None
    for request in (recv, send):
        if request is not None:
            _m.wait(request, text, comm)
    return back(out)


def _sendrecv_abstract(x, dst, src, tag, group):
    return ShapedArray(x.shape, x.dtype)


sendrecv_p = defprim("sendrecv", _sendrecv_impl, _sendrecv_abstract)
# linear: the transpose sends the cotangent back the way the value came (to ``src``, from ``dst``)
defvjp(
    sendrecv_p,
    lambda g, out, x, dst, src, tag, group: (
        sendrecv_p(g, dst=src, src=dst, tag=tag, group=group),
    ),
)
defjvp(
    sendrecv_p,
    lambda ts, out, x, dst, src, tag, group: (
        None if ts[0] is None else sendrecv_p(ts[0], dst=dst, src=src, tag=tag, group=group)
    ),
)
batch_rules[sendrecv_p] = _same_bdim(sendrecv_p)


def _halo_exchange_impl(xp, to_prev, to_next, prev, next, tag, group):
    """Both directions of a 1-D halo exchange in one step: ``to_next`` goes to rank ``next``,
    ``to_prev`` to rank ``prev`` (-1: nobody); returns ``[2, ...]``: what ``prev`` sent to
    its next (row 0) and what ``next`` sent to its prev (row 1), zeros where nobody. The two
    receives and the two sends are posted together (non-blocking), then waited on."""
    comm = _m.comm_of(group)
    if comm is None or comm.Get_size() == 1:
        if {prev, next} - {-1, 0}:
            raise ValueError(
                f"halo_exchange: a world of one has only rank 0, got prev={prev} next={next}"
            )
        rows = [to_next if prev == 0 else xp.zeros_like(to_next),
                to_prev if next == 0 else xp.zeros_like(to_prev)]  # fmt: skip
        return xp.stack(rows)
    a_prev, bx, back = _buffers(xp, to_prev)
    a_next, _, _ = _buffers(xp, to_next)
    out = bx.zeros((2, *a_prev.shape), dtype=a_prev.dtype)
    text = (
        f"halo_exchange({to_prev.dtype.name}{list(to_prev.shape)}, prev={prev}, next={next}, "
        f"tag={tag})"
    )
    requests = []
    if prev != -1:
        requests += [comm.Irecv(out[0], source=prev, tag=tag), comm.Isend(a_prev, dest=prev,
                     tag=tag + 1)]  # fmt: skip
    if next != -1:
        requests += [comm.Irecv(out[1], source=next, tag=tag + 1), comm.Isend(a_next, dest=next,
                     tag=tag)]  # fmt: skip
    for request in requests:
        _m.wait(request, text, comm)
    return back(out)


def _halo_exchange_abstract(to_prev, to_next, prev, next, tag, group):
    if tuple(to_prev.shape) != tuple(to_next.shape) or to_prev.dtype != to_next.dtype:
        raise ValueError(
            f"halo_exchange: to_prev {to_prev.dtype}{list(to_prev.shape)} and to_next "
            f"{to_next.dtype}{list(to_next.shape)} must have the same shape and dtype"
        )
    return ShapedArray((2, *to_prev.shape), to_prev.dtype)


halo_exchange_p = defprim("halo_exchange", _halo_exchange_impl, _halo_exchange_abstract)


def _rows(y):
    from ..ops import slice_axis, squeeze

    return squeeze(slice_axis(y, 0, 0, 1), 0), squeeze(slice_axis(y, 0, 1, 2), 0)


def _halo_exchange_vjp(g, out, to_prev, to_next, prev, next, tag, group):
    # out_r = [to_next of prev(r), to_prev of next(r)], so dL/d to_prev_r = g_prev(r)[1] and
    # dL/d to_next_r = g_next(r)[0]: the same exchange with to_prev := g[0], to_next := g[1]
    # returns exactly those as its rows 0 and 1
    g0, g1 = _rows(g)
    back = halo_exchange_p(g0, g1, prev=prev, next=next, tag=tag, group=group)
    return _rows(back)


def _halo_exchange_jvp(ts, out, to_prev, to_next, prev, next, tag, group):
    if ts[0] is None and ts[1] is None:
        return None
    from ..ops import zeros_like

    t_prev = ts[0] if ts[0] is not None else zeros_like(to_prev)
    t_next = ts[1] if ts[1] is not None else zeros_like(to_next)
    return halo_exchange_p(t_prev, t_next, prev=prev, next=next, tag=tag, group=group)


defvjp(halo_exchange_p, _halo_exchange_vjp)
defjvp(halo_exchange_p, _halo_exchange_jvp)


def _halo_exchange_batch(args, bdims, **params):
    """vmap: both slabs batched along a leading axis (an unbatched one broadcast to the batch);
    the exchanged pair [2, B, ...] carries the batch on axis 1."""
    from ..ops import broadcast_to, expand_dims

    size = next(a.shape[b] for a, b in zip(args, bdims) if b is not None)
    xs = [
        to_front(a, b) if b is not None else broadcast_to(expand_dims(a, 0), (size, *a.shape))
        for a, b in zip(args, bdims)
    ]
    return halo_exchange_p(*xs, **params), 1


batch_rules[halo_exchange_p] = _halo_exchange_batch
