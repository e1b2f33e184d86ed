"""Evaluation of MindFlow's Poisson cases (its ``src/utils.py``): the analytic solution as a Cell
and the relative L2 errors on test batches."""

import math

import numpy as np

import diffsci.core as ms
from diffsci.core import nn, ops
from diffsci.core import numpy as ms_np


class AnalyticSolution(nn.Cell):
    """``u(x) = prod_i sin(4 pi x_i) / (16 n pi^2)``, ``[N, n] -> [N, 1]``."""

    def __init__(self, n_dim):
        super().__init__()
        self.prod = ops.ReduceProd(keep_dims=True)
        self.factor = ms.Tensor(1 / (16.0 * n_dim * math.pi * math.pi))

    def construct(self, x):
        return self.factor * self.prod(ms_np.sin(4 * math.pi * x), 1)


def relative_l2(x, y):
    """``sqrt(mean (x - y)^2) / sqrt(mean y^2)`` (MindFlow writes ``ops.reduce_mean``; core's
    name is ``ops.mean``)."""
    return ops.sqrt(ops.mean(ops.square(x - y))) / ops.sqrt(ops.mean(ops.square(y)))


def calculate_l2_error(model, ds_test, n_dim):
    """Print the relative L2 errors on the domain and boundary batches of ``ds_test``; returns
    the last ``(domain, bc)`` pair."""
    solution = AnalyticSolution(n_dim)
    errors = None
    for x_domain, x_bc in ds_test:
        err_domain = float(relative_l2(model(x_domain), solution(x_domain)).asnumpy())
        err_bc = float(relative_l2(model(x_bc), solution(x_bc)).asnumpy())
        print(f"Relative L2 error (domain): {err_domain:.4f}")
        print(f"Relative L2 error (bc): {err_bc:.4f}")
        print("")
        errors = (err_domain, err_bc)
    return errors


def draw2d(model, nmaps, path="poisson_2d.png"):
    """The prediction on an ``nmaps x nmaps`` grid of the unit square, saved to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x, y = np.meshgrid(np.linspace(0.0, 1.0, nmaps), np.linspace(0.0, 1.0, nmaps))
    z = np.stack([x.ravel(), y.ravel()], axis=1)
    u = model(ms.Tensor(z, dtype=ms.float32)).asnumpy()[:, 0]
    fig, ax = plt.subplots()
    im = ax.scatter(z[:, 0], z[:, 1], c=u, cmap="rainbow", s=4)
    fig.colorbar(im, ax=ax)
    fig.savefig(path)
    plt.close(fig)
    return path
