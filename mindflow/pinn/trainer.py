"""``Trainer``: Adam then L-BFGS for physics-informed losses, compiled, checkpointed, watched.

The recipe that makes PINNs converge (Raissi et al. 2019; Lu et al. 2021, DeepXDE) is a phase of
Adam followed by full-batch L-BFGS, usually in float64. :class:`Trainer` runs it on the core
engine:

- the loss is ``loss_terms_fn(batch) -> {name: 0-d Tensor}``, one entry per term (PDE residual,
  boundary, initial, data); a :mod:`~mindflow.pinn.weighting` scheme sums them;
- each Adam step (forward with input derivatives, backward, update) is one ``core.jit`` call;
  L-BFGS (``core.nn.LBFGS``, strong Wolfe) runs in chunks of iterations, each with its loss and
  gradient compiled (``core.set_context(mode=GRAPH_MODE)`` while it runs);
- a tqdm progress bar shows the loss and, when a reference is given, the relative L2 error next
  to it; ``history`` keeps every term, the weights and the error;
- checkpoints (core's HDF5 format) hold the parameters, both optimizers' state, the weights, the
  batch (which adaptive resampling may have changed), the step and the history, and
  :meth:`resume` continues a run bit for bit;
- a NaN or inf in any term raises ``FloatingPointError`` naming the term and the step.
"""

import math
import os

import numpy as np

from diffsci import core
from diffsci.core import nn

from ..verify.errors import relative_l2
from .diagnostics import plot_history
from .weighting import make_weighting

__all__ = ["Trainer"]

CHECKPOINT_NAME = "pinn.ckpt.h5"


def _float(x):
    return float(x.asnumpy()) if isinstance(x, core.Tensor) else float(x)


class Trainer:
    """Adam then L-BFGS on a sum of PINN loss terms.

    Args:
        loss_terms_fn: ``loss_terms_fn(batch) -> {name: 0-d Tensor}``; the dict order fixes the
            order of the terms. It must be traceable by ``core.jit`` when ``jit=True`` (core
            ops only, no Python branching on tensor values).
        params: the model as a ``core.nn.Cell`` (its trainable parameters are trained and
            named in checkpoints), or a list of Parameters.
        extra_params: more Parameters trained with the model (an inverse problem's unknown
            coefficients, e.g. ``PDEWithLoss.trainable_params()``); any dtype.
        optimizer: ``"adam"``, ``"adamw"``, or ``factory(params) -> Optimizer``.
        lr: Adam's learning rate: a float, a per-step list or a core LR schedule.
        adam_steps: Adam steps.
        lbfgs_steps: L-BFGS iterations after Adam (0: none).
        dtype: the parameters' dtype (``core.float32`` or ``core.float64``); None takes it
            from the parameters. Floating tensors of the batch are cast to it.
        weighting: ``"fixed"``, ``"mtl"``, ``"gradnorm"`` or a ``LossWeighting``.
        weights: fixed weights (dict or sequence) for ``"fixed"``; the initial lambda for
            ``"gradnorm"``.
        weighting_options: keyword arguments of the weighting scheme (``every``, ``alpha``,
            ``residual_term`` for gradnorm; ``bound_param`` for MTL).
        jit: compile the steps with ``core.jit``.
        checkpoint_dir: folder for ``pinn.ckpt.h5`` (None: no checkpoints).
        checkpoint_every: save every this many steps (Adam steps; L-BFGS at the end of the
            chunk that crosses a multiple); the end of :meth:`fit` always saves.
        reference: ``(points, values)`` (the error is ``relative_l2(model(points), values)``;
            needs a Cell as ``params``) or a callable ``reference() -> float``.
        eval_every: evaluate the reference every this many steps (and at the end).
        lbfgs_options: keyword arguments of ``core.nn.LBFGS`` (``history_size``,
            ``tolerance_grad``, ``tolerance_change``, ``learning_rate``, ``line_search_fn``).
        lbfgs_chunk: L-BFGS iterations per ``minimize`` call; progress, history and
            checkpoints are updated between chunks, and each chunk traces its compiled loss and
            gradient once. None: ``checkpoint_every`` when checkpointing, else
            ``max(50, ceil(lbfgs_steps / 10))`` (at most about ten traces).
        resample: a hook (``mindflow.pinn.Resampler``) or a list of hooks ``hook(trainer, step,
            batch) -> batch`` run before every Adam step.
        progress: show a tqdm progress bar.

    ``history``: ``step`` (steps done; Adam's loss is the one its step computed, before the
    update, L-BFGS's the loss at the end of the chunk), ``total``, ``terms`` ``{name: [...]}``,
    ``weights`` ``{name: [...]}`` (each term's factor in the total), ``error_step`` and
    ``error``.
    """

    def __init__(
        self,
        loss_terms_fn,
        params,
        extra_params=None,
        optimizer="adam",
        lr=1e-3,
        adam_steps=1000,
        lbfgs_steps=0,
        dtype=None,
        weighting="fixed",
        weights=None,
        weighting_options=None,
        jit=True,
        checkpoint_dir=None,
        checkpoint_every=None,
        reference=None,
        eval_every=100,
        lbfgs_options=None,
        lbfgs_chunk=None,
        resample=None,
        progress=True,
    ):
        if not callable(loss_terms_fn):
            raise TypeError("Trainer: loss_terms_fn must be callable: batch -> {name: Tensor}")
        self.loss_terms_fn = loss_terms_fn
        if isinstance(params, nn.Cell):
            self.model = params
            named = [(n, p) for n, p in params.parameters_and_names() if p.requires_grad]
        else:
            self.model = None
            named = [(f"param{i}", p) for i, p in enumerate(params)]
        if not named:
            raise ValueError("Trainer: no trainable parameters")
        for name, p in named:
            if not isinstance(p, core.Parameter):
                raise TypeError(f"Trainer: {name} is a {type(p).__name__}, not a core.Parameter")
        self.net_params = [p for _, p in named]
        extra = [] if extra_params is None else list(extra_params)
        for i, p in enumerate(extra):
            if not isinstance(p, core.Parameter):
                raise TypeError(
                    f"Trainer: extra_params[{i}] is a {type(p).__name__}, not a Parameter"
                )
            if any(p is q for q in self.net_params):
                raise ValueError(f"Trainer: extra_params[{i}] is already one of the model's")
        self.extra_params = extra
        self.named_params = named + [(f"extra{i}", p) for i, p in enumerate(extra)]
        if dtype is None:
            dtype = self.net_params[0].dtype
        for name, p in named:  # the model's; extra parameters may differ (float32 PDE params)
            if p.dtype != dtype:
                raise TypeError(
                    f"Trainer: parameter {name!r} is {p.dtype} but dtype is {dtype}; build the "
                    f"network in {dtype} (e.g. nn.Dense(..., dtype={dtype}))"
                )
        self.dtype = dtype
        self.optimizer = optimizer
        self.lr = lr
        self.adam_steps = int(adam_steps)
        self.lbfgs_steps = int(lbfgs_steps)
        if self.adam_steps < 0 or self.lbfgs_steps < 0:
            raise ValueError(
                f"Trainer: adam_steps and lbfgs_steps must be >= 0, got {adam_steps}, {lbfgs_steps}"
            )
        self.weighting = make_weighting(weighting, weights, **(weighting_options or {}))
        self.jit = bool(jit)
        self.checkpoint_dir = checkpoint_dir
        self.checkpoint_every = None if checkpoint_every is None else int(checkpoint_every)
        if reference is not None and not callable(reference):
            if self.model is None:
                raise TypeError(
                    "Trainer: reference=(points, values) needs the model as a Cell in params; "
                    "pass reference as a callable () -> error instead"
                )
            points, values = reference
            reference = (self._cast(points), np.asarray(values, dtype=np.float64))
        self.reference = reference
        self.eval_every = int(eval_every)
        self.lbfgs_options = dict(lbfgs_options or {})
        if lbfgs_chunk is None:
            if self.checkpoint_every:
                lbfgs_chunk = self.checkpoint_every
            else:
                lbfgs_chunk = max(50, -(-self.lbfgs_steps // 10))
        self.lbfgs_chunk = int(lbfgs_chunk)
        if self.lbfgs_chunk < 1:
            raise ValueError(f"Trainer: lbfgs_chunk must be >= 1, got {lbfgs_chunk}")
        if resample is None:
            resample = []
        self.resample = list(resample) if isinstance(resample, (list, tuple)) else [resample]
        self.progress = progress
        self.step = 0
        self.batch = None
        self.history = {
            "step": [],
            "total": [],
            "terms": {},
            "weights": {},
            "error_step": [],
            "error": [],
        }
        self._ready = False
        self._pending = None
        self._batch_restored = False  # after resume the checkpoint's batch wins over fit's
        self._compiled = {}

    # ---- set-up --------------------------------------------------------------------------------
    def _cast(self, x):
        """A floating array/Tensor as a Tensor of ``self.dtype``; other leaves unchanged."""
        if isinstance(x, core.Tensor):
            if core.dtypes.is_floating(x.dtype) and x.dtype != self.dtype:
                return x.astype(self.dtype)
            return x
        if isinstance(x, np.ndarray) and np.issubdtype(x.dtype, np.floating):
            return core.tensor(x, dtype=self.dtype)
        return x

    def compile(self, fn):
        """``core.jit(fn)`` when the trainer compiles (cached per function), else ``fn``."""
        if not self.jit:
            return fn
        key = id(fn)
        if key not in self._compiled:
            self._compiled[key] = (fn, core.jit(fn))
        return self._compiled[key][1]

    def _check_terms(self, terms, where):
        if not isinstance(terms, dict) or not terms:
            raise TypeError(
                f"Trainer: loss_terms_fn must return a non-empty dict {{name: 0-d Tensor}}, got "
                f"{type(terms).__name__} ({where})"
            )
        for name, value in terms.items():
            if not isinstance(value, core.Tensor) or value.ndim != 0:
                shape = getattr(value, "shape", None)
                raise TypeError(
                    f"Trainer: loss term {name!r} must be a 0-d Tensor, got "
                    f"{type(value).__name__} of shape {shape} (reduce it, e.g. (r ** 2).mean())"
                )

    def _make_optimizer(self, params):
        if callable(self.optimizer):
            return self.optimizer(params)
        if self.optimizer == "adam":
            return nn.Adam(params, learning_rate=self.lr)
        if self.optimizer == "adamw":
            return nn.AdamW(params, learning_rate=self.lr)
        raise ValueError(
            f"Trainer: optimizer must be 'adam', 'adamw' or a factory, got {self.optimizer!r}"
        )

    def _cast_batch(self, batch):
        return core.tree.tree_map(self._cast, batch)

    def _setup(self, batch):
        if batch is not None and not self._batch_restored:
            self.batch = self._cast_batch(batch)
        self._batch_restored = False
        if self._ready:
            return
        if self._pending is not None and "batch.0" in self._pending:
            self.batch = self._restore_batch(self._pending, self.batch)
        terms = self.loss_terms_fn(self.batch)
        self._check_terms(terms, "first call")
        self.names = tuple(terms)
        self.weighting.setup(self.names, self.dtype)
        train_params = self.net_params + self.extra_params + list(self.weighting.parameters())
        self.train_params = train_params
        self.adam = self._make_optimizer(train_params)
        self.lbfgs = None
        if self.lbfgs_steps:
            opts = {"history_size": 50, "tolerance_grad": 1e-12, "tolerance_change": 1e-16}
            opts.update(self.lbfgs_options)
            self.lbfgs = nn.LBFGS(train_params, **opts)
        for name in self.names:
            self.history["terms"].setdefault(name, [])
            self.history["weights"].setdefault(name, [])

        def adam_step(batch, weights):
            def objective(batch, weights):
                terms = self.loss_terms_fn(batch)
                return self.weighting.combine(terms, weights), terms

            grad_fn = core.value_and_grad(objective, None, self.adam.parameters, has_aux=True)
            (total, terms), grads = grad_fn(batch, weights)
            self.adam(grads)
            return total, terms

        self._adam_step = core.jit(adam_step) if self.jit else adam_step
        self._terms_fn = core.jit(self.loss_terms_fn) if self.jit else self.loss_terms_fn
        self._ready = True
        if self._pending is not None:
            self._load_state(self._pending)
            self._pending = None

    # ---- one record --------------------------------------------------------------------------
    def _record(self, total, terms, phase):
        values = {name: _float(terms[name]) for name in self.names}
        for name, v in values.items():
            if not math.isfinite(v):
                raise FloatingPointError(
                    f"Trainer: loss term {name!r} is {v} at step {self.step} ({phase}); "
                    f"terms: {values}. Lower the learning rate, check the residual for a "
                    "division by zero, or resume from the last checkpoint"
                )
        total = _float(total)
        if not math.isfinite(total):
            raise FloatingPointError(
                f"Trainer: the weighted total loss is {total} at step {self.step} ({phase}) "
                f"while every term is finite: {values}; the weights are "
                f"{self.weighting.effective_weights()}"
            )
        h = self.history
        h["step"].append(self.step)
        h["total"].append(total)
        for name, v in values.items():
            h["terms"][name].append(v)
        for name, w in self.weighting.effective_weights().items():
            h["weights"][name].append(w)
        return total

    def error(self):
        """The current error against the reference (None without one)."""
        if self.reference is None:
            return None
        if callable(self.reference):
            return float(self.reference())
        points, values = self.reference
        with core.no_grad():
            pred = self.model(points).asnumpy()
        return relative_l2(pred.reshape(values.shape), values)

    def _evaluate(self, bar, total, before, force=False):
        """Evaluate the reference when the steps ``(before, self.step]`` cross a multiple of
        ``eval_every`` (or ``force``), and show the loss and the last error in the bar."""
        err = None
        crossed = self.step // self.eval_every > before // self.eval_every
        if self.reference is not None and (force or crossed):
            if not self.history["error_step"] or self.history["error_step"][-1] != self.step:
                err = self.error()
                self.history["error_step"].append(self.step)
                self.history["error"].append(err)
        if bar is not None:
            post = {"loss": f"{total:.3e}"}
            if self.history["error"]:
                post["err"] = f"{self.history['error'][-1]:.3e}"
            bar.set_postfix(post, refresh=err is not None)  # show each new error at once
        return err

    # ---- training ------------------------------------------------------------------------------
    def fit(self, batch=None, until=None, lbfgs_batch=None):
        """Train from the current step to ``adam_steps + lbfgs_steps`` (or to step ``until``).

        Args:
            batch: the training data: a Tensor or a pytree of Tensors (tuple, dict) that
                ``loss_terms_fn`` takes; numpy float arrays are converted. After
                :meth:`resume` the checkpoint's batch (as adaptive resampling left it) is used:
                pass a batch of the same structure (its values are replaced), or None for a
                single Tensor or a tuple. Or a function ``batch(step) -> batch`` for
                mini-batches: Adam step ``s`` trains on ``batch(s)`` (make it a deterministic
                function of ``s``, e.g. seeded by it, and keep the shapes fixed so that the
                step compiles once; resumed runs then repeat it exactly). Not with resampling.
            until: stop after this many steps in total (for staged runs).
            lbfgs_batch: the full batch L-BFGS minimizes on (default: the current batch, or
                ``batch(adam_steps)`` for a function).

        Returns:
            ``history``.
        """
        batch_fn = None
        if callable(batch) and not isinstance(batch, (core.Tensor, dict, tuple, list)):
            if self.resample:
                raise ValueError(
                    "Trainer.fit: adaptive resampling needs a fixed batch to refine, not a "
                    "batch function"
                )
            batch_fn, batch = batch, batch(self.step)
        if (
            batch is None
            and self.batch is None
            and (self._pending is None or "batch.0" not in self._pending)
        ):
            raise ValueError("Trainer.fit: no batch given and none restored from a checkpoint")
        self._setup(batch)
        total_steps = self.adam_steps + self.lbfgs_steps
        stop = total_steps if until is None else min(int(until), total_steps)
        bar = None
        if self.progress:
            from tqdm import tqdm

            bar = tqdm(total=total_steps, initial=self.step, desc="pinn", leave=False)
        try:
            while self.step < min(stop, self.adam_steps):
                s = self.step
                if batch_fn is not None:
                    self.batch = self._cast_batch(batch_fn(s))
                for hook in self.resample:
                    self.batch = hook(self, s, self.batch)
                self.weighting.update(self, s, self.batch)
                total, terms = self._adam_step(self.batch, self.weighting.weights)
                self.step += 1
                loss = self._record(total, terms, "adam")
                self._evaluate(bar, loss, s, force=self.step == self.adam_steps)
                if bar is not None:
                    bar.update(1)
                if self.checkpoint_every and self.step % self.checkpoint_every == 0:
                    self.save()
            if self.step < stop:
                if lbfgs_batch is not None:
                    self.batch = self._cast_batch(lbfgs_batch)
                elif batch_fn is not None:
                    self.batch = self._cast_batch(batch_fn(self.adam_steps))
            while self.step < stop:
                # chunks start at fixed steps (adam_steps + j * lbfgs_chunk), so a run resumed
                # from any checkpoint meets the same boundaries as an uninterrupted one
                into = (self.step - self.adam_steps) % self.lbfgs_chunk
                n = min(self.lbfgs_chunk - into, stop - self.step)
                done = self._lbfgs_chunk(n)
                before = self.step
                self.step = self.step + n if done == n else total_steps  # converged: finished
                terms = self._terms_fn(self.batch)
                total = self.weighting.combine(terms, self.weighting.weights)
                loss = self._record(total, terms, "lbfgs")
                self._evaluate(bar, loss, before, force=self.step == total_steps)
                if bar is not None:
                    bar.update(self.step - before)
                every = self.checkpoint_every
                if every and self.step // every > before // every:
                    self.save()
        finally:
            if bar is not None:
                bar.close()
        if self.reference is not None and self.history["error_step"][-1:] != [self.step]:
            self._evaluate(None, 0.0, self.step, force=True)
        if self.checkpoint_dir is not None:
            self.save()
        return self.history

    def _lbfgs_chunk(self, n):
        """Run ``n`` L-BFGS iterations with the loss and gradient compiled; returns the number
        done (fewer when converged)."""
        batch, weights = self.batch, self.weighting.weights

        def loss_fn():
            return self.weighting.combine(self.loss_terms_fn(batch), weights)

        before = int(self.lbfgs.global_step)
        mode = core.get_context("mode")
        if self.jit:
            core.set_context(mode=core.GRAPH_MODE)
        try:
            # a generous evaluation budget: a chunk ends early only when L-BFGS converges
            self.lbfgs.minimize(loss_fn, max_iter=n, max_eval=n * (self.lbfgs.max_ls + 1) + 1)
        finally:
            core.set_context(mode=mode)
        return int(self.lbfgs.global_step) - before

    @property
    def lbfgs_iterations(self):
        """L-BFGS iterations actually run (fewer than ``lbfgs_steps`` when it converged: the
        step count then jumps to the end)."""
        return 0 if getattr(self, "lbfgs", None) is None else int(self.lbfgs.global_step)

    @property
    def lbfgs_evaluations(self):
        """Loss-and-gradient evaluations spent by L-BFGS (line searches included)."""
        return 0 if getattr(self, "lbfgs", None) is None else int(self.lbfgs.lbfgs_func_evals)

    # ---- checkpoints -----------------------------------------------------------------------------
    def _state(self):
        state = {}
        for name, p in self.named_params:
            state[f"net.{name}"] = p
        for i, p in enumerate(self.weighting.parameters()):
            state[f"weighting_param.{i}"] = p
        for name, value in self.weighting.state().items():
            state[f"weighting.{name}"] = value
        for name, p in self.adam.parameters_and_names():
            state[f"adam.{name}"] = p
        if self.lbfgs is not None:
            for name, p in self.lbfgs.parameters_and_names():
                state[f"lbfgs.{name}"] = p
        for i, leaf in enumerate(core.tree.tree_leaves(self.batch)):
            if isinstance(leaf, core.Tensor):
                state[f"batch.{i}"] = leaf
        state["step"] = np.asarray(self.step, dtype=np.int64)
        h = self.history
        state["history.step"] = np.asarray(h["step"], dtype=np.int64)
        state["history.total"] = np.asarray(h["total"], dtype=np.float64)
        for name in self.names:
            state[f"history.term.{name}"] = np.asarray(h["terms"][name], dtype=np.float64)
            state[f"history.weight.{name}"] = np.asarray(h["weights"][name], dtype=np.float64)
        state["history.error_step"] = np.asarray(h["error_step"], dtype=np.int64)
        state["history.error"] = np.asarray(h["error"], dtype=np.float64)
        return state

    def save(self, path=None):
        """Write the whole training state to ``path`` (default
        ``checkpoint_dir/pinn.ckpt.h5``), atomically; returns the path."""
        if not self._ready:
            raise RuntimeError("Trainer.save: nothing to save before fit() has started")
        if path is None:
            if self.checkpoint_dir is None:
                raise ValueError("Trainer.save: give a path or a checkpoint_dir")
            os.makedirs(self.checkpoint_dir, exist_ok=True)
            path = os.path.join(self.checkpoint_dir, CHECKPOINT_NAME)
        core.save_checkpoint(self._state(), path)
        return path

    def resume(self, path=None):
        """Load a checkpoint written by :meth:`save`; the next :meth:`fit` continues from its
        step with the same parameters, optimizer state, weights, batch and history.

        Returns:
            The step reached in the checkpoint.
        """
        if path is None:
            if self.checkpoint_dir is None:
                raise ValueError("Trainer.resume: give a path or a checkpoint_dir")
            path = os.path.join(self.checkpoint_dir, CHECKPOINT_NAME)
        values = core.load_checkpoint(path)
        self._batch_restored = any(k.startswith("batch.") for k in values)
        if self._ready:
            self._load_state(values)
        else:
            self._pending = values
            self.step = int(values["step"].asnumpy())
        return self.step

    def _restore_batch(self, values, like):
        if like is None:
            n = sum(1 for k in values if k.startswith("batch."))
            leaves = [core.Tensor(values[f"batch.{i}"].asnumpy()) for i in range(n)]
            return leaves[0] if n == 1 else tuple(leaves)
        leaves, treedef = core.tree.tree_flatten(like)
        out = []
        for i, leaf in enumerate(leaves):
            key = f"batch.{i}"
            out.append(core.Tensor(values[key].asnumpy()) if key in values else leaf)
        return core.tree.tree_unflatten(treedef, out)

    def _load_state(self, values):
        def put(prefix, named):
            for name, p in named:
                key = f"{prefix}.{name}"
                if key not in values:
                    raise KeyError(f"Trainer.resume: the checkpoint has no entry {key!r}")
                v = values[key]
                if tuple(v.shape) != tuple(p.shape):
                    raise ValueError(
                        f"Trainer.resume: {key!r} has shape {tuple(v.shape)} in the checkpoint "
                        f"but {tuple(p.shape)} here (a different network?)"
                    )
                p.set_data(core.Tensor(v.asnumpy()))

        put("net", self.named_params)
        put("weighting_param", [(str(i), p) for i, p in enumerate(self.weighting.parameters())])
        put("adam", list(self.adam.parameters_and_names()))
        if self.lbfgs is not None:
            put("lbfgs", list(self.lbfgs.parameters_and_names()))
        self.weighting.load_state(
            {k[len("weighting.") :]: v for k, v in values.items() if k.startswith("weighting.")}
        )
        self.batch = self._restore_batch(values, self.batch)
        self.step = int(values["step"].asnumpy())
        h = self.history

        def arr(key):
            return values[key].asnumpy().tolist()

        h["step"] = [int(v) for v in arr("history.step")]
        h["total"] = arr("history.total")
        for name in self.names:
            h["terms"][name] = arr(f"history.term.{name}")
            h["weights"][name] = arr(f"history.weight.{name}")
        h["error_step"] = [int(v) for v in arr("history.error_step")]
        h["error"] = arr("history.error")

    # ---- plots ---------------------------------------------------------------------------------
    def plot_history(self, path, title=None):
        """Write the loss curves (log scale, per term) and the error curve; returns ``path``."""
        handoff = self.adam_steps if self.lbfgs_steps and self.adam_steps else None
        return plot_history(self.history, path, handoff=handoff, title=title)
