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

Also the AF3 training-time random draws: :func:`sample_noise_level` (AF3 supplement Sec. 3.7.1:
``sigma = sigma_data exp(P_mean + P_std N(0, 1))``) and :func:`centre_random_augmentation`
(Algorithm 19) with injectable draws.
"""

import numpy as np

import core
from core import ops

__all__ = ["centre_random_augmentation", "make_train_step", "sample_noise_level"]


def sample_noise_level(rng, n, p_mean=-1.2, p_std=1.5, sigma_data=16.0):
    """AF3 training noise levels ``sigma_data * exp(p_mean + p_std * z)``, ``z ~ N(0, 1)``.

    Args:
        rng: a ``numpy.random.Generator`` (or anything with ``standard_normal(n)``).
        n: number of samples (Protenix's ``diffusion_batch_size``, 48).
        p_mean, p_std, sigma_data: Protenix's ``train_noise_sampler`` config (Angstrom).

    Returns:
        float32 numpy array ``[n]`` (Angstrom).
    """
    z = np.asarray(rng.standard_normal(int(n)), dtype=np.float64)
    return (sigma_data * np.exp(p_mean + p_std * z)).astype(np.float32)


def centre_random_augmentation(x, rotation, translation, mask=None):
    """AF3 Algorithm 19: centre the coordinates (masked mean), rotate, translate.

    Args:
        x: ``[..., N_atom, 3]`` coordinates (Angstrom).
        rotation: ``[N_sample, 3, 3]`` rotation matrices (applied as ``x R^T``).
        translation: ``[N_sample, 1, 3]`` shifts (AF3: ``s_trans * N(0, I)``, ``s_trans = 1``).
        mask: ``[..., N_atom]`` atoms that define the centre (default: all).

    Returns:
        ``[..., N_sample, N_atom, 3]``.
    """
    x = x if isinstance(x, core.Tensor) else core.tensor(np.asarray(x))
    rot = rotation if isinstance(rotation, core.Tensor) else core.tensor(np.asarray(rotation))
    tr = (
        translation
        if isinstance(translation, core.Tensor)
        else core.tensor(np.asarray(translation))
    )
    if mask is None:
        centre = ops.mean(x, axis=-2, keepdims=True)
    else:
        m = mask if isinstance(mask, core.Tensor) else core.tensor(np.asarray(mask))
        m = ops.astype(m, x.dtype)[..., None]
        centre = ops.sum(x * m, axis=-2, keepdims=True) / ops.maximum(
            ops.sum(m, axis=-2, keepdims=True), 1e-6
        )
    xc = ops.expand_dims(x - centre, -3)  # [..., 1, N_atom, 3]
    return ops.matmul(xc, ops.swapaxes(ops.astype(rot, x.dtype), -1, -2)) + ops.astype(tr, x.dtype)


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
