"""The template embedder of AlphaFold 3 (supplement Algorithm 16) as in Protenix 2.0.0.

Protenix defines ``TemplateEmbedder`` in ``modules/pairformer.py``; ours lives here and
``protenix.model.modules.pairformer`` re-exports it. Parameter names are Protenix's
(``linear_no_bias_a.weight``, ``pairformer_stack.blocks.0.tri_mul_out...``).
"""

from diffsci import core
from diffsci.core import ops

from ..chunk import resolve_chunk_size
from ..triangular.layers import LayerNorm
from .primitives import LinearNoBias

__all__ = ["TemplateEmbedder"]

# residue types of Protenix's STD_RESIDUES_WITH_GAP (20 amino acids + unknown, 4 + 4 nucleic
# acids and their unknowns, gap): the template_aatype one-hot width
N_RESTYPE_WITH_GAP = 32


class TemplateEmbedder(core.nn.Cell):
    """Implements Algorithm 16 of the AlphaFold 3 supplement (template embedder).

    For each template t: ``a_t = [distogram (39), pseudo-beta mask (1), restype_j (32),
    restype_i (32), unit vector (3), backbone-frame mask (1)]`` (pair features masked to
    same-chain pairs and the pair mask), ``v_t = LN(PairformerStack(LinearNoBias(LN(z)) +
    LinearNoBias(a_t)))``; then ``u = LinearNoBias(relu(mean_t v_t))``.

    Args:
        n_blocks: Pairformer blocks (0: the embedder is off and returns 0, as Protenix v0.5).
        c: template channels.
        c_z: pair channels.
        num_intermediate_factor: transition width factor of its Pairformer blocks.
        dropout: dropout of its Pairformer blocks.
        blocks_per_ckpt: Pairformer blocks per recompute group in training.
        hidden_scale_up: see ``PairformerBlock``.
    """

    def __init__(
        self,
        n_blocks=2,
        c=64,
        c_z=128,
        num_intermediate_factor=2,
        dropout=0.25,
        blocks_per_ckpt=None,
        hidden_scale_up=False,
    ):
        super().__init__()
        from .pairformer import PairformerStack  # pairformer.py re-exports this class

        self.n_blocks, self.c, self.c_z = n_blocks, c, c_z
        self.input_feature1 = {
            "template_distogram": 39,
            "template_backbone_frame_mask": 1,
            "template_unit_vector": 3,
            "template_pseudo_beta_mask": 1,
        }
        self.input_feature2 = {"template_restype_i": 32, "template_restype_j": 32}
        self.distogram = {"max_bin": 50.75, "min_bin": 3.25, "no_bins": 39}
        self.inf = 100000.0
        self.linear_no_bias_z = LinearNoBias(c_z, c)
        self.layernorm_z = LayerNorm(c_z)
        n_in = sum(self.input_feature1.values()) + sum(self.input_feature2.values())
        self.linear_no_bias_a = LinearNoBias(n_in, c)
        self.pairformer_stack = PairformerStack(
            c_s=0,
            c_z=c,
            n_blocks=n_blocks,
            num_intermediate_factor=num_intermediate_factor,
            dropout=dropout,
            blocks_per_ckpt=blocks_per_ckpt,
            hidden_scale_up=hidden_scale_up,
        )
        self.layernorm_v = LayerNorm(c)
        self.linear_no_bias_u = LinearNoBias(c, c_z)

    def construct(
        self,
        input_feature_dict,
        z,
        pair_mask=None,
        triangle_attention="torch",
        triangle_multiplicative="torch",
        inplace_safe=False,
        chunk_size=None,
    ):
        """The template update of the pair embedding.

        Args:
            input_feature_dict: ``asym_id`` ``[N_token]``; per template (``N_templ`` first):
                ``template_aatype`` ``[N_templ, N_token]`` (ids < 32), ``template_distogram``
                ``[N_templ, N_token, N_token, 39]``, ``template_pseudo_beta_mask`` and
                ``template_backbone_frame_mask`` ``[N_templ, N_token, N_token]``,
                ``template_unit_vector`` ``[N_templ, N_token, N_token, 3]``.
            z: pair embedding ``[N_token, N_token, c_z]``.
            pair_mask: ``[N_token, N_token]`` (None: all ones).
            inplace_safe, chunk_size: inference memory options of the Pairformer stack.

        Returns:
            ``[N_token, N_token, c_z]``, or the number 0 without templates or blocks.
        """
        if "template_aatype" not in input_feature_dict or self.n_blocks < 1:
            return 0
        chunk_size = resolve_chunk_size(chunk_size, z.shape[-2])  # "auto": Protenix's rule
        asym_id = input_feature_dict["asym_id"]
        same_chain = ops.astype(
            ops.equal(ops.expand_dims(asym_id, -1), ops.expand_dims(asym_id, -2)), z.dtype
        )  # [N, N]
        n_templ = input_feature_dict["template_aatype"].shape[0]
        if pair_mask is None:
            pair_mask = ops.ones(tuple(z.shape[:-1]), dtype=z.dtype)
        pair_mask = ops.astype(pair_mask, z.dtype)
        z = self.layernorm_z(z)
        kwargs = dict(
            pair_mask=pair_mask,
            triangle_attention=triangle_attention,
            triangle_multiplicative=triangle_multiplicative,
            inplace_safe=inplace_safe,
            chunk_size=chunk_size,
        )
        u = 0
        for t in range(n_templ):
            u = u + self.single_template_forward(t, input_feature_dict, z, same_chain, **kwargs)
        u = u / (1e-7 + n_templ)
        return self.linear_no_bias_u(ops.relu(u))  # [N, N, c_z]

    def single_template_forward(
        self, template_id, input_feature_dict, z, multichain_mask, pair_mask, **kwargs
    ):
        """``v_t`` of one template: ``[N_token, N_token, c]`` (z already layer-normed)."""
        n = z.shape[0]
        mask2d = multichain_mask * pair_mask  # [N, N]
        mask3d = ops.expand_dims(mask2d, -1)  # [N, N, 1]

        def feat(name):
            return ops.astype(input_feature_dict[name][template_id], z.dtype)

        aatype = input_feature_dict["template_aatype"][template_id]  # [N]
        onehot = ops.one_hot(aatype, N_RESTYPE_WITH_GAP, dtype=z.dtype)  # [N, 32]
        at = ops.concat(
            [
                feat("template_distogram") * mask3d,  # [N, N, 39]
                ops.expand_dims(feat("template_pseudo_beta_mask") * mask2d, -1),  # [N, N, 1]
                ops.broadcast_to(ops.expand_dims(onehot, -3), (n, n, N_RESTYPE_WITH_GAP)),  # j
                ops.broadcast_to(ops.expand_dims(onehot, -2), (n, n, N_RESTYPE_WITH_GAP)),  # i
                feat("template_unit_vector") * mask3d,  # [N, N, 3]
                ops.expand_dims(feat("template_backbone_frame_mask") * mask2d, -1),  # [N, N, 1]
            ],
            axis=-1,
        )  # [N, N, 108]
        v = self.linear_no_bias_z(z) + self.linear_no_bias_a(at)  # [N, N, c]
        _, v = self.pairformer_stack(s=None, z=v, pair_mask=pair_mask, **kwargs)
        return self.layernorm_v(v)
