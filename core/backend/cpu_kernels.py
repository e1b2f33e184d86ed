"""Hand-written native CPU kernels for the hot elementwise primitives numpy does slowly.

Exact GELU needs erf, which numpy lacks and scipy evaluates one float32 element at a time in
double precision (8 ns/element); a rational approximation in numpy takes 17 passes over
memory. One C loop calling the vectorized ``erff`` does it in one pass: GELU forward on 4M
float32 runs in 4 ms here instead of 16 ms (PyTorch: 3.5 ms).

Each wrapper returns None when native kernels are unavailable (see ``core.backend.cc``) or the
dtype is not float32/float64; callers then keep their numpy implementation.
"""

import numpy as np

from . import cc

_TYPES = {np.dtype("float32"): ("float", "f", "f"), np.dtype("float64"): ("double", "", "")}

# name -> (number of array inputs, C body computing `out` from `a` (and `b`); T is the type,
# F the math-function suffix, L the literal suffix)
_KERNELS = {
    "erf": (1, "out = erf{F}(a);"),
    "gelu": (1, "out = (T)0.5{L} * a * ((T)1 + erf{F}(a * (T)0.70710678118654752440{L}));"),
    # g * (Phi(x) + x phi(x)), the derivative of x Phi(x)
    "gelu_backward": (
        2,
        "T cdf = (T)0.5{L} * ((T)1 + erf{F}(b * (T)0.70710678118654752440{L}));\n"
        "    T pdf = (T)0.39894228040143267794{L} * exp{F}((T)-0.5{L} * b * b);\n"
        "    out = a * (cdf + b * pdf);",
    ),
}


def _source():
    parts = [cc.math_header()]
    for name, (n_in, body) in _KERNELS.items():
        for ctype, fsuffix, lsuffix in _TYPES.values():
            code = body.replace("{F}", fsuffix).replace("{L}", lsuffix).replace("T", ctype)
            args = ", ".join(f"const {ctype}* xa{k}" for k in range(n_in))
            loads = " ".join(f"{ctype} {'ab'[k]} = xa{k}[i];" for k in range(n_in))
            parts.append(
                f"void {name}_{ctype}({args}, {ctype}* y, ptrdiff_t n) {{\n"
                f"  for (ptrdiff_t i = 0; i < n; ++i) {{\n"
                f"    {ctype} out; {loads}\n    {code}\n    y[i] = out;\n  }}\n}}\n"
            )
    return "\n".join(parts)


_functions = {}


def _function(name, dtype):
    key = (name, dtype)
    fn = _functions.get(key)
    if fn is None:
        lib = cc.load(_source())
        n_in = _KERNELS[name][0]
        fn = cc.function(lib, f"{name}_{_TYPES[dtype][0]}", n_in + 2)
        _functions[key] = fn
    return fn


def _run(name, *arrays):
    dtype = arrays[0].dtype
    if dtype not in _TYPES or any(a.dtype != dtype for a in arrays) or not cc.available():
        return None
    shape = arrays[0].shape
    if any(a.shape != shape for a in arrays):
        return None  # broadcasting is left to numpy
    arrays = [np.ascontiguousarray(a) for a in arrays]
    out = np.empty(shape, dtype)
    _function(name, dtype)(*[cc.address(a) for a in arrays], cc.address(out), out.size)
    return out


def erf(x):
    """erf(x) for a float32/float64 array, or None (see module docstring)."""
    return _run("erf", x)


def gelu(x):
    """x Phi(x) (exact GELU) for a float32/float64 array, or None."""
    return _run("gelu", x)


def gelu_backward(g, x):
    """g (Phi(x) + x phi(x)), GELU's derivative times g (same shapes and dtype), or None."""
    return _run("gelu_backward", g, x)
