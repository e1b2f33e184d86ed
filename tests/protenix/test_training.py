"""A Protenix training step (protenix.train) on a small protein: ProtenixLoss, value_and_grad
and Adam under core.jit with recompute on, overfitting one example.

The full Protenix model (protenix.model.protenix) is not in the tree yet, so the network here
is a stand-in built from the ported trunk modules: relative position encoding and a
restype embedding, one PairformerBlock (recomputed, ``blocks_per_ckpt=1``), a distogram
head, and a per-atom MLP that predicts coordinates from the token's single embedding and the
atom's reference position (in place of the diffusion module). The example is featurized by
protenix.data.featurize; its "true" structure is an ideal alpha helix (backbone from the
standard bond lengths and angles, phi = -57, psi = -47, omega = 180 degrees; Engh & Huber
1991) with each residue's CCD reference conformer superposed on its N, CA, C.
"""

import numpy as np
import pytest

import core
from core import nn, ops
from protenix.config import get_model_config
from protenix.data.featurizer import featurize
from protenix.model.loss import ProtenixLoss
from protenix.model.modules.embedders import RelativePositionEncoding
from protenix.model.modules.pairformer import PairformerStack
from protenix.model.modules.primitives import Linear, LinearNoBias
from protenix.model.utils import broadcast_token_to_atom
from protenix.train import centre_random_augmentation, make_train_step, sample_noise_level

SEQ = "GSAKLVEAG"
N_SAMPLE = 2
C_S, C_Z = 16, 8


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


def helix_example():
    feat = featurize({"name": "helix", "sequences": [{"proteinChain": {"sequence": SEQ,
                                                                         "count": 1}}]},
                     use_msa=False)  # fmt: skip
    backbone = ideal_helix_backbone(len(SEQ))
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


class StandInFold(nn.Cell):
    """Trunk modules of the port + a per-atom coordinate MLP (see the module docstring)."""

    def __init__(self, feat):
        super().__init__()
        self.linear_restype = LinearNoBias(32, C_S)
        self.linear_z = LinearNoBias(C_S, C_Z)
        self.relpe = RelativePositionEncoding(r_max=8, s_max=2, c_z=C_Z)
        self.pairformer = PairformerStack(n_blocks=1, n_heads=2, c_z=C_Z, c_s=C_S, dropout=0.0,
                                          blocks_per_ckpt=1)  # fmt: skip
        self.distogram = Linear(C_Z, 16)
        self.atom_in = Linear(C_S + 3, 64)
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
        x = centre_random_augmentation(x, rotation, translation)  # [N_sample, N_atom, 3]
        return {"coordinate": x, "distogram": logits,
                "noise_level": ops.full((N_SAMPLE,), 16.0)}  # fmt: skip


def loss_config():
    # Protenix's fine-tuning weights (alpha_bond 1, smooth_lddt 0: configs_base.py comments);
    # the smooth-lDDT loss is still computed and reported (1 - lDDT has a floor of 0.196)
    return get_model_config(
        "protenix_mini_default_v0.5.0",
        overrides={
            "loss": {
                "weight": {"alpha_bond": 1.0, "smooth_lddt": 0.0},
                "distogram": {"no_bins": 16},
            }
        },
    )


def draws(rng):
    q = np.linalg.qr(rng.standard_normal((N_SAMPLE, 3, 3)))[0]
    q = q * np.sign(np.linalg.det(q))[:, None, None]
    return core.tensor(q.astype(np.float32)), core.tensor(
        rng.standard_normal((N_SAMPLE, 1, 3)).astype(np.float32)
    )


@pytest.fixture(scope="module")
def example():
    return helix_example()


def test_helix_example_is_a_helix(example):
    feat, label = example
    ca = label["coordinate"][feat["frame_atom_index"][:, 1]]
    d = np.linalg.norm(ca[1:] - ca[:-1], axis=-1)
    np.testing.assert_allclose(d, 3.80, atol=0.03)  # CA-CA distance of trans peptides
    d3 = np.linalg.norm(ca[3:] - ca[:-3], axis=-1)
    assert np.all((d3 > 4.8) & (d3 < 5.4)), d3  # i, i+3 in an alpha helix: ~5.0-5.2 A
    # side chains attached: every atom of a residue within 8 A of its CA
    tok = feat["atom_to_token_idx"]
    assert np.all(np.linalg.norm(label["coordinate"] - ca[tok], axis=-1) < 8.0)


def test_sample_noise_level_statistics():
    rng = np.random.default_rng(0)
    s = sample_noise_level(rng, 20000)
    # log(sigma / sigma_data) ~ N(-1.2, 1.5^2) (AF3 supplement Sec. 3.7.1)
    z = np.log(s / 16.0)
    assert abs(z.mean() + 1.2) < 0.05 and abs(z.std() - 1.5) < 0.05


def test_training_step_jit_matches_eager_and_overfits(example):
    feat, label = example
    cfg = loss_config()
    loss = ProtenixLoss(cfg)
    rng = np.random.default_rng(0)
    eval_draws = draws(np.random.default_rng(123))

    core.set_seed(0)
    model = StandInFold(feat)
    core.set_seed(0)
    twin = StandInFold(feat)
    for p, q in zip(model.trainable_params(), twin.trainable_params(), strict=True):
        np.testing.assert_array_equal(p.asnumpy(), q.asnumpy())

    steps = {}
    for name, net, use_jit in (("jit", model, True), ("eager", twin, False)):
        opt = nn.Adam(net.trainable_params(), learning_rate=3e-3)
        steps[name] = make_train_step(net, loss, opt, feat, label, use_jit=use_jit)

    def evaluate(net):
        return float(loss(feat, net(*eval_draws), label)[0].asnumpy())

    start = evaluate(model)
    # the jitted step (value_and_grad + Adam, recompute on) equals the eager one
    for _ in range(2):
        d = draws(rng)
        (v_j, m_j), (v_e, m_e) = steps["jit"](*d), steps["eager"](*d)
        np.testing.assert_allclose(v_j.asnumpy(), v_e.asnumpy(), rtol=2e-5)
        assert set(m_j) == set(m_e) == {"smooth_lddt_loss", "weighted_smooth_lddt_loss",
                                        "bond_loss", "weighted_bond_loss", "mse_loss",
                                        "weighted_mse_loss", "distogram_loss",
                                        "weighted_distogram_loss", "loss"}  # fmt: skip
    for p, q in zip(model.trainable_params(), twin.trainable_params(), strict=True):
        np.testing.assert_allclose(p.asnumpy(), q.asnumpy(), rtol=1e-4, atol=1e-6)
    # recompute is on in the compiled step: the Pairformer block and the smooth-lDDT chunks are
    # re-run in the backward pass (tagged in the IR)
    ir = steps["jit"].lower(*eval_draws).as_text()
    assert ir.count("# recompute") > 0
    for _ in range(100):
        steps["jit"](*draws(rng))
    end = evaluate(model)
    metrics = loss(feat, model(*eval_draws), label)[1]
    lddt = float(metrics["smooth_lddt_loss"].asnumpy())
    print(f"overfit: loss {start:.4f} -> {end:.4f} ({start / end:.1f}x), "
          f"smooth lDDT loss {lddt:.3f}")  # fmt: skip
    assert end * 10 <= start, f"loss {start} -> {end}"
    assert lddt < 0.3, lddt  # from ~0.8 at the start; its floor is 0.196


def test_bench_tiny(capsys):
    """protenix.train.bench --tiny: recompute gives the same gradients at a lower peak."""
    from protenix.train import bench

    rows = bench.main(["--tiny"])
    assert "peak MiB" in capsys.readouterr().out
    by = {(form, chunk): (mib, dg) for form, chunk, mib, _, dg in rows}
    for form in ("dense", "sparse"):
        assert by[(form, 1)][0] < by[(form, None)][0]
        assert by[(form, 1)][1] < 1e-9
