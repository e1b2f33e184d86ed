"""The AF3 diffusion sampler (supplement Algorithm 18) with the EDM noise schedule (Karras et al.
2022, eq. 5), the training noise-level sampler and the centre-and-random-rigid augmentation
(Algorithm 19), as ``protenix.model.generator`` (Protenix 2.0.0).

Random draws go through one injectable source ``rng`` with ``randn(shape)`` (standard normal
draws, returned as a ``core.Tensor`` or numpy array) and ``random_rotation(n)`` (``[n, 3, 3]``
uniformly random rotation matrices). ``sample_diffusion`` calls it in Protenix's order: the
initial noise ``randn([..., N_sample, N_atom, 3])``; then per step a rotation
``random_rotation(N_sample)``, a translation ``randn([..., N_sample, 1, 3])`` (the
batch of Algorithm 19 is ``[..., N_sample]``, one augmentation each) and the step noise
``randn([..., N_sample, N_atom, 3])``. ``rng=None`` uses :class:`CoreRandom` (core's seeded
generator, ``core.set_seed``), so a test can replay draws recorded from PyTorch Protenix.
"""

import itertools

import numpy as np

from diffsci import core
from diffsci.core import ops

__all__ = [
    "CoreRandom",
    "InferenceNoiseScheduler",
    "ReplayRandom",
    "TrainingNoiseSampler",
    "centre_random_augmentation",
    "sample_diffusion",
]


def _tensor(x, dtype=core.float32):
    if isinstance(x, core.Tensor):
        return ops.astype(x, dtype)
    return core.tensor(np.asarray(x), dtype=dtype)


def _quaternion_to_matrix(q):
    """Unit quaternions ``[n, 4]`` (w, x, y, z) -> rotation matrices ``[n, 3, 3]``."""
    w, x, y, z = (q[:, i] for i in range(4))
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
            np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
            np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1),
        ],
        axis=-2,
    )


class CoreRandom:
    """The default random source: core's generator (``core.set_seed`` makes it repeatable).

    ``random_rotation`` normalises 4-d standard normal draws to unit quaternions, which are
    uniform on S^3, so the rotations are uniform (Haar) on SO(3) (Shoemake 1992).
    """

    def randn(self, shape):
        return core.random.normal(tuple(int(s) for s in shape))

    def random_rotation(self, n):
        q = np.asarray(self.randn([int(n), 4]).asnumpy(), np.float64)
        q /= np.linalg.norm(q, axis=-1, keepdims=True)
        return core.tensor(_quaternion_to_matrix(q).astype(np.float32))


class ReplayRandom:
    """Replays recorded draws in order: ``draws`` is a list of ``(kind, array)`` with kind
    ``"randn"``, ``"rotation"`` (``[n, 3, 3]``), ``"randint"`` (``[1]``, for the MSA subsample
    size) or ``"permutation"`` (``[n]``); each call checks the kind and the shape it asks for
    against the next record (a mismatch means the call order differs from the recording)."""

    def __init__(self, draws):
        self.draws = list(draws)
        self.pos = 0

    def _next(self, kind, shape):
        if self.pos >= len(self.draws):
            raise IndexError(f"ReplayRandom: {kind}{list(shape)} asked after all "
                             f"{len(self.draws)} recorded draws were used")  # fmt: skip
        got_kind, value = self.draws[self.pos]
        value = np.asarray(value)
        if got_kind != kind or tuple(value.shape) != tuple(shape):
            raise ValueError(
                f"ReplayRandom: draw {self.pos} asked for {kind}{list(shape)}, the record has "
                f"{got_kind}{list(value.shape)}"
            )
        self.pos += 1
        return value

    def randn(self, shape):
        return core.tensor(self._next("randn", tuple(int(s) for s in shape)).astype(np.float32))

    def random_rotation(self, n):
        return core.tensor(self._next("rotation", (int(n), 3, 3)).astype(np.float32))

    def randint(self, low, high):
        v = int(self._next("randint", (1,))[0])
        if not low <= v < high:
            raise ValueError(f"ReplayRandom: recorded randint {v} is outside [{low}, {high})")
        return v

    def permutation(self, n):
        return self._next("permutation", (int(n),)).astype(np.int64)


class TrainingNoiseSampler:
    """Training noise levels ``sigma_data * exp(p_mean + p_std * N(0, 1))`` (AF3 supplement
    section 3.7.1; Angstrom).

    Args:
        p_mean, p_std: log-normal parameters (-1.2, 1.5).
        sigma_data: data scale (16 A).
    """

    def __init__(self, p_mean=-1.2, p_std=1.5, sigma_data=16.0):
        self.p_mean, self.p_std, self.sigma_data = p_mean, p_std, sigma_data

    def __call__(self, size, device=None, rng=None):
        """``size`` -> noise levels of that shape (float32 Tensor); ``device`` is accepted for
        Protenix's signature (core places the result)."""
        rng = CoreRandom() if rng is None else rng
        z = _tensor(rng.randn(list(size)))
        return ops.exp(z * self.p_std + self.p_mean) * self.sigma_data


class InferenceNoiseScheduler:
    """The EDM inference schedule (Karras et al. 2022, eq. 5; AF3 supplement section 3.7.1):
    ``t_i = sigma_data (s_max^(1/rho) + i/N (s_min^(1/rho) - s_max^(1/rho)))^rho`` for
    ``i = 0..N``, with ``t_N = 0``.

    Args:
        s_max, s_min: largest and smallest noise levels (in units of sigma_data; 160, 4e-4).
        rho: schedule exponent (7).
        sigma_data: data scale (16 A).
    """

    def __init__(self, s_max=160.0, s_min=4e-4, rho=7, sigma_data=16.0):
        self.s_max, self.s_min, self.rho, self.sigma_data = s_max, s_min, rho, sigma_data

    def __call__(self, N_step=200, device=None, dtype=core.float32):
        """-> noise levels ``[N_step + 1]`` (Angstrom), decreasing to 0 (``device``: as
        Protenix's signature; unused)."""
        # float32 arithmetic, as Protenix (torch.arange in the target dtype)
        i = np.arange(N_step + 1, dtype=np.float32)
        step = np.float32(1.0 / N_step)
        a = np.float32(self.s_max ** (1 / self.rho))
        b = np.float32(self.s_min ** (1 / self.rho))
        t = np.float32(self.sigma_data) * (a + i * step * (b - a)) ** np.float32(self.rho)
        t = t.astype(np.float32)
        t[-1] = 0.0
        return core.tensor(t, dtype=dtype)


def centre_random_augmentation(
    x_input_coords, N_sample=1, s_trans=1.0, centre_only=False, mask=None, eps=1e-12, rng=None
):
    """Implements Algorithm 19 of the AlphaFold 3 supplement: centre (masked mean), then
    ``N_sample`` random rigid motions ``x R^T + s_trans * t``, ``t ~ N(0, I)``.

    Args:
        x_input_coords: ``[..., N_atom, 3]`` (Angstrom).
        N_sample: augmentations per input.
        s_trans: translation scale (Angstrom).
        centre_only: only centre (no draws).
        mask: ``[..., N_atom]`` atoms defining the centre (default all).
        eps: added to the mask count.
        rng: random source (``random_rotation(n)`` then ``randn([..., N_sample, 3])``).

    Returns:
        ``[..., N_sample, N_atom, 3]``.
    """
    x = x_input_coords
    if mask is None:
        x = x - ops.mean(x, axis=-2, keepdims=True)
    else:
        m = ops.astype(_tensor(mask), x.dtype)
        centre = ops.sum(x * m[..., None], axis=-2) / (ops.sum(m, axis=-1) + eps)[..., None]
        x = x - ops.expand_dims(centre, -2)
    x = ops.broadcast_to(ops.expand_dims(x, -3), (*x.shape[:-2], N_sample, *x.shape[-2:]))
    if centre_only:
        return x
    rng = CoreRandom() if rng is None else rng
    batch = tuple(x.shape[:-3])
    n_aug = int(np.prod(batch, dtype=np.int64)) * N_sample
    rot = _tensor(rng.random_rotation(n_aug)).reshape(*batch, N_sample, 3, 3)
    trans = s_trans * _tensor(rng.randn([*batch, N_sample, 3]))  # [..., N_sample, 3]
    rotated = ops.matmul(ops.astype(x, core.float32), ops.swapaxes(rot, -1, -2))
    return rotated + ops.expand_dims(trans, -2)


def sample_diffusion(
    denoise_net,
    input_feature_dict,
    s_inputs,
    s_trunk,
    z_trunk,
    pair_z=None,
    p_lm=None,
    c_l=None,
    noise_schedule=None,
    N_sample=1,
    gamma0=0.8,
    gamma_min=1.0,
    noise_scale_lambda=1.003,
    step_scale_eta=1.5,
    diffusion_chunk_size=None,
    inplace_safe=False,
    attn_chunk_size=None,
    enable_efficient_fusion=False,
    guidance_configs=None,
    rng=None,
    progress=None,
):
    """Implements Algorithm 18 of the AlphaFold 3 supplement (the EDM stochastic sampler with
    churn ``gamma0`` above ``gamma_min``, noise scale ``lambda`` and step scale ``eta``; Karras
    et al. 2022, Algorithm 2).

    Args:
        denoise_net: a :class:`DiffusionModule` (called with Protenix's keyword arguments).
        input_feature_dict: the features (``atom_to_token_idx`` ``[N_atom]`` and the
            denoiser's).
        s_inputs ``[..., N_token, c_s_inputs]``, s_trunk ``[..., N_token, c_s]``, z_trunk
            ``[..., N_token, N_token, c_z]``; pair_z, p_lm, c_l: the denoiser's caches.
        noise_schedule: ``[N_step + 1]`` noise levels (:class:`InferenceNoiseScheduler`).
        N_sample: samples.
        gamma0, gamma_min, noise_scale_lambda, step_scale_eta: Algorithm 18's constants.
        diffusion_chunk_size: samples per chunk (each chunk runs the whole trajectory and
            draws its own noise, as Protenix).
        attn_chunk_size: the denoiser's attention chunking.
        guidance_configs: training-free guidance is not supported (must be None or disabled).
        rng: random source (see the module docstring); None: :class:`CoreRandom`.
        progress: optional ``progress(i, n)``, called after each of the ``n`` denoising steps
            (of every chunk, ``n`` counting all chunks' steps).

    Returns:
        coordinates ``[..., N_sample, N_atom, 3]`` (Angstrom).
    """
    if guidance_configs and guidance_configs.get("enable", False):
        raise NotImplementedError("sample_diffusion: training-free guidance is not supported")
    if noise_schedule is None:
        raise ValueError("sample_diffusion: noise_schedule is required")
    rng = CoreRandom() if rng is None else rng
    idx = input_feature_dict["atom_to_token_idx"]
    n_atom = int(idx.shape[-1])
    batch = tuple(s_inputs.shape[:-2])
    sched = np.asarray(
        noise_schedule.asnumpy() if isinstance(noise_schedule, core.Tensor) else noise_schedule,
        np.float32,
    )

    n_chunks = 1 if diffusion_chunk_size is None else -(-N_sample // diffusion_chunk_size)
    done = [0]

    def chunk(n):
        x = float(sched[0]) * _tensor(rng.randn([*batch, n, n_atom, 3]))
        for c_tau_last, c_tau in itertools.pairwise(sched):
            x = centre_random_augmentation(x, N_sample=1, rng=rng)
            x = ops.squeeze(x, -3)
            gamma = float(gamma0) if c_tau > gamma_min else 0.0
            t_hat = np.float32(c_tau_last * np.float32(gamma + 1))
            delta = np.sqrt(np.float32(t_hat * t_hat - c_tau_last * c_tau_last))
            noise = _tensor(rng.randn([*batch, n, n_atom, 3]))
            x_noisy = x + np.float32(noise_scale_lambda * delta) * noise
            t = core.tensor(np.full((*batch, n), t_hat, np.float32))
            x_den = denoise_net(
                x_noisy=x_noisy,
                t_hat_noise_level=t,
                input_feature_dict=input_feature_dict,
                s_inputs=s_inputs,
                s_trunk=s_trunk,
                z_trunk=z_trunk,
                pair_z=pair_z,
                p_lm=p_lm,
                c_l=c_l,
                chunk_size=attn_chunk_size,
                inplace_safe=inplace_safe,
                enable_efficient_fusion=enable_efficient_fusion,
            )
            d = (x_noisy - x_den) / float(t_hat)  # Line 9 with x_noisy (Protenix's reading)
            x = x_noisy + float(step_scale_eta * (c_tau - t_hat)) * d
            if progress is not None:
                done[0] += 1
                progress(done[0], n_chunks * (len(sched) - 1))
        return x

    if diffusion_chunk_size is None:
        return chunk(N_sample)
    sizes = [
        min(diffusion_chunk_size, N_sample - i) for i in range(0, N_sample, diffusion_chunk_size)
    ]
    return ops.concat([chunk(n) for n in sizes], axis=-3)
