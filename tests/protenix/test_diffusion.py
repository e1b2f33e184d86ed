"""DiffusionModule (AF3 Alg. 20-21) and DistogramHead vs PyTorch Protenix 2.0.0 (fixtures from
fixtures/make_diffusion.py), and the cached path (Protenix's shared-variable cache) vs the plain
one."""

import json

import numpy as np

from diffsci import core
from diffsci.core import ops
from diffsci.protenix.model.modules.diffusion import DiffusionModule
from diffsci.protenix.model.modules.head import DistogramHead

from ._diffusion_fixture import data, feature_dict, module, section, trunk
from ._trunk_fixture import assert_rel_close, load_strict


def _denoise(m, **caches):
    d = data()
    return m(
        x_noisy=core.tensor(d["denoise/in/x_noisy"]),
        t_hat_noise_level=core.tensor(d["denoise/in/t_hat"]),
        input_feature_dict=feature_dict(),
        **trunk(),
        **caches,
    )


def test_diffusion_module_matches_protenix():
    m, _ = module()
    assert_rel_close(_denoise(m), data()["denoise/out/x_denoised"], 1e-3, "x_denoised")


def test_diffusion_module_cached_path_equals_plain():
    m, _ = module()
    f, t = feature_dict(), trunk()
    pair_z = m.diffusion_conditioning.prepare_cache(f["relp"], t["z_trunk"])
    p_lm, c_l = m.atom_attention_encoder.prepare_cache(
        f["ref_pos"], f["ref_charge"], f["ref_mask"], f["ref_element"],
        f["ref_atom_name_chars"], f["atom_to_token_idx"], f["d_lm"], f["v_lm"],
        f["pad_info"], r_l=True, z=pair_z,
    )  # fmt: skip
    plain = _denoise(m).asnumpy()
    cached = _denoise(m, pair_z=pair_z, p_lm=p_lm, c_l=c_l).asnumpy()
    np.testing.assert_allclose(cached, plain, rtol=0, atol=1e-5 * np.abs(plain).max())


def test_diffusion_module_rejects_wrong_noise_shape():
    m, _ = module()
    d = data()
    try:
        m(core.tensor(d["denoise/in/x_noisy"]), core.tensor(np.ones(3, np.float32)),
          feature_dict(), **trunk())  # fmt: skip
    except ValueError as e:
        assert "N_sample=2" in str(e)
    else:
        raise AssertionError("a [3] noise level for 2 samples was accepted")


def test_distogram_head_matches_protenix():
    cfg = json.loads(str(data()["distogram/config"]))
    h = load_strict(DistogramHead(**cfg), section("distogram/param"))
    out = h(trunk()["z_trunk"])
    assert_rel_close(out, data()["distogram/out/logits"], 1e-4, "distogram")
    np.testing.assert_allclose(out.asnumpy(), np.swapaxes(out.asnumpy(), 0, 1))


def _loss_and_grads(m):
    d = data()
    x = core.tensor(d["denoise/in/x_noisy"])
    t = core.tensor(d["denoise/in/t_hat"])
    f, tr = feature_dict(), trunk()

    def loss(x, s_trunk):
        y = m(x, t, f, tr["s_inputs"], s_trunk, tr["z_trunk"])
        return ops.mean((y - x) ** 2)

    fn = core.value_and_grad(loss, (0, 1), m.trainable_params())
    return fn(x, tr["s_trunk"])


def test_diffusion_module_recompute_gives_the_same_gradients():
    """Training with recompute (``blocks_per_ckpt=1``, fine-grained encoder/decoder) gives the
    value and gradients (inputs and every weight) of the plain module."""
    m, cfg = module()
    m.set_train(True)
    v0, (gx0, gw0) = _loss_and_grads(m)
    r = load_strict(DiffusionModule(**cfg, blocks_per_ckpt=1, use_fine_grained_checkpoint=True),
                    section("module/param"))  # fmt: skip
    r.set_train(True)
    v1, (gx1, gw1) = _loss_and_grads(r)
    np.testing.assert_allclose(v1.asnumpy(), v0.asnumpy(), rtol=1e-6)
    for a, b in zip((*gx1, *gw1), (*gx0, *gw0), strict=True):
        a, b = a.asnumpy(), b.asnumpy()
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6 * max(1.0, np.abs(b).max()))
    assert any(np.abs(g.asnumpy()).max() > 0 for g in gw0)


def test_diffusion_module_chunked_attention_equals_plain():
    m, _ = module()
    plain = _denoise(m).asnumpy()
    chunked = _denoise(m, chunk_size=2).asnumpy()
    np.testing.assert_allclose(chunked, plain, rtol=0, atol=1e-5 * np.abs(plain).max())
