"""Base class of PDE problems defined with sympy, and MindFlow's built-in problems
(``mindflow/pde/pde_with_loss.py``): ``PDEWithLoss``, ``Burgers``, ``NavierStokes``,
``Poisson``."""

import math

from sympy import Function, Symbol, diff, symbols

from diffsci import core

from .sympy2core import evaluate_formulas, sympy_to_mindspore

__all__ = ["Burgers", "NavierStokes", "PDEWithLoss", "Poisson"]


def _loss_from(loss_fn):
    if isinstance(loss_fn, str):
        from diffsci.mindflow.core import get_loss_metric  # MindFlow's subpackage, not the engine

        return get_loss_metric(loss_fn)
    if not callable(loss_fn):
        raise TypeError(f"loss_fn must be a loss name or a callable, got {type(loss_fn).__name__}")
    return loss_fn


class PDEWithLoss:
    """Base class of user-defined PDE problems (MindFlow's ``PDEWithLoss``).

    A subclass overrides :meth:`pde` to return ``{name: sympy residual}`` (and usually defines
    ``bc``/``ic`` dicts translated with :func:`sympy_to_mindspore` in its ``__init__``) and
    :meth:`get_loss` to combine the residuals of its batches. :meth:`parse_node` evaluates
    translated equations on a batch: one forward pass, and one reverse pass per gradient that
    the equations' derivatives need (any order, shared across the equations; see
    :mod:`mindflow.pde.derivatives`).

    Args:
        model (Cell or callable): the network, inputs ``[N, d]`` -> outputs ``[N, m]``.
        in_vars (list[sympy.Symbol]): the ``d`` input variables, in column order.
        out_vars (list[sympy.Function]): the ``m`` output variables, functions of ``in_vars``.
        params (list[sympy.Symbol]): symbols of trainable parameters (inverse problems).
        params_val (Parameter): their values, a ``[P]`` Parameter (MindFlow's convention), or
            a sequence of ``P`` scalar Parameters. With ``params`` and no ``params_val`` a
            float32 ``Parameter`` of zeros named ``"pde_params"`` is made (pass it, from
            :meth:`trainable_params`, to the optimizer).

    Example::

        class MyProblem(PDEWithLoss):
            def __init__(self, model):
                self.x, self.y = symbols("x y")
                self.u = Function("u")(self.x, self.y)
                super().__init__(model, [self.x, self.y], [self.u])
                self.bc_nodes = sympy_to_mindspore(self.bc(), [self.x, self.y], [self.u])

            def pde(self):
                return {"my_eq": diff(self.u, (self.x, 2)) + diff(self.u, (self.y, 2)) - 4.0}

            def bc(self):
                return {"bc_eq": self.u - self.x**2 - self.y**2}

            def get_loss(self, pde_data, bc_data):
                pde_res = self.parse_node(self.pde_nodes, inputs=pde_data)[0]
                bc_res = self.parse_node(self.bc_nodes, inputs=bc_data)[0]
                return (pde_res**2).mean() + (bc_res**2).mean()
    """

    def __init__(self, model, in_vars, out_vars, params=None, params_val=None):
        self.model = model
        # MindFlow's attributes: x [N, d] -> [m, N, d] and [m, d, N, d] (parse_node does not
        # use them: it takes only the derivatives its equations read)
        self.jacobian = core.batched_jacobian(model)
        self.hessian = core.batched_hessian(model)
        self.in_vars = list(in_vars)
        self.out_vars = list(out_vars)
        self.params = list(params) if params is not None else None
        if self.params and params_val is None:
            params_val = core.Parameter(
                core.ops.zeros((len(self.params),), dtype=core.float32), name="pde_params"
            )
        if self.params and isinstance(params_val, core.Tensor):
            if params_val.ndim != 1 or params_val.shape[0] != len(self.params):
                raise ValueError(
                    f"params_val has shape {tuple(params_val.shape)} but there are "
                    f"{len(self.params)} params {self.params}: expected [{len(self.params)}]"
                )
        self.param_val = params_val  # MindFlow's attribute name
        self.params_val = params_val
        pde_nodes = self.pde() or {}
        if isinstance(pde_nodes, dict) and pde_nodes:
            self.pde_nodes = sympy_to_mindspore(pde_nodes, self.in_vars, self.out_vars, params)

    def pde(self):
        """The governing equations, ``{name: sympy residual}``; override it (None: none)."""
        return None

    def get_loss(self, *args, **kwargs):
        """The training loss from the problem's batches; a subclass defines it."""
        raise NotImplementedError(
            f"{type(self).__name__}.get_loss is not defined: override get_loss(...) to combine "
            "the residuals of parse_node into a scalar loss"
        )

    def trainable_params(self):
        """The equation's trainable parameters (``params_val``'s Parameters), for the
        optimizer next to ``model.trainable_params()``."""
        v = self.params_val
        if v is None:
            return []
        if isinstance(v, core.Parameter):
            return [v]
        return [p for p in v if isinstance(p, core.Parameter)]

    def parse_node(self, formula_nodes, inputs=None, norm=None):
        """Evaluate translated equations on a batch.

        Args:
            formula_nodes (list[FormulaNode]): from :func:`sympy_to_mindspore`.
            inputs (Tensor): the batch ``[N, d]``.
            norm (Tensor): outward unit normals ``[N, k]`` (or one ``[k]``) for
                ``Derivative(u, n)``; the ``k`` components pair with the first ``k`` inputs.

        Returns:
            list[Tensor]: one residual ``[N, 1]`` per equation.
        """
        if inputs is None:
            raise ValueError("parse_node: inputs (the batch [N, d]) is required")
        return evaluate_formulas(formula_nodes, self.model, inputs, norm, self.params_val)


def _residual_loss(problem, nodes, data, norm=None):
    res = problem.parse_node(nodes, inputs=data, norm=norm)
    res = res[0] if len(res) == 1 else core.ops.concat(res, axis=1)
    return problem.loss_fn(res, core.ops.zeros_like(res))


class Burgers(PDEWithLoss):
    r"""1-D viscous Burgers' equation (MindFlow's ``Burgers``):

    .. math:: u_t + u u_x - \nu u_{xx} = 0,\quad \nu = 0.01/\pi,

    inputs ``(x, t)``, output ``u`` (Raissi et al. 2019, Sec. 3.1.1).

    Args:
        model (Cell): the network, ``[N, 2] -> [N, 1]``.
        loss_fn (Union[str, Cell]): the loss by name (``"mse"``) or a loss cell.
    """

    def __init__(self, model, loss_fn="mse"):
        self.mu = 0.01 / math.pi  # MindFlow rounds it to float32; the exact value here
        self.x, self.t = symbols("x t")
        self.u = Function("u")(self.x, self.t)
        self.in_vars = [self.x, self.t]
        self.out_vars = [self.u]
        super().__init__(model, self.in_vars, self.out_vars)
        self.loss_fn = _loss_from(loss_fn)

    def pde(self):
        """``{"burgers": u_t + u u_x - mu u_xx}``."""
        burgers_eq = (
            diff(self.u, (self.t, 1))
            + self.u * diff(self.u, (self.x, 1))
            - self.mu * diff(self.u, (self.x, 2))
        )
        return {"burgers": burgers_eq}

    def get_loss(self, pde_data):
        """The loss of the PDE residual on ``pde_data [N, 2]`` (a subclass adds IC/BC)."""
        return _residual_loss(self, self.pde_nodes, pde_data)


class NavierStokes(PDEWithLoss):
    r"""2-D incompressible Navier-Stokes equations (MindFlow's ``NavierStokes``):

    .. math::
        u_t + u u_x + v u_y + p_x - (u_{xx} + u_{yy}) / Re = 0,\\
        v_t + u v_x + v v_y + p_y - (v_{xx} + v_{yy}) / Re = 0,\\
        u_x + v_y = 0,

    inputs ``(x, y, t)``, outputs ``(u, v, p)``; equation names ``momentum_x``,
    ``momentum_y``, ``continuty`` (MindFlow's spelling).

    Args:
        model (Cell): the network, ``[N, 3] -> [N, 3]``.
        re (float): the Reynolds number.
        loss_fn (Union[str, Cell]): the loss by name (``"mse"``) or a loss cell.
    """

    def __init__(self, model, re=100.0, loss_fn="mse"):
        if not re > 0:
            raise ValueError(f"NavierStokes: re must be positive, got {re}")
        self.number = 1.0 / float(re)
        self.x, self.y, self.t = symbols("x y t")
        self.u = Function("u")(self.x, self.y, self.t)
        self.v = Function("v")(self.x, self.y, self.t)
        self.p = Function("p")(self.x, self.y, self.t)
        self.in_vars = [self.x, self.y, self.t]
        self.out_vars = [self.u, self.v, self.p]
        super().__init__(model, self.in_vars, self.out_vars)
        self.loss_fn = _loss_from(loss_fn)

    def pde(self):
        """``{"momentum_x", "momentum_y", "continuty"}`` residuals."""
        u, v, p, x, y, t = self.u, self.v, self.p, self.x, self.y, self.t
        momentum_x = (
            u.diff(t) + u * u.diff(x) + v * u.diff(y) + p.diff(x)
            - self.number * (diff(u, (x, 2)) + diff(u, (y, 2)))
        )  # fmt: skip
        momentum_y = (
            v.diff(t) + u * v.diff(x) + v * v.diff(y) + p.diff(y)
            - self.number * (diff(v, (x, 2)) + diff(v, (y, 2)))
        )  # fmt: skip
        continuty = u.diff(x) + v.diff(y)
        return {"momentum_x": momentum_x, "momentum_y": momentum_y, "continuty": continuty}

    def get_loss(self, pde_data):
        """The loss of the three residuals on ``pde_data [N, 3]``."""
        return _residual_loss(self, self.pde_nodes, pde_data)


class Poisson(PDEWithLoss):
    r"""2-D Poisson equation (MindFlow's ``Poisson``): :math:`u_{xx} + u_{yy} + 1 = 0`,
    inputs ``(x, y)``, output ``u``; ``self.normal`` is the normal symbol ``n``.

    Args:
        model (Cell): the network, ``[N, 2] -> [N, 1]``.
        loss_fn (Union[str, Cell]): the loss by name (``"mse"``) or a loss cell.
    """

    def __init__(self, model, loss_fn="mse"):
        self.x = Symbol("x")
        self.y = Symbol("y")
        self.normal = Symbol("n")
        self.u = Function("u")(self.x, self.y)
        self.in_vars = [self.x, self.y]
        self.out_vars = [self.u]
        super().__init__(model, self.in_vars, self.out_vars)
        self.loss_fn = _loss_from(loss_fn)

    def pde(self):
        """``{"poisson": u_xx + u_yy + 1}``."""
        return {"poisson": diff(self.u, (self.x, 2)) + diff(self.u, (self.y, 2)) + 1.0}

    def get_loss(self, pde_data):
        """The loss of the residual on ``pde_data [N, 2]``."""
        return _residual_loss(self, self.pde_nodes, pde_data)
