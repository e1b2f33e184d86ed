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

import numpy as np

import core
import core.native as native
from core import ops

from .grid import AXES

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
    """

    def __init__(self, kind, terms, grid, boundaries, coeffs, psi_keys):
        self.kind = kind
        self.grid = grid
        self.terms = terms
        self.psi_keys = tuple(psi_keys)
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
            f"pml_{p}{kind}_{AXES[a]}" for a in self.cpml_axes for p in ("b", "a", "ik")
        ]
        self.numbers = {
            c: float(coeffs[c]) for c in self.coef_names if self.coef_kinds[c] == "number"
        }

    # ---- operands ---------------------------------------------------------------------------
    def sources(self):
        """Names of the other field's components the curls read (sorted)."""
        other = "e" if self.kind == "h" else "h"
        return sorted({other + AXES[k] for terms in self.terms.values() for _j, k, _s in terms})

    def operands(self, state, coeffs):
        """The tensors handed to ``kernel_call`` (order: sources, olds, psi, coefs, profiles)."""
        ops_list = [state.get(n) for n in self.sources()]
        ops_list += [state.get(n) for n in self.terms]
        ops_list += [state.psi[k] for k in self.psi_keys]
        ops_list += [coeffs[c] for c in self.coef_names if self.coef_kinds[c] != "number"]
        ops_list += [coeffs[p] for p in self.profile_names]
        return ops_list

    def split(self, tensors):
        names = self.sources()
        n_src, n_old, n_psi = len(names), len(self.terms), len(self.psi_keys)
        src = dict(zip(names, tensors[:n_src]))
        old = dict(zip(self.terms, tensors[n_src : n_src + n_old]))
        rest = tensors[n_src + n_old :]
        psi = dict(zip(self.psi_keys, rest[:n_psi]))
        rest = rest[n_psi:]
        coefs = dict(self.numbers)
        tensor_coefs = [c for c in self.coef_names if self.coef_kinds[c] != "number"]
        coefs.update(zip(tensor_coefs, rest[: len(tensor_coefs)]))
        profiles = dict(zip(self.profile_names, rest[len(tensor_coefs) :]))
        return src, old, psi, coefs, profiles

    # ---- the composite ----------------------------------------------------------------------
    def reference(self, *tensors):
        """The composite update: ``[n_out, *grid.shape]`` (new components, then new psi)."""
        from .yee import _scaled, diff_backward, diff_forward

        src, old, psi, coefs, profiles = self.split(tensors)
        diff = diff_forward if self.kind == "h" else diff_backward
        kind = self.kind
        new_psi = {}
        outs = []
        for name, terms in self.terms.items():
            total = None
            for j, k, sign in terms:
                source = src[("e" if kind == "h" else "h") + AXES[k]]
                delta = diff(source, j, self.periodic[j])
                key = f"{name}_{AXES[j]}"
                if key in psi:
                    axis = AXES[j]
                    p = (
                        profiles[f"pml_b{kind}_{axis}"] * psi[key]
                        + profiles[f"pml_a{kind}_{axis}"] * delta
                    )
                    new_psi[key] = p
                    term = delta * profiles[f"pml_ik{kind}_{axis}"] + p
                else:
                    term = delta * (1.0 / self.grid.spacing[j])
                term = term if sign > 0 else -term
                total = term if total is None else total + term
            a_c = coefs[("da_" if kind == "h" else "ca_") + name]
            b_c = coefs[("db_" if kind == "h" else "cb_") + name]
            scaled = _scaled(a_c, old[name])
            outs.append(scaled - b_c * total if kind == "h" else scaled + b_c * total)
        outs += [new_psi[k] for k in self.psi_keys]
        return ops.stack(outs)

    # ---- C ----------------------------------------------------------------------------------
    def source(self, ctype):
        """C source of ``void half_step(const T** in, T* out, const double* num, sizes...)``."""
        names = self.sources()
        index = {}
        pos = 0
        for n in names:
            index[("src", n)] = pos
            pos += 1
        for n in self.terms:
            index[("old", n)] = pos
            pos += 1
        for k in self.psi_keys:
            index[("psi", k)] = pos
            pos += 1
        for c in self.coef_names:
            if self.coef_kinds[c] != "number":
                index[("coef", c)] = pos
                pos += 1
        for p in self.profile_names:
            index[("prof", p)] = pos
            pos += 1
        number_slot = {c: m for m, c in enumerate(self.numbers)}
        n_out = len(self.terms) + len(self.psi_keys)
        coord = ("i", "j", "k")
        off = 3 - self.grid.ndim  # grid axis a is loop axis a + off (missing axes in front)
        periodic = (False,) * off + self.periodic
        lines = []
        fwd = self.kind == "h"

        def coef(c):
            kind = self.coef_kinds[c]
            if kind == "number":
                return f"(T)num[{number_slot[c]}]"
            arr = f"in[{index[('coef', c)]}]"
            return f"{arr}[idx]" if kind == "map" else f"{arr}[0]"

        for o, (name, terms) in enumerate(self.terms.items()):
            acc = f"acc{o}"
            for t, (j, k, sign) in enumerate(terms):
                src = f"in[{index[('src', ('e' if fwd else 'h') + AXES[k])]}]"
                L = j + off
                if fwd:
                    delta = f"({src}[idx + o{L}] * w{L} - {src}[idx])"
                else:
                    delta = f"({src}[idx] - {src}[idx + o{L}] * w{L})"
                lines.append(f"T d{o}_{t} = {delta};")
                key = f"{name}_{AXES[j]}"
                if key in self.psi_keys:
                    ax = AXES[j]
                    kk = self.kind
                    b = f"in[{index[('prof', f'pml_b{kk}_{ax}')]}][{coord[L]}]"
                    a = f"in[{index[('prof', f'pml_a{kk}_{ax}')]}][{coord[L]}]"
                    ik = f"in[{index[('prof', f'pml_ik{kk}_{ax}')]}][{coord[L]}]"
                    psi = f"in[{index[('psi', key)]}][idx]"
                    slot = len(self.terms) + self.psi_keys.index(key)
                    lines.append(f"T p{o}_{t} = {b} * {psi} + {a} * d{o}_{t};")
                    lines.append(f"out[{slot} * N + idx] = p{o}_{t};")
                    term = f"(d{o}_{t} * {ik} + p{o}_{t})"
                else:
                    term = f"(d{o}_{t} * (T)num[{len(self.numbers) + j}])"
                term = term if sign > 0 else f"(-{term})"
                lines.append(f"T {acc} = {term};" if t == 0 else f"{acc} = {acc} + {term};")
            a_name = ("da_" if fwd else "ca_") + name
            b_name = ("db_" if fwd else "cb_") + name
            old = f"in[{index[('old', name)]}][idx]"
            if self.coef_kinds[a_name] == "number" and self.numbers[a_name] == 1.0:
                scaled = old
            else:
                scaled = f"{coef(a_name)} * {old}"
            op = "-" if fwd else "+"
            lines.append(f"out[{o} * N + idx] = {scaled} {op} {coef(b_name)} * {acc};")
        body = "\n    ".join(lines)

        # row-invariant neighbour offsets / weights for axes 0 and 1; axis 2 peeled
        def row_setup(a, c, n):
            if fwd:
                inner = f"{c} < {n} - 1"
                wrap = f"-({n} - 1) * s{a}"
                step = f"s{a}"
            else:
                inner = f"{c} > 0"
                wrap = f"({n} - 1) * s{a}"
                step = f"-s{a}"
            per = "1" if periodic[a] else "0"
            return (
                f"ptrdiff_t o{a} = ({inner}) ? {step} : ({per} ? {wrap} : 0);\n"
                f"      T w{a} = ({inner}) ? (T)1 : (T){per};"
            )

        per2 = "1" if periodic[2] else "0"
        if fwd:
            edge_k, loop = "n2 - 1", "for (ptrdiff_t k = 0; k < n2 - 1; ++k)"
            edge_o, edge_w = f"({per2} ? -(n2 - 1) : 0)", f"(T){per2}"
            o2_in = "1"
        else:
            edge_k, loop = "0", "for (ptrdiff_t k = 1; k < n2; ++k)"
            edge_o, edge_w = f"({per2} ? (n2 - 1) : 0)", f"(T){per2}"
            o2_in = "-1"
        n_num = len(self.numbers) + 3
        return f"""
#define T {ctype}
#define N (n0 * n1 * n2)
typedef struct {{ const T** in; T* out; const double* num; ptrdiff_t n0, n1, n2; }} job_t;

static inline __attribute__((always_inline)) void cell(
    const T* const* restrict in, T* restrict out, const double* restrict num,
    ptrdiff_t n0, ptrdiff_t n1, ptrdiff_t n2, ptrdiff_t i, ptrdiff_t j, ptrdiff_t k,
    ptrdiff_t idx, ptrdiff_t o0, T w0, ptrdiff_t o1, T w1, ptrdiff_t o2, T w2) {{
    (void)i; (void)j; (void)k; (void)o0; (void)w0; (void)o1; (void)w1; (void)o2; (void)w2;
    (void)n0;
    {body}
}}

static void run_rows(void* p, ptrdiff_t lo, ptrdiff_t hi) {{
  const job_t* J = (const job_t*)p;
  const T* const* in = J->in;
  T* out = J->out;
  const double* num = J->num;
  const ptrdiff_t n0 = J->n0, n1 = J->n1, n2 = J->n2, s0 = n1 * n2, s1 = n2;
  (void)s0; (void)s1;
  for (ptrdiff_t r = lo; r < hi; ++r) {{
      const ptrdiff_t i = r / n1, j = r % n1, base = r * n2;
      {row_setup(0, "i", "n0")}
      {row_setup(1, "j", "n1")}
      {{ const ptrdiff_t k = {edge_k};
        cell(in, out, num, n0, n1, n2, i, j, k, base + k, o0, w0, o1, w1, {edge_o}, {edge_w}); }}
      _Pragma("GCC ivdep") {loop}
        cell(in, out, num, n0, n1, n2, i, j, k, base + k, o0, w0, o1, w1, {o2_in}, (T)1);
  }}
}}

/* num: {n_num} doubles (the number coefficients, then 1/d per axis) */
void half_step(const T** in, T* out, const double* num, ptrdiff_t n0, ptrdiff_t n1,
               ptrdiff_t n2, ptrdiff_t threads) {{
  job_t J = {{in, out, num, n0, n1, n2}};
  ptrdiff_t grain = (32768 + n2 - 1) / n2;
  diffsci_parallel_for(run_rows, &J, n0 * n1, grain, 1, threads);
}}
/* outputs: {n_out} */
"""

    def kernel(self):
        """``kernel(xp, *arrays)`` for ``kernel_call``, or None without a C compiler."""
        if not self.supported or not native.available():
            return None
        shape3 = (1,) * (3 - self.grid.ndim) + tuple(self.grid.shape)
        n_out = len(self.terms) + len(self.psi_keys)
        numbers = np.array(
            [*self.numbers.values()] + [1.0 / d for d in self.grid.spacing],
            dtype=np.float64,
        )
        out_shape = (n_out, *self.grid.shape)
        sources = {}

        def kernel(xp, *arrays):
            if xp is not np:
                return None
            dtype = arrays[0].dtype
            if dtype not in _CTYPE or any(a.dtype != dtype for a in arrays):
                return None
            src = sources.get(dtype)
            if src is None:
                src = sources[dtype] = (
                    native.math_header() + native.parallel_header() + self.source(_CTYPE[dtype])
                )
            fn = _FUNCTIONS.get(src)
            if fn is None:
                lib = native.load(src)
                fn = native.function(lib, "half_step", 7)
                _FUNCTIONS[src] = fn
            arrays = [np.ascontiguousarray(a) for a in arrays]
            pointers = (ctypes.c_void_p * len(arrays))(*[native.address(a) for a in arrays])
            out = np.empty(out_shape, dtype=dtype)
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
