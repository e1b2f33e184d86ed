"""A Protenix training step (protenix.train) on a small protein: ProtenixLoss, value_and_grad
and Adam under core.jit with recompute on, overfitting one example.

The full Protenix model (protenix.model.protenix) is not in the tree yet, so the network here
is protenix.train.toy.StandInFold, built from the ported trunk modules (restype embedding,
relative position encoding, one PairformerBlock recomputed with ``blocks_per_ckpt=1``, a
distogram head) and a per-atom coordinate MLP in place of the diffusion module. The example
(protenix.train.toy.helix_example) is featurized by protenix.data.featurize; its "true"
structure is an ideal alpha helix with each residue's CCD conformer on its backbone.
"""

import numpy as np
import pytest

import core
from core import nn
from protenix.config import get_model_config
from protenix.model.loss import ProtenixLoss
from protenix.train import make_train_step
from protenix.train.toy import StandInFold, helix_example, random_draws

N_SAMPLE = 2


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
    return random_draws(rng, N_SAMPLE)


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

    for extra in ([], ["--jit"]):
        rows = bench.main(["--tiny", *extra])
        assert "peak MiB" in capsys.readouterr().out
        by = {(form, chunk): (mib, dg) for form, chunk, mib, _, dg in rows}
        for form in ("dense", "sparse"):
            assert by[(form, 1)][0] < by[(form, None)][0], (extra, by)
            assert by[(form, 1)][1] < 1e-9


def test_bench_train_tiny(capsys):
    """protenix.train.bench --train --tiny: the same loss with and without recompute."""
    from protenix.train import bench

    rows = bench.main(["--train", "--tiny"])
    assert "recompute" in capsys.readouterr().out
    (off, _, _, loss_off), (on, _, _, loss_on) = rows
    assert (off, on) == (False, True)
    np.testing.assert_allclose(loss_on, loss_off, rtol=1e-5)
