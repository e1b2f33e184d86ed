"""Native CPU kernels for domain code: the compiler and thread pool that core's own kernels use.

A domain writes a C kernel for a hot composite (``core.ops.kernel_call`` binds the two) and
builds it with :func:`load`: compiled once with the machine's C compiler (``-O3
-march=native``, never ``-ffast-math``), cached on disk and loaded with ctypes, exactly as
``core/backend/cc.py`` does for core's kernels. Kernels that want threads use
``diffsci_parallel_for`` from :func:`parallel_header` (the pool sized by
``core.set_num_threads``) and take the thread count as an argument (:func:`num_threads`).

Everything is optional: :func:`available` is False without a compiler (or with
``DIFFSCI_NATIVE=0``), and callers keep their composite path.
"""

from .backend.cc import address, available, function, load, math_header, parallel_header
from .backend.threads import get_num_threads as num_threads

__all__ = [
    "address",
    "available",
    "function",
    "load",
    "math_header",
    "num_threads",
    "parallel_header",
]
