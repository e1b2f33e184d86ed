"""The sampler (AF3 Alg. 18-19) vs PyTorch Protenix 2.0.0 with its random draws replayed
(fixtures/make_diffusion.py records them), the EDM schedule, and the rng protocol."""

import json

import numpy as np
import pytest

from diffsci import core
from diffsci.protenix.model.generator import (
    CoreRandom,
    InferenceNoiseScheduler,
    ReplayRandom,
    TrainingNoiseSampler,
    centre_random_augmentation,
    sample_diffusion,
)

from ._diffusion_fixture import data, feature_dict, module, section, trunk
from ._trunk_fixture import assert_rel_close


def _draws():
    rec = section("sampler/draw")
    return [(k.split("/")[1], rec[k]) for k in sorted(rec)]


def _config():
    return json.loads(str(data()["sampler/config"]))


def test_schedule_matches_protenix_and_edm():
    cfg = _config()
    sched = InferenceNoiseScheduler(**cfg["scheduler"])(N_step=cfg["N_step"]).asnumpy()
    np.testing.assert_allclose(sched, data()["sampler/out/noise_schedule"], rtol=1e-5)
    # EDM eq. 5 endpoints: sigma_data * s_max first, then decreasing, 0 last
    assert sched[0] == pytest.approx(16.0 * 160.0, rel=1e-6)
    assert np.all(np.diff(sched) < 0) and sched[-1] == 0.0


def _sample(m, rng, chunk=None):
    cfg = _config()
    f, t = feature_dict(), trunk()
    pair_z = m.diffusion_conditioning.prepare_cache(f["relp"], t["z_trunk"])
    p_lm, c_l = m.atom_attention_encoder.prepare_cache(
        f["ref_pos"], f["ref_charge"], f["ref_mask"], f["ref_element"],
        f["ref_atom_name_chars"], f["atom_to_token_idx"], f["d_lm"], f["v_lm"],
        f["pad_info"], r_l=True, z=pair_z,
    )  # fmt: skip
    sched = InferenceNoiseScheduler(**cfg["scheduler"])(N_step=cfg["N_step"])
    return sample_diffusion(
        denoise_net=m, input_feature_dict=f, s_inputs=t["s_inputs"], s_trunk=t["s_trunk"],
        z_trunk=None, pair_z=pair_z, p_lm=p_lm, c_l=c_l, noise_schedule=sched,
        N_sample=cfg["N_sample"], gamma0=cfg["gamma0"], gamma_min=cfg["gamma_min"],
        noise_scale_lambda=cfg["noise_scale_lambda"], step_scale_eta=cfg["step_scale_eta"],
        diffusion_chunk_size=chunk, rng=rng,
    )  # fmt: skip


def test_sampler_with_replayed_draws_matches_protenix():
    m, _ = module()
    rng = ReplayRandom(_draws())
    x = _sample(m, rng)
    assert rng.pos == len(rng.draws), "not every recorded draw was used"
    assert_rel_close(x, data()["sampler/out/coordinate"], 1e-3, "coordinate")


def test_replay_checks_call_order():
    rng = ReplayRandom(_draws())
    with pytest.raises(ValueError, match="rotation"):
        rng.random_rotation(2)  # the first recorded draw is the initial noise


def test_core_random_rotations_are_rotations_and_seeded():
    core.random.set_seed(3)
    r = CoreRandom().random_rotation(64).asnumpy().astype(np.float64)
    np.testing.assert_allclose(r @ np.swapaxes(r, -1, -2), np.broadcast_to(np.eye(3), r.shape),
                               atol=1e-5)  # fmt: skip
    np.testing.assert_allclose(np.linalg.det(r), 1.0, atol=1e-5)
    # uniform on SO(3): E[R] = 0 (64 draws: each entry's mean within ~4 standard errors)
    assert np.abs(r.mean(0)).max() < 4 * np.sqrt(1 / 3 / 64)
    core.random.set_seed(3)
    np.testing.assert_array_equal(CoreRandom().random_rotation(64).asnumpy(), r.astype(np.float32))


def test_centre_random_augmentation_is_rigid():
    x = core.tensor(np.random.default_rng(0).standard_normal((7, 3)).astype(np.float32))
    out = centre_random_augmentation(x, N_sample=3).asnumpy()
    assert out.shape == (3, 7, 3)
    xc = x.asnumpy() - x.asnumpy().mean(0)
    d0 = np.linalg.norm(xc[:, None] - xc[None], axis=-1)
    for s in out:
        np.testing.assert_allclose(np.linalg.norm(s[:, None] - s[None], axis=-1), d0, atol=1e-5)
    centred = centre_random_augmentation(x, N_sample=2, centre_only=True).asnumpy()
    np.testing.assert_allclose(centred.mean(-2), 0.0, atol=1e-6)


def test_sampler_chunks_and_default_rng():
    m, _ = module()
    core.random.set_seed(11)
    a = _sample(m, None).asnumpy()
    core.random.set_seed(11)
    b = _sample(m, None).asnumpy()
    np.testing.assert_array_equal(a, b)
    assert np.isfinite(a).all() and a.shape == data()["sampler/out/coordinate"].shape
    # chunks of one sample draw their trajectories one after the other from the same stream
    draws = _draws()
    n_step = _config()["N_step"]
    per = [(k, v[i : i + 1]) for i in range(2) for k, v in draws]
    assert len(per) == 2 * (1 + 3 * n_step)
    x = _sample(m, ReplayRandom(per), chunk=1)
    assert x.shape == tuple(data()["sampler/out/coordinate"].shape)


def test_training_noise_sampler_is_log_normal():
    core.random.set_seed(5)
    t = TrainingNoiseSampler()(size=(4000,)).asnumpy()
    z = np.log(t / 16.0)
    assert abs(z.mean() + 1.2) < 0.1 and abs(z.std() - 1.5) < 0.1
