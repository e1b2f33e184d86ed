"""The one interface every backend implements.

A backend owns: the array namespace ``xp`` that primitive implementations call, how data is
placed on its device and brought back, its random numbers, and how a fused elementwise
expression is compiled. Nothing outside ``core/backend/`` asks which backend runs.
"""


class Backend:
    """Base class; subclasses fill in every attribute and method below.

    Attributes:
        name: device name as given to ``core.set_device`` ("CPU", "GPU", "Ascend").
        xp: the numpy-compatible array module (numpy, cupy).
        array_type: the array class of ``xp``; tensors on this device hold one of these.
        fuses_everything: True where a fused elementwise kernel of any size and any function
            beats separate array calls (a GPU kernel launch); False on the CPU, where
            ``core.jit.fusion`` weighs array size, numexpr and native C loops instead.
    """

    name = "abstract"
    xp = None
    array_type = None
    fuses_everything = False

    def asarray(self, data, dtype=None):
        """Place ``data`` (nested lists, numpy arrays, scalars) on this device."""
        raise NotImplementedError

    def to_numpy(self, array):
        """Copy a device array back to a host ``numpy.ndarray``."""
        raise NotImplementedError

    def seed(self, seed):
        """Reset this backend's random generator."""
        raise NotImplementedError

    def normal(self, shape, dtype):
        raise NotImplementedError

    def uniform(self, shape, low, high, dtype):
        raise NotImplementedError

    def randint(self, low, high, shape, dtype):
        raise NotImplementedError

    def permutation(self, n):
        raise NotImplementedError

    def fuse_elementwise(self, kernel):
        """Compile a ``core.jit.fusion.FusedKernel`` to ``f(*arrays, out=None) -> array``."""
        raise NotImplementedError


REQUIRED = [
    name for name, value in vars(Backend).items() if callable(value) and not name.startswith("_")
]


def check_complete(backend):
    """Raise if ``backend`` misses a method of the interface (run once when it loads)."""
    missing = [m for m in REQUIRED if getattr(type(backend), m) is getattr(Backend, m)]
    if missing:
        raise TypeError(f"backend {backend.name} does not implement {missing}")
    return backend
