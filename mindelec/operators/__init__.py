"""MindElec's ``mindelec.operators``: derivatives of a network with respect to its inputs
(``Grad``, ``SecondOrderGrad``, ``Jacobian``, ``Hessian``), built on ``core``'s transforms so they
nest (a loss made of them is differentiated for training) and trace under ``core.jit``."""

from .derivatives import Grad as Grad
from .derivatives import Hessian as Hessian
from .derivatives import Jacobian as Jacobian
from .derivatives import SecondOrderGrad as SecondOrderGrad

__all__ = ["Grad", "Hessian", "Jacobian", "SecondOrderGrad"]
