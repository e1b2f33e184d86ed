"""autograd's extension API. ``primitive`` keeps the function as it is (diffsci differentiates
it by tracing); registering rules by hand (``defvjp``...) is autograd's internal machinery and is
reported as missing."""

from ._core import VSpace, vspace  # noqa: F401


def primitive(f):
    return f


notrace_primitive = primitive


def _missing(name):
    def fn(*args, **kwargs):
        raise AttributeError(f"[peer-missing] autograd.extend.{name}: autograd internals")

    return fn


defvjp = _missing("defvjp")
defjvp = _missing("defjvp")
defvjp_argnum = _missing("defvjp_argnum")
defjvp_argnum = _missing("defjvp_argnum")
def_linear = _missing("def_linear")
