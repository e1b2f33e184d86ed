"""A Protenix training step on core: loss, ``core.value_and_grad`` and the optimizer update,
compiled by ``core.jit``.

``make_train_step(forward, loss, optimizer, feat_dict, label_dict)`` builds
``step(*draws) -> (loss, metrics)``: ``forward(*draws)`` runs the network on the (closed
over) features and returns Protenix's ``pred_dict`` (``coordinate``, ``noise_level``,
``distogram``, confidence heads...), :class:`protenix.model.loss.ProtenixLoss` scores it, the
gradients of the total loss with respect to the optimizer's Parameters update them in place.
The random numbers of a step (noise levels, noise, augmentation rotations/translations) are
arguments, so a jitted step is traced once and every step gets fresh draws. Features and
labels are constants of the trace (their masks select atoms and tokens, see
``protenix.model.loss``). Recompute (``blocks_per_ckpt`` of the Pairformer/diffusion stacks,
``loss.diffusion_lddt_chunk_size`` of the smooth-lDDT loss) applies inside.

The training-time draws themselves (AF3's noise-level sampler, Algorithm 19's augmentation)
are ``protenix.model.generator``'s ``TrainingNoiseSampler`` and ``centre_random_augmentation``.
"""

from diffsci import core

__all__ = ["make_train_step"]


def make_train_step(forward, loss, optimizer, feat_dict, label_dict, use_jit=True):
    """One training step: ``forward`` -> ``loss`` -> ``value_and_grad`` -> ``optimizer``.

    Args:
        forward: ``forward(*draws) -> pred_dict`` (the network on the closed-over features).
        loss: a :class:`protenix.model.loss.ProtenixLoss` (or any
            ``loss(feat_dict, pred_dict, label_dict) -> (loss, metrics)``).
        optimizer: a core ``nn.Optimizer`` over the Parameters to train.
        feat_dict, label_dict: the example's features and labels (constants of the step).
        use_jit: compile the step with ``core.jit`` (traced on the first call).

    Returns:
        ``step(*draws) -> (loss [], metrics dict)``; the Parameters are updated in place.
    """

    def objective(*draws):
        pred = forward(*draws)
        value, metrics = loss(feat_dict, pred, label_dict)
        return value, metrics

    grad_fn = core.value_and_grad(objective, None, optimizer.parameters, has_aux=True)

    def step(*draws):
        (value, metrics), grads = grad_fn(*draws)
        optimizer(grads)
        return value, metrics

    return core.jit(step) if use_jit else step
