"""Backend registry and the current device.

``core.set_device("CPU" | "GPU" | "Ascend")`` selects where new tensors are created. Every
tensor knows its device from its array type; an op whose inputs live on two devices raises.
"""

from . import cpu_impls as _cpu_impls  # noqa: F401  (registers the CPU kernels)
from . import kernels as kernels
from .base import Backend as Backend
from .base import check_complete as check_complete
from .numpy_backend import NumpyBackend

_FACTORIES = {
    "CPU": NumpyBackend,
    "GPU": lambda: __import__("diffsci.core.backend.cupy_backend", fromlist=["x"]).CupyBackend(),
    "Ascend": lambda: __import__("diffsci.core.backend.ascend_backend", fromlist=["x"]).AscendBackend(),
}
_LOADED = {}
_BY_ARRAY_TYPE = {}
_current = None


_SEED = [None]  # the last core.set_seed value, applied to backends loaded after it


def get_backend(name=None):
    """The backend for device ``name`` (default: the current device; case-insensitive),
    loading it once."""
    name = name or _current.name
    backend = _LOADED.get(name)
    if backend is None:
        canonical = {n.lower(): n for n in _FACTORIES}.get(str(name).lower())
        if canonical is None:
            raise ValueError(f"unknown device {name!r}; choose one of {sorted(_FACTORIES)}")
        backend = _LOADED.get(canonical)
        if backend is None:
            backend = check_complete(_FACTORIES[canonical]())
            if _SEED[0] is not None:
                backend.seed(_SEED[0])
            _LOADED[canonical] = backend
            _BY_ARRAY_TYPE[backend.array_type] = backend
    return backend


def set_device(name):
    """Make ``name`` ("CPU", "GPU", "Ascend") the device of newly created tensors."""
    global _current
    _current = get_backend(name)


def get_device():
    """Name of the current device."""
    return _current.name


def current():
    """The current backend object."""
    return _current


def backend_of(array):
    """The backend that owns ``array`` (an ndarray of numpy, cupy, ...)."""
    backend = _BY_ARRAY_TYPE.get(type(array))
    if backend is None:
        raise TypeError(f"{type(array).__name__} is not an array of any loaded backend")
    return backend


def namespace_of(arrays):
    """The array namespace (``xp``) of the backend that owns ``arrays`` (a sequence; the
    current backend's when it is empty): what a primitive implementation is handed."""
    if not arrays:
        return _current.xp
    return backend_of(arrays[0]).xp


def available_devices():
    """Names of the devices whose array library imports and finds hardware."""
    names = []
    for name in _FACTORIES:
        try:
            get_backend(name)
            names.append(name)
        except RuntimeError:
            pass
    return names


set_device("CPU")
