"""``isbox``: is this a value being traced (a diffsci Tracer)."""

from diffsci import core
from diffsci.core.primitive import Tracer

from .extend import primitive  # noqa: F401


def isbox(x):
    return isinstance(x, Tracer)


def getval(x):
    return x.concrete() if isinstance(x, Tracer) else core.tensor(x)
