"""The ``scipy.special``-style namespace of each array library.

Special functions (erf, gammaln, the Bessel functions ...) are not part of the array API:
numpy arrays take them from ``scipy.special``, cupy arrays from ``cupyx.scipy.special``, which
has the same names. A primitive's reference implementation asks for the namespace here
instead of branching on the array library.
"""

import numpy as np

_BY_XP = {}  # array namespace -> its special-function module (imported on first use)


def special_functions(xp):
    """The module of special functions for arrays of namespace ``xp`` (numpy, cupy)."""
    module = _BY_XP.get(xp)
    if module is None:
        if xp is np:
            import scipy.special as module
        else:
            import cupyx.scipy.special as module
        _BY_XP[xp] = module
    return module
