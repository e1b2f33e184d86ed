"""Worker of test_sendrecv (run under mpiexec -n 2): a ring exchange and its derivatives.

Each rank r holds x_r [3, 4] (seed 10 + r); y_r = sendrecv(x_r, dst=r+1, src=r-1) (a ring) and
z_r = sendrecv(x_r, dst=r-1 or nobody, src=r+1 or nobody) (open ends). Writes the values,
h_r = halo_exchange(x_r[:1], 3 x_r[2:], open ends),
the gradient of sum_r sum(w_r * sin(y_r) * x_r + z_r**2) + sum(sin(h_r) * w_r[:2]) and a JVP to out/rank<r>.npz.
"""

import sys

import numpy as np

from diffsci import core
from diffsci.core import communication as comm

comm.init()
r, n = comm.get_rank(), comm.get_group_size()
x = core.Tensor(np.random.default_rng(10 + r).standard_normal((3, 4)))
w = core.Tensor(np.random.default_rng(20 + r).standard_normal((3, 4)))


def forward(x):
    y = comm.sendrecv(x, dst=(r + 1) % n, src=(r - 1) % n, tag=1)
    z = comm.sendrecv(
        x * 2.0, dst=r - 1 if r > 0 else None, src=r + 1 if r < n - 1 else None, tag=2
    )
    return y, z


def halo(x):  # open ends: rank 0 has no prev, rank n-1 no next
    return comm.halo_exchange(
        x[:1], 3.0 * x[2:], r - 1 if r > 0 else None, r + 1 if r < n - 1 else None, tag=5
    )


def loss(x):
    y, z = forward(x)
    h = halo(x)
    return (w * ops_sin(y) * x).sum() + (z * z).sum() + (ops_sin(h[:, 0]) * w[:2]).sum()


def ops_sin(t):
    return core.ops.sin(t)


y, z = forward(x)
g = core.grad(loss)(x)
gj = core.jit(core.grad(loss))(x)
_, t = core.jvp(lambda x: forward(x)[0], (x,), (w,))
np.savez(
    f"{sys.argv[1]}/rank{r}.npz",
    y=y.asnumpy(), z=z.asnumpy(), h=halo(x).asnumpy(), g=g.asnumpy(), gj=gj.asnumpy(), t=t.asnumpy(),
)  # fmt: skip
