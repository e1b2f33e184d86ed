"""``autograd.core``: ``make_vjp``/``make_jvp``/``vspace``; the rule tables are autograd internals."""

from ._core import VSpace, make_jvp, make_vjp, vspace  # noqa: F401
from .extend import primitive  # noqa: F401

primitive_vjps = {}  # autograd's rule table: nothing is registered through it here


def __getattr__(name):
    raise AttributeError(f"[peer-missing] autograd.core.{name}: autograd internals")
