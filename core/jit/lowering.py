"""What ``core.jit`` needs to compile one primitive: its lowering record.

One :class:`Lowering` per primitive, registered next to the primitive's derivative rules in
``core/rules/<family>.py`` with :func:`deflowering`. The compiler reads nothing else about a
primitive: elementwise fusion (``fusion.py``) takes its expression templates, code generation
(``codegen.py``) its ufunc, whether its result is a fresh buffer and any special emitter, and
the CPU backend gets the C math functions a fused kernel calls from the kernel itself
(``FusedKernel.math``). A primitive without a record lowers to a call of its implementation,
its result never reused as an ``out=`` buffer.

Fields:
    numexpr: the primitive as a numexpr expression over ``{0}``, ``{1}`` ... (its inputs), or
        None when numexpr lacks a function it needs (erf).
    c: the same as a C expression (native CPU loops and GPU kernels); a primitive with a
        ``c`` template may join a fused elementwise kernel. Both templates must compute what
        the reference implementation computes (``tests/core/test_prims_table.py`` checks it).
    name_args: input positions a template reads more than once: fusion passes a plain name
        there, never an inlined sub-expression, so no work is repeated.
    math: the C math functions ``c`` calls (``exp``, ``erf``, ``fabs`` ...). The CPU backend
        declares them vectorized and calls their float versions (``expf``) in float32
        kernels; any function other than ``fabs`` makes the primitive *transcendental*:
        numexpr evaluates those with scalar libm calls, 3-8x slower than numpy's SIMD loops,
        so the CPU fuses them only into native C loops.
    ufunc: the name of the array namespace's function that computes the primitive and accepts
        ``out=`` (``xp.add``): codegen calls it, writing into a dead buffer when one fits.
    fresh: the result never aliases an input (true for every ufunc), so a later equation may
        overwrite it in place.
    emit: ``emit(arg_names, params) -> str``, the Python expression codegen writes for the
        equation (a method call instead of the implementation: ``x.reshape(...)``).
    unfused: for an elementwise primitive without templates, why it is not fused (a record
        that says so keeps the coverage test honest: every elementwise primitive has one).

Families register their records in ``core/rules/<family>.py``, e.g.::

    deflowering(reshape, emit=lambda args, params: f"{args[0]}.reshape({params['shape']})")
    deflowering(matmul, fresh=True)

A primitive whose result is always a new buffer says so (``fresh=True``), or codegen keeps
its result out of buffer reuse; an elementwise primitive (one the fusion pass may see) has
templates or an ``unfused`` reason. ``tests/core/test_prims_table.py`` checks both (freshness
on its table's inputs), and that every template, ufunc and emitter computes the primitive's
reference value.
"""

__all__ = ["Lowering", "deflowering", "lowering_of", "lowerings"]

# C math functions that are single instructions: cheap everywhere, numexpr included
_INLINE_MATH = frozenset({"fabs"})


class Lowering:
    """How one primitive lowers (see the module docstring for the fields)."""

    __slots__ = ("c", "emit", "fresh", "math", "name_args", "numexpr", "ufunc", "unfused")

    def __init__(
        self,
        numexpr=None,
        c=None,
        name_args=(),
        math=(),
        ufunc=None,
        fresh=None,
        emit=None,
        unfused=None,
    ):
        if numexpr is not None and c is None:
            raise ValueError("a numexpr template needs the C template too (fusion reads both)")
        if c is not None and unfused is not None:
            raise ValueError("a primitive with templates is fused: drop `unfused`")
        self.numexpr = numexpr
        self.c = c
        self.name_args = tuple(name_args)
        self.math = tuple(math)
        self.ufunc = ufunc
        self.fresh = ufunc is not None if fresh is None else fresh
        self.emit = emit
        self.unfused = unfused

    @property
    def fusible(self):
        return self.c is not None

    @property
    def transcendental(self):
        """Calls a math function numexpr evaluates one element at a time (see ``math``)."""
        return any(f not in _INLINE_MATH for f in self.math)

    def __repr__(self):
        fields = [f"{k}={getattr(self, k)!r}" for k in self.__slots__ if getattr(self, k)]
        return f"Lowering({', '.join(fields)})"


lowerings = {}  # Primitive -> Lowering
_GENERIC = Lowering()  # no record: a call of the primitive's implementation


def deflowering(prim, **fields):
    """Register ``prim``'s lowering record: ``Lowering(**fields)``."""
    lowerings[prim] = Lowering(**fields)
    return lowerings[prim]


def lowering_of(prim):
    """``prim``'s record, or the generic one (a call of its implementation)."""
    return lowerings.get(prim, _GENERIC)
