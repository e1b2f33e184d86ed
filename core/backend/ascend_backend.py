"""Ascend slot: registered so ``set_device('Ascend')`` gives a clear answer."""

from .base import Backend


class AscendBackend(Backend):
    name = "Ascend"

    def __init__(self):
        raise RuntimeError(
            "core.set_device('Ascend'): no Ascend array library is installed. diffsci's Ascend "
            "backend needs a numpy-compatible array module for the NPU (for example the "
            "`torch_npu`-free `acl` array bindings shipped with CANN); install CANN and that "
            "module, then register it in core/backend/__init__.py."
        )
