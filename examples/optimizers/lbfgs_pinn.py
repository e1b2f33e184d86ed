"""L-BFGS on a physics-informed network: the 1-D Poisson problem.

Solves ``u''(x) = -pi^2 sin(pi x)`` on (0, 1) with ``u(0) = u(1) = 0`` (exact solution
``u = sin(pi x)``) by minimizing the mean squared PDE residual at collocation points plus the
boundary residual. ``u''`` comes from nesting ``core.grad`` (each output depends on its own
input row only, so the gradient of the sum is the pointwise derivative). A few Adam steps
start the fit, then strong-Wolfe L-BFGS (``opt.minimize(loss_fn)``) finishes it, in float64.

    python examples/optimizers/lbfgs_pinn.py
"""

import numpy as np

from diffsci import core
from diffsci.core import nn, ops


def build(seed):
    core.set_seed(seed)
    f64 = core.float64
    return nn.SequentialCell(
        nn.Dense(1, 20, dtype=f64),
        nn.Tanh(),
        nn.Dense(20, 20, dtype=f64),
        nn.Tanh(),
        nn.Dense(20, 1, dtype=f64),
    )


def main(steps=300, adam_steps=300, n_points=64, seed=0, verbose=True):
    net = build(seed)
    x = core.tensor(np.linspace(0.0, 1.0, n_points + 2)[1:-1, None])  # [N, 1] interior points
    x_bc = core.tensor(np.array([[0.0], [1.0]]))  # [2, 1]
    source = -(np.pi**2) * ops.sin(np.pi * x)  # [N, 1]

    def u_x(x):
        return core.grad(lambda x: net(x).sum())(x)  # [N, 1]

    def u_xx(x):
        return core.grad(lambda x: u_x(x).sum())(x)  # [N, 1]

    def loss_fn():
        residual = u_xx(x) - source
        return (residual**2).mean() + 10.0 * (net(x_bc) ** 2).mean()

    x_test = core.tensor(np.linspace(0.0, 1.0, 201)[:, None])
    exact = ops.sin(np.pi * x_test)

    def rel_l2():
        return float(ops.norm(net(x_test) - exact) / ops.norm(exact))

    initial = rel_l2()
    adam = nn.Adam(net.trainable_params(), learning_rate=5e-3)
    grad_fn = core.value_and_grad(loss_fn, None, adam.parameters)
    for _ in range(adam_steps):
        loss, grads = grad_fn()
        adam(grads)
    after_adam = rel_l2()
    if verbose:
        print(
            f"Adam  ({adam_steps} steps): loss {float(loss_fn()):.3e}, relative L2 error {after_adam:.3e}"
        )

    lbfgs = nn.LBFGS(
        net.trainable_params(),
        max_iter=steps,
        history_size=50,
        tolerance_grad=1e-12,
        tolerance_change=1e-16,
    )
    loss = lbfgs.minimize(loss_fn)
    final = rel_l2()
    if verbose:
        print(
            f"L-BFGS ({int(lbfgs.global_step)} iterations, {int(lbfgs.lbfgs_func_evals)} evaluations): "
            f"loss {float(loss):.3e}, relative L2 error {final:.3e}"
        )
    return {
        "initial_error": initial,
        "adam_error": after_adam,
        "final_error": final,
        "loss": float(loss),
    }


if __name__ == "__main__":
    main()
