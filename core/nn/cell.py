"""``nn.Cell``: the base of every layer, model and optimizer.

A Cell is plain: Parameters and sub-cells are attributes (found by walking ``__dict__``),
hyper-parameters are plain values, and ``construct`` is the forward pass.
"""

from collections import OrderedDict

from .. import dtypes as _dt
from ..jit.api import graph_mode as _graph_mode
from ..ops.elementwise import astype
from ..primitive import trace_stack as _trace_stack
from ..tensor import Parameter, Tensor
from ..tree import tree_map

_FLOAT_TARGETS = (_dt.float16, _dt.bfloat16, _dt.float32, _dt.float64)


class Cell:
    """Base class of layers and models; subclasses define ``construct(*inputs)``.

    Assigning a Parameter or a Cell to an attribute registers it; ``parameters_and_names()``
    walks them in assignment order with dotted names (``"0.weight"``, ``"encoder.fc.bias"``).

    Args:
        auto_prefix: when True (default), assigning a sub-cell renames its Parameters to their
            dotted path from this cell (MindSpore's behavior), so ``p.name`` matches the names
            of ``parameters_and_names()`` and of checkpoints.
    """

    def __init__(self, auto_prefix=True):
        object.__setattr__(self, "_params", OrderedDict())
        object.__setattr__(self, "_cells", OrderedDict())
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_recompute", False)
        object.__setattr__(self, "_auto_prefix", bool(auto_prefix))

    @property
    def cls_name(self):
        """The class name (used in error messages, as in MindSpore)."""
        return type(self).__name__

    # ---- registration -------------------------------------------------------------------------
    def __setattr__(self, name, value):
        if "_params" not in self.__dict__:
            raise AttributeError(
                f"{type(self).__name__}: call super().__init__() before assigning {name!r}"
            )
        params, cells = self.__dict__["_params"], self.__dict__["_cells"]
        # replacing a registered value keeps its position (OrderedDict assignment)
        if isinstance(value, Parameter):
            self._check_param_names(name, [(name if value.name is None else value.name, value)])
            cells.pop(name, None)
            if value.name is None:
                value.name = name
            params[name] = value
        elif isinstance(value, Cell):
            auto_prefix = self.__dict__.get("_auto_prefix", True)
            self._check_param_names(
                name,
                [
                    (f"{name}.{path}" if auto_prefix else p.name, p)
                    for path, p in value.parameters_and_names()
                ],
            )
            params.pop(name, None)
            cells[name] = value
            if auto_prefix:
                value.update_parameters_name(name + ".")
        else:
            params.pop(name, None)
            cells.pop(name, None)
        object.__setattr__(self, name, value)

    def _check_param_names(self, attr, incoming):
        """MindSpore's rule: two different Parameters of one network never share a name.

        ``incoming``: ``[(name it will have, Parameter)]`` about to be registered under
        attribute ``attr``; compared with each other and with this cell's other Parameters
        (those now under ``attr`` are being replaced and do not count). The same Parameter
        object met twice (shared weights) is not a clash.
        """
        replaced = set()
        if attr in self._params:
            replaced.add(id(self._params[attr]))
        if attr in self._cells:
            replaced.update(id(p) for p in self._cells[attr].get_parameters())
        owners = {}
        for _, p in self.parameters_and_names():
            if p.name is not None and id(p) not in replaced:
                owners.setdefault(p.name, p)
        for pname, p in incoming:
            other = owners.setdefault(pname, p)
            if other is not p and pname is not None:
                raise ValueError(
                    f"{type(self).__name__}: the value {p!r}, its name {pname!r} already exists "
                    f"(held by {other!r}). Please set a unique name for the parameter "
                    f"(assigning attribute {attr!r})."
                )

    def __delattr__(self, name):
        self.__dict__["_params"].pop(name, None)
        self.__dict__["_cells"].pop(name, None)
        object.__delattr__(self, name)

    def insert_param_to_cell(self, name, param):
        setattr(self, name, param)

    def insert_child_to_cell(self, name, cell):
        setattr(self, name, cell)

    # ---- forward ------------------------------------------------------------------------------
    def construct(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} does not define construct()")

    def __call__(self, *args, **kwargs):
        if _graph_mode() and not _trace_stack():
            # set_context(mode=GRAPH_MODE): compiled by core.jit, once per input signature;
            # inside a transformation (an outer jit, grad, vmap) it is traced inline instead
            compiled = self.__dict__.get("_graph_fn")
            if compiled is None:
                from ..jit import jit

                compiled = jit(self._pynative_call)
                object.__setattr__(self, "_graph_fn", compiled)
            return compiled(*args, **kwargs)
        return self._pynative_call(*args, **kwargs)

    def _pynative_call(self, *args, **kwargs):
        if self.__dict__.get("_float_dtype") is not None:
            return self._run_in_dtype(args, kwargs)  # to_float: inputs and parameters are cast
        return self._run_construct(*args, **kwargs)

    def _run_in_dtype(self, args, kwargs):
        """The forward with floating inputs and this cell's own trainable float Parameters
        cast to its ``to_float`` dtype; outputs are cast to ``_amp_output_dtype`` when set
        (``core.amp.auto_mixed_precision`` sets float32).

        The Parameters are swapped for their cast values only for the duration of the call
        (their registration is untouched), so ``grad`` and ``jit`` see a cast of the Parameter.
        Non-trainable Parameters (batch-norm statistics, updated in place) are left as they are.
        """
        dtype = self.__dict__["_float_dtype"]
        args, kwargs = _cast_floats((args, kwargs), dtype)
        swapped = {}
        for name, p in self.__dict__["_params"].items():
            if p.requires_grad and _dt.is_floating(p.dtype) and p.dtype != dtype:
                if self.__dict__.get(name) is p:  # only plain attributes can be swapped
                    swapped[name] = p
        try:
            for name, p in swapped.items():
                object.__setattr__(self, name, astype(p, dtype))
            out = self._run_construct(*args, **kwargs)
        finally:
            for name, p in swapped.items():
                object.__setattr__(self, name, p)
        out_dtype = self.__dict__.get("_amp_output_dtype")
        return out if out_dtype is None else _cast_floats(out, out_dtype)

    def _run_construct(self, *args, **kwargs):
        if self._recompute:
            from .. import recompute as _recompute

            return _recompute(self.construct)(*args, **kwargs)
        return self.construct(*args, **kwargs)

    def __jit_state__(self):
        """What a graph compiled by ``core.jit`` assumes about this cell beyond its inputs:
        training mode, and which Parameter and sub-cell objects it holds (a change retraces)."""
        return (
            self.training,
            tuple(map(id, self._params.values())),
            tuple(map(id, self._cells.values())),
        )

    # ---- walking ------------------------------------------------------------------------------
    def cells_and_names(self, cells=None, name_prefix=""):
        """Yield ``(name, cell)`` for this cell and every sub-cell, depth first (each cell once)."""
        seen = set() if cells is None else cells
        if id(self) in seen:
            return
        seen.add(id(self))
        yield name_prefix, self
        for name, cell in self._cells.items():
            prefix = f"{name_prefix}.{name}" if name_prefix else name
            yield from cell.cells_and_names(seen, prefix)

    def name_cells(self):
        return OrderedDict(self._cells)

    def cells(self):
        return list(self._cells.values())

    def parameters_and_names(self, name_prefix="", expand=True):
        """Yield ``(dotted_name, Parameter)`` for every parameter, each object once."""
        seen = set()
        for cell_name, cell in self.cells_and_names(name_prefix=name_prefix):
            for pname, p in cell._params.items():
                if id(p) in seen:
                    continue
                seen.add(id(p))
                yield (f"{cell_name}.{pname}" if cell_name else pname), p
            if not expand:
                break

    def get_parameters(self, expand=True):
        for _, p in self.parameters_and_names(expand=expand):
            yield p

    def parameters_dict(self):
        return OrderedDict(self.parameters_and_names())

    def trainable_params(self, recurse=True):
        """Parameters with ``requires_grad=True``, in registration order."""
        return [p for p in self.get_parameters(expand=recurse) if p.requires_grad]

    def untrainable_params(self, recurse=True):
        return [p for p in self.get_parameters(expand=recurse) if not p.requires_grad]

    def update_parameters_name(self, prefix="", recurse=True):
        """Set each Parameter's ``name`` to its dotted path (with ``prefix``); with
        ``recurse=False`` only this cell's own Parameters are renamed."""
        for name, p in self.parameters_and_names(expand=recurse):
            p.name = prefix + name

    # ---- modes --------------------------------------------------------------------------------
    def set_grad(self, requires_grad=True):
        """MindSpore compatibility: gradients need no per-cell switch here; returns self."""
        return self

    def set_train(self, mode=True):
        """Training mode (dropout active, batch-norm updates statistics) for this cell tree."""
        for _, cell in self.cells_and_names():
            object.__setattr__(cell, "training", bool(mode))
        return self

    def apply(self, fn):
        """Call ``fn(cell)`` on every sub-cell and then this cell; returns self."""
        for cell in self._cells.values():
            cell.apply(fn)
        fn(self)
        return self

    def to_float(self, dst_type):
        """Compute this cell and its sub-cells in ``dst_type`` (MindSpore's ``Cell.to_float``).

        Floating inputs and each cell's own trainable Parameters are cast to ``dst_type``
        (float16, bfloat16, float32 or float64) at every call; the stored Parameters keep their
        dtype (the cast is part of the computation, so gradients come back in the Parameter's
        dtype). A sub-cell may be set back with its own ``to_float``. Returns self.
        """
        d = _dt.canonical(dst_type)
        if d not in _FLOAT_TARGETS:
            raise ValueError(
                f"{type(self).__name__}.to_float: dtype must be float16, bfloat16, float32 or "
                f"float64, got {dst_type!r}"
            )
        for _, sub in self.cells_and_names():
            object.__setattr__(sub, "_float_dtype", d)
        return self

    def recompute(self, mode=True):
        """Recompute this cell's activations in the backward pass instead of storing them."""
        object.__setattr__(self, "_recompute", bool(mode))
        return self

    # ---- printing -----------------------------------------------------------------------------
    def extend_repr(self):
        return ""

    def __repr__(self):
        lines = [f"{type(self).__name__}<{self.extend_repr()}>"]
        for name, cell in self._cells.items():
            sub = repr(cell).replace("\n", "\n  ")
            lines.append(f"  ({name}): {sub}")
        return "\n".join(lines) if len(lines) > 1 else lines[0]


def _cast_floats(tree, dtype):
    """``tree`` with its floating tensors cast to ``dtype``."""

    def cast(x):
        if isinstance(x, Tensor) and _dt.is_floating(x.dtype) and x.dtype != dtype:
            return astype(x, dtype)
        return x

    return tree_map(cast, tree)
