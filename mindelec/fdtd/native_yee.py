"""The Yee half steps as one native loop each, bound to the composite with ``kernel_call``.

The composite update (``yee.update_h``/``update_e``) costs, per curl term, a slice and a pad
(one copy pass each) plus fused arithmetic: about 50 passes over the fields per 3D step. Here
each half step is one C loop over the cells that reads every input once and writes every output
once (the new components and the CPML ``psi`` terms of that half step), split across the thread
pool by rows. The C source is generated for the configuration (components, curl terms,
periodic axes, which coefficients are maps, numbers or 0-d Tensors, CPML axes), compiled once
and cached (``core.native``). It computes the composite's formulas in the composite's order
(``tests/mindelec/fdtd/test_native_yee.py`` compares them), and ``core.ops.kernel_call`` binds
it to the composite: values come from C on the CPU, every derivative (and any other backend)
from the composite.

Layout: a grid of shape ``(n0[, n1[, n2]])`` is looped as ``(n0, n1, n2)`` with missing axes
of size 1; index ``idx = (i n1 + j) n2 + k``. A forward difference along axis ``a`` reads
``F[idx + s_a]``, or at the last cell ``F[idx - (n_a - 1) s_a]`` (periodic) or zero; the
backward difference mirrors it at the first cell. Row-invariant choices are a (pointer offset,
weight) pair, so the inner loop over the contiguous axis has no branches and vectorizes; its
boundary cell is peeled off.
"""

from __future__ import annotations

import ctypes
import re

import numpy as np

import core
import core.native as native
from core import ops

from .grid import AXES
from .yee import psi_shapes

__all__ = ["half_step_kernel"]

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


class HalfStep:
    """One half step's plan: operands, generated C and the composite reference.

    Args:
        kind: ``"h"`` (H update from E, forward differences) or ``"e"``.
        terms: per updated component ``name -> [(j, k, sign)]`` (``yee.curl_terms``).
        grid, boundaries, coeffs: as in ``yee``; ``psi_keys``: the psi terms of this half step.

    The kernel's result is one flat array: the new components (``grid.shape`` each), then the
    new psi terms (``yee.psi_shapes``), in the order of ``terms`` and ``psi_keys``.
    """

    def __init__(self, kind, terms, grid, boundaries, coeffs, psi_keys):
        self.kind = kind
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
        cells = int(np.prod(grid.shape))
        self.sizes = [cells] * len(terms) + [int(np.prod(self.psi_shapes[k])) for k in psi_keys]
        self.size = sum(self.sizes)

    # ---- operands ---------------------------------------------------------------------------
    def sources(self):
        """Names of the other field's components the curls read (sorted)."""
        other = "e" if self.kind == "h" else "h"
        return sorted({other + AXES[k] for terms in self.terms.values() for _j, k, _s in terms})

    def operands(self, state, coeffs):
        """The tensors handed to ``kernel_call`` (order: sources, olds, psi, coefs, profiles)."""
        tensors = [state.get(n) for n in self.sources()]
        tensors += [state.get(n) for n in self.terms]
        tensors += [state.psi[k] for k in self.psi_keys]
        tensors += [coeffs[c] for c in self.coef_names if self.coef_kinds[c] != "number"]
        tensors += [coeffs[p] for p in self.profile_names]
        return tensors

    def unpack(self, flat):
        """``(components, psi)`` dicts from the flat result (reshaped slices)."""
        parts, at = [], 0
        for size in self.sizes:
            parts.append(flat[at : at + size])
            at += size
        names = list(self.terms)
        comps = {n: parts[o].reshape(self.grid.shape) for o, n in enumerate(names)}
        psi = {
            k: parts[len(names) + m].reshape(self.psi_shapes[k])
            for m, k in enumerate(self.psi_keys)
        }
        return comps, psi

    # ---- the composite ----------------------------------------------------------------------
    def reference(self, *tensors):
        """The composite update (``yee.update_h``/``update_e``), flattened like the kernel's."""
        from .state import FieldState
        from .yee import update_e, update_h

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
        outs = [new.get(n) for n in self.terms] + [new.psi[k] for k in self.psi_keys]
        return ops.concatenate([x.reshape(-1) for x in outs])

    # ---- C ----------------------------------------------------------------------------------
    def source(self, ctype):
        """C source of ``void half_step(const T** in, T* out, const double* num, sizes...)``."""
        fwd = self.kind == "h"
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
        number_slot = {c: m for m, c in enumerate(self.numbers)}
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
            arr = f"in[{slot[('coef', c)]}]"
            return f"{arr}[idx]" if kind == "map" else f"{arr}[0]"

        lines = []
        for o, (name, terms) in enumerate(self.terms.items()):
            acc = f"acc{o}"
            for t, (j, k, sign) in enumerate(terms):
                L = j + off
                src = f"in[{slot[('src', ('e' if fwd else 'h') + AXES[k])]}]"
                if fwd:
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
                    lines.append(
                        f"if (in{L}) {{ const ptrdiff_t pi = {pidx}; "
                        f"T p = {prof['b']} * {psi}[pi] + {prof['a']} * {d}; "
                        f"out[{psi_base[key]} + pi] = p; "
                        f"{v} = {v} + ({prof['dk']} * {d} + p); }}"
                    )
                term = v if sign > 0 else f"(-{v})"
                lines.append(f"T {acc} = {term};" if t == 0 else f"{acc} = {acc} + {term};")
            a_name = ("da_" if fwd else "ca_") + name
            b_name = ("db_" if fwd else "cb_") + name
            old = f"in[{slot[('old', name)]}][idx]"
            if self.coef_kinds[a_name] == "number" and self.numbers[a_name] == 1.0:
                scaled = old
            else:
                scaled = f"{coef(a_name)} * {old}"
            op = "-" if fwd else "+"
            lines.append(f"out[{o} * N + idx] = {scaled} {op} {coef(b_name)} * {acc};")
        body = "\n    ".join(lines)

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
        if lo2 or hi2:
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
        # the row-invariant PML flags of axes 0 and 1 become constants of separate loops
        flags = [[0, 1] if sum(pml[L]) else [0] for L in (0, 1)]
        variants = []
        for f0 in flags[0]:
            for f1 in flags[1]:
                code = inner.replace("IN0", str(f0)).replace("IN1", str(f1))
                variants.append(f"if (in0 == {f0} && in1 == {f1}) {{\n      {code}\n      }}")
        variants = "\n      else ".join(variants)
        n_num = len(self.numbers) + self.grid.ndim
        # hoist every pointer and number into restrict locals so the loops vectorize
        body = re.sub(r"in\[(\d+)\]", r"P\1", body)
        body = re.sub(r"\(T\)num\[(\d+)\]", r"C\1", body)
        decls = "\n  ".join(
            [f"const T* restrict P{m} = J->in[{m}];" for m in range(len(slot))]
            + [f"const T C{m} = (T)J->num[{m}];" for m in range(n_num)]
        )
        macro = " \\\n    ".join(
            [
                "#define CELL(o2, w2, q2, in2, in0, in1) do { const ptrdiff_t idx = base + k;",
                "(void)(o2); (void)(w2); (void)(q2); (void)(in2);",
                *body.split("\n    "),
                "} while (0)",
            ]
        )
        return f"""
#define T {ctype}
#define N (n0 * n1 * n2)
typedef struct {{ const T** in; T* out; const double* num; ptrdiff_t n0, n1, n2; }} job_t;

static void run_rows(void* p, ptrdiff_t lo, ptrdiff_t hi) {{
  const job_t* J = (const job_t*)p;
  T* restrict out = J->out;
  {decls}
  const ptrdiff_t n0 = J->n0, n1 = J->n1, n2 = J->n2, s0 = n1 * n2, s1 = n2;
  (void)s0; (void)s1; (void)n0;
  {macro}
  for (ptrdiff_t r = lo; r < hi; ++r) {{
      const ptrdiff_t i = r / n1, j = r % n1, base = r * n2;
      (void)i; (void)j;
      {row_setup(0)}
      {row_setup(1)}
      (void)o0; (void)w0; (void)o1; (void)w1; (void)q0; (void)q1; (void)in0; (void)in1;
      {variants}
  }}
}}

/* num: {n_num} doubles (the number coefficients, then 1/d per grid axis) */
void half_step(const T** in, T* out, const double* num, ptrdiff_t n0, ptrdiff_t n1,
               ptrdiff_t n2, ptrdiff_t threads) {{
  job_t J = {{in, out, num, n0, n1, n2}};
  ptrdiff_t grain = (32768 + n2 - 1) / n2;
  diffsci_parallel_for(run_rows, &J, n0 * n1, grain, 1, threads);
}}
"""

    def kernel(self):
        """``kernel(xp, *arrays)`` for ``kernel_call``, or None without a C compiler."""
        if not self.supported or not native.available():
            return None
        shape3 = (1,) * (3 - self.grid.ndim) + tuple(self.grid.shape)
        numbers = np.array(
            [*self.numbers.values()] + [1.0 / d for d in self.grid.spacing], dtype=np.float64
        )
        sources = {}

        def kernel(xp, *arrays):
            if xp is not np:
                return None
            dtype = arrays[0].dtype
            if dtype not in _CTYPE or any(a.dtype != dtype for a in arrays):
                return None
            src = sources.get(dtype)
            if src is None:
                src = native.math_header() + native.parallel_header() + self.source(_CTYPE[dtype])
                sources[dtype] = src
            fn = _FUNCTIONS.get(src)
            if fn is None:
                fn = _FUNCTIONS[src] = native.function(native.load(src), "half_step", 7)
            arrays = [np.ascontiguousarray(a) for a in arrays]
            pointers = (ctypes.c_void_p * len(arrays))(*[native.address(a) for a in arrays])
            out = np.empty(self.size, dtype=dtype)
            fn(
                ctypes.addressof(pointers),
                native.address(out),
                native.address(numbers),
                shape3[0],
                shape3[1],
                shape3[2],
                native.num_threads(),
            )
            return out

        return kernel


def half_step_kernel(kind, terms, grid, boundaries, coeffs, psi_keys):
    """A ``HalfStep`` plan (``.kernel()`` is None where no native path applies)."""
    return HalfStep(kind, terms, grid, boundaries, coeffs, psi_keys)
