"""diffsci: scientific computing on a differentiable core.

The five packages live under this namespace, so diffsci coexists with Hugging Face
``datasets``, ByteDance ``protenix``, MindSpore's ``mindflow``/``mindelec`` and any ``core``:

    import diffsci.core as ms                 # the engine, MindSpore's names
    from diffsci import datasets, mindflow, mindelec, protenix

``import diffsci.compat`` opts an unchanged MindSpore / MindFlow / MindElec / Protenix script
in to the upstream import names (``import mindspore``, ``from mindflow.cell import FNO2D``).

In the repository the packages are the top-level folders ``core/``, ``datasets/``,
``mindflow/``, ``mindelec/`` and ``protenix/``; ``setup.py`` maps them into this namespace.
"""

import importlib as _importlib

__version__ = "0.1.0"

SUBPACKAGES = ("core", "datasets", "mindflow", "mindelec", "protenix")


def __getattr__(name):
    """``diffsci.core`` and the other subpackages, imported on first use (PEP 562)."""
    if name in SUBPACKAGES:
        return _importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *SUBPACKAGES])
