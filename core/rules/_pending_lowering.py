"""Lowering records of the shape, reduction and linalg primitives, until their families'
rules modules (core/rules/shape.py, reduction.py, linalg.py) carry them: move each block there
and delete this module. Codegen writes reshape/transpose/broadcast_to/sum as method calls, and
may overwrite the fresh results of the others in place."""

from ..jit.lowering import deflowering
from ..prims import linalg as prims_linalg
from ..prims import reduction as prims_reduction
from ..prims import shape as prims_shape

deflowering(
    prims_shape.reshape, emit=lambda args, params: f"{args[0]}.reshape({tuple(params['shape'])})"
)
deflowering(
    prims_shape.transpose,
    emit=lambda args, params: f"{args[0]}.transpose({tuple(params['perm'])})",
)
deflowering(
    prims_shape.broadcast_to,
    emit=lambda args, params: f"xp.broadcast_to({args[0]}, {tuple(params['shape'])})",
)
deflowering(prims_shape.concatenate, fresh=True)
deflowering(prims_shape.pad, fresh=True)
deflowering(
    prims_reduction.reduce_sum,
    emit=lambda args, params: (
        f"{args[0]}.sum(axis={tuple(params['axes'])}, keepdims={params['keepdims']})"
    ),
)
for _p in (
    prims_reduction.reduce_max,
    prims_reduction.reduce_min,
    prims_reduction.reduce_prod,
    prims_reduction.cumsum,
):
    deflowering(_p, fresh=True)
deflowering(prims_linalg.matmul, fresh=True)
