"""``autograd.util.quick_grad_check``: a gradient check along one random direction."""

from .test_util import check_grads


def quick_grad_check(fun, arg0, extra_args=(), kwargs=None, verbose=True, **_):
    kwargs = kwargs or {}
    check_grads(lambda x: fun(x, *extra_args, **kwargs), modes=["rev"], order=1)(arg0)
