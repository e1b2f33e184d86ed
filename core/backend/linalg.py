"""What the linear-algebra primitives need from a backend beyond its array namespace ``xp``.

- :func:`scipy_linalg`: the scipy.linalg-like module that goes with ``xp`` (matrix functions
  such as ``expm`` and ``sqrtm`` that the array API lacks).
- :func:`lapack_call`: a LAPACK-backed call whose ``LinAlgError`` names the primitive, so the
  message says which op failed also where no eager wrapper adds it (inside ``core.jit``).

Both are used by the reference implementations (``core/prims/linalg.py``, ``decomp.py``) and
by the CPU kernels (``cpu_impls/arrays.py``).
"""

import numpy as np

from .threads import blas_for_lapack


def scipy_linalg(xp):
    """scipy.linalg for numpy arrays, cupyx.scipy.linalg for cupy arrays."""
    if xp is np:
        import scipy.linalg

        return scipy.linalg
    import cupyx.scipy.linalg

    return cupyx.scipy.linalg


def lapack_call(name, fn, *args):
    """``fn(*args)``, with LAPACK's LinAlgError reworded to name the op ``name``; large
    operands get the BLAS threads that core's own GEMM otherwise holds at one
    (``threads.blas_for_lapack``)."""
    try:
        with blas_for_lapack(*args):
            return fn(*args)
    except np.linalg.LinAlgError as err:
        msg = str(err)
        if "singular" in msg.lower():
            msg = f"{name}: matrix is singular ({msg})"
        elif "positive definite" in msg.lower():
            msg = f"{name}: matrix is not (Hermitian) positive definite ({msg})"
        else:
            msg = f"{name}: {msg}"
        raise np.linalg.LinAlgError(msg) from None
