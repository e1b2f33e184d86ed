"""MindElec's ``Problem``: the base class of user-defined PINN problems.

A subclass overrides the methods of the constraint types its sub-datasets use (see
``mindelec.loss.Constraints``); each takes the network's output(s) and, as keyword arguments,
the batch's columns of that sub-dataset (``kwargs["src_domain_points"]``, ``[N, d]``), and
returns the residual ``[N, k]`` whose mean loss is driven to zero.

``output_names`` (ours, optional): the fields the equations are written for, e.g.
``("ex", "ey", "hz")``; ``NetWithLoss`` then checks that the network gives that many output
columns and names both counts when it does not.
"""

__all__ = ["Problem"]


class Problem:
    """Base class of user-defined problems (MindElec's ``Problem``)."""

    output_names = None

    def __init__(self):
        self.problem_type = type(self).__name__

    def _missing(self, method):
        raise NotImplementedError(
            f"{self.problem_type}.{method} is not defined, but a sub-dataset of the matching "
            "constraint type uses it; override it in the Problem subclass"
        )

    def governing_equation(self, *output, **kwargs):
        """Residual of the equation on ``Equation`` sub-datasets: ``[N, k]``."""
        self._missing("governing_equation")

    def boundary_condition(self, *output, **kwargs):
        """Residual of the boundary condition on ``BC`` sub-datasets: ``[N, k]``."""
        self._missing("boundary_condition")

    def initial_condition(self, *output, **kwargs):
        """Residual of the initial condition on ``IC`` sub-datasets: ``[N, k]``."""
        self._missing("initial_condition")

    def constraint_function(self, *output, **kwargs):
        """Residual of a ``Label``/``Function`` constraint: ``[N, k]``."""
        self._missing("constraint_function")
