"""Fused elementwise kernels of ``core.jit`` as native C loops on the CPU.

A ``FusedKernel`` carries a C expression over inputs ``x0, x1, ...``. For each combination of
input shapes it is compiled into a two-level loop: the output's dimensions are collapsed into
at most an outer and an inner run, inside which every input is either contiguous or
broadcast (read once per run), so the inner loop vectorizes. Shapes are constants of the
source (jit specializes on shapes anyway), which lets the compiler unroll and drop bounds
checks. Inputs whose shapes do not collapse to two runs (a broadcast in the middle of three
axes) are first broadcast into full copies.

``prepare`` compiles every kernel of one compiled graph in a single compiler call.
"""

import re

import numpy as np

from . import cc, cpu_layout
from .threads import get_num_threads

_CTYPE = {
    np.dtype("float32"): "float",
    np.dtype("float64"): "double",
    np.dtype("bool"): "unsigned char",
}
_FLOAT_LITERAL = re.compile(r"(?<![\w.])(\d+\.\d*(?:[eE][+-]?\d+)?)(?![\w.])")


def _header(functions=()):
    """The C declarations every fused kernel needs, with the math ``functions`` they call."""
    return cc.math_header(functions) + cc.parallel_header()


def supported(kernel):
    return all(np.dtype(d) in _CTYPE for d in [*kernel.in_dtypes, kernel.out_dtype])


def layout(in_shapes, out_shape):
    """``(n_outer, n_inner, inner_full, outer_strides)`` or None.

    ``inner_full[k]``: input k varies along the inner run (else it is read once per run);
    ``outer_strides[k]``: elements input k advances per outer step (0 when broadcast).
    """
    nd = len(out_shape)
    padded = [(1,) * (nd - len(s)) + tuple(s) for s in in_shapes]
    runs = []  # [extent, per-input "varies along it"]
    for d in range(nd):
        if out_shape[d] == 1:
            continue
        varies = tuple(p[d] != 1 for p in padded)
        if runs and runs[-1][1] == varies:
            runs[-1][0] *= out_shape[d]
        else:
            runs.append([out_shape[d], varies])
    if len(runs) > 2:
        return None
    if not runs:
        runs = [[1, tuple(False for _ in in_shapes)]]
    n_inner, inner_full = runs[-1]
    n_outer, outer_full = runs[0] if len(runs) == 2 else (1, tuple(False for _ in in_shapes))
    strides = tuple(
        (n_inner if inner_full[k] else 1) if outer_full[k] else 0 for k in range(len(in_shapes))
    )
    return n_outer, n_inner, inner_full, strides


def _expression(kernel):
    expr = kernel.c_src
    floats = {np.dtype(d) for d in [*kernel.in_dtypes, kernel.out_dtype]} - {np.dtype("bool")}
    if floats == {np.dtype("float32")}:
        # single-precision libm (and libmvec) functions and literals, or C promotes to double
        if kernel.math:
            calls = re.compile(r"\b(" + "|".join(map(re.escape, kernel.math)) + r")\(")
            expr = calls.sub(lambda m: m.group(1) + "f(", expr)
        expr = _FLOAT_LITERAL.sub(lambda m: m.group(1) + "f", expr)
    return expr


def _function_source(name, kernel, lay):
    """C source of ``void name(const T0* a0, ..., T* y, ptrdiff_t threads)``.

    Threads split the outer run when there is one (whole inner runs per thread), else the
    inner run in chunks aligned to ``cc.PARALLEL_ALIGN``: either way each element is computed
    by the same code as on one thread, so results do not depend on the thread count.
    """
    n_outer, n_inner, inner_full, strides = lay
    in_types = [_CTYPE[np.dtype(d)] for d in kernel.in_dtypes]
    out_type = _CTYPE[np.dtype(kernel.out_dtype)]
    fields = " ".join(f"const {t}* a{k};" for k, t in enumerate(in_types))
    lines = [f"typedef struct {{ {fields} {out_type}* y; }} {name}_job;"]
    lines.append(f"static void {name}_range(void* job, ptrdiff_t lo, ptrdiff_t hi) {{")
    lines.append(f"  const {name}_job* j = job;")
    if n_outer > 1:  # units are outer steps
        lines.append("  for (ptrdiff_t o = lo; o < hi; ++o) {")
        i_lo, i_hi, units, align = "0", str(n_inner), n_outer, 1
        grain = f"(DIFFSCI_GRAIN + {n_inner - 1}) / {n_inner}"  # outer steps per thread
    else:  # units are elements of the single inner run
        lines.append("  for (ptrdiff_t o = 0; o < 1; ++o) {")
        i_lo, i_hi, units, grain, align = "lo", "hi", n_inner, "DIFFSCI_GRAIN", "DIFFSCI_ALIGN"
    for k, t in enumerate(in_types):
        base = f"j->a{k} + o * {strides[k]}" if strides[k] else f"j->a{k}"
        if inner_full[k]:
            lines.append(f"    const {t}* p{k} = {base};")
        else:
            lines.append(f"    const {t} x{k} = *({base});")
    lines.append(f"    {out_type}* q = j->y + o * {n_inner};")
    lines.append(f"    for (ptrdiff_t i = {i_lo}; i < {i_hi}; ++i) {{")
    for k, t in enumerate(in_types):
        if inner_full[k]:
            lines.append(f"      const {t} x{k} = p{k}[i];")
    lines.append(f"      q[i] = ({out_type})({_expression(kernel)});")
    lines.append("    }\n  }\n}")
    args = [f"const {t}* a{k}" for k, t in enumerate(in_types)] + [f"{out_type}* y"]
    names = ", ".join([f"a{k}" for k in range(len(in_types))] + ["y"])
    lines.append(f"void {name}({', '.join(args)}, ptrdiff_t threads) {{")
    lines.append(f"  {name}_job j = {{{names}}};")
    lines.append(
        f"  diffsci_parallel_for({name}_range, &j, {units}, {grain}, {align}, threads);\n}}\n"
    )
    return "\n".join(lines)


class NativeFused:
    """``run(*arrays, out=None)`` for one FusedKernel; compiles per input-shape signature."""

    def __init__(self, kernel):
        self.kernel = kernel
        self.in_dtypes = [np.dtype(d) for d in kernel.in_dtypes]
        self.out_dtype = np.dtype(kernel.out_dtype)
        self._by_shapes = {}  # in_shapes -> (function, out_shape) or None

    def entry(self, in_shapes, name="fused_kernel"):
        """Source of the function ``name`` for ``in_shapes`` and how to call it, or None."""
        out_shape = tuple(np.broadcast_shapes(*in_shapes)) if in_shapes else ()
        lay = layout(in_shapes, out_shape)
        if lay is None:
            return None
        return name, _function_source(name, self.kernel, lay), out_shape

    def _compile(self, shapes):
        entry = self.entry(shapes)
        if entry is None:
            self._by_shapes[shapes] = None
            return None
        name, source, out_shape = entry
        self.install(shapes, cc.load(_header(self.kernel.math) + source), name, out_shape)
        return self._by_shapes[shapes]

    def install(self, in_shapes, lib, name, out_shape):
        fn = cc.function(lib, name, len(in_shapes) + 2)
        self._by_shapes[in_shapes] = (fn, out_shape)

    def __call__(self, *arrays, out=None):
        shapes = tuple(np.shape(a) for a in arrays)
        found = self._by_shapes.get(shapes, False)
        if found is False:
            found = self._compile(shapes)
        if found is None:
            # no two-run layout: broadcast every input to the output's shape (always one run)
            full = tuple(np.broadcast_shapes(*shapes))
            arrays = [np.broadcast_to(a, full) for a in arrays]
            return self(*arrays, out=out)
        fn, out_shape = found
        keep = []
        for a, dt in zip(arrays, self.in_dtypes):
            if type(a) is not np.ndarray or a.dtype != dt:
                a = np.ascontiguousarray(a, dtype=dt)
            elif not a.flags.c_contiguous:
                a = cpu_layout.ascontiguousarray(a)
            keep.append(a)
        if (
            out is None
            or out.shape != out_shape
            or out.dtype != self.out_dtype
            or not out.flags.c_contiguous
        ):
            out = np.empty(out_shape, self.out_dtype)
        fn(*[cc.address(a) for a in keep], cc.address(out), get_num_threads())
        return out


def prepare(runners_and_shapes):
    """Compile the functions of many ``(NativeFused, in_shapes)`` pairs in one compiler call."""
    functions = {f for runner, _ in runners_and_shapes for f in runner.kernel.math}
    parts, todo = [_header(functions)], []
    for j, (runner, shapes) in enumerate(runners_and_shapes):
        shapes = tuple(tuple(s) for s in shapes)
        if shapes in runner._by_shapes:
            continue
        entry = runner.entry(shapes, f"fused_kernel_{j}")
        if entry is None:
            runner._by_shapes[shapes] = None
            continue
        name, source, out_shape = entry
        parts.append(source)
        todo.append((runner, shapes, name, out_shape))
    if not todo:
        return
    lib = cc.load("\n".join(parts))
    for runner, shapes, name, out_shape in todo:
        runner.install(shapes, lib, name, out_shape)
