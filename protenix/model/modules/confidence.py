"""The confidence head (AF3 supplement Algorithm 31), as ``protenix.model.modules.confidence``
(Protenix 2.0.0): pLDDT, PAE, PDE and "resolved" logits from the trunk and one predicted
structure per sample, evaluated sample by sample (Protenix's memory-efficient form)."""

import numpy as np

from diffsci import core
from diffsci.core import nn, ops

from ..utils import broadcast_token_to_atom
from .pairformer import PairformerStack
from .primitives import LayerNorm, LinearNoBias

__all__ = ["ConfidenceHead", "distance_one_hot"]


def distance_one_hot(x, lower_bins, upper_bins):
    """Bins ``lower < x < upper`` as float one-hot ``[..., bins]`` (Protenix ``one_hot``)."""
    x = ops.expand_dims(x, -1)
    return ops.astype(ops.logical_and(x > lower_bins, x < upper_bins), x.dtype)


class ConfidenceHead(nn.Cell):
    """Implements Algorithm 31 of the AlphaFold 3 supplement.

    The pair input is ``z_trunk + s1(s_inputs)_j + s2(s_inputs)_i`` plus embeddings of the
    predicted distances between the tokens' representative atoms (one-hot over
    ``[distance_bin_start, distance_bin_end)`` in ``distance_bin_step`` A bins, and the raw
    distance), through a PairformerStack; then PAE/PDE logits from z and per-atom pLDDT and
    resolved logits from s with a weight per atom slot of the token (``atom_to_tokatom_idx``).

    Args:
        n_blocks: Pairformer blocks (4).
        c_s, c_z, c_s_inputs: channels.
        b_pae, b_pde, b_plddt, b_resolved: logit bins (64, 64, 50, 2).
        max_atoms_per_token: atom slots per token (20).
        pairformer_dropout: dropout of the stack's triangle updates (training).
        blocks_per_ckpt: Pairformer blocks per recompute group in training.
        distance_bin_start, distance_bin_end, distance_bin_step: distance bins (Angstrom).
        stop_gradient: no gradient into s_inputs, s_trunk, z_trunk.
        hidden_scale_up: see PairformerStack.
    """

    def __init__(
        self,
        n_blocks=4,
        c_s=384,
        c_z=128,
        c_s_inputs=449,
        b_pae=64,
        b_pde=64,
        b_plddt=50,
        b_resolved=2,
        max_atoms_per_token=20,
        pairformer_dropout=0.0,
        blocks_per_ckpt=None,
        distance_bin_start=3.25,
        distance_bin_end=52.0,
        distance_bin_step=1.25,
        stop_gradient=True,
        hidden_scale_up=False,
    ):
        super().__init__()
        self.n_blocks, self.c_s, self.c_z, self.c_s_inputs = n_blocks, c_s, c_z, c_s_inputs
        self.b_pae, self.b_pde, self.b_plddt, self.b_resolved = b_pae, b_pde, b_plddt, b_resolved
        self.max_atoms_per_token, self.stop_gradient = max_atoms_per_token, stop_gradient
        self.linear_no_bias_s1 = LinearNoBias(c_s_inputs, c_z)
        self.linear_no_bias_s2 = LinearNoBias(c_s_inputs, c_z)
        lower = np.arange(distance_bin_start, distance_bin_end, distance_bin_step, dtype=np.float32)
        upper = np.concatenate([lower[1:], np.array([1e6], np.float32)])
        self.lower_bins = core.Parameter(lower, name="lower_bins", requires_grad=False)
        self.upper_bins = core.Parameter(upper, name="upper_bins", requires_grad=False)
        self.num_bins = len(lower)
        self.linear_no_bias_d = LinearNoBias(self.num_bins, c_z)
        self.linear_no_bias_d_wo_onehot = LinearNoBias(1, c_z)
        self.pairformer_stack = PairformerStack(
            c_z=c_z,
            c_s=c_s,
            n_blocks=n_blocks,
            dropout=pairformer_dropout,
            blocks_per_ckpt=blocks_per_ckpt,
            hidden_scale_up=hidden_scale_up,
        )
        self.linear_no_bias_pae = LinearNoBias(c_z, b_pae, initializer="zeros")
        self.linear_no_bias_pde = LinearNoBias(c_z, b_pde, initializer="zeros")
        self.plddt_weight = core.Parameter(
            np.zeros((max_atoms_per_token, c_s, b_plddt), np.float32), name="plddt_weight"
        )
        self.resolved_weight = core.Parameter(
            np.zeros((max_atoms_per_token, c_s, b_resolved), np.float32), name="resolved_weight"
        )
        self.input_strunk_ln = LayerNorm(c_s)
        self.pae_ln = LayerNorm(c_z)
        self.pde_ln = LayerNorm(c_z)
        self.plddt_ln = LayerNorm(c_s)
        self.resolved_ln = LayerNorm(c_s)

    def construct(
        self,
        input_feature_dict,
        s_inputs,
        s_trunk,
        z_trunk,
        pair_mask,
        x_pred_coords,
        use_embedding=True,
        triangle_multiplicative="torch",
        triangle_attention="torch",
        inplace_safe=False,
        chunk_size=None,
    ):
        """
        Args:
            input_feature_dict: ``distogram_rep_atom_mask`` ``[N_atom]`` (one representative
                atom per token), ``atom_to_token_idx`` and ``atom_to_tokatom_idx`` ``[N_atom]``.
            s_inputs ``[..., N_token, c_s_inputs]``, s_trunk ``[..., N_token, c_s]``, z_trunk
                ``[..., N_token, N_token, c_z]``: the trunk's outputs.
            pair_mask: ``[..., N_token, N_token]`` or None.
            x_pred_coords: ``[..., N_sample, N_atom, 3]`` predicted coordinates (Angstrom).
            use_embedding: False zeroes z_trunk.
            inplace_safe, chunk_size: the Pairformer's block-wise inference.

        Returns:
            ``(plddt [..., N_sample, N_atom, b_plddt], pae [..., N_sample, N_token, N_token,
            b_pae], pde [..., N_sample, N_token, N_token, b_pde], resolved [..., N_sample,
            N_atom, b_resolved])`` logits.
        """
        f = input_feature_dict
        if self.stop_gradient:
            s_inputs = core.stop_gradient(s_inputs)
            s_trunk = core.stop_gradient(s_trunk)
            z_trunk = core.stop_gradient(z_trunk)
        s_trunk = self.input_strunk_ln(ops.clip(s_trunk, -512.0, 512.0))
        if not use_embedding:
            z_trunk = z_trunk * 0.0
        rep = np.asarray(_numpy(f["distogram_rep_atom_mask"])).astype(bool).reshape(-1)
        if int(rep.sum()) != int(z_trunk.shape[-2]):
            raise ValueError(
                f"ConfidenceHead: distogram_rep_atom_mask selects {int(rep.sum())} atoms for "
                f"{int(z_trunk.shape[-2])} tokens"
            )
        x_rep = ops.take(
            x_pred_coords, core.tensor(np.nonzero(rep)[0]), axis=x_pred_coords.ndim - 2
        )
        z_init = ops.expand_dims(self.linear_no_bias_s1(s_inputs), -3) + ops.expand_dims(
            self.linear_no_bias_s2(s_inputs), -2
        )
        z_trunk = z_init + z_trunk
        outs = []
        for i in range(x_rep.shape[-3]):  # one sample at a time (Protenix's memory bound)
            outs.append(
                self.memory_efficient_forward(
                    f,
                    s_trunk,
                    z_trunk,
                    pair_mask,
                    x_rep[..., i, :, :],
                    triangle_multiplicative,
                    triangle_attention,
                    inplace_safe,
                    chunk_size,
                )
            )
        plddt, pae, pde, resolved = (list(t) for t in zip(*outs, strict=True))
        return (
            ops.stack(plddt, axis=-3),
            ops.stack(pae, axis=-4),
            ops.stack(pde, axis=-4),
            ops.stack(resolved, axis=-3),
        )

    def memory_efficient_forward(
        self,
        input_feature_dict,
        s_trunk,
        z_pair,
        pair_mask,
        x_pred_rep_coords,
        triangle_multiplicative="torch",
        triangle_attention="torch",
        inplace_safe=False,
        chunk_size=None,
    ):
        """One sample: x_pred_rep_coords ``[..., N_token, 3]`` -> the four logits of it."""
        x = ops.astype(x_pred_rep_coords, core.float32)
        diff = ops.expand_dims(x, -2) - ops.expand_dims(x, -3)
        dist = ops.sqrt(ops.sum(diff * diff, axis=-1))  # [..., N_token, N_token]
        z_pair = z_pair + self.linear_no_bias_d(
            distance_one_hot(dist, self.lower_bins, self.upper_bins)
        )
        z_pair = z_pair + self.linear_no_bias_d_wo_onehot(ops.expand_dims(dist, -1))
        s_single, z_pair = self.pairformer_stack(
            s_trunk,
            z_pair,
            pair_mask,
            triangle_multiplicative=triangle_multiplicative,
            triangle_attention=triangle_attention,
            inplace_safe=inplace_safe,
            chunk_size=chunk_size,
        )
        z_pair = ops.astype(z_pair, core.float32)
        s_single = ops.astype(s_single, core.float32)
        f = input_feature_dict
        pae = self.linear_no_bias_pae(self.pae_ln(z_pair))
        pde = self.linear_no_bias_pde(self.pde_ln(z_pair + ops.swapaxes(z_pair, -2, -3)))
        a = broadcast_token_to_atom(s_single, f["atom_to_token_idx"])  # [..., N_atom, c_s]
        slot = f["atom_to_tokatom_idx"]
        slot = slot if isinstance(slot, core.Tensor) else core.tensor(np.asarray(slot))
        slot = ops.astype(slot, core.int64)
        plddt = ops.einsum(
            "...nc,ncb->...nb", self.plddt_ln(a), ops.take(self.plddt_weight, slot, axis=0)
        )
        resolved = ops.einsum(
            "...nc,ncb->...nb", self.resolved_ln(a), ops.take(self.resolved_weight, slot, axis=0)
        )
        return plddt, pae, pde, resolved


def _numpy(x):
    return x.asnumpy() if isinstance(x, core.Tensor) else np.asarray(x)
