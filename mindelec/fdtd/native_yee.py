"""The Yee half steps as one native loop each, with a native adjoint, bound to the composite.

The composite update (``yee.update_h``/``update_e``) costs, per curl term, a slice and a pad
(one copy pass each) plus fused arithmetic: about 50 passes over the fields per 3D step, and
its autodiff VJP several times that. Here each half step is one C loop over the cells that
reads every input once and writes every output once (the new components and the CPML ``psi``
slabs of that half step), split across the thread pool by rows. The C source is generated for
the configuration (components, curl terms, periodic axes, which coefficients are maps, numbers
or 0-d Tensors, CPML slabs), compiled once and cached (``core.native``). It computes the
composite's formulas in the composite's order (bit-equal; ``tests/mindelec/fdtd/
test_native_yee.py``).

Derivatives: ``HalfStep.function`` is a ``core.custom_vjp``. Its backward is the half step's
adjoint, itself a Yee-like update in two native passes: (1) per cell, the cotangents of the old
field (``A g``), of the coefficient maps (``g F`` and ``-+ g curl``), of the psi slabs
(``b (g_psi + g_v)``) and of every curl difference into scratch arrays; (2) the sources'
cotangents as transposed differences (``D+^T = -D-``, ``D-^T = -D+``). Both value paths are
bound with ``core.ops.kernel_call`` to composites (the update, and ``vjp`` of it), so forward
mode, higher orders, vmap and non-CPU backends see the composite; the CPML profiles are
constants (no cotangent).

Layout: a grid of shape ``(n0[, n1[, n2]])`` is looped as ``(n0, n1, n2)`` with missing axes
in front, size 1; index ``idx = (i n1 + j) n2 + k``. A forward difference along axis ``a`` reads
``F[idx + s_a]``, or at the last cell ``F[idx - (n_a - 1) s_a]`` (periodic) or zero; the
backward difference mirrors it at the first cell. Row-invariant choices are a (pointer offset,
weight) pair and the PML-slab flags of the outer axes select one of up to four copies of the
row loop, so the inner loop over the contiguous axis has no branches and vectorizes; it is split
at the PML slabs and its boundary cell is peeled off. The forward kernel instead runs the
interior formula over the whole row (full vectors, no scalar tails) wherever the neighbour row
exists, then recomputes the z-slab cells and the boundary cell over it with their own formulas.

Memory traffic (the kernel is bandwidth bound: ``bench/fdtd.py`` prints the roofline). A map
that is one number times the walls' 0/1 mask (``Cb`` of a uniform medium behind PEC-backed
walls) is read as that number and three short mask vectors, when the array handed to the call
is the one checked (by address; else the map is read); the products are the same bits. When a
half step's fields outgrow the last-level cache (``STREAM_BYTES``), each row of the new
components is built in a stack buffer and written with non-temporal stores, which skips the
read that a cached store of a new line costs. A 3D half step then moves, per cell, its three
sources and three olds in and three new components out, plus the psi slabs in the PML.
"""

from __future__ import annotations

import ctypes
import re
import threading

import numpy as np

from diffsci import core
import diffsci.core.native as native
from diffsci.core import ops

from .grid import AXES
from .yee import psi_shapes

__all__ = ["half_step_kernel"]

ROWMAX = 4096  # longest contiguous row the streaming kernel buffers on the stack
# Stream the new components (non-temporal stores) when one half step's fields exceed this many
# bytes: they do not stay in the last-level cache for the next half step anyway (32 MiB L3
# here), and skipping the write-allocate read of every output line saves a quarter of the
# traffic. Smaller grids keep regular stores (the outputs stay cached for the next half step).
# Measured on a 2-core EPYC slice under load (1 thread, CPML(10), float32, fields of the half
# step in brackets): streaming 48^3 (4 MB) -25%, 64^3 (9 MB) -10%, 80^3 (18 MB) even, 96^3
# (32 MB) +23%, 128^3 (75 MB) +10% Mcell/s.
STREAM_BYTES = 24 << 20

# stream_row(dst, src, n): dst[0:n] = src[0:n], full 64-byte lines of dst with non-temporal
# stores (the widest the target has), the ragged ends with ordinary ones; stream_fence() orders
# them before the pool reports the rows done.
_STREAM_BODY = """
#if !(defined(__x86_64__) || defined(__i386__))
/* no streaming stores: plain copies */
#elif defined(__AVX512F__)
#define SW 64
#define SSTORE(d, s) VEC512(d, s)
#elif defined(__AVX__)
#define SW 32
#define SSTORE(d, s) VEC256(d, s)
#elif defined(__SSE2__)
#define SW 16
#define SSTORE(d, s) VEC128(d, s)
#endif
static inline void stream_row(T* restrict dst, const T* restrict src, ptrdiff_t n) {
  ptrdiff_t k = 0;
#ifdef SW
  const ptrdiff_t lane = SW / (ptrdiff_t)sizeof(T);
  while (k < n && ((uintptr_t)(dst + k) & (SW - 1))) { dst[k] = src[k]; ++k; }
  for (; k + lane <= n; k += lane) SSTORE(dst + k, src + k);
#endif
  for (; k < n; ++k) dst[k] = src[k];
}
static inline void stream_fence(void) {
#ifdef SW
  _mm_sfence();
#endif
}
"""
_X86 = "#include <stdint.h>\n#if defined(__x86_64__) || defined(__i386__)\n#include <immintrin.h>\n#endif\n"
_STREAM_C = {
    "float": _X86 + "#define VEC512(d, s) _mm512_stream_ps((d), _mm512_loadu_ps(s))\n"
    "#define VEC256(d, s) _mm256_stream_ps((d), _mm256_loadu_ps(s))\n"
    "#define VEC128(d, s) _mm_stream_ps((d), _mm_loadu_ps(s))\n" + _STREAM_BODY,
    "double": _X86 + "#define VEC512(d, s) _mm512_stream_pd((d), _mm512_loadu_pd(s))\n"
    "#define VEC256(d, s) _mm256_stream_pd((d), _mm256_loadu_pd(s))\n"
    "#define VEC128(d, s) _mm_stream_pd((d), _mm_loadu_pd(s))\n" + _STREAM_BODY,
}

_CTYPE = {np.dtype("float64"): "double", np.dtype("float32"): "float"}
_FUNCTIONS = {}  # C source -> ctypes function


def _kind_of(value, shape):
    """'map' (grid-shaped Tensor), 'tensor0' (0-d Tensor), 'number' (Python float), or None."""
    if isinstance(value, core.Tensor):
        if tuple(value.shape) == tuple(shape):
            return "map"
        if tuple(value.shape) == ():
            return "tensor0"
        return None
    if isinstance(value, (int, float)):
        return "number"
    return None


def _separable(value, shape3):
    """``(c, masks)`` when the concrete map ``value`` is ``c * m0[i] * m1[j] * m2[k]`` exactly,
    with 0/1 vectors ``m_a`` over the loop axes (``shape3``) and one number ``c``: a uniform
    coefficient with the PEC/PMC walls zeroed (``Boundaries.mask``). None otherwise (a traced
    value, a varying material map, a modified cell).

    ``masks`` is one array: ``m0``, ``m1``, ``m2`` joined, in the map's dtype.
    """
    try:
        array = value.asnumpy()
    except Exception:  # a tracer: no concrete values
        return None
    if not isinstance(array, np.ndarray) or array.dtype not in _CTYPE:
        return None
    cube = array.reshape(shape3)
    nonzero = cube[cube != 0]
    if nonzero.size == 0 or not np.all(nonzero == nonzero[0]):
        return None
    zero = cube == 0
    masks = [
        (~np.all(zero, axis=tuple(b for b in range(3) if b != a))).astype(array.dtype)
        for a in range(3)
    ]
    c = nonzero[0]
    if not np.array_equal(cube, c * masks[0][:, None, None] * masks[1][:, None] * masks[2]):
        return None
    return float(c), np.concatenate(masks)


class HalfStep:
    """One half step's plan: operands, generated C and the composite reference.

    Args:
        kind: ``"h"`` (H update from E, forward differences) or ``"e"``.
        terms: per updated component ``name -> [(j, k, sign)]`` (``yee.curl_terms``).
        grid, boundaries, coeffs: as in ``yee``; ``psi_keys``: the psi terms of this half step.

    The kernel's result is one flat array: the new components (``grid.shape`` each), then the
    new psi terms (``yee.psi_shapes``), in the order of ``terms`` and ``psi_keys``.
    """

    def __init__(self, kind, terms, grid, boundaries, coeffs, psi_keys, injections=()):
        self.kind = kind
        # soft point sources added to the new components inside the half step: (component,
        # grid index) each; their values are one extra operand (last), Tensor ``[n]``
        self.injections = tuple((c, tuple(int(i) for i in idx)) for c, idx in injections)
        self.grid = grid
        self.boundaries = boundaries
        self.terms = terms
        self.psi_keys = tuple(psi_keys)
        self.psi_shapes = {k: v for k, v in psi_shapes(grid, boundaries).items() if k in psi_keys}
        self.periodic = tuple(boundaries.periodic(a) for a in range(grid.ndim))
        a_name = "da" if kind == "h" else "ca"
        b_name = "db" if kind == "h" else "cb"
        self.coef_names = []
        for name in terms:
            self.coef_names += [f"{a_name}_{name}", f"{b_name}_{name}"]
        self.coef_kinds = {c: _kind_of(coeffs[c], grid.shape) for c in self.coef_names}
        self.supported = all(self.coef_kinds.values())
        self.cpml_axes = sorted({AXES.index(k.split("_")[1]) for k in self.psi_keys})
        self.profile_names = [
            f"pml_{p}{kind}_{AXES[a]}" for a in self.cpml_axes for p in ("b", "a", "dk")
        ]
        self.numbers = {
            c: float(coeffs[c]) for c in self.coef_names if self.coef_kinds[c] == "number"
        }
        # maps that are a number times the walls' 0/1 mask (uniform media): the fast forward
        # kernel reads the number and three short mask vectors instead of the map, as long as
        # the map it is handed is this very array (checked by address at every call)
        self.shape3 = (1,) * (3 - grid.ndim) + tuple(grid.shape)
        self.masked = {}
        for c in self.coef_names:
            if self.coef_kinds[c] == "map":
                found = _separable(coeffs[c], self.shape3)
                if found is not None:
                    self.masked[c] = (*found, coeffs[c].asnumpy())
        cells = int(np.prod(grid.shape))
        self.sizes = [cells] * len(terms) + [int(np.prod(self.psi_shapes[k])) for k in psi_keys]
        self.size = sum(self.sizes)
        names = list(terms)
        self._inj_at = [
            names.index(c) * cells + int(np.ravel_multi_index(idx, grid.shape))
            for c, idx in self.injections
        ]

    # ---- operands ---------------------------------------------------------------------------
    def sources(self):
        """Names of the other field's components the curls read (sorted)."""
        found = self.__dict__.get("_sources")
        if found is None:
            other = "e" if self.kind == "h" else "h"
            found = sorted(
                {other + AXES[k] for terms in self.terms.values() for _j, k, _s in terms}
            )
            self._sources = found
        return list(found)

    def operands(self, state, coeffs, values=None):
        """The tensors handed to ``kernel_call`` (order: sources, olds, psi, coefs, profiles,
        then the injections' values ``[n]`` where the plan has injections; None: zeros)."""
        tensors = [state.get(n) for n in self.sources()]
        tensors += [state.get(n) for n in self.terms]
        tensors += [state.psi[k] for k in self.psi_keys]
        tensors += [coeffs[c] for c in self.coef_names if self.coef_kinds[c] != "number"]
        tensors += [coeffs[p] for p in self.profile_names]
        if self.injections:
            if values is None:  # the sources off (zeros): what inspecting callers need
                values = ops.zeros((len(self.injections),), dtype=tensors[0].dtype)
            tensors.append(values)
        return tensors

    def split(self, flat):
        """The flat result's parts (new components, new psi terms), reshaped."""
        shapes = [self.grid.shape] * len(self.terms) + [self.psi_shapes[k] for k in self.psi_keys]
        parts, at = [], 0
        for size, shape in zip(self.sizes, shapes, strict=True):
            parts.append(flat[at : at + size].reshape(shape))
            at += size
        return parts

    def unpack(self, flat):
        """``(components, psi)`` dicts from the flat result (reshaped slices), or from the
        parts ``function()`` returns (a tuple)."""
        parts = list(flat) if isinstance(flat, (tuple, list)) else self.split(flat)
        names = list(self.terms)
        comps = {n: parts[o] for o, n in enumerate(names)}
        psi = {k: parts[len(names) + m] for m, k in enumerate(self.psi_keys)}
        return comps, psi

    # ---- the composite ----------------------------------------------------------------------
    def reference(self, *tensors):
        """The composite update (``yee.update_h``/``update_e``), flattened like the kernel's."""
        from .state import FieldState
        from .yee import update_e, update_h

        values = None
        if self.injections:
            tensors, values = tensors[:-1], tensors[-1]
        names = self.sources()
        n_src, n_old, n_psi = len(names), len(self.terms), len(self.psi_keys)
        fields = dict(zip(names, tensors[:n_src]))
        fields.update(zip(self.terms, tensors[n_src : n_src + n_old]))
        rest = tensors[n_src + n_old :]
        psi = dict(zip(self.psi_keys, rest[:n_psi]))
        rest = rest[n_psi:]
        coeffs = dict(self.numbers)
        tensor_coefs = [c for c in self.coef_names if self.coef_kinds[c] != "number"]
        coeffs.update(zip(tensor_coefs, rest[: len(tensor_coefs)]))
        coeffs.update(zip(self.profile_names, rest[len(tensor_coefs) :]))
        state = FieldState(**fields, psi=psi)
        update = update_h if self.kind == "h" else update_e
        new = update(state, coeffs, self.grid, self.boundaries)
        comps = {n: new.get(n) for n in self.terms}
        for m, (c, idx) in enumerate(self.injections):  # sources.PointSource.inject, in order
            comps[c] = ops.index_add(comps[c], idx, values[m])
        outs = list(comps.values()) + [new.psi[k] for k in self.psi_keys]
        return ops.concatenate([x.reshape(-1) for x in outs])

    # ---- the adjoint ------------------------------------------------------------------------
    def adjoint_parts(self):
        """``[(group, name, shape)]``: the flat layout of the adjoint's result (the cotangents
        of the sources, olds, psi terms and of the coefficients that are Tensors)."""
        parts = [("gS", n, self.grid.shape) for n in self.sources()]
        parts += [("gF", n, self.grid.shape) for n in self.terms]
        parts += [("gpsi", k, self.psi_shapes[k]) for k in self.psi_keys]
        for c in self.coef_names:
            if self.coef_kinds[c] != "number":
                group = "gA" if c[1] == "a" else "gB"
                shape = self.grid.shape if self.coef_kinds[c] == "map" else ()
                parts.append((group, c.split("_", 1)[1], shape))
        return parts

    def _adjoint_layout(self, off, pml, dims):
        """C offset expressions of every part of the adjoint's flat result."""
        out, at = {}, "0"
        for group, name, shape in self.adjoint_parts():
            out.setdefault(group, {})[name] = at
            if shape == self.grid.shape:
                size = "N"
            elif shape == ():
                size = "1"
            else:
                axis = AXES.index(name.split("_")[1]) + off
                size = "*".join(dims[L] if L != axis else str(sum(pml[L])) for L in range(3))
            at += f" + {size}"
        return out

    def adjoint_reference(self, *tensors):
        """The composite adjoint: ``vjp(reference)`` at the operands (``tensors[:-1]``) for the
        cotangent ``tensors[-1]`` of the flat result, flattened in ``adjoint_parts`` order. The
        CPML profiles are constants (no cotangent)."""
        operands, g = tensors[:-1], tensors[-1]
        n_prof = len(self.profile_names)
        extra = ()
        if self.injections:  # the values: differentiable, after the profiles
            operands, extra = operands[:-1], operands[-1:]
        diff_args = operands[: len(operands) - n_prof]
        profiles = operands[len(operands) - n_prof :]
        n_diff = len(diff_args)

        def ref(*a):
            return self.reference(*a[:n_diff], *profiles, *a[n_diff:])

        diff_args = (*diff_args, *extra)
        _, vjp_fn = core.vjp(ref, *diff_args)
        cts = vjp_fn(g)
        flat = [
            ct.reshape(-1) if ct is not None else ops.zeros((int(np.prod(x.shape)),), dtype=g.dtype)
            for ct, x in zip(cts, diff_args)
        ]
        return ops.concatenate(flat)

    # ---- C ----------------------------------------------------------------------------------
    def source(
        self,
        ctype,
        mode="forward",
        masked=False,
        stream=False,
        accumulate=False,
        coef="both",
        fuse=None,
        save_acc=False,
        write_g=False,
    ):
        """C source of ``void half_step(const T** in, T* out, const double* num, sizes...)``.

        ``mode``: ``"forward"`` (the update), ``"adj1"`` (the adjoint's elementwise pass: the
        cotangents of the olds, psi and coefficient maps, and of every curl difference into
        scratch arrays) or ``"adj2"`` (the adjoint's stencil pass: the sources' cotangents, the
        transposed differences of the scratch arrays). See ``_vjp``.

        Forward only: ``masked`` reads the coefficients of ``self.masked`` as their number
        times the three wall-mask vectors (appended to ``in`` after the profiles; the numbers
        appended to ``num``) instead of the map: the same products, bit for bit (the factors
        are 0 or 1). ``stream``: each row of the new components is built in a stack buffer
        and written with non-temporal stores (``stream_row``), so the output lines are not
        read before they are written (no write-allocate traffic), and so is each whole row of
        the x- and y-slab psi terms in the PML (the z slabs' rows are short: plain stores);
        rows of ``n2 <= ROWMAX``.

        Adjoint only: ``accumulate`` adds instead of storing the cotangents of the coefficient
        maps (``adj1``) and of the sources (``adj2``): a time loop's reverse pass
        (``native_run``) sums the maps' cotangents over its steps in the result's own slots
        and adds the sources' into the other field's cotangent in place. ``coef`` (``adj1``):
        ``"both"`` computes every cotangent, ``"none"`` all but the coefficient maps' (the
        chain of the reverse pass), ``"only"`` just the coefficient maps' (off that chain: a
        second thread can run it). ``fuse`` (``adj1``): the other half step's plan, whose
        ``adj2`` pass this pass absorbs: each of its cotangents ``g`` gains, before use, the
        transposed differences of the other adjoint's scratch arrays (appended to ``in`` after
        this pass's own) that the other ``adj2`` would have added to it (the same direction of
        difference: the other update's adjoint differences the way this update does).
        ``write_g`` (``adj1``): the cotangents of the new components so completed are also
        written to the array appended to ``in`` last (laid out like the new components).

        Forward only: ``save_acc`` also writes each component's curl sum (the factor of its
        ``Cb``, CPML terms included) to the array appended to ``in`` last, laid out like the
        new components: what the ``Cb`` map's cotangent multiplies (``native_run``'s second
        thread sums it without recomputing the curls).
        """
        masked = masked and mode == "forward" and bool(self.masked)
        stream = stream and mode == "forward"
        put = "+=" if accumulate and mode != "forward" else "="
        coef_part = coef if mode == "adj1" else "both"
        # the forward's whole-row loop with slab fixups (the last write wins) also suits the
        # adjoint's elementwise pass when it only stores (no summed coefficient slots)
        has_maps = any(self.coef_kinds[c] == "map" for c in self.coef_names)
        fast_row = mode == "forward" or (mode == "adj1" and (coef_part == "none" or not has_maps))
        update_fwd = self.kind == "h"  # the update's curls take forward differences
        fwd = update_fwd if mode != "adj2" else not update_fwd
        off = 3 - self.grid.ndim  # grid axis a is loop axis a + off (missing axes in front)
        periodic = (False,) * off + self.periodic
        pml = [(0, 0)] * off + [self.boundaries.pml_cells(a) for a in range(self.grid.ndim)]
        coord = ("i", "j", "k")
        dims = ("n0", "n1", "n2")
        slot = {}
        for tag, items in (
            ("src", self.sources()),
            ("old", list(self.terms)),
            ("psi", self.psi_keys),
            ("coef", [c for c in self.coef_names if self.coef_kinds[c] != "number"]),
            ("prof", self.profile_names),
        ):
            for item in items:
                slot[(tag, item)] = len(slot)
        slot[("g", None)] = len(slot)  # adjoint passes: the cotangent of the flat result
        n_tmp = sum(len(t) for t in self.terms.values())
        for m in range(n_tmp):
            slot[("tmp", m)] = len(slot)  # adjoint passes: cotangents of the differences
        pre = {}  # fuse: component -> [(other scratch slot, axis)] of the absorbed adj2
        if fuse is not None and mode == "adj1":
            other_fwd = fuse.kind != "h"  # the other adj2's direction (not its update's)
            if other_fwd != update_fwd:
                raise ValueError("fuse: the two passes difference in opposite directions")
            m = 0
            for terms in fuse.terms.values():
                for j, k, _sign in terms:
                    slot[("otmp", m)] = len(slot)
                    pre.setdefault(self.kind + AXES[k], []).append((m, j))
                    m += 1
        write_g = write_g and mode == "adj1"
        if write_g:
            slot[("gout", None)] = len(slot)
        if mode == "forward":
            slot = {key: v for key, v in slot.items() if key[0] not in ("g", "tmp")}
        if masked:
            for c in self.masked:
                slot[("mask", c)] = len(slot)
        save_acc = save_acc and mode == "forward"
        if save_acc:
            slot[("accsave", None)] = len(slot)
        number_slot = {c: m for m, c in enumerate(self.numbers)}
        masked_slot = {c: len(self.numbers) + self.grid.ndim + m for m, c in enumerate(self.masked)}
        psi_base = {}
        at = f"{len(self.terms)} * N"
        for key in self.psi_keys:
            psi_base[key] = at
            axis = AXES.index(key.split("_")[1]) + off
            dims_p = [dims[L] if L != axis else str(sum(pml[L])) for L in range(3)]
            at += " + " + "*".join(dims_p)

        def coef(c):
            kind = self.coef_kinds[c]
            if kind == "number":
                return f"(T)num[{number_slot[c]}]"
            if masked and c in self.masked:
                m = f"in[{slot[('mask', c)]}]"
                return f"((T)num[{masked_slot[c]}] * {m}[i] * {m}[n0 + j] * {m}[n0 + n1 + k])"
            arr = f"in[{slot[('coef', c)]}]"
            return f"{arr}[idx]" if kind == "map" else f"{arr}[0]"

        adj = self._adjoint_layout(off, pml, dims)
        lines = []
        psi_rows = []  # streamed psi rows: (slab axis, offset of the row in out)
        tmp = 0
        starts = []  # where each component's lines begin (the fixups' CELLZ takes a subset)
        for o, (name, terms) in enumerate(self.terms.items()):
            if mode == "adj2":
                break
            starts.append(len(lines))
            acc = f"acc{o}"
            a_name = ("da_" if update_fwd else "ca_") + name
            b_name = ("db_" if update_fwd else "cb_") + name
            sigma = "-" if update_fwd else ""
            if mode == "adj1":
                g = f"g{o}"
                extra = ""
                for m, j in pre.get(name, ()):  # -(D x) per absorbed term (adj2's sum)
                    x, L = f"in[{slot[('otmp', m)]}]", j + off
                    if fwd:
                        extra += f" - ({x}[idx + o{L}] * w{L} - {x}[idx])"
                    else:
                        extra += f" - ({x}[idx] - {x}[idx + o{L}] * w{L})"
                lines.append(f"T {g} = in[{slot[('g', None)]}][{o} * N + idx]{extra};")
                if write_g:
                    lines.append(f"in[{slot[('gout', None)]}][{o} * N + idx] = {g};")
                old = f"in[{slot[('old', name)]}][idx]"
                if self.coef_kinds[a_name] == "map" and coef_part != "none":
                    lines.append(f"out[{adj['gA'][name]} + idx] {put} {g} * {old};")
                if coef_part == "only":
                    pass
                elif self.coef_kinds[a_name] == "number" and self.numbers[a_name] == 1.0:
                    lines.append(f"out[{adj['gF'][name]} + idx] = {g};")
                else:
                    lines.append(f"out[{adj['gF'][name]} + idx] = {coef(a_name)} * {g};")
                lines.append(f"T ga{o} = {sigma}({coef(b_name)} * {g});")
            for t, (j, k, sign) in enumerate(terms):
                L = j + off
                src = f"in[{slot[('src', ('e' if update_fwd else 'h') + AXES[k])]}]"
                if update_fwd:
                    delta = f"({src}[idx + o{L}] * w{L} - {src}[idx])"
                else:
                    delta = f"({src}[idx] - {src}[idx + o{L}] * w{L})"
                d, v = f"d{o}_{t}", f"v{o}_{t}"
                lines.append(f"T {d} = {delta};")
                lines.append(f"T {v} = {d} * (T)num[{len(self.numbers) + j}];")
                key = f"{name}_{AXES[j]}"
                if key in self.psi_keys:
                    ax = AXES[j]
                    prof = {
                        p: f"in[{slot[('prof', f'pml_{p}{self.kind}_{ax}')]}][q{L}]"
                        for p in ("b", "a", "dk")
                    }
                    dims_p = [dims[M] if M != L else str(sum(pml[M])) for M in range(3)]
                    cp = [coord[M] if M != L else f"q{L}" for M in range(3)]
                    pidx = f"(({cp[0]} * {dims_p[1]} + {cp[1]}) * {dims_p[2]} + {cp[2]})"
                    psi = f"in[{slot[('psi', key)]}]"
                    write = f"out[{psi_base[key]} + pi] = p; " if mode == "forward" else ""
                    if stream and L < 2:
                        # an x or y slab: the row's psi is a whole contiguous row, streamed
                        row = f"({cp[0]} * {dims_p[1]} + {cp[1]}) * {dims_p[2]}"
                        write = f"RP{len(psi_rows)}[k] = p; "
                        psi_rows.append((L, f"{psi_base[key]} + {row}"))
                    lines.append(
                        f"if (in{L}) {{ const ptrdiff_t pi = {pidx}; "
                        f"T p = {prof['b']} * {psi}[pi] + {prof['a']} * {d}; "
                        f"{write}{v} = {v} + ({prof['dk']} * {d} + p); }}"
                    )
                    if mode == "adj1" and coef_part != "only":
                        gv, scratch = f"gv{o}_{t}", f"in[{slot[('tmp', tmp + t)]}][idx]"
                        lines.append(f"T {gv} = {'' if sign > 0 else '-'}ga{o};")
                        lines.append(
                            f"if (in{L}) {{ const ptrdiff_t pi = {pidx}; "
                            f"T gpp = in[{slot[('g', None)]}][{psi_base[key]} + pi] + {gv}; "
                            f"out[{adj['gpsi'][key]} + pi] = {prof['b']} * gpp; "
                            f"{scratch} = {gv} * (T)num[{len(self.numbers) + j}] + "
                            f"({prof['a']} * gpp + {prof['dk']} * {gv}); }} "
                            f"else {scratch} = {gv} * (T)num[{len(self.numbers) + j}];"
                        )
                elif mode == "adj1" and coef_part != "only":
                    lines.append(
                        f"in[{slot[('tmp', tmp + t)]}][idx] = {'' if sign > 0 else '-'}ga{o}"
                        f" * (T)num[{len(self.numbers) + j}];"
                    )
                term = v if sign > 0 else f"(-{v})"
                lines.append(f"T {acc} = {term};" if t == 0 else f"{acc} = {acc} + {term};")
            tmp += len(terms)
            if mode == "adj1":
                if self.coef_kinds[b_name] == "map" and coef_part != "none":
                    lines.append(f"out[{adj['gB'][name]} + idx] {put} {sigma}(g{o} * {acc});")
                continue
            old = f"in[{slot[('old', name)]}][idx]"
            if self.coef_kinds[a_name] == "number" and self.numbers[a_name] == 1.0:
                scaled = old
            else:
                scaled = f"{coef(a_name)} * {old}"
            op = "-" if update_fwd else "+"
            target = f"R{o}[k]" if stream else f"out[{o} * N + idx]"
            lines.append(f"{target} = {scaled} {op} {coef(b_name)} * {acc};")
            if save_acc:
                lines.append(f"in[{slot[('accsave', None)]}][{o} * N + idx] = {acc};")
        if mode == "adj2":
            # sources' cotangents: the transposed differences (D+^T = -D-, D-^T = -D+)
            sums = {}
            tmp = 0
            for terms in self.terms.values():
                for t, (j, k, _sign) in enumerate(terms):
                    L = j + off
                    x = f"in[{slot[('tmp', tmp + t)]}]"
                    if fwd:
                        diff = f"({x}[idx + o{L}] * w{L} - {x}[idx])"
                    else:
                        diff = f"({x}[idx] - {x}[idx + o{L}] * w{L})"
                    sums.setdefault(("e" if update_fwd else "h") + AXES[k], []).append(diff)
                tmp += len(terms)
            for src, diffs in sums.items():
                value = " - ".join(["-" + diffs[0], *diffs[1:]])
                lines.append(f"out[{adj['gS'][src]} + idx] {put} {value};")
        body = "\n    ".join(lines)
        # the components whose curl differentiates along the inner axis: the only ones the
        # inner axis's PML slabs change (forward mode's fixups)
        ends = [*starts[1:], len(lines)]
        body_z = "\n    ".join(
            line
            for o, terms in enumerate(self.terms.values())
            if fast_row and any(j + off == 2 for j, _k, _s in terms)
            for line in lines[starts[o] : ends[o]]
        )

        def row_setup(L):
            c, n = coord[L], dims[L]
            per = "1" if periodic[L] else "0"
            if fwd:
                inner, wrap, step = f"{c} < {n} - 1", f"-({n} - 1) * s{L}", f"s{L}"
            else:
                inner, wrap, step = f"{c} > 0", f"({n} - 1) * s{L}", f"-s{L}"
            lo, hi = pml[L]
            return (
                f"const ptrdiff_t o{L} = ({inner}) ? {step} : ({per} ? {wrap} : 0);\n"
                f"      const T w{L} = ({inner}) ? (T)1 : (T){per};\n"
                f"      const ptrdiff_t q{L} = {c} < {lo} ? {c} : "
                f"({c} >= {n} - {hi} ? {c} - ({n} - {lo} - {hi}) : -1);\n"
                f"      const int in{L} = q{L} >= 0;"
            )

        # the inner axis: ranges [a, b) with constant (in2, o2, w2); q2 from k
        lo2, hi2 = pml[2]
        per2 = "(T)1" if periodic[2] else "(T)0"
        call = "CELL({o}, {w}, {q}, {inn}, IN0, IN1);"
        q_low, q_high = "k", f"k - (n2 - {lo2} - {hi2})"
        if fwd:
            wrap = "-(n2 - 1)" if periodic[2] else "0"
            ranges = [
                ("0", f"{lo2}", "1", "(T)1", q_low, "1"),
                (f"{lo2}", f"n2 - {max(hi2, 1)}", "1", "(T)1", "-1", "0"),
                (f"n2 - {hi2}", "n2 - 1", "1", "(T)1", q_high, "1"),
            ]
            edge = ("n2 - 1", wrap, per2, q_high if hi2 else "-1", "1" if hi2 else "0")
        else:
            wrap = "(n2 - 1)" if periodic[2] else "0"
            ranges = [
                ("1", f"{lo2}", "-1", "(T)1", q_low, "1"),
                (f"{max(lo2, 1)}", f"n2 - {hi2}", "-1", "(T)1", "-1", "0"),
                (f"n2 - {hi2}", "n2", "-1", "(T)1", q_high, "1"),
            ]
            edge = ("0", wrap, per2, q_low if lo2 else "-1", "1" if lo2 else "0")
        loops = []
        # (adj2 reads no psi: its row is one loop whatever the PML slabs)
        if (lo2 or hi2) and mode != "adj2":
            for a, b, o, w, q, inn in ranges:
                if (a, b) == (f"n2 - {hi2}", "n2 - 1") and not hi2:
                    continue
                loops.append(
                    f'_Pragma("GCC ivdep") for (ptrdiff_t k = {a}; k < {b}; ++k) '
                    + call.format(o=o, w=w, q=q, inn=inn)
                )
        else:
            a, b = ("0", "n2 - 1") if fwd else ("1", "n2")
            o = "1" if fwd else "-1"
            loops.append(
                f'_Pragma("GCC ivdep") for (ptrdiff_t k = {a}; k < {b}; ++k) '
                + call.format(o=o, w="(T)1", q="-1", inn="0")
            )
        k_edge, o_edge, w_edge, q_edge, in_edge = edge
        edge_call = (
            f"{{ const ptrdiff_t k = {k_edge}; "
            + call.format(o=o_edge, w=w_edge, q=q_edge, inn=in_edge)
            + " }"
        )
        inner = "\n      ".join([edge_call, *loops])
        if fast_row:
            # one loop over the whole row with the interior formula (full vectors, no scalar
            # tails: the boundary cell reads the next row's first cell, a value it discards),
            # then the z-slab cells and the boundary cell recomputed over it with their own
            # formulas (the last write wins: every cell keeps the bits of its own formula)
            step = "1" if fwd else "-1"
            # the array's last row (first, for backward differences) has no next row: its
            # loop stops short of the boundary cell (backward: a second copy of the loop, as
            # a variable start costs the vector loop its alignment)
            main = call.format(o=step, w="(T)1", q="-1", inn="0")
            if fwd:
                fast = [
                    "const ptrdiff_t k_hi = r < n0 * n1 - 1 ? n2 : n2 - 1;",
                    f'_Pragma("GCC ivdep") for (ptrdiff_t k = 0; k < k_hi; ++k) {main}',
                ]
            else:
                fast = [
                    f'if (r > 0) {{ _Pragma("GCC ivdep") for (ptrdiff_t k = 0; k < n2; ++k) {main} }}',
                    f'else {{ _Pragma("GCC ivdep") for (ptrdiff_t k = 1; k < n2; ++k) {main} }}',
                ]
            call_z = call.replace("CELL(", "CELLZ(")
            # (the boundary cell is left to edge_call: in the last row it has no neighbour)
            slabs = (
                (("0", f"{lo2}", q_low, lo2), (f"n2 - {hi2}", "n2 - 1", q_high, hi2))
                if fwd
                else (("1", f"{lo2}", q_low, lo2), (f"n2 - {hi2}", "n2", q_high, hi2))
            )
            for a, b, q, size in slabs:
                if size:
                    fast.append(
                        f'_Pragma("GCC ivdep") for (ptrdiff_t k = {a}; k < {b}; ++k) '
                        + call_z.format(o=step, w="(T)1", q=q, inn="1")
                    )
            fast.append(edge_call)
            inner = "\n      ".join(fast)
        # the row-invariant PML flags of axes 0 and 1 become constants of separate loops
        flags = [[0, 1] if sum(pml[L]) and mode != "adj2" else [0] for L in (0, 1)]
        variants = []
        for f0 in flags[0]:
            for f1 in flags[1]:
                code = inner.replace("IN0", str(f0)).replace("IN1", str(f1))
                variants.append(f"if (in0 == {f0} && in1 == {f1}) {{\n      {code}\n      }}")
        variants = "\n      else ".join(variants)
        if mode == "adj2":  # one copy, every row
            variants = inner.replace("IN0", "0").replace("IN1", "0")
        n_num = len(self.numbers) + self.grid.ndim + (len(self.masked) if masked else 0)
        # hoist every pointer and number into restrict locals so the loops vectorize
        body = re.sub(r"in\[(\d+)\]", r"P\1", body)
        body = re.sub(r"\(T\)num\[(\d+)\]", r"C\1", body)
        body_z = re.sub(r"in\[(\d+)\]", r"P\1", body_z)
        body_z = re.sub(r"\(T\)num\[(\d+)\]", r"C\1", body_z)
        decls = "\n  ".join(
            [
                (
                    f"T* restrict P{m} = (T*)J->in[{m}];"
                    if key[0] in ("tmp", "accsave", "gout")
                    else f"const T* restrict P{m} = J->in[{m}];"
                )
                for key, m in slot.items()
            ]
            + [f"const T C{m} = (T)J->num[{m}];" for m in range(n_num)]
        )
        macro = "\n  ".join(
            " \\\n    ".join(
                [
                    f"#define {cell}(o2, w2, q2, in2, in0, in1) do {{ "
                    "const ptrdiff_t idx = base + k;",
                    "(void)(o2); (void)(w2); (void)(q2); (void)(in2);",
                    *text.split("\n    "),
                    "} while (0)",
                ]
            )
            for cell, text in (("CELL", body), ("CELLZ", body_z))
        )
        n_out = len(self.terms)
        rows = flush = fence = helper = ""
        if stream:
            buffers = [f"R{o}" for o in range(n_out)] + [f"RP{m}" for m in range(len(psi_rows))]
            rows = " ".join(f"T {b}[ROWMAX] __attribute__((aligned(64)));" for b in buffers)
            flush = " ".join(f"stream_row(out + {o} * N + base, R{o}, n2);" for o in range(n_out))
            flush += "".join(
                f"\n      if (in{L}) stream_row(out + {at}, RP{m}, n2);"
                for m, (L, at) in enumerate(psi_rows)
            )
            fence = "stream_fence();"
            helper = _STREAM_C[ctype]
        return f"""
#define T {ctype}
#define N (n0 * n1 * n2)
#define ROWMAX {ROWMAX}
{helper}
typedef struct {{ const T** in; T* out; const double* num; ptrdiff_t n0, n1, n2; }} job_t;

static void run_rows(void* p, ptrdiff_t lo, ptrdiff_t hi) {{
  const job_t* J = (const job_t*)p;
  T* restrict out = J->out;
  {decls}
  const ptrdiff_t n0 = J->n0, n1 = J->n1, n2 = J->n2, s0 = n1 * n2, s1 = n2;
  (void)s0; (void)s1; (void)n0;
  {rows}
  {macro}
  for (ptrdiff_t r = lo; r < hi; ++r) {{
      const ptrdiff_t i = r / n1, j = r % n1, base = r * n2;
      (void)i; (void)j;
      {row_setup(0)}
      {row_setup(1)}
      (void)o0; (void)w0; (void)o1; (void)w1; (void)q0; (void)q1; (void)in0; (void)in1;
      {variants}
      {flush}
  }}
  {fence}
}}

/* num: {n_num} doubles (the number coefficients, 1/d per grid axis, the masked numbers) */
void half_step(const T** in, T* out, const double* num, ptrdiff_t n0, ptrdiff_t n1,
               ptrdiff_t n2, ptrdiff_t threads) {{
  job_t J = {{in, out, num, n0, n1, n2}};
  ptrdiff_t grain = (32768 + n2 - 1) / n2;
  diffsci_parallel_for(run_rows, &J, n0 * n1, grain, 1, threads);
}}
"""

    def _compiled(
        self,
        dtype,
        mode,
        masked=False,
        stream=False,
        accumulate=False,
        coef="both",
        fuse=None,
        save_acc=False,
        write_g=False,
    ):
        key = (
            np.dtype(dtype),
            mode,
            masked,
            stream,
            accumulate,
            coef,
            fuse is not None,
            save_acc,
            write_g,
        )
        fn = self._fns.get(key) if hasattr(self, "_fns") else None
        if fn is None:
            src = (
                native.math_header()
                + native.parallel_header()
                + self.source(
                    _CTYPE[np.dtype(dtype)],
                    mode,
                    masked,
                    stream,
                    accumulate,
                    coef,
                    fuse,
                    save_acc,
                    write_g,
                )
            )
            fn = _FUNCTIONS.get(src)
            if fn is None:
                fn = _FUNCTIONS[src] = native.function(native.load(src), "half_step", 7)
            self._fns = getattr(self, "_fns", {})
            self._fns[key] = fn
        return fn

    def variant(self, arrays):
        """``(masked, stream)``: the forward kernel's variant for these operand arrays.

        ``masked``: every map of ``self.masked`` is handed over as the array it was checked
        on (same address; Tensors are immutable), so its number and masks stand for it.
        ``stream``: the half step's fields outgrow the cache (``STREAM_BYTES``) and rows fit
        the stack buffers (``ROWMAX``).
        """
        index = self._coef_index()
        masked = bool(self.masked) and all(
            (
                arrays[index[c]] is array
                or native.address(arrays[index[c]]) == self._masked_addresses[c]
            )
            and arrays[index[c]].dtype == array.dtype
            for c, (_n, _m, array) in self.masked.items()
        )
        fields = self._field_cells * arrays[0].itemsize
        stream = self.shape3[2] <= ROWMAX and fields > STREAM_BYTES
        return masked, stream

    @property
    def _masked_addresses(self):
        found = self.__dict__.get("_masked_addr")
        if found is None:
            found = {c: native.address(a) for c, (_n, _m, a) in self.masked.items()}
            self._masked_addr = found
        return found

    @property
    def _field_cells(self):
        """Cells of the arrays one half step reads and writes (sources, olds, new)."""
        found = self.__dict__.get("_fields")
        if found is None:
            cells = int(np.prod(self.grid.shape))
            found = self._fields = (len(self.sources()) + 2 * len(self.terms)) * cells
        return found

    def _coef_index(self):
        """Operand position of every coefficient Tensor (the order of ``operands``)."""
        found = self.__dict__.get("_coef_at")
        if found is None:
            at = len(self.sources()) + len(self.terms) + len(self.psi_keys)
            names = [c for c in self.coef_names if self.coef_kinds[c] != "number"]
            found = self._coef_at = {c: at + m for m, c in enumerate(names)}
        return found

    def _launch(self, fn, arrays, out, masked=False, out_address=None):
        """Call ``fn`` on ``arrays`` (the operands, then scratch) and ``out``.

        Per-step Python work is kept small (a 2D step is ~80 us of C): the pointer table is one
        ctypes array per (plan, length), reused; the numbers and the masks are built once per
        plan; operands from the coefficients on (maps, profiles: the same arrays at every step
        of a run) keep their address while they are the same object (identity, held by the
        cache), so only the fields, psi terms, cotangent, scratch and ``out`` are looked up."""
        n_fixed = len(self.sources()) + len(self.terms) + len(self.psi_keys)
        n_kept = n_fixed + len(self._coef_index()) + len(self.profile_names)
        n_ops = len(arrays)
        extra = [m for _n, m, _a in self.masked.values()] if masked else []
        total = n_ops + len(extra)
        tables = self.__dict__.setdefault("_tables", {})
        key = (total, threading.get_ident())  # a table per thread: calls may overlap
        table = tables.get(key)
        if table is None:
            table = tables[key] = (ctypes.c_void_p * total)()
        held = self.__dict__.setdefault("_held", {})  # position -> (array, address)
        address = native.address
        for m in range(n_ops):
            a = arrays[m]
            if n_fixed <= m < n_kept:
                known = held.get(m)
                if known is not None and known[0] is a:
                    table[m] = known[1]
                    continue
                held[m] = (a, address(a))
                table[m] = held[m][1]
            else:
                table[m] = address(a)
        for m, a in enumerate(extra):
            table[n_ops + m] = address(a)
        shape3 = self.shape3
        fn(
            ctypes.addressof(table),
            address(out) if out_address is None else out_address,
            self._numbers_address,
            shape3[0],
            shape3[1],
            shape3[2],
            native.num_threads(),
        )

    @property
    def _numbers_address(self):
        """Address of the numbers array (built once per plan, held by the plan)."""
        found = self.__dict__.get("_numbers_held")
        if found is None:
            array = self._numbers
            found = self._numbers_held = (array, native.address(array))
        return found[1]

    @property
    def _numbers(self):
        return np.array(
            [*self.numbers.values()]
            + [1.0 / d for d in self.grid.spacing]
            + [n for n, _m, _a in self.masked.values()],
            dtype=np.float64,
        )

    def kernel(self):
        """``kernel(xp, *arrays)`` for ``kernel_call``, or None without a C compiler."""
        if not self.supported or not native.available():
            return None

        def kernel(xp, *arrays):
            if xp is not np:
                return None
            dtype = arrays[0].dtype
            if dtype not in _CTYPE or any(a.dtype != dtype for a in arrays):
                return None
            arrays = [np.ascontiguousarray(a) for a in arrays]
            if self.injections:
                arrays, values = arrays[:-1], arrays[-1]
            masked, stream = self.variant(arrays)
            out, out_address = _aligned_empty(self.size, dtype, with_address=True)
            fn = self._compiled(dtype, "forward", masked, stream)
            self._launch(fn, arrays, out, masked, out_address)
            # the point sources, in place in the fresh result (the composite's index_add
            # copies the component; the same additions in the same order, so the same bits)
            for m, at in enumerate(self._inj_at):
                out[at] += values[m]
            return out

        return kernel

    @property
    def adjoint_size(self):
        found = self.__dict__.get("_adjoint_size")
        if found is None:
            found = sum(int(np.prod(shape)) for _g, _n, shape in self.adjoint_parts())
            self._adjoint_size = found
        return found

    def adjoint_kernel(self):
        """The adjoint's two passes as ``kernel(xp, *operands, g)``, or None (no compiler, or a
        0-d Tensor coefficient, whose cotangent is a reduction: the composite handles it)."""
        if not self.supported or not native.available():
            return None
        if any(kind == "tensor0" for kind in self.coef_kinds.values()):
            return None
        n_tmp = sum(len(t) for t in self.terms.values())
        cells = int(np.prod(self.grid.shape))

        def kernel(xp, *arrays):
            if xp is not np:
                return None
            dtype = arrays[0].dtype
            if dtype not in _CTYPE or any(a.dtype != dtype for a in arrays):
                return None
            arrays = [np.ascontiguousarray(a) for a in arrays]
            g = arrays[-1]
            if self.injections:  # the values do not enter the update's adjoint
                arrays = [*arrays[:-2], g]
            arrays += [np.empty(cells, dtype=dtype) for _ in range(n_tmp)]
            size = self.adjoint_size
            out = np.empty(size + len(self._inj_at), dtype=dtype)
            # the values' cotangents: g at their cells (the additions are the last operation)
            for m, at in enumerate(self._inj_at):
                out[size + m] = g[at]
            self._launch(self._compiled(dtype, "adj1"), arrays, out)
            self._launch(self._compiled(dtype, "adj2"), arrays, out)
            return out

        return kernel

    def function(self):
        """The half step as a ``core.custom_vjp`` of the operands, or None. Its result is the
        tuple of parts (``split``: new components, then new psi terms).

        Its value is the forward kernel's, its VJP the adjoint kernel's (both bound to their
        composites with ``kernel_call``, so higher derivatives and other backends use the
        composites); forward mode differentiates the composite.
        """
        kernel, adjoint = self.kernel(), self.adjoint_kernel()
        if kernel is None:
            return None
        parts = self.adjoint_parts()
        n_prof = len(self.profile_names)

        def fun(*operands):
            flat = ops.kernel_call(self.reference, kernel, *operands, shape=(self.size,))
            return tuple(self.split(flat))

        def fwd(*operands):
            return fun(*operands), operands

        def bwd(operands, gs):
            # the parts' cotangents joined once (slicing the flat result outside the rule
            # would cost, per part and step, a zero-filled flat array in reverse mode)
            dtype = operands[0].dtype
            g = ops.concatenate(
                [
                    ops.zeros((size,), dtype=dtype) if x is None else x.reshape(-1)
                    for x, size in zip(gs, self.sizes, strict=True)
                ]
            )
            flat = ops.kernel_call(
                self.adjoint_reference,
                adjoint,
                *operands,
                g,
                shape=(self.adjoint_size + len(self.injections),),
            )
            cts, at = [], 0
            for _group, _name, shape in parts:
                size = int(np.prod(shape))
                cts.append(flat[at : at + size].reshape(shape))
                at += size
            if self.injections:
                values_ct = flat[at : at + len(self.injections)]
                return (*cts, *([None] * n_prof), values_ct)
            return (*cts, *([None] * n_prof))

        call = core.custom_vjp(fun)
        call.defvjp(fwd, bwd)
        return call


def _aligned_empty(size, dtype, with_address=False):
    """An uninitialised 1-D array of ``size`` whose data starts on a 64-byte boundary (and its
    address, with ``with_address``)."""
    dtype = np.dtype(dtype)
    pad = 64 // dtype.itemsize
    raw = np.empty(size + pad, dtype=dtype)
    at = native.address(raw)
    start = (-at % 64) // dtype.itemsize
    out = raw[start : start + size]
    return (out, at + start * dtype.itemsize) if with_address else out


def half_step_kernel(kind, terms, grid, boundaries, coeffs, psi_keys):
    """A ``HalfStep`` plan (``.kernel()`` is None where no native path applies)."""
    return HalfStep(kind, terms, grid, boundaries, coeffs, psi_keys)
