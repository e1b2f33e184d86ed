"""Numerical checks of derivatives against central finite differences (float64)."""

import numpy as np

from . import dtypes as _dt
from .autodiff.api import jvp, vjp
from .tensor import Tensor


def _to64(x):
    x = x if isinstance(x, Tensor) else Tensor(np.asarray(x))
    a = x.asnumpy()
    if a.dtype.kind == "f" and a.dtype != np.float64:
        a = a.astype(np.float64)
    if a.dtype.kind == "c" and a.dtype != np.complex128:
        a = a.astype(np.complex128)
    return a


def _real_scalar_fn(fn, n_inputs, out_weights):
    """Reduce fn's (possibly complex, non-scalar) output to a real scalar with fixed weights."""

    def scalar(*args):
        out = fn(*args)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        total = None
        for o, w in zip(outs, out_weights):
            if _dt.is_complex(o.dtype):
                from . import ops

                term = ops.sum(ops.real(o) * Tensor(w.real)) + ops.sum(ops.imag(o) * Tensor(w.imag))
            else:
                term = (o * Tensor(w.astype(np.float64))).sum()
            total = term if total is None else total + term
        return total

    return scalar


def _numeric_grad(f, arrays, i, eps):
    base = [a.copy() for a in arrays]
    x = base[i]
    g = np.zeros_like(x)
    flat = x.reshape(-1)
    gflat = g.reshape(-1)
    directions = [1.0] if x.dtype.kind != "c" else [1.0, 1j]
    for k in range(flat.size):
        for d in directions:
            old = flat[k]
            flat[k] = old + eps * d
            fp = float(f(*[Tensor(a) for a in base]).asnumpy())
            flat[k] = old - eps * d
            fm = float(f(*[Tensor(a) for a in base]).asnumpy())
            flat[k] = old
            slope = (fp - fm) / (2 * eps)
            # JAX convention for complex inputs: cotangent = df/dre - i df/dim
            gflat[k] += slope if d == 1.0 else -1j * slope
    return g


def gradcheck(fn, inputs, order=1, eps=1e-6, atol=1e-6, rtol=1e-5, seed=0, check_forward=True):
    """Check reverse- (and forward-) mode derivatives of ``fn`` at ``inputs`` numerically.

    ``fn`` maps tensors to a tensor (or tuple); its output is reduced to a scalar with fixed
    random weights. Order 1 compares ``grad`` and ``jvp`` with central differences of the
    function; order 2 compares the gradient of ``<grad, v>`` (reverse-over-reverse) and the
    jvp of the gradient (forward-over-reverse) with central differences of the gradient.
    Integer inputs are passed through and not differentiated.

    Returns True, or raises AssertionError naming the input and the largest difference.
    """
    rng = np.random.default_rng(seed)
    arrays = [_to64(x) for x in inputs]
    probe = fn(*[Tensor(a) for a in arrays])
    outs = probe if isinstance(probe, (tuple, list)) else (probe,)
    weights = []
    for o in outs:
        w = rng.standard_normal(tuple(o.shape))
        if _dt.is_complex(o.dtype):
            w = w + 1j * rng.standard_normal(tuple(o.shape))
        weights.append(w)
    f = _real_scalar_fn(fn, len(arrays), weights)
    diff = [i for i, a in enumerate(arrays) if a.dtype.kind in "fc"]

    def analytic_grad(*args):
        _, pull = vjp(f, *args)
        return pull(Tensor(np.ones((), np.float64)))

    if order >= 1:
        grads = analytic_grad(*[Tensor(a) for a in arrays])
        for i in diff:
            num = _numeric_grad(f, arrays, i, eps)
            _assert_close(grads[i].asnumpy(), num, atol, rtol, f"reverse-mode gradient of input {i}")
            if check_forward:
                v = rng.standard_normal(arrays[i].shape)
                if arrays[i].dtype.kind == "c":
                    v = v + 0j
                tangents = [Tensor(np.zeros_like(a)) if a.dtype.kind in "fc" else Tensor(a) for a in arrays]
                tangents[i] = Tensor(v.astype(arrays[i].dtype))
                _, t_out = jvp(f, tuple(Tensor(a) for a in arrays), tuple(tangents))
                expected = np.real(np.sum(num * v)) if arrays[i].dtype.kind != "c" else np.real(np.sum(np.conj(np.conj(num)) * v))
                if arrays[i].dtype.kind == "c":
                    expected = np.real(np.sum(num.real * v.real - num.imag * v.imag))
                _assert_close(t_out.asnumpy(), expected, atol, rtol, f"forward-mode derivative along input {i}")
    if order >= 2:
        for i in diff:
            v = rng.standard_normal(arrays[i].shape).astype(arrays[i].dtype)

            def gv(*args, i=i, v=v):
                g = analytic_grad(*args)[i]
                if _dt.is_complex(g.dtype):
                    from . import ops

                    return ops.sum(ops.real(g) * Tensor(v.real)) + ops.sum(ops.imag(g) * Tensor(np.imag(v)))
                return (g * Tensor(v)).sum()

            _, pull2 = vjp(gv, *[Tensor(a) for a in arrays])
            second = pull2(Tensor(np.ones((), np.float64)))
            for j in diff:
                num2 = _numeric_grad(gv, arrays, j, eps=1e-4)
                _assert_close(second[j].asnumpy(), num2, max(atol, 1e-5) * 10, rtol * 100, f"second-order (reverse-over-reverse) derivative d/d input {j} of <grad_{i}, v>")
            if check_forward:
                for j in diff:
                    u = rng.standard_normal(arrays[j].shape).astype(arrays[j].dtype)
                    tangents = [Tensor(np.zeros_like(a)) if a.dtype.kind in "fc" else Tensor(a) for a in arrays]
                    tangents[j] = Tensor(u)
                    _, t2 = jvp(gv, tuple(Tensor(a) for a in arrays), tuple(tangents))
                    expected = np.real(np.sum(_numeric_grad(gv, arrays, j, eps=1e-4) * u)) if arrays[j].dtype.kind != "c" else None
                    if expected is not None:
                        _assert_close(t2.asnumpy(), expected, max(atol, 1e-5) * 10, rtol * 100, f"second-order (forward-over-reverse) derivative along input {j}")
    return True


def _assert_close(actual, expected, atol, rtol, what):
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    if actual.shape != expected.shape:
        raise AssertionError(f"gradcheck: {what}: shape {actual.shape} != expected {expected.shape}")
    err = np.abs(actual - expected)
    tol = atol + rtol * np.abs(expected)
    if not np.all(err <= tol):
        k = int(np.argmax(err - tol))
        raise AssertionError(
            f"gradcheck: {what} differs from finite differences: max |diff| {err.max():.3e} at flat "
            f"index {k} (analytic {actual.reshape(-1)[k]!r}, numeric {expected.reshape(-1)[k]!r})"
        )
