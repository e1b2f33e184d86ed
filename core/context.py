"""MindSpore's execution context: ``set_context(mode=GRAPH_MODE, device_target="CPU")``.

``GRAPH_MODE`` compiles: calling a Cell (``Cell.__call__``) or a function made by
``value_and_grad``/``grad`` outside any transformation runs it through ``core.jit`` (one
compiled graph per input signature, cached on the Cell or the function). ``PYNATIVE_MODE``
(the default, as in MindSpore 2.x) runs op by op. ``device_target`` is ``core.set_device``.
Other MindSpore context keys (``device_id``, ``save_graphs``, ``max_call_depth``...) are
accepted and stored, with no effect: they tune MindSpore's own compiler and runtime.

    import diffsci.core as ms
    ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU")
"""

from . import backend as _backend
from .jit import api as _jit_api

GRAPH_MODE = 0  # MindSpore's values: scripts sometimes compare with the integers
PYNATIVE_MODE = 1

# Keys MindSpore accepts that configure its own compiler, memory pool or profiler.
_STORED_ONLY = frozenset(
    {
        "device_id",
        "save_graphs",
        "save_graphs_path",
        "max_call_depth",
        "enable_graph_kernel",
        "graph_kernel_flags",
        "jit_config",
        "jit_level",
        "max_device_memory",
        "mempool_block_size",
        "variable_memory_max_size",
        "enable_reduce_precision",
        "runtime_num_threads",
        "inter_op_parallel_num",
        "pynative_synchronize",
        "deterministic",
        "check_bprop",
        "precompile_only",
        "enable_compile_cache",
        "compile_cache_path",
        "print_file_path",
        "env_config_path",
        "reserve_class_name_in_scope",
        "auto_tune_mode",
        "memory_optimize_level",
        "ascend_config",
        "gpu_config",
        "op_timeout",
        "enable_profiling",
        "profiling_options",
        "debug_level",
        "mode_config",
    }
)

_state = {"mode": PYNATIVE_MODE}


def set_context(**kwargs):
    """Set execution options, MindSpore style.

    Args:
        mode: ``GRAPH_MODE`` (0: Cells and grad functions compile through ``core.jit``) or
            ``PYNATIVE_MODE`` (1: eager, the default).
        device_target: "CPU", "GPU" or "Ascend"; calls ``core.set_device``.
        **kwargs: other MindSpore context keys, stored for ``get_context`` only.

    Raises:
        ValueError: for an unknown mode or key (MindSpore raises too).
    """
    for key, value in kwargs.items():
        if key == "mode":
            if value not in (GRAPH_MODE, PYNATIVE_MODE) or isinstance(value, bool):
                raise ValueError(
                    f"set_context: mode must be GRAPH_MODE (0) or PYNATIVE_MODE (1), got {value!r}"
                )
            _state["mode"] = int(value)
            _jit_api.set_graph_mode(value == GRAPH_MODE)
        elif key == "device_target":
            _backend.set_device(value)
        elif key in _STORED_ONLY:
            _state[key] = value
        else:
            raise ValueError(
                f"set_context: unknown key {key!r}; known: mode, device_target, "
                f"{', '.join(sorted(_STORED_ONLY))}"
            )


def get_context(attr_key):
    """The value of a context key set by :func:`set_context` (``device_target``: the current
    device, ``mode``: ``PYNATIVE_MODE`` unless set)."""
    key = attr_key
    if key == "device_target":
        return _backend.get_device()
    if key == "mode":
        return _state["mode"]
    if key in _STORED_ONLY:
        return _state.get(key)
    raise ValueError(f"get_context: unknown key {key!r}")


def graph_mode():
    """True when ``set_context(mode=GRAPH_MODE)`` is in effect."""
    return _jit_api.graph_mode()


def jit_class(cls):
    """MindSpore's ``@jit_class``: mark a class whose instances a compiled function may use.

    ``core.jit`` traces Python objects' methods and attributes as they are, so nothing more is
    needed; the decorator checks what MindSpore checks (a class, and not a Cell, which is
    compiled on its own) and returns the class unchanged.
    """
    from .nn.cell import Cell

    if not isinstance(cls, type):
        raise TypeError(f"jit_class: decorates a class, got {type(cls).__name__}")
    if issubclass(cls, Cell):
        raise TypeError(
            f"jit_class: {cls.__name__} is a Cell; a Cell needs no @jit_class (it is compiled "
            "by core.jit or GRAPH_MODE directly)"
        )
    cls.__jit_class__ = True
    return cls
