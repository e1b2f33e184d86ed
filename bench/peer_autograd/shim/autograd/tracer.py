"""``isbox``: is this a value being traced (a diffsci Tracer)."""

import core
from core.primitive import Tracer

from .extend import primitive  # noqa: F401


def isbox(x):
    return isinstance(x, Tracer)


def getval(x):
    return x.concrete() if isinstance(x, Tracer) else core.tensor(x)
