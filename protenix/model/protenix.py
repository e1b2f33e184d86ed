"""The Protenix network (AF3 supplement Algorithm 1, the main inference loop), as
``protenix.model.protenix`` (Protenix 2.0.0): input embedder, relative position encoding and
token bonds, ``N_cycle`` recycles of template embedder, MSA module and Pairformer, the
diffusion sampler, the distogram head and the confidence head.

Random draws (MSA subsample, MC dropout, diffusion noise and augmentations) come from one
``rng`` (see :mod:`protenix.model.generator`); None uses core's seeded generator.
"""

import math
import time

import numpy as np

from diffsci import core
from diffsci.core import nn, ops

from .chunk import get_dynamic_chunk_size
from .generator import (
    CoreRandom,
    InferenceNoiseScheduler,
    TrainingNoiseSampler,
    centre_random_augmentation,
    sample_diffusion,
)
from .modules.confidence import ConfidenceHead
from .modules.diffusion import DiffusionModule
from .modules.embedders import InputFeatureEmbedder, RelativePositionEncoding
from .modules.head import DistogramHead
from .modules.msa import MSAModule
from .modules.pairformer import PairformerStack
from .modules.primitives import LayerNorm, LinearNoBias, rearrange_qk_to_dense_trunk
from .modules.template import TemplateEmbedder
from .precision import cast_floats, compute_dtype

__all__ = ["ConstraintEmbedder", "Protenix", "update_input_feature_dict"]

_MSA_KEYS = ("msa", "has_deletion", "deletion_value", "profile", "deletion_mean")


def _t(x, dtype=None):
    if isinstance(x, core.Tensor):
        return x if dtype is None else ops.astype(x, dtype)
    return core.tensor(np.asarray(x), dtype=dtype)


def update_input_feature_dict(input_feature_dict):
    """Lines 1-3 of Algorithm 5: ``d_lm`` ``[n_trunks, 32, 128, 3]`` (reference-conformer
    offsets of the local atom pairs), ``v_lm`` ``[n_trunks, 32, 128, 1]`` (same
    ``ref_space_uid``) and ``pad_info`` (with ``mask_trunked``), added to the dict, which is
    returned. Needs ``ref_pos`` ``[N_atom, 3]`` and ``ref_space_uid`` ``[N_atom]``."""
    f = input_feature_dict
    pos, uid = _t(f["ref_pos"], core.float32), _t(f["ref_space_uid"], core.int64)
    (q_pos, q_uid), (k_pos, k_uid), pad_info = rearrange_qk_to_dense_trunk(
        q=[pos, uid], k=[pos, uid], dim_q=[-2, -1], dim_k=[-2, -1], n_queries=32, n_keys=128,
        compute_mask=True,
    )  # fmt: skip
    f["d_lm"] = ops.expand_dims(q_pos, -2) - ops.expand_dims(k_pos, -3)
    f["v_lm"] = ops.expand_dims(
        ops.equal(ops.expand_dims(q_uid, -1), ops.expand_dims(k_uid, -2)), -1
    )
    f["pad_info"] = pad_info
    return f


class ConstraintEmbedder(nn.Cell):
    """Protenix's constraint embedder: pocket / contact / contact-atom maps to pair
    embeddings (each a LinearNoBias, zero-initialised); all off in the released configs, where
    it returns None. The substructure embedder is not ported."""

    def __init__(self, pocket_embedder, contact_embedder, contact_atom_embedder,
                 substructure_embedder, c_constraint_z, initialize_method="zero", **kwargs):  # fmt: skip
        super().__init__()
        self.configs = {
            "pocket": dict(pocket_embedder),
            "contact": dict(contact_embedder),
            "contact_atom": dict(contact_atom_embedder),
        }
        if dict(substructure_embedder).get("enable", False):
            raise NotImplementedError("ConstraintEmbedder: the substructure embedder is not ported")
        init = "zeros" if initialize_method == "zero" else "relu"
        for name, cfg in self.configs.items():
            if cfg.get("enable", False):
                layer = LinearNoBias(cfg.get("c_z_input", 1), c_constraint_z, initializer=init)
                setattr(self, f"{name}_z_embedder", layer)

    def construct(self, constraint_feature_dict):
        """``{name: [..., N_token, N_token, c_z_input]}`` -> ``[..., N, N, c_z]`` or None."""
        z = None
        for name, cfg in self.configs.items():
            if cfg.get("enable", False):
                zi = getattr(self, f"{name}_z_embedder")(
                    _t(constraint_feature_dict[name], core.float32)
                )
                z = zi if z is None else z + zi
        return z


def _uniform(rng):
    """One U[0, 1) number from an rng with ``randn`` (Phi of a normal draw)."""
    x = float(np.asarray(_numpy(rng.randn([1]))).reshape(-1)[0])
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def _numpy(x):
    return x.asnumpy() if isinstance(x, core.Tensor) else np.asarray(x)


class Protenix(nn.Cell):
    """Implements Algorithm 1 of the AlphaFold 3 supplement: inference (``construct``) and
    Protenix's training forward (``construct(mode="train")`` / :meth:`train_forward`).

    Args:
        configs: a resolved config (``protenix.config.get_model_config``), Protenix's keys:
            ``model.{N_cycle, input_embedder, relative_position_encoding, template_embedder,
            msa_module, constraint_embedder, pairformer, diffusion_module, distogram_head,
            confidence_head}``, ``c_s``, ``c_z``, ``c_s_inputs``, ``sample_diffusion``,
            ``inference_noise_scheduler``, ``train_noise_sampler``, ``infer_setting``.
    """

    def __init__(self, configs):
        super().__init__()
        self.configs = configs
        m = configs.model
        self.N_cycle = m.N_cycle
        self.N_model_seed = m.get("N_model_seed", 1)
        self.enable_diffusion_shared_vars_cache = configs.get(
            "enable_diffusion_shared_vars_cache", True
        )
        self.train_noise_sampler = TrainingNoiseSampler(**configs.train_noise_sampler)
        self.inference_noise_scheduler = InferenceNoiseScheduler(
            **configs.inference_noise_scheduler
        )
        self.input_embedder = InputFeatureEmbedder(
            **m.input_embedder, esm_configs=dict(configs.get("esm", None) or {})
        )
        self.relative_position_encoding = RelativePositionEncoding(**m.relative_position_encoding)
        self.template_embedder = TemplateEmbedder(**m.template_embedder)
        msa_configs = dict((configs.get("data", None) or {}).get("msa", {}) or {})
        self.msa_module = MSAModule(**m.msa_module, msa_configs=msa_configs)
        self.constraint_embedder = ConstraintEmbedder(**m.constraint_embedder)
        self.pairformer_stack = PairformerStack(**m.pairformer)
        self.diffusion_module = DiffusionModule(**m.diffusion_module)
        self.distogram_head = DistogramHead(**m.distogram_head)
        self.confidence_head = ConfidenceHead(**m.confidence_head)
        self.c_s, self.c_z, self.c_s_inputs = configs.c_s, configs.c_z, configs.c_s_inputs
        self.linear_no_bias_sinit = LinearNoBias(self.c_s_inputs, self.c_s)
        self.linear_no_bias_zinit1 = LinearNoBias(self.c_s, self.c_z)
        self.linear_no_bias_zinit2 = LinearNoBias(self.c_s, self.c_z)
        self.linear_no_bias_token_bond = LinearNoBias(1, self.c_z)
        self.linear_no_bias_z_cycle = LinearNoBias(self.c_z, self.c_z, initializer="zeros")
        self.linear_no_bias_s = LinearNoBias(self.c_s, self.c_s, initializer="zeros")
        self.layernorm_z_cycle = LayerNorm(self.c_z)
        self.layernorm_s = LayerNorm(self.c_s)

    # -- trunk ---------------------------------------------------------------------------------
    def get_pairformer_output(self, input_feature_dict, N_cycle, inplace_safe=False,
                              chunk_size=None, mc_dropout=False, mc_dropout_rate=0.4, rng=None,
                              dtype="fp32", train=False, progress=None):  # fmt: skip
        """Input embedding and ``N_cycle`` recycles of template embedder, MSA module and
        Pairformer (Algorithm 1 lines 1-14). ``dtype`` "bf16" runs the recycles (template, MSA,
        Pairformer) in bfloat16 (``protenix.model.precision``: activations cast, weights cast
        per use), as Protenix under autocast; the embedders run in float32. ``train``: the
        gradient flows only through the last recycle (Protenix enables it for the last cycle;
        here the recycled ``s``, ``z`` enter it through ``stop_gradient``, the same gradients).
        ``progress(stage, i, n)`` (optional) is called with ``("recycle", i, N_cycle)`` after
        each recycle.

        Returns:
            ``(s_inputs [N_token, c_s_inputs], s [N_token, c_s], z [N_token, N_token, c_z])``.
        """
        f = input_feature_dict
        tm = self.configs.get("triangle_multiplicative", "torch")
        ta = self.configs.get("triangle_attention", "torch")
        s_inputs = self.input_embedder(f, inplace_safe=False, chunk_size=chunk_size)
        z_constraint = None
        if "constraint_feature" in f:
            z_constraint = self.constraint_embedder(f["constraint_feature"])
        s_init = self.linear_no_bias_sinit(s_inputs)  # [N_token, c_s]
        z_init = ops.expand_dims(self.linear_no_bias_zinit1(s_init), -2) + ops.expand_dims(
            self.linear_no_bias_zinit2(s_init), -3
        )  # [N_token, N_token, c_z]: z_ij = zinit1(s_i) + zinit2(s_j)
        z_init = z_init + self.relative_position_encoding(f["relp"])
        bonds = ops.expand_dims(_t(f["token_bonds"], z_init.dtype), -1)
        z_init = z_init + self.linear_no_bias_token_bond(bonds)
        if z_constraint is not None:
            z_init = z_init + z_constraint
        low = compute_dtype(dtype)
        if low != core.float32:
            s_inputs, s_init, z_init = cast_floats((s_inputs, s_init, z_init), low)
            f = {k: cast_floats(v, low) if k.startswith("template_") else v for k, v in f.items()}
        z, s = ops.zeros_like(z_init), ops.zeros_like(s_init)
        for cycle_no in range(N_cycle):
            if train and cycle_no == N_cycle - 1:
                z, s = ops.stop_gradient(z), ops.stop_gradient(s)
            upd = self.linear_no_bias_z_cycle(self.layernorm_z_cycle(z))
            if mc_dropout:
                keep = _numpy(rng.randn(list(upd.shape))) >= _probit(mc_dropout_rate)
                upd = upd * core.tensor(keep.astype(np.float32) / (1.0 - mc_dropout_rate))
            z = z_init + upd
            if self.template_embedder.n_blocks > 0:
                z = z + self.template_embedder(
                    f, z, triangle_multiplicative=tm, triangle_attention=ta,
                    inplace_safe=inplace_safe, chunk_size=chunk_size,
                )  # fmt: skip
            z = self.msa_module(
                f, z, s_inputs, pair_mask=None, triangle_multiplicative=tm,
                triangle_attention=ta, inplace_safe=inplace_safe, chunk_size=chunk_size, rng=rng,
            )  # fmt: skip
            s = s_init + self.linear_no_bias_s(self.layernorm_s(s))
            s, z = self.pairformer_stack(
                s, z, pair_mask=None, triangle_multiplicative=tm, triangle_attention=ta,
                inplace_safe=inplace_safe, chunk_size=chunk_size,
            )  # fmt: skip
            if progress is not None:
                progress("recycle", cycle_no + 1, N_cycle)
        return s_inputs, s, z

    def _chunk_size(self, n_token, chunk_size):
        infer = self.configs.get("infer_setting", {}) or {}
        if not infer.get("dynamic_chunk_size", False) or "chunk_size_thresholds" not in infer:
            return chunk_size
        return get_dynamic_chunk_size(n_token, infer["chunk_size_thresholds"])

    # -- inference -----------------------------------------------------------------------------
    def main_inference_loop(self, input_feature_dict, N_cycle=None, N_sample=None, N_step=None,
                            inplace_safe=True, chunk_size=None, mc_dropout=False, rng=None,
                            time_tracker=None, dtype="fp32", progress=None):  # fmt: skip
        """One model seed of Algorithm 1 at inference (``time_tracker``, a dict, receives the
        wall seconds of ``pairformer``, ``diffusion`` and ``confidence``, as Protenix's, and
        their CPU seconds (``time.process_time``) under ``<stage>_cpu``;
        ``progress(stage, i, n)`` is called after each recycle (``"recycle"``) and each
        diffusion step (``"diffusion"``)).

        Returns:
            dict: ``coordinate`` ``[N_sample, N_atom, 3]`` (Angstrom), ``distogram``
            ``[N_token, N_token, no_bins]``, ``plddt`` ``[N_sample, N_atom, b_plddt]``,
            ``pae``/``pde`` ``[N_sample, N_token, N_token, b]``, ``resolved``
            ``[N_sample, N_atom, 2]`` (logits), ``s_inputs``, ``s``, ``z`` (trunk outputs, in
            the trunk's ``dtype``).
        """
        f = input_feature_dict
        rng = CoreRandom() if rng is None else rng
        sd = self.configs.sample_diffusion
        N_cycle = self.N_cycle if N_cycle is None else N_cycle
        N_sample = sd["N_sample"] if N_sample is None else N_sample
        N_step = sd["N_step"] if N_step is None else N_step
        mc_rate = self.configs.get("mc_dropout_rate", 0.4)
        times = {} if time_tracker is None else time_tracker
        t0, c0 = time.perf_counter(), time.process_time()
        s_inputs, s, z = self.get_pairformer_output(
            f, N_cycle, inplace_safe=inplace_safe, chunk_size=chunk_size,
            mc_dropout=mc_dropout, mc_dropout_rate=mc_rate, rng=rng, dtype=dtype,
            progress=progress,
        )  # fmt: skip
        trunk = {"s_inputs": s_inputs, "s": s, "z": z}
        # diffusion, distogram and confidence in float32 (Protenix's skip_amp up to 2560 tokens)
        s_inputs, s, z = cast_floats((s_inputs, s, z), core.float32)
        t1, c1 = time.perf_counter(), time.process_time()
        times["pairformer"], times["pairformer_cpu"] = t1 - t0, c1 - c0
        noise_schedule = self.inference_noise_scheduler(N_step=N_step)
        dm = self.diffusion_module
        pair_z, p_lm, c_l = None, None, None
        if self.enable_diffusion_shared_vars_cache:
            pair_z = dm.diffusion_conditioning.prepare_cache(f["relp"], z)
            p_lm, c_l = dm.atom_attention_encoder.prepare_cache(
                f["ref_pos"], f["ref_charge"], f["ref_mask"], f["ref_element"],
                f["ref_atom_name_chars"], f["atom_to_token_idx"], f["d_lm"], f["v_lm"],
                f["pad_info"], r_l=True, z=pair_z,
            )  # fmt: skip
        infer = self.configs.get("infer_setting", {}) or {}
        coordinate = sample_diffusion(
            denoise_net=dm, input_feature_dict=f, s_inputs=s_inputs, s_trunk=s,
            z_trunk=None if pair_z is not None else z, pair_z=pair_z, p_lm=p_lm, c_l=c_l,
            noise_schedule=noise_schedule, N_sample=N_sample, gamma0=sd["gamma0"],
            gamma_min=sd["gamma_min"], noise_scale_lambda=sd["noise_scale_lambda"],
            step_scale_eta=sd["step_scale_eta"],
            diffusion_chunk_size=infer.get("sample_diffusion_chunk_size", None),
            attn_chunk_size=infer.get("chunk_size", None), inplace_safe=inplace_safe, rng=rng,
            progress=None if progress is None else (lambda i, n: progress("diffusion", i, n)),
        )  # fmt: skip
        t2, c2 = time.perf_counter(), time.process_time()
        times["diffusion"], times["diffusion_cpu"] = t2 - t1, c2 - c1
        tm = self.configs.get("triangle_multiplicative", "torch")
        ta = self.configs.get("triangle_attention", "torch")
        plddt, pae, pde, resolved = self.confidence_head(
            input_feature_dict=f, s_inputs=s_inputs, s_trunk=s, z_trunk=z, pair_mask=None,
            x_pred_coords=coordinate, triangle_multiplicative=tm, triangle_attention=ta,
            inplace_safe=inplace_safe, chunk_size=chunk_size,
        )  # fmt: skip
        distogram = self.distogram_head(z)
        times["confidence"] = time.perf_counter() - t2
        times["confidence_cpu"] = time.process_time() - c2
        return {
            "coordinate": coordinate,
            "distogram": distogram,
            "plddt": plddt,
            "pae": pae,
            "pde": pde,
            "resolved": resolved,
            **trunk,
        }

    # -- training ------------------------------------------------------------------------------
    def prepare_features(self, input_feature_dict):
        """A new dict of the features as Tensors with ``relp``, ``d_lm``, ``v_lm`` and
        ``pad_info`` added (what every forward needs)."""
        f = dict(input_feature_dict)
        for k, v in list(f.items()):
            if not isinstance(v, (core.Tensor, dict)):
                f[k] = _t(v)
        f = self.relative_position_encoding.generate_relp(f)
        return update_input_feature_dict(f)

    def main_train_loop(self, input_feature_dict, label_dict, N_cycle, rng,
                        chunk_size=None, use_conditioning=True, use_embedding=True):  # fmt: skip
        """Protenix's ``main_train_loop`` (AF3 supplement section 3.7, Algorithm 1 in
        training): the trunk with gradient through the last recycle only, the mini-rollout
        (``sample_diffusion.N_step_mini_rollout`` steps of Algorithm 18 for
        ``N_sample_mini_rollout`` samples, the denoiser in eval mode, no gradient) whose
        coordinates feed the confidence head (which stops the trunk's gradient itself,
        ``confidence_head.stop_gradient``), the denoiser trained on ``diffusion_batch_size``
        noised copies of the ground truth (``sample_diffusion_training``: Algorithm 19's
        augmentation, noise levels from :class:`TrainingNoiseSampler`, Gaussian noise; in
        chunks of ``diffusion_chunk_size``) and the distogram head.

        Draws, in order: the trunk's (MSA subsample, dropout), the mini-rollout's (Algorithm
        18), the augmentation (``random_rotation``, ``randn`` translations), the noise levels
        (``randn [N_sample]``) and the noise (``randn [N_sample, N_atom, 3]``). The label
        permutation of symmetric chains/atoms (Protenix's ``SymmetricPermutation``) is not
        ported: labels are used as given.

        Args:
            input_feature_dict: prepared features (:meth:`prepare_features`).
            label_dict: ``coordinate`` ``[N_atom, 3]`` (Angstrom), ``coordinate_mask``
                ``[N_atom]``.
            N_cycle: recycles; rng: the random source.
            use_conditioning / use_embedding: False drops the trunk conditioning of the
                denoiser / the pair embedding of the confidence head (Protenix draws these with
                ``condition_embedding_drop_rate`` / ``confidence_embedding_drop_rate``).

        Returns:
            ``(pred_dict, label_dict, log_dict)``: pred_dict ``coordinate`` and
            ``noise_level`` (``[N_sample, N_atom, 3]``, ``[N_sample]``), ``coordinate_mini``
            ``[N_sample_mini, N_atom, 3]``, ``distogram`` ``[N_token, N_token, no_bins]``,
            ``plddt``, ``pae``, ``pde``, ``resolved`` (logits on ``coordinate_mini``), the keys
            :class:`protenix.model.loss.ProtenixLoss` reads in training mode.
        """
        f = input_feature_dict
        sg = ops.stop_gradient
        tm = self.configs.get("triangle_multiplicative", "torch")
        ta = self.configs.get("triangle_attention", "torch")
        s_inputs, s, z = self.get_pairformer_output(
            f, N_cycle, inplace_safe=False, chunk_size=chunk_size, rng=rng, train=True
        )
        dm = self.diffusion_module
        pair_z, p_lm, c_l = None, None, None
        if self.enable_diffusion_shared_vars_cache:
            pair_z = dm.diffusion_conditioning.prepare_cache(f["relp"], z)
            p_lm, c_l = dm.atom_attention_encoder.prepare_cache(
                f["ref_pos"], f["ref_charge"], f["ref_mask"], f["ref_element"],
                f["ref_atom_name_chars"], f["atom_to_token_idx"], f["d_lm"], f["v_lm"],
                f["pad_info"], r_l=True, z=pair_z,
            )  # fmt: skip
        sd = self.configs.sample_diffusion

        def detach(x):
            return None if x is None else sg(x)

        # mini-rollout (no gradient; the denoiser in eval mode, as Protenix)
        dm.set_train(False)
        try:
            coordinate_mini = sample_diffusion(
                denoise_net=dm, input_feature_dict=f, s_inputs=sg(s_inputs), s_trunk=sg(s),
                z_trunk=None if pair_z is not None else sg(z), pair_z=detach(pair_z),
                p_lm=detach(p_lm), c_l=detach(c_l),
                noise_schedule=self.inference_noise_scheduler(N_step=sd["N_step_mini_rollout"]),
                N_sample=sd["N_sample_mini_rollout"], gamma0=sd["gamma0"],
                gamma_min=sd["gamma_min"], noise_scale_lambda=sd["noise_scale_lambda"],
                step_scale_eta=sd["step_scale_eta"], rng=rng,
            )  # fmt: skip
        finally:
            dm.set_train(True)
        coordinate_mini = sg(coordinate_mini)
        plddt, pae, pde, resolved = self.confidence_head(
            input_feature_dict=f, s_inputs=s_inputs, s_trunk=s, z_trunk=z, pair_mask=None,
            x_pred_coords=coordinate_mini, use_embedding=use_embedding,
            triangle_multiplicative=tm, triangle_attention=ta, inplace_safe=False,
            chunk_size=chunk_size,
        )  # fmt: skip
        pred = {"coordinate_mini": coordinate_mini, "plddt": plddt, "pae": pae, "pde": pde,
                "resolved": resolved}  # fmt: skip
        # sample_diffusion_training: noised, augmented copies of the ground truth
        n = int(self.configs.get("diffusion_batch_size", 48))
        x_true = _t(label_dict["coordinate"], core.float32)
        mask = _t(label_dict["coordinate_mask"], core.float32)
        x_gt = centre_random_augmentation(x_true, N_sample=n, mask=mask, rng=rng)
        x_gt = x_gt * mask[..., None, :, None]  # unresolved atoms at 0, as Protenix
        # [N_sample, N_atom, 3]
        sigma = self.train_noise_sampler(size=(*x_true.shape[:-2], n), rng=rng)  # [N_sample]
        x_noisy = x_gt + _t(rng.randn(list(x_gt.shape)), core.float32) * sigma[..., None, None]
        chunk = self.configs.get("diffusion_chunk_size", None) or n
        outs = []
        for i in range(0, n, chunk):
            outs.append(dm(
                x_noisy=x_noisy[..., i : i + chunk, :, :],
                t_hat_noise_level=sigma[..., i : i + chunk], input_feature_dict=f,
                s_inputs=s_inputs, s_trunk=s, z_trunk=None if pair_z is not None else z,
                pair_z=pair_z, p_lm=p_lm, c_l=c_l, use_conditioning=use_conditioning,
            ))  # fmt: skip
        x_denoised = outs[0] if len(outs) == 1 else ops.concat(outs, axis=-3)
        pred.update(distogram=self.distogram_head(z), coordinate=x_denoised, noise_level=sigma)
        return pred, label_dict, {"noise_level": sigma}

    def train_forward(self, input_feature_dict, label_dict, current_step=None, rng=None,
                      N_cycle=None, use_conditioning=None, use_embedding=None,
                      chunk_size=None):  # fmt: skip
        """Protenix's ``forward(mode="train")``: ``N_cycle`` drawn uniformly from
        ``1..model.N_cycle`` by ``numpy.random.RandomState(current_step)`` (as Protenix; None:
        the config's ``N_cycle``, or ``N_cycle`` if given), the conditioning/embedding drops
        drawn with ``model.condition_embedding_drop_rate`` /
        ``model.confidence_embedding_drop_rate`` from the same host generator (unless given),
        then :meth:`main_train_loop`. Host-side decisions (N_cycle, the drops, the MSA
        subsample) are fixed when a step is traced by ``core.jit``; the tensor draws
        (augmentation, noise levels, noise, dropout) stay fresh per call when ``rng`` draws
        from core's generator (:class:`protenix.train.StepRandom`).

        Returns:
            ``(pred_dict, label_dict, log_dict)`` (see :meth:`main_train_loop`), log_dict with
            ``N_cycle``.
        """
        m = self.configs.model
        host = np.random.RandomState(current_step)
        if N_cycle is None:
            N_cycle = self.N_cycle if current_step is None else int(host.randint(1, self.N_cycle + 1))
        if use_conditioning is None:
            use_conditioning = not host.random_sample() < m.get("condition_embedding_drop_rate", 0.0)
        if use_embedding is None:
            use_embedding = not host.random_sample() < m.get("confidence_embedding_drop_rate", 0.0)
        if label_dict is None:
            raise ValueError("Protenix.train_forward: label_dict (coordinate, coordinate_mask) "
                             "is required")  # fmt: skip
        if not self.training:
            raise ValueError("Protenix.train_forward: call set_train(True) first (recompute and "
                             "dropout follow the training flag)")  # fmt: skip
        f = self.prepare_features(input_feature_dict)
        rng = CoreRandom() if rng is None else rng
        pred, label_dict, log = self.main_train_loop(
            f, label_dict, int(N_cycle), rng, chunk_size=chunk_size,
            use_conditioning=bool(use_conditioning), use_embedding=bool(use_embedding),
        )  # fmt: skip
        log["N_cycle"] = int(N_cycle)
        return pred, label_dict, log

    def construct(self, input_feature_dict, label_full_dict=None, label_dict=None,
                  mode="inference", current_step=None, symmetric_permutation=None,
                  disable_inplace=False, mc_dropout_apply_rate=0.0, rng=None, N_cycle=None,
                  N_sample=None, N_step=None, chunk_size="config", dtype=None,
                  progress=None):  # fmt: skip
        """Inference forward (Algorithm 1), or the training forward with ``mode="train"``
        (:meth:`train_forward`, which takes ``label_dict``, ``current_step``, ``rng`` and
        ``N_cycle``).

        Args:
            input_feature_dict: Protenix's features (``protenix.data.featurize``): token
                features (``asym_id``, ``residue_index``, ``entity_id``, ``sym_id``,
                ``token_index``, ``restype``, ``profile``, ``deletion_mean``, ``token_bonds``),
                atom features (``ref_*``, ``atom_to_token_idx``, ``atom_to_tokatom_idx``,
                ``distogram_rep_atom_mask``), MSA (``msa``, ``has_deletion``,
                ``deletion_value``) and template features. ``relp``, ``d_lm``, ``v_lm`` and
                ``pad_info`` are added.
            mode: "inference" or "train" ("eval" is not ported).
            disable_inplace: use the plain paths (else the block-wise inference paths when
                ``chunk_size`` is not None).
            mc_dropout_apply_rate: probability of MC dropout on the recycled z (Protenix's
                default 0.4; here 0 unless asked), decided by one draw of ``rng``.
            rng: random source (MSA subsample, MC dropout, diffusion); None: core's generator.
            N_cycle, N_sample, N_step: override the config's.
            chunk_size: trunk chunking; "config" uses ``infer_setting`` (with Protenix's dynamic
                rule).
            dtype: the trunk's precision, "fp32" or "bf16" (None: the config's ``dtype``).
            progress: ``progress(stage, i, n)`` after each recycle and diffusion step.

        Returns:
            ``(pred_dict, label_dict, log_dict)`` as Protenix; pred_dict as
            :meth:`main_inference_loop`.
        """
        if mode == "train":
            return self.train_forward(input_feature_dict, label_dict, current_step=current_step,
                                      rng=rng, N_cycle=N_cycle)  # fmt: skip
        if mode != "inference":
            raise ValueError(
                f"Protenix: mode {mode!r} is not supported here (only 'inference' and 'train')"
            )
        f = self.prepare_features(input_feature_dict)
        rng = CoreRandom() if rng is None else rng
        if chunk_size == "config":
            infer = self.configs.get("infer_setting", {}) or {}
            chunk_size = self._chunk_size(
                int(f["residue_index"].shape[-1]), infer.get("chunk_size")
            )
        mc = mc_dropout_apply_rate > 0 and _uniform(rng) < mc_dropout_apply_rate
        times = {}
        t0 = time.perf_counter()
        # the block-wise (in-place) paths save memory only when chunked; unchunked they give the
        # same numbers as the plain paths at about twice the time (N = 64: 2.9 vs 1.4 s per
        # 4-block trunk pass), so they run only with a chunk size
        inplace = not disable_inplace and chunk_size is not None
        with core.no_grad():
            pred = self.main_inference_loop(
                f, N_cycle=N_cycle, N_sample=N_sample, N_step=N_step,
                inplace_safe=inplace, chunk_size=chunk_size, mc_dropout=mc, rng=rng,
                time_tracker=times, dtype=dtype or self.configs.get("dtype", "fp32"),
                progress=progress,
            )  # fmt: skip
        times["model_forward"] = time.perf_counter() - t0
        n_cycle = self.N_cycle if N_cycle is None else N_cycle
        return pred, label_dict, {"N_cycle": n_cycle, "time": times}


def _probit(p):
    """The standard normal quantile of p (a normal draw is >= it with probability 1 - p)."""
    from statistics import NormalDist

    return NormalDist().inv_cdf(p)
