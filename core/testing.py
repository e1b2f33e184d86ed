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


def _directional(f, arrays, j, u, eps):
    """Central difference of scalar ``f`` at ``arrays`` along direction ``u`` of input ``j``."""
    plus = [a.copy() for a in arrays]
    minus = [a.copy() for a in arrays]
    plus[j] = plus[j] + eps * u
    minus[j] = minus[j] - eps * u
    fp = float(f(*[Tensor(a) for a in plus]).asnumpy())
    fm = float(f(*[Tensor(a) for a in minus]).asnumpy())
    return (fp - fm) / (2 * eps)


def _pairing(g, v):
    """Real scalar <g, v> (real and imaginary parts paired) as a differentiable tensor."""
    from . import ops

    if _dt.is_complex(g.dtype):
        return ops.sum(ops.real(g) * Tensor(v.real)) + ops.sum(ops.imag(g) * Tensor(np.imag(v)))
    return (g * Tensor(np.real(v))).sum()


def gradcheck(fn, inputs, order=1, eps=1e-6, atol=1e-6, rtol=1e-5, seed=0, check_forward=True):
    """Check reverse- (and forward-) mode derivatives of ``fn`` at ``inputs`` numerically.

    ``fn`` maps tensors to a tensor (or tuple); its output is reduced to a real scalar ``f``
    with fixed random weights. Order 1 compares ``vjp`` (full gradient) and ``jvp`` (along a
    random direction) with central differences of ``f``. Order 2 compares, for every pair of
    inputs (i, j), reverse-over-reverse (the gradient of ``<grad_i f, v>``), forward-over-reverse
    (the jvp of ``grad_i f``) and forward-over-forward (the jvp of the jvp) with central
    differences. Integer and bool inputs are passed through and not differentiated; complex
    inputs follow JAX's convention (the cotangent is ``df/dre - 1j df/dim``).

    Returns True, or raises AssertionError naming the check, the input and the largest difference.
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

    def direction(i):
        a = arrays[i]
        v = rng.standard_normal(a.shape)
        if a.dtype.kind == "c":
            v = v + 1j * rng.standard_normal(a.shape)
        return v.astype(a.dtype)

    def along(v):
        """Expected directional derivative from a JAX-convention gradient ``num``."""
        return lambda num: float(np.sum(num.real * v.real - num.imag * np.imag(v)))

    def tangents_for(i, v):
        ts = [Tensor(np.zeros_like(a)) if a.dtype.kind in "fc" else Tensor(a) for a in arrays]
        ts[i] = Tensor(v)
        return tuple(ts)

    def analytic_grad(*args):
        _, pull = vjp(f, *args)
        return pull(Tensor(np.ones((), np.float64)))

    tensors = lambda: [Tensor(a) for a in arrays]  # noqa: E731
    if order >= 1:
        grads = analytic_grad(*tensors())
        for i in diff:
            num = _numeric_grad(f, arrays, i, eps)
            _assert_close(
                grads[i].asnumpy(), num, atol, rtol, f"reverse-mode gradient of input {i}"
            )
            if check_forward:
                v = direction(i)
                _, t_out = jvp(f, tuple(tensors()), tangents_for(i, v))
                _assert_close(
                    t_out.asnumpy(),
                    along(v)(num),
                    atol,
                    rtol,
                    f"forward-mode derivative along input {i}",
                )
    if order >= 2:
        atol2, rtol2, eps2 = max(atol, 1e-5) * 10, rtol * 100, 1e-4
        for i in diff:
            v = direction(i)

            def gv(*args, i=i, v=v):
                return _pairing(analytic_grad(*args)[i], v)

            _, pull2 = vjp(gv, *tensors())
            second = pull2(Tensor(np.ones((), np.float64)))
            for j in diff:
                num2 = _numeric_grad(gv, arrays, j, eps=eps2)
                _assert_close(
                    second[j].asnumpy(),
                    num2,
                    atol2,
                    rtol2,
                    f"second-order (reverse-over-reverse) derivative d/d input {j} of <grad_{i}, v>",
                )
                if not check_forward:
                    continue
                u = direction(j)
                _, t2 = jvp(gv, tuple(tensors()), tangents_for(j, u))
                _assert_close(
                    t2.asnumpy(),
                    along(u)(num2),
                    atol2,
                    rtol2,
                    f"second-order (forward-over-reverse) derivative along input {j} of <grad_{i}, v>",
                )

                def fv(*args, i=i, v=v):
                    return jvp(f, tuple(args), tangents_for(i, v))[1]

                _, t3 = jvp(fv, tuple(tensors()), tangents_for(j, u))
                expected = _directional(fv, arrays, j, u, eps2)
                _assert_close(
                    t3.asnumpy(),
                    expected,
                    atol2,
                    rtol2,
                    f"second-order (forward-over-forward) derivative along inputs {i} and {j}",
                )
    return True


def _assert_close(actual, expected, atol, rtol, what):
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    if actual.shape != expected.shape:
        raise AssertionError(
            f"gradcheck: {what}: shape {actual.shape} != expected {expected.shape}"
        )
    err = np.abs(actual - expected)
    tol = atol + rtol * np.abs(expected)
    if not np.all(err <= tol):
        k = int(np.argmax(err - tol))
        raise AssertionError(
            f"gradcheck: {what} differs from finite differences: max |diff| {err.max():.3e} at flat "
            f"index {k} (analytic {actual.reshape(-1)[k]!r}, numeric {expected.reshape(-1)[k]!r})"
        )
