"""CPU kernels for the elementwise primitives (see core.backend.kernels).

The reference implementations (``core/prims/elementwise.py``) are one numpy expression each;
on the CPU these run instead:

- erf, logistic, gelu, gelu_backward, tanh_backward, tanh_backward_t: one native C loop
  (``core.backend.cpu_kernels``) from ``NATIVE_MIN`` elements, where a compiler exists;
  without one, erf in float32 is a rational approximation in numpy (scipy's erf costs 8 ns
  per float32 element) and logistic runs in place, block by block;
- add, sub, mul of large float arrays: the threaded native loop (the same bits as numpy).

Every kernel falls back to numpy (or the reference) for other array types, dtypes and sizes.
"""

import numpy as np

from ... import dtypes as _dt
from .. import cpu_kernels as native
from .. import kernels

# Elements from which a native loop beats numpy. A native call costs ~4-5 us whatever its size
# (measured 2026-11-26, float32, 2-core VM), so each kernel starts where its one pass pays for
# that: gelu and its backward at once (numpy needs several transcendental passes), erf and
# logistic from 2048 (4.6 vs 3.2 us at 1024, 5.6 vs 10.9 at 4096), tanh's backward, three
# cheap arithmetic passes in numpy, only from 2^18 (15.7 vs 14.9 us at 65536, 41 vs 67 at 2^18).
NATIVE_MIN = 256
ERF_LOGISTIC_NATIVE_MIN = 2048
TANH_BACKWARD_NATIVE_MIN = 1 << 18
_FLOAT = (np.dtype("float32"), np.dtype("float64"))
_ERF_POLY = (np.dtype("float32"), np.dtype("float16"), _dt.bfloat16)


# ---- erf ----------------------------------------------------------------------------------
# erf(x) = x P(x^2) / Q(x^2) on [-4, 4] (|erf| rounds to 1 in float32 beyond), the float32
# minimax fit used by Eigen and XLA; coefficients from the highest power down. Exact to a few
# float32 ulps (max |error| 4e-7, tested against scipy in float64).
_ERF_P = [np.float32(c) for c in (-2.72614225801306e-10, 2.77068142495902e-08,
          -2.10102402082508e-06, -5.69250639462346e-05, -7.34990630326855e-04,
          -2.95459980854025e-03, -1.60960333262415e-02)]  # fmt: skip
_ERF_Q = [np.float32(c) for c in (-1.45660718464996e-05, -2.13374055278905e-04,
          -1.68282697438203e-03, -7.37332916720468e-03, -1.42647390514189e-02)]  # fmt: skip
_BLOCK = 1 << 16  # elements (256 KiB of float32): the passes over a block stay in L2


def erf_float32(x):
    """erf of a float32 array by the rational approximation, block by block."""
    flat = x.reshape(-1)
    out = np.empty_like(flat)
    t = np.empty(min(_BLOCK, flat.size), np.float32)
    poly = np.empty_like(t)
    for start in range(0, flat.size, _BLOCK):
        stop = min(start + _BLOCK, flat.size)
        o, tt, pp = out[start:stop], t[: stop - start], poly[: stop - start]
        np.clip(flat[start:stop], np.float32(-4), np.float32(4), out=o)
        np.multiply(o, o, out=tt)
        for coeffs, combine in ((_ERF_P, np.multiply), (_ERF_Q, np.divide)):
            np.multiply(tt, coeffs[0], out=pp)
            pp += coeffs[1]
            for c in coeffs[2:]:
                pp *= tt
                pp += c
            combine(o, pp, out=o)
        np.clip(o, np.float32(-1), np.float32(1), out=o)  # the fit overshoots 1 by an ulp near 4
    return out.reshape(x.shape)


@kernels.register("erf")
def _erf(reference):
    def impl(xp, x):
        if xp is np:
            if x.dtype in _FLOAT and x.size >= ERF_LOGISTIC_NATIVE_MIN:
                out = native.erf(x)
                if out is not None:
                    return out
            if x.dtype in _ERF_POLY:
                return erf_float32(x.astype(np.float32, copy=False)).astype(x.dtype, copy=False)
        return reference(xp, x)

    return impl


# ---- logistic -----------------------------------------------------------------------------
def _logistic_into(x, out, den):
    """The reference's exp(min(x, 0)) / (1 + exp(-|x|)), written into ``out``."""
    zero, one = x.dtype.type(0), x.dtype.type(1)
    np.minimum(x, zero, out=out)
    np.exp(out, out=out)
    np.abs(x, out=den)
    np.negative(den, out=den)
    np.exp(den, out=den)
    den += one
    out /= den
    return out


@kernels.register("logistic")
def _logistic(reference):
    def impl(xp, x):
        if xp is not np or x.dtype.kind != "f":
            return reference(xp, x)
        if x.size >= ERF_LOGISTIC_NATIVE_MIN:
            out = native.logistic(x)  # one C pass with one vectorized exp
            if out is not None:
                return out
        out = np.empty_like(x)
        if x.size > _BLOCK and x.flags.c_contiguous:
            # six passes over memory become one: each block is finished while it is in cache
            flat_x, flat_out = x.reshape(-1), out.reshape(-1)
            scratch = np.empty(_BLOCK, x.dtype)
            for start in range(0, x.size, _BLOCK):
                stop = min(start + _BLOCK, x.size)
                _logistic_into(flat_x[start:stop], flat_out[start:stop], scratch[: stop - start])
            return out
        return _logistic_into(x, out, np.empty_like(x))

    return impl


# ---- one-pass native kernels: gelu, its backward, tanh's backward -------------------------
def _native_from(native_fn, same_operands=False, min_size=NATIVE_MIN):
    """A kernel factory: ``native_fn(*arrays)`` on numpy arrays of >= ``min_size`` elements (it
    returns None where it cannot run: no compiler, another dtype, broadcasting), else the
    reference. ``same_operands``: only when every operand has the last one's shape and dtype."""

    def factory(reference):
        def impl(xp, *arrays):
            last = arrays[-1]
            if (
                xp is np
                and last.size >= min_size
                and not (
                    same_operands
                    and any(a.shape != last.shape or a.dtype != last.dtype for a in arrays)
                )
            ):
                out = native_fn(*arrays)
                if out is not None:
                    return out
            return reference(xp, *arrays)

        return impl

    return factory


kernels.register("gelu")(_native_from(native.gelu))
kernels.register("gelu_backward")(_native_from(native.gelu_backward, same_operands=True))
kernels.register("gelu_tanh")(_native_from(native.gelu_tanh))
kernels.register("gelu_tanh_backward")(
    _native_from(native.gelu_tanh_backward, same_operands=True)
)
kernels.register("tanh_backward")(
    _native_from(native.tanh_backward, min_size=TANH_BACKWARD_NATIVE_MIN)
)
kernels.register("tanh_backward_t")(
    _native_from(native.tanh_backward_t, min_size=TANH_BACKWARD_NATIVE_MIN)
)


# ---- threaded eager arithmetic ------------------------------------------------------------
def _arith(name, ufunc):
    """Large float operands use the threaded native loop (same bits as ``ufunc``); small ones
    pay one size check."""
    big = native.ARITH_MIN_SIZE

    @kernels.register(name)
    def factory(reference):
        def impl(xp, x, y):
            if xp is not np:
                return reference(xp, x, y)
            if x.size >= big or y.size >= big:
                out = native.arith(name, x, y)
                if out is not None:
                    return out
            return ufunc(x, y)

        return impl


_arith("add", np.add)
_arith("sub", np.subtract)
_arith("mul", np.multiply)
