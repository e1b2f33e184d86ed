"""A small training example and a stand-in network for exercising the training step before
the full Protenix model is in the tree.

:func:`helix_example` featurizes a protein sequence with :func:`protenix.data.featurize`
and gives it a "true" structure: an ideal alpha helix (backbone built by NeRF from the
standard bond lengths and angles, Engh & Huber 1991: N-CA 1.458, CA-C 1.525, C-N 1.329 A;
N-CA-C 111.2, CA-C-N 116.2, C-N-CA 121.7 degrees; phi -57, psi -47, omega 180) with each
residue's CCD reference conformer superposed (Kabsch) on its N, CA, C.

:class:`StandInFold` is built from the ported trunk modules: a restype embedding and
relative position encoding (Algorithm 3), a :class:`PairformerStack` (recomputed per
``blocks_per_ckpt``), a distogram head (symmetrised logits, as Protenix's ``DistogramHead``),
and a per-atom MLP that predicts coordinates from the token's single embedding and the atom's
reference position, in place of the diffusion module; ``N_sample`` randomly rotated and
shifted copies (Algorithm 19 with the draws as arguments) make the ``[N_sample, N_atom, 3]``
prediction. It is not Protenix's network.
"""

import numpy as np

import core
from core import nn, ops

from ..data.featurizer import featurize
from ..model.generator import centre_random_augmentation
from ..model.modules.embedders import RelativePositionEncoding
from ..model.modules.pairformer import PairformerStack
from ..model.modules.primitives import Linear, LinearNoBias
from ..model.utils import broadcast_token_to_atom

__all__ = ["StandInFold", "helix_example", "ideal_helix_backbone", "random_draws"]


def _place(a, b, c, bond, angle, torsion):
    """NeRF: the atom d with |cd| = bond, angle bcd, torsion abcd (degrees)."""
    angle, torsion = np.radians(angle), np.radians(torsion)
    bc = (c - b) / np.linalg.norm(c - b)
    n = np.cross(b - a, bc)
    n /= np.linalg.norm(n)
    m = np.stack([bc, np.cross(n, bc), n], axis=1)
    d2 = bond * np.array(
        [-np.cos(angle), np.sin(angle) * np.cos(torsion), np.sin(angle) * np.sin(torsion)]
    )
    return c + m @ d2


def ideal_helix_backbone(n_res):
    """[n_res, 3 (N, CA, C), 3] of an ideal alpha helix."""
    n = np.array([0.0, 1.458, 0.0])
    ca = np.zeros(3)
    c = np.array([1.525 * np.sin(np.radians(111.2)), 1.525 * np.cos(np.radians(111.2)), 0.0])
    out = [[n, ca, c]]
    for _ in range(n_res - 1):
        n = _place(out[-1][0], out[-1][1], out[-1][2], 1.329, 116.2, -47.0)  # psi
        ca = _place(out[-1][1], out[-1][2], n, 1.458, 121.7, 180.0)  # omega
        c = _place(out[-1][2], n, ca, 1.525, 111.2, -57.0)  # phi
        out.append([n, ca, c])
    return np.asarray(out)


def helix_example(seq="GSAKLVEAG"):
    """(features, labels) of ``seq`` as an ideal helix (see the module docstring)."""
    feat = featurize({"name": "helix", "sequences": [{"proteinChain": {"sequence": seq,
                                                                         "count": 1}}]},
                     use_msa=False)  # fmt: skip
    backbone = ideal_helix_backbone(len(seq))
    ref = feat["ref_pos"].astype(np.float64)
    tok = feat["atom_to_token_idx"]
    true = np.zeros_like(ref)
    for t, (i_n, i_ca, i_c) in enumerate(feat["frame_atom_index"]):
        atoms = np.flatnonzero(tok == t)
        src = ref[[i_n, i_ca, i_c]]
        # Kabsch of the conformer's N, CA, C onto the ideal backbone
        sc, dc = src.mean(0), backbone[t].mean(0)
        u, _, vt = np.linalg.svd((src - sc).T @ (backbone[t] - dc))
        d = np.sign(np.linalg.det(vt.T @ u.T))
        rot = vt.T @ np.diag([1, 1, d]) @ u.T
        true[atoms] = (ref[atoms] - sc) @ rot.T + dc
    label = {"coordinate": true.astype(np.float32),
             "coordinate_mask": feat["ref_mask"].astype(np.float32)}  # fmt: skip
    return feat, label


class _Draws:
    """A random source (``random_rotation``, ``randn``) answering with given tensors, so the
    draws can be arguments of a jitted step."""

    def __init__(self, rotation, translation):
        self.rotation, self.translation = rotation, translation

    def random_rotation(self, n):
        return self.rotation

    def randn(self, shape):
        return self.translation


class StandInFold(nn.Cell):
    """Trunk modules of the port + a per-atom coordinate MLP (see the module docstring).

    Args:
        feat: the features (:func:`helix_example`), constants of the network.
        c_s, c_z, n_blocks, n_heads: trunk sizes; no_bins: distogram bins.
        n_sample: predicted copies; blocks_per_ckpt: Pairformer blocks per recompute group.

    ``construct(rotation [N_sample, 3, 3], translation [N_sample, 3])`` returns Protenix's
    ``pred_dict`` keys ``coordinate``, ``distogram`` and ``noise_level`` (sigma_data).
    """

    def __init__(self, feat, c_s=16, c_z=8, n_blocks=1, n_heads=2, no_bins=16, n_sample=2,
                 blocks_per_ckpt=1):  # fmt: skip
        super().__init__()
        self.n_sample = n_sample
        self.linear_restype = LinearNoBias(32, c_s)
        self.linear_z = LinearNoBias(c_s, c_z)
        self.relpe = RelativePositionEncoding(r_max=8, s_max=2, c_z=c_z)
        self.pairformer = PairformerStack(n_blocks=n_blocks, n_heads=n_heads, c_z=c_z, c_s=c_s,
                                          dropout=0.0, blocks_per_ckpt=blocks_per_ckpt)  # fmt: skip
        self.distogram = Linear(c_z, no_bins)
        self.atom_in = Linear(c_s + 3, 64)
        self.atom_out = Linear(64, 3)
        object.__setattr__(self, "feat", feat)

    def construct(self, rotation, translation):
        f = self.feat
        s = self.linear_restype(core.tensor(f["restype"]))
        rel = {k: core.tensor(f[k]) for k in ("asym_id", "residue_index", "entity_id", "sym_id",
                                             "token_index")}  # fmt: skip
        z = self.relpe(self.relpe.generate_relp(rel)["relp"])
        z = z + ops.expand_dims(self.linear_z(s), -2) + ops.expand_dims(self.linear_z(s), -3)
        s, z = self.pairformer(s, z, ops.ones(tuple(z.shape[:-1])))
        logits = self.distogram(z)
        logits = logits + ops.swapaxes(logits, -2, -3)
        s_atom = broadcast_token_to_atom(s, f["atom_to_token_idx"])
        h = ops.concatenate([s_atom, core.tensor(f["ref_pos"])], axis=-1)
        x = 8.0 * self.atom_out(ops.relu(self.atom_in(h)))  # [N_atom, 3] Angstrom
        # Algorithm 19 (protenix.model.generator) with this step's draws
        x = centre_random_augmentation(x, N_sample=self.n_sample, rng=_Draws(rotation, translation))
        return {"coordinate": x, "distogram": logits,
                "noise_level": ops.full((self.n_sample,), 16.0)}  # fmt: skip


def random_draws(rng, n_sample):
    """Random rotations ``[n_sample, 3, 3]`` (QR of Gaussian matrices, det +1) and
    translations ``[n_sample, 3]`` (N(0, 1) A) for :class:`StandInFold`."""
    q = np.linalg.qr(rng.standard_normal((n_sample, 3, 3)))[0]
    q = q * np.sign(np.linalg.det(q))[:, None, None]
    t = rng.standard_normal((n_sample, 3))
    return core.tensor(q.astype(np.float32)), core.tensor(t.astype(np.float32))
