"""L-BFGS with a strong-Wolfe line search (Nocedal & Wright, *Numerical Optimization*, 2nd ed.).

The parameters are flattened into one real vector ``x`` (a complex parameter contributes its
real and imaginary parts; its gradient ``g`` becomes ``(re g, -im g)``, the real gradient of
the loss with respect to ``(re z, im z)``). Directions come from the two-loop recursion
(Algorithm 7.4) over the last ``history_size`` pairs ``s = x_{k+1} - x_k``,
``y = g_{k+1} - g_k``; step lengths from the strong-Wolfe line search (Algorithms 3.5 and 3.6)
with safeguarded cubic interpolation (eq. 3.59). The iteration runs eagerly (not under
``core.jit``): its control flow depends on values.

All state (history, last direction and step, previous gradient, counters) lives in Parameters,
so a checkpoint of net + optimizer resumes the iteration exactly. The history buffers are
allocated up front: ``2 * history_size * n`` numbers for ``n`` parameters in total.
"""

import math

import numpy as np

from ... import dtypes as _dt
from ... import ops
from ...autodiff.api import value_and_grad
from ...tensor import Tensor
from .optimizer import Optimizer, _scalar_param, _zeros_param

__all__ = ["LBFGS"]


def _cubic_minimizer(t1, f1, g1, t2, f2, g2, lo, hi):
    """Minimizer in ``[lo, hi]`` of the cubic through ``(t1, f1, g1)`` and ``(t2, f2, g2)``
    (N&W eq. 3.59); the midpoint when the cubic has no minimizer or the data are degenerate."""
    try:
        d1 = g1 + g2 - 3.0 * (f1 - f2) / (t1 - t2)
        disc = d1 * d1 - g1 * g2
        if disc >= 0.0:
            d2 = math.copysign(math.sqrt(disc), t2 - t1)
            t = t2 - (t2 - t1) * (g2 + d2 - d1) / (g2 - g1 + 2.0 * d2)
            if math.isfinite(t):
                return min(max(t, lo), hi)
    except (ZeroDivisionError, OverflowError, ValueError):
        pass
    return 0.5 * (lo + hi)


class _Point:
    """A trial step ``t`` with its loss ``f``, flat gradient ``g`` and slope ``gtd = g . d``."""

    __slots__ = ("f", "g", "gtd", "loss", "t")

    def __init__(self, t, f, g, gtd, loss):
        self.t, self.f, self.g, self.gtd, self.loss = t, f, g, gtd, loss


class LBFGS(Optimizer):
    """Limited-memory BFGS for deterministic, full-batch objectives (PINNs, curve fits).

    Args:
        params: list of Parameters (one group).
        learning_rate: the initial trial step of every line search (the first iteration uses
            ``min(1, 1 / ||g||_1) * learning_rate``); without a line search, the step itself.
        max_iter: iterations per :meth:`minimize` call (default of its ``max_iter``).
        max_eval: loss evaluations per call (default ``max_iter * 5 // 4``, derived from the
            ``max_iter`` in force for that call).
        history_size: number of ``(s, y)`` pairs kept.
        tolerance_grad: stop when ``max |g| <= tolerance_grad``.
        tolerance_change: stop when the loss or the step changes less than this.
        line_search_fn: ``"strong_wolfe"`` or None (fixed step ``learning_rate``).

    Use ``loss = opt.minimize(loss_fn)`` (or ``opt(loss_fn)``) where ``loss_fn()`` returns a
    scalar tensor computed from the parameters; it returns the loss at the final point.
    """

    c1 = 1e-4  # sufficient-decrease constant of the Wolfe conditions
    c2 = 0.9  # curvature constant
    max_ls = 25  # loss evaluations per line search

    def __init__(
        self,
        params,
        learning_rate=1.0,
        max_iter=20,
        max_eval=None,
        history_size=100,
        tolerance_grad=1e-7,
        tolerance_change=1e-9,
        line_search_fn="strong_wolfe",
    ):
        if line_search_fn not in ("strong_wolfe", None):
            raise ValueError(
                f"LBFGS: line_search_fn must be 'strong_wolfe' or None, got {line_search_fn!r}"
            )
        if isinstance(learning_rate, bool) or not isinstance(learning_rate, (int, float)):
            raise TypeError(
                f"LBFGS: learning_rate must be a float, got {type(learning_rate).__name__}"
            )
        if int(max_iter) < 1 or int(history_size) < 1:
            raise ValueError(
                f"LBFGS: max_iter and history_size must be >= 1, got {max_iter}, {history_size}"
            )
        super().__init__(learning_rate, params)
        if self.is_group:
            raise ValueError(
                "LBFGS: parameter groups are not supported; pass one list of Parameters"
            )
        self.max_iter = int(max_iter)
        # None: derived from the max_iter of each minimize() call (see _eval_budget)
        self.max_eval = None if max_eval is None else int(max_eval)
        if self.max_eval is not None and self.max_eval < 1:
            raise ValueError(f"LBFGS: max_eval must be >= 1, got {max_eval}")
        self.history_size = int(history_size)
        self.tolerance_grad = float(tolerance_grad)
        self.tolerance_change = float(tolerance_change)
        self.line_search_fn = line_search_fn
        dtypes = [_dt.real_dtype(p.dtype) for p in self.parameters]
        flat = _dt.float32
        for d in dtypes:
            flat = _dt.promote_types(flat, d)
        object.__setattr__(self, "flat_dtype", flat)
        sizes = [p.size * (2 if _dt.is_complex(p.dtype) else 1) for p in self.parameters]
        object.__setattr__(self, "_sizes", tuple(sizes))
        n, m, first = sum(sizes), self.history_size, self.parameters[0]
        self.lbfgs_s = _zeros_param(first, "lbfgs_s", (m, n), flat)
        self.lbfgs_y = _zeros_param(first, "lbfgs_y", (m, n), flat)
        self.lbfgs_rho = _zeros_param(first, "lbfgs_rho", (m,), flat)
        self.lbfgs_hist_len = _scalar_param(0, np.int64, first, "lbfgs_hist_len")
        self.lbfgs_h_diag = _scalar_param(1.0, flat, first, "lbfgs_h_diag")
        self.lbfgs_d = _zeros_param(first, "lbfgs_d", (n,), flat)
        self.lbfgs_t = _scalar_param(0.0, flat, first, "lbfgs_t")
        self.lbfgs_prev_grad = _zeros_param(first, "lbfgs_prev_grad", (n,), flat)
        self.lbfgs_func_evals = _scalar_param(0, np.int64, first, "lbfgs_func_evals")

    # ---- flat vector <-> parameters ----------------------------------------------------------
    def _flatten(self, tensors):
        """One real vector of ``flat_dtype`` from tensors shaped like the parameters."""
        parts = []
        for t in tensors:
            if _dt.is_complex(t.dtype):
                parts += [ops.reshape(ops.real(t), (-1,)), ops.reshape(ops.imag(t), (-1,))]
            else:
                parts.append(ops.reshape(t, (-1,)))
        parts = [p if p.dtype == self.flat_dtype else ops.astype(p, self.flat_dtype) for p in parts]
        return parts[0] if len(parts) == 1 else ops.concat(parts)

    def _flat_params(self):
        # plain Tensors of the current values: the flat vector must not alias a Parameter
        return self._flatten([Tensor._wrap(p._value) for p in self.parameters])

    def _flat_grad(self, grads):
        # conj(g) is the real gradient with respect to (re z, im z) packed as re + 1j * im
        return self._flatten([ops.conj(g) if _dt.is_complex(g.dtype) else g for g in grads])

    def _set_flat(self, x):
        offset = 0
        for p, size in zip(self.parameters, self._sizes, strict=True):
            chunk = x[offset : offset + size]
            offset += size
            if _dt.is_complex(p.dtype):
                half = size // 2
                re = ops.reshape(chunk[:half], p.shape)
                im = ops.reshape(chunk[half:], p.shape)
                rd = _dt.real_dtype(p.dtype)
                value = ops.complex(ops.astype(re, rd), ops.astype(im, rd))
            else:
                value = ops.astype(ops.reshape(chunk, p.shape), p.dtype)
            p.set_data(value)

    # ---- the two-loop recursion (N&W Algorithm 7.4) -----------------------------------------------
    def _direction(self, g):
        k = int(self.lbfgs_hist_len)
        s_hist, y_hist, rho = self.lbfgs_s, self.lbfgs_y, self.lbfgs_rho
        q = -g
        alphas = [None] * k
        for i in range(k - 1, -1, -1):
            alphas[i] = rho[i] * ops.dot(s_hist[i], q)
            q = q - alphas[i] * y_hist[i]
        r = q * self.lbfgs_h_diag
        for i in range(k):
            beta = rho[i] * ops.dot(y_hist[i], r)
            r = r + (alphas[i] - beta) * s_hist[i]
        return r

    def _push_history(self, s, y, ys):
        k, m = int(self.lbfgs_hist_len), self.history_size
        rho = ops.reshape(1.0 / ys, (1,))
        if k < m:
            self.lbfgs_s.set_data(ops.index_update(self.lbfgs_s, k, s))
            self.lbfgs_y.set_data(ops.index_update(self.lbfgs_y, k, y))
            self.lbfgs_rho.set_data(ops.index_update(self.lbfgs_rho, k, rho[0]))
            self.lbfgs_hist_len.set_data(self.lbfgs_hist_len + 1)
        else:  # drop the oldest pair
            self.lbfgs_s.set_data(ops.concat([self.lbfgs_s[1:], ops.reshape(s, (1, -1))]))
            self.lbfgs_y.set_data(ops.concat([self.lbfgs_y[1:], ops.reshape(y, (1, -1))]))
            self.lbfgs_rho.set_data(ops.concat([self.lbfgs_rho[1:], rho]))

    # ---- strong-Wolfe line search (N&W Algorithms 3.5 and 3.6) ---------------------------------
    def _strong_wolfe(self, evaluate, x, d, t, start):
        """Return ``(point, evals)`` for a step satisfying the strong Wolfe conditions (or the
        best sufficient-decrease point found within ``max_ls`` evaluations)."""
        f0, gtd0 = start.f, start.gtd
        d_max = float(ops.max(ops.abs(d)))

        def trial(step):
            f, g, loss = evaluate(x + step * d)
            return _Point(step, f, g, float(ops.dot(g, d)), loss)

        def armijo_fails(p):
            return not p.f <= f0 + self.c1 * p.t * gtd0  # also true for NaN losses

        def curvature_holds(p):
            return abs(p.gtd) <= -self.c2 * gtd0

        prev, cur = start, trial(t)
        evals, bracket = 1, None
        # bracketing phase (Algorithm 3.5)
        while True:
            if armijo_fails(cur) or (evals > 1 and cur.f >= prev.f):
                bracket = [prev, cur]
                break
            if curvature_holds(cur):
                return cur, evals
            if cur.gtd >= 0:
                bracket = [cur, prev]
                break
            if evals >= self.max_ls:
                return cur, evals
            lo, hi = cur.t + 0.01 * (cur.t - prev.t), cur.t * 10.0
            nxt = _cubic_minimizer(prev.t, prev.f, prev.gtd, cur.t, cur.f, cur.gtd, lo, hi)
            prev, cur = cur, trial(nxt)
            evals += 1
        # zoom phase (Algorithm 3.6): bracket = [low end (sufficient decrease, lower loss), high end]
        near_edge = False
        while evals < self.max_ls:
            low, high = bracket
            if abs(high.t - low.t) * d_max < self.tolerance_change:
                break
            a, b = sorted((low.t, high.t))
            t_new = _cubic_minimizer(low.t, low.f, low.gtd, high.t, high.f, high.gtd, a, b)
            # safeguard: keep the trial at least 10% of the interval away from its ends, and
            # bisect after a trial that stuck to an end (insufficient progress)
            margin = 0.1 * (b - a)
            if min(b - t_new, t_new - a) < margin:
                if near_edge or t_new in (a, b):
                    t_new = b - margin if abs(b - t_new) < abs(t_new - a) else a + margin
                    near_edge = False
                else:
                    near_edge = True
            else:
                near_edge = False
            new = trial(t_new)
            evals += 1
            if armijo_fails(new) or new.f >= low.f:
                bracket = [low, new]
            else:
                if curvature_holds(new):
                    return new, evals
                if new.gtd * (high.t - low.t) >= 0:
                    high = low
                bracket = [new, high]
        return bracket[0], evals

    # ---- the iteration --------------------------------------------------------------------------
    def _eval_budget(self, max_iter, max_eval):
        """Loss evaluations allowed in one call: ``max_eval`` of the call, else the
        constructor's, else ``max_iter * 5 // 4`` of this call (PyTorch's default rule)."""
        if max_eval is None:
            max_eval = self.max_eval
        if max_eval is None:
            return max_iter * 5 // 4
        if int(max_eval) < 1:
            raise ValueError(f"LBFGS.minimize: max_eval must be >= 1, got {max_eval}")
        return int(max_eval)

    def minimize(self, loss_fn, max_iter=None, max_eval=None):
        """Run up to ``max_iter`` L-BFGS iterations on ``loss_fn()`` (a scalar tensor).

        Args:
            loss_fn: ``loss_fn()`` returns a scalar tensor computed from the parameters.
            max_iter: iterations of this call (default: the constructor's ``max_iter``).
            max_eval: loss evaluations of this call (default: the constructor's ``max_eval``
                if it was given, else ``max_iter * 5 // 4`` with this call's ``max_iter``).

        Returns:
            The loss (0-d tensor) at the final parameters.
        """
        max_iter = self.max_iter if max_iter is None else int(max_iter)
        if max_iter < 1:
            raise ValueError(f"LBFGS.minimize: max_iter must be >= 1, got {max_iter}")
        max_eval = self._eval_budget(max_iter, max_eval)
        grad_fn = value_and_grad(loss_fn, None, self.parameters)

        def evaluate(x):
            self._set_flat(x)
            loss, grads = grad_fn()
            return float(loss), self._flat_grad(grads), loss

        x = self._flat_params()
        f, g, loss = evaluate(x)
        evals = 1
        if float(ops.max(ops.abs(g))) <= self.tolerance_grad:
            return loss
        lr = float(self.learning_rate)
        for it in range(1, max_iter + 1):
            k = int(self.global_step)
            self.global_step.set_data(self.global_step + 1)
            if k == 0:
                d = -g
                self.lbfgs_hist_len.set_data(ops.zeros_like(self.lbfgs_hist_len))
                self.lbfgs_h_diag.set_data(ops.ones_like(self.lbfgs_h_diag))
            else:
                y = g - self.lbfgs_prev_grad
                s = self.lbfgs_d * self.lbfgs_t
                ys = ops.dot(y, s)
                if float(ys) > 1e-10:  # keep the pair only when the curvature is positive
                    self._push_history(s, y, ys)
                    self.lbfgs_h_diag.set_data(ys / ops.dot(y, y))
                d = self._direction(g)
            self.lbfgs_prev_grad.set_data(g)
            f_prev = f
            t = min(1.0, 1.0 / float(ops.sum(ops.abs(g)))) * lr if k == 0 else lr
            gtd = float(ops.dot(g, d))
            if gtd > -self.tolerance_change:  # not a descent direction: stop
                break
            if self.line_search_fn == "strong_wolfe":
                point, ls_evals = self._strong_wolfe(
                    evaluate, x, d, t, _Point(0.0, f, g, gtd, loss)
                )
                t, f, g, loss = point.t, point.f, point.g, point.loss
                x = x + t * d
                self._set_flat(x)
            else:
                x = x + t * d
                f, g, loss = evaluate(x)
                ls_evals = 1
            evals += ls_evals
            self.lbfgs_d.set_data(d)
            self.lbfgs_t.set_data(ops.full_like(self.lbfgs_t, t))
            if it == max_iter or evals >= max_eval:
                break
            if float(ops.max(ops.abs(g))) <= self.tolerance_grad:
                break
            if abs(t) * float(ops.max(ops.abs(d))) <= self.tolerance_change:
                break
            if abs(f - f_prev) < self.tolerance_change:
                break
        self.lbfgs_func_evals.set_data(self.lbfgs_func_evals + evals)
        return loss

    def construct(self, loss_fn):
        return self.minimize(loss_fn)
