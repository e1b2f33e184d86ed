"""Host-memory policy of the CPU backend.

numpy allocates every result with malloc. glibc serves blocks above its mmap threshold (128 KiB
to 32 MiB, adaptive) with fresh ``mmap`` pages and gives them back on free, so each large
temporary of every step pays first-touch page faults again; on VMs that costs as much as the
arithmetic (``np.exp`` of 1M floats: 1.2 ms into a fresh array, 0.4 ms into a reused one).
Keeping freed blocks in the heap lets the next step reuse them, as the caching allocators of
PyTorch-CUDA and XLA do. The price: the process's resident size stays at its high-water mark.

Set ``DIFFSCI_MALLOC_TUNE=0`` before importing diffsci to keep glibc's defaults.
"""

import ctypes
import ctypes.util
import os
import sys

_M_TRIM_THRESHOLD = -1
_M_MMAP_MAX = -4
_applied = [False]


def reuse_freed_memory():
    """Ask glibc to keep freed blocks for reuse (no per-block mmap, no trimming).

    Returns True when the policy is in force; False on other C libraries, when disabled with
    ``DIFFSCI_MALLOC_TUNE=0``, or when mallopt refuses.
    """
    if _applied[0]:
        return True
    if os.environ.get("DIFFSCI_MALLOC_TUNE", "1") == "0" or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # musl and others have no mallopt
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    ok = mallopt(_M_MMAP_MAX, 0) == 1 and mallopt(_M_TRIM_THRESHOLD, 2**31 - 1) == 1
    _applied[0] = bool(ok)
    return _applied[0]
