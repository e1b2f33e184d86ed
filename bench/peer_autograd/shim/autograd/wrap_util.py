"""``unary_to_nary``: an operator on one-argument functions, applied to argument ``argnum``."""

import functools


def unary_to_nary(unary_operator):
    @functools.wraps(unary_operator)
    def nary_operator(fun, argnum=0, *nary_op_args, **nary_op_kwargs):
        @functools.wraps(fun)
        def nary_f(*args, **kwargs):
            def unary_f(x):
                if isinstance(argnum, int):
                    subargs = args[:argnum] + (x,) + args[argnum + 1 :]
                else:
                    subargs = list(args)
                    for i, xi in zip(argnum, x):
                        subargs[i] = xi
                    subargs = tuple(subargs)
                return fun(*subargs, **kwargs)

            x = args[argnum] if isinstance(argnum, int) else tuple(args[i] for i in argnum)
            return unary_operator(unary_f, x, *nary_op_args, **nary_op_kwargs)

        return nary_f

    return nary_operator


def get_name(f):
    return getattr(f, "__name__", "[unknown name]")
