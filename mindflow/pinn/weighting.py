"""Loss weighting for multi-term PINN losses: fixed, uncertainty (MTL) and gradient-norm.

A PINN loss is a sum of terms (PDE residual, boundary, initial, data) whose scales differ by
orders of magnitude; how they are weighted decides whether training converges. Three schemes:

- :class:`FixedWeights`: ``L = sum_i w_i L_i`` with constant ``w_i``.
- :class:`MTLWeights`: homoscedastic-uncertainty weighting (Kendall, Gal & Cipolla 2018,
  "Multi-task learning using uncertainty to weigh losses", CVPR, eq. (7)), in MindFlow's form
  (``mindflow.core.MTLWeightedLoss``, the engine's ``core.nn.MTLWeightedLoss``): trainable ``s_i`` and
  ``L = sum_i 0.5 L_i / s_i^2 + log(1 + s_i^2)``, so the effective weight of term ``i`` is
  ``0.5 / s_i^2``.
- :class:`GradNormWeights`: learning-rate annealing (Wang, Teng & Perdikaris 2021,
  "Understanding and mitigating gradient flow pathologies in physics-informed neural
  networks", SIAM J. Sci. Comput. 43(5), Algorithm 1, eqs. (40)-(41)): every ``every`` steps,

      lambda_hat_i = max_theta |grad_theta L_r| / mean_theta |grad_theta L_i|,
      lambda_i <- (1 - alpha) lambda_i + alpha lambda_hat_i,

  where ``L_r`` is the PDE-residual term (weight 1) and the max/mean run over all network
  parameters; ``alpha = 0.9`` is the paper's choice. ``L = L_r + sum_i lambda_i L_i``.

The weights enter the compiled step as a tensor argument ``[n_terms]`` (in the order of the
term names), so updating them never retraces ``core.jit``.
"""

import math

import numpy as np

from diffsci import core
from diffsci.core import ops

__all__ = ["FixedWeights", "GradNormWeights", "LossWeighting", "MTLWeights", "make_weighting"]


class LossWeighting:
    """Base class: turns a dict of scalar loss terms into one scalar.

    Subclasses set ``self.names`` in :meth:`setup` and implement :meth:`combine`. The weights
    live in ``self.weights``, a float ``[n_terms]`` Tensor passed to the compiled step.
    """

    def setup(self, names, dtype):
        """Called once with the term names (the dict order of ``loss_terms_fn``) and dtype."""
        self.names = tuple(names)
        self.dtype = dtype
        self.weights = core.tensor(np.ones(len(self.names)), dtype=dtype)

    def parameters(self):
        """Trainable Parameters the optimizer must also update (none by default)."""
        return []

    def combine(self, terms, weights):
        """``sum_i weights[i] * terms[name_i]``; ``terms`` a dict of 0-d Tensors."""
        total = None
        for i, name in enumerate(self.names):
            part = weights[i] * terms[name]
            total = part if total is None else total + part
        return total

    def effective_weights(self):
        """``{name: float}``: the factor each term gets in the total (for the history)."""
        w = self.weights.asnumpy()
        return {name: float(w[i]) for i, name in enumerate(self.names)}

    def update(self, trainer, step, batch):
        """Hook run before each Adam step (gradient-norm annealing updates here)."""

    def state(self):
        """``{name: Tensor}`` saved in checkpoints."""
        return {"weights": self.weights}

    def load_state(self, values):
        if "weights" in values:
            self.weights = core.tensor(np.asarray(values["weights"].asnumpy()), dtype=self.dtype)


class FixedWeights(LossWeighting):
    """``L = sum_i w_i L_i`` with fixed weights.

    Args:
        weights: None (all 1), a dict ``{name: w}`` (missing names get 1) or a sequence in the
            order of the terms.
    """

    def __init__(self, weights=None):
        self.given = weights

    def setup(self, names, dtype):
        super().setup(names, dtype)
        w = np.ones(len(self.names))
        if isinstance(self.given, dict):
            unknown = sorted(set(self.given) - set(self.names))
            if unknown:
                raise ValueError(
                    f"FixedWeights: weights name terms {unknown} that loss_terms_fn does not "
                    f"return; its terms are {list(self.names)}"
                )
            for i, name in enumerate(self.names):
                w[i] = float(self.given.get(name, 1.0))
        elif self.given is not None:
            given = np.asarray(self.given, dtype=np.float64).reshape(-1)
            if given.size != len(self.names):
                raise ValueError(
                    f"FixedWeights: {given.size} weights for {len(self.names)} terms "
                    f"{list(self.names)}"
                )
            w = given
        self.weights = core.tensor(w, dtype=dtype)


class MTLWeights(LossWeighting):
    """Uncertainty weighting (module docstring); its ``s_i`` are trained with the network.

    Args:
        bound_param: MindFlow's ``bound_param`` (``s_i^2 + bound_param^2`` in both places).
    """

    def __init__(self, bound_param=0.0):
        self.bound_param = float(bound_param)

    def setup(self, names, dtype):
        super().setup(names, dtype)
        self.cell = core.nn.MTLWeightedLoss(
            len(self.names), bound_param=self.bound_param, dtype=dtype
        )

    def parameters(self):
        return self.cell.trainable_params()

    def combine(self, terms, weights):
        return self.cell(tuple(terms[name] for name in self.names))

    def _s_squared(self):
        (p,) = self.cell.trainable_params()
        return p.asnumpy().astype(np.float64) ** 2

    def effective_weights(self):
        extra = self.bound_param**2 if self.bound_param > 1e-6 else 0.0
        s2 = self._s_squared() + extra
        return {name: float(0.5 / s2[i]) for i, name in enumerate(self.names)}

    def state(self):
        return {}  # the s_i are optimizer parameters: saved with them


class GradNormWeights(LossWeighting):
    """Learning-rate annealing of Wang, Teng & Perdikaris 2021 (module docstring).

    Args:
        residual_term: name of the PDE-residual term ``L_r`` (weight fixed at 1); default the
            first term ``loss_terms_fn`` returns.
        every: update the weights before every ``every``-th Adam step (step 0 included).
        alpha: weight of the new estimate in the moving average (paper: 0.9).
        initial: starting ``lambda_i`` (default 1).
    """

    def __init__(self, residual_term=None, every=10, alpha=0.9, initial=1.0):
        if int(every) < 1:
            raise ValueError(f"GradNormWeights: every must be >= 1, got {every}")
        if not 0.0 < alpha <= 1.0:
            raise ValueError(f"GradNormWeights: alpha must lie in (0, 1], got {alpha}")
        self.residual_term = residual_term
        self.every = int(every)
        self.alpha = float(alpha)
        self.initial = float(initial)
        self._stats_fn = None

    def setup(self, names, dtype):
        super().setup(names, dtype)
        if self.residual_term is None:
            self.residual_term = self.names[0]
        if self.residual_term not in self.names:
            raise ValueError(
                f"GradNormWeights: residual_term {self.residual_term!r} is not a loss term; the "
                f"terms are {list(self.names)}"
            )
        w = np.full(len(self.names), self.initial)
        w[self.names.index(self.residual_term)] = 1.0
        self.weights = core.tensor(w, dtype=dtype)

    def gradient_statistics(self, loss_terms_fn, params, batch):
        """``(max |grad L_r|, [mean |grad L_i| per term])`` over all of ``params``.

        Returns:
            A Tensor ``[n_terms]``: entry ``r`` (the residual term) is ``max |grad L_r|``, every
            other entry ``i`` is ``mean |grad L_i|``.
        """
        out = []
        for name in self.names:
            grads = core.grad(lambda b, name=name: loss_terms_fn(b)[name], None, params)(batch)
            flat = ops.concat([ops.reshape(ops.abs(g), (-1,)) for g in grads])
            out.append(ops.max(flat) if name == self.residual_term else ops.mean(flat))
        return ops.stack(out)

    def update(self, trainer, step, batch):
        if step % self.every:
            return
        if self._stats_fn is None:
            fn = lambda b: self.gradient_statistics(trainer.loss_terms_fn, trainer.net_params, b)  # noqa: E731
            self._stats_fn = core.jit(fn) if trainer.jit else fn
        stats = self._stats_fn(batch).asnumpy().astype(np.float64)
        r = self.names.index(self.residual_term)
        w = self.weights.asnumpy().astype(np.float64)
        for i in range(len(self.names)):
            if i == r:
                continue
            if not (math.isfinite(stats[i]) and math.isfinite(stats[r])):
                raise FloatingPointError(
                    f"GradNormWeights: gradient of loss term {self.names[i]!r} (or of the "
                    f"residual {self.residual_term!r}) is not finite at step {step}"
                )
            if stats[i] == 0.0:
                continue  # the term does not depend on the parameters: keep its weight
            lam_hat = stats[r] / stats[i]
            w[i] = (1.0 - self.alpha) * w[i] + self.alpha * lam_hat
        self.weights = core.tensor(w, dtype=self.dtype)


def make_weighting(weighting, weights=None, **options):
    """A :class:`LossWeighting` from a name (``"fixed"``, ``"mtl"``, ``"gradnorm"``) or itself.

    Args:
        weighting: a name or a :class:`LossWeighting` instance.
        weights: fixed weights (``"fixed"``) or the starting ``lambda`` (``"gradnorm"``).
        options: passed to the scheme's constructor.
    """
    if isinstance(weighting, LossWeighting):
        return weighting
    if weighting == "fixed":
        return FixedWeights(weights, **options)
    if weighting == "mtl":
        return MTLWeights(**options)
    if weighting == "gradnorm":
        if weights is not None:
            options.setdefault("initial", float(weights))
        return GradNormWeights(**options)
    raise ValueError(
        f"weighting must be 'fixed', 'mtl', 'gradnorm' or a LossWeighting, got {weighting!r}"
    )
