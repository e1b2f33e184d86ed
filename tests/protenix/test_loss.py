"""Protenix's training losses (protenix.model.loss) against PyTorch Protenix 2.0.0.

``fixtures/loss.npz`` (made by ``fixtures/make_loss.py`` running Protenix's own loss classes)
holds a small protein-like example, each loss's value and its gradient with respect to the
predicted coordinates or the logits; here the same inputs go through our port and must agree
within 1e-4 (relative, float32). Also: recompute (Protenix's per-chunk checkpointing) gives
the same gradients and a measured lower memory peak for the smooth-lDDT loss, float64
finite-difference checks of the differentiable losses, and the loss under core.jit.
"""

import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tracemalloc

import numpy as np
import pytest

from diffsci import core
from diffsci.core import ops
from diffsci.protenix.config import get_model_config
from diffsci.protenix.model import loss as L

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(HERE, "fixtures", "loss.npz")
RTOL = 1e-4
NB = 16  # the fixture's head bins (make_loss.py)


@pytest.fixture(scope="module")
def fx():
    with np.load(FIX) as d:
        return {k: d[k] for k in d.files}


def ex(fx, name):
    return fx[f"example/in/{name}"]


def t(a):
    return core.tensor(np.asarray(a))


def close(actual, expected, what, rtol=RTOL):
    a = actual.asnumpy() if isinstance(actual, core.Tensor) else np.asarray(actual)
    e = np.asarray(expected)
    assert a.shape == e.shape, f"{what}: shape {a.shape} != {e.shape}"
    scale = max(float(np.max(np.abs(e))), 1e-30)
    err = float(np.max(np.abs(a.astype(np.float64) - e.astype(np.float64)))) if e.size else 0.0
    assert err <= rtol * scale, f"{what}: max error {err:.3g} > {rtol} x {scale:.3g}"


def value_grad(fn, x):
    p = core.tensor(np.asarray(x))
    return core.value_and_grad(fn)(p)


def test_fixture_is_informative(fx):
    """The example exercises every branch: masked atoms, nucleotide/ligand atoms, pairs both
    inside and outside the lDDT radius, lDDT errors across the thresholds."""
    m = fx["lddt_mask/out/lddt_mask"]
    assert 0.2 < m.mean() < 0.9
    assert ex(fx, "coordinate_mask").min() == 0
    assert ex(fx, "has_frame").min() == 0
    assert 0.1 < float(fx["smooth_lddt_none/out/loss"]) < 0.9
    assert np.abs(fx["smooth_lddt_none/out/grad"]).max() > 1e-3


def test_compute_lddt_mask(fx):
    cm = ex(fx, "coordinate_mask")
    dmask = cm[:, None] * cm[None, :]
    d = L.cdist(t(ex(fx, "true")), t(ex(fx, "true"))) * t(dmask)
    close(d, fx["lddt_mask/out/true_distance"], "true distance")
    nuc = (ex(fx, "is_dna") + ex(fx, "is_rna")) > 0
    close(L.compute_lddt_mask(d, t(dmask), t(nuc)), fx["lddt_mask/out/lddt_mask"], "lddt_mask")


@pytest.mark.parametrize("chunk", [None, 2])
@pytest.mark.parametrize("kind", ["plain", "dense", "sparse"])
def test_smooth_lddt(fx, kind, chunk):
    tag = "none" if chunk is None else f"c{chunk}"
    case = {"plain": "smooth_lddt", "dense": "smooth_lddt_dense", "sparse": "smooth_lddt_sparse"}
    true, mask = t(ex(fx, "true")), t(fx["lddt_mask/out/lddt_mask"])
    dist = t(fx["lddt_mask/out/true_distance"])
    sl = L.SmoothLDDTLoss(eps=1e-6)

    def fn(x):
        if kind == "plain":
            return sl(L.cdist(x, x), dist, None, mask, diffusion_chunk_size=chunk)
        if kind == "dense":
            return sl.dense_forward(x, true, mask, diffusion_chunk_size=chunk)
        return sl.sparse_forward(x, true, mask, diffusion_chunk_size=chunk)

    value, grad = value_grad(fn, ex(fx, "pred"))
    close(value, fx[f"{case[kind]}_{tag}/out/loss"], f"{kind} smooth lDDT")
    close(grad, fx[f"{case[kind]}_{tag}/out/grad"], f"{kind} smooth lDDT gradient")


def test_bond_loss(fx):
    cm = ex(fx, "coordinate_mask")
    dmask = t(cm[:, None] * cm[None, :])
    bond, scale = t(ex(fx, "bond_mask")), t(fx["bond/in/per_sample_scale"])
    dist = t(fx["lddt_mask/out/true_distance"])
    bl = L.BondLoss()
    value, grad = value_grad(lambda x: bl(L.cdist(x, x), dist, dmask, bond, scale, 1),
                             ex(fx, "pred"))  # fmt: skip
    close(value, fx["bond/out/loss"], "bond loss")
    close(grad, fx["bond/out/grad"], "bond loss gradient")
    value, grad = value_grad(
        lambda x: bl.sparse_forward(x, t(ex(fx, "true")), dmask, bond, scale), ex(fx, "pred")
    )
    close(value, fx["bond_sparse/out/loss"], "sparse bond loss")
    close(grad, fx["bond_sparse/out/grad"], "sparse bond loss gradient")
    # no bonds: 0, as Protenix
    zero = bl.sparse_forward(t(ex(fx, "pred")), t(ex(fx, "true")), dmask, np.zeros((24, 24)))
    assert float(zero.asnumpy()) == 0.0


def test_mse_loss_and_weighted_rigid_align(fx):
    ml = L.MSELoss()
    args = [t(ex(fx, k)) for k in ("true", "coordinate_mask", "is_dna", "is_rna", "is_ligand")]
    scale = t(fx["bond/in/per_sample_scale"])
    value, grad = value_grad(lambda x: ml(x, *args, scale), ex(fx, "pred"))
    close(value, fx["mse/out/loss"], "MSE loss")
    close(grad, fx["mse/out/grad"], "MSE loss gradient")
    aligned, weight = ml.weighted_rigid_align(t(ex(fx, "pred")), *args)
    close(aligned, fx["mse/out/aligned"], "aligned ground truth")
    close(weight, fx["mse/out/weight"], "MSE atom weights")
    # Algorithm 28 with gradients through the SVD (stop_gradient=False)
    target, w = t(fx["align/in/target"]), t(fx["align/in/weight"])
    value, grad = core.value_and_grad(
        lambda x: ops.sum(L.weighted_rigid_align(x, target, w, stop_gradient=False) ** 2)
    )(t(fx["align/in/x"]))
    close(L.weighted_rigid_align(t(fx["align/in/x"]), target, w), fx["align/out/aligned"],
          "weighted_rigid_align")  # fmt: skip
    close(grad, fx["align/out/grad"], "weighted_rigid_align gradient", rtol=1e-3)


def test_distogram_loss(fx):
    dl = L.DistogramLoss(no_bins=NB)
    args = [t(ex(fx, k)) for k in ("true", "coordinate_mask", "distogram_rep_atom_mask")]
    value, grad = value_grad(lambda z: dl(z, *args), fx["distogram/in/logits"])
    close(value, fx["distogram/out/loss"], "distogram loss")
    close(grad, fx["distogram/out/grad"], "distogram loss gradient")


def test_pde_loss(fx):
    pl = L.PDELoss(no_bins=NB)
    args = [t(ex(fx, k)) for k in ("pred", "true", "coordinate_mask", "distogram_rep_atom_mask")]
    value, grad = value_grad(lambda z: pl(z, *args), fx["pde/in/logits"])
    close(value, fx["pde/out/loss"], "PDE loss")
    close(grad, fx["pde/out/grad"], "PDE loss gradient")


def test_pae_loss(fx):
    pl = L.PAELoss(no_bins=NB)
    keys = ("pred", "true", "coordinate_mask", "frame_atom_index", "pae_rep_atom_mask",
            "has_frame")  # fmt: skip
    args = [t(ex(fx, k)) for k in keys]
    value, grad = value_grad(lambda z: pl(z, *args), fx["pae/in/logits"])
    close(value, fx["pae/out/loss"], "PAE loss")
    close(grad, fx["pae/out/grad"], "PAE loss gradient")
    sq, _, pair = pl.calculate_label(args[0], args[1], args[2], args[4], args[3], args[5])
    close(sq, fx["pae/out/squared_pae"], "squared aligned error (Algorithm 30)")
    close(pair, fx["pae/out/pair_mask"], "PAE pair mask")


def test_resolved_loss(fx):
    rl = L.ExperimentallyResolvedLoss()
    cm = t(ex(fx, "coordinate_mask"))
    value, grad = value_grad(lambda z: rl(z, cm), fx["resolved/in/logits"])
    close(value, fx["resolved/out/loss"], "resolved loss")
    close(grad, fx["resolved/out/grad"], "resolved loss gradient")
    am = t(fx["resolved/in/atom_mask"])
    value, grad = value_grad(lambda z: rl(z, cm, am), fx["resolved/in/logits"])
    close(value, fx["resolved_masked/out/loss"], "masked resolved loss")
    close(grad, fx["resolved_masked/out/grad"], "masked resolved loss gradient")


def test_plddt_loss(fx):
    pl = L.PLDDTLoss(no_bins=NB)
    nuc = ex(fx, "is_dna") + ex(fx, "is_rna")
    args = [t(ex(fx, "pred")), t(ex(fx, "true")), t(ex(fx, "coordinate_mask")), t(nuc),
            t(1 - ex(fx, "is_ligand")), t(ex(fx, "plddt_m_rep_atom_mask"))]  # fmt: skip
    value, grad = value_grad(lambda z: pl(z, *args), fx["plddt/in/logits"])
    close(value, fx["plddt/out/loss"], "pLDDT loss")
    close(grad, fx["plddt/out/grad"], "pLDDT loss gradient")
    lddt, weight = L.calculate_atom_bespoke_lddt(args[0], args[1], nuc > 0,
                                                 1 - ex(fx, "is_ligand"),
                                                 ex(fx, "plddt_m_rep_atom_mask"))  # fmt: skip
    close(lddt, fx["plddt/out/per_atom_lddt"], "per-atom lDDT")
    close(
        ops.broadcast_to(weight, lddt.shape),
        np.broadcast_to(fx["plddt/out/per_atom_weight"], lddt.shape),
        "lDDT pair counts",
    )


# ---- ProtenixLoss ------------------------------------------------------------------------------

HEADS = ("distogram", "plddt", "pde", "pae", "resolved")
FEATS = ("is_dna", "is_rna", "is_ligand", "bond_mask", "distogram_rep_atom_mask",
         "plddt_m_rep_atom_mask", "pae_rep_atom_mask", "frame_atom_index", "has_frame",
         "resolution")  # fmt: skip
SMALL_HEADS = {"loss": {k: {"no_bins": NB} for k in ("plddt", "pde", "pae", "distogram")}}


def protenix_cfg(fx, case):
    spec = json.loads(str(fx[f"{case}/cfg_json"]))
    cfg = get_model_config(None, overrides=SMALL_HEADS)
    over = json.loads(json.dumps(spec["overrides"]))
    if "loss_metrics_sparse_enable" in over:  # the top-level switch and the key that reads it
        cfg["loss_metrics_sparse_enable"] = over.pop("loss_metrics_sparse_enable")

    def deep(d, u):
        for k, v in u.items():
            if isinstance(v, dict):
                deep(d[k], v)
            else:
                d[k] = v

    deep(cfg, over)
    return cfg, spec["mode"]


def run_protenix_loss(fx, case, cfg=None):
    cfg_, mode = protenix_cfg(fx, case)
    module = L.ProtenixLoss(cfg or cfg_)
    feat = {k: t(ex(fx, k)) for k in FEATS}
    label = {"coordinate": t(ex(fx, "true")), "coordinate_mask": t(ex(fx, "coordinate_mask"))}
    mini = t(fx["protenix/in/coordinate_mini"])
    noise = t(fx["protenix/in/noise_level"])
    metrics_box = {}

    def fn(x, *heads):
        pred = {"coordinate": x, "coordinate_mini": mini, "noise_level": noise}
        pred.update(dict(zip(HEADS, heads, strict=True)))
        loss, metrics = module(feat, pred, label, mode=mode)
        metrics_box.update(metrics)
        return loss

    args = [t(ex(fx, "pred"))] + [t(fx[f"protenix/in/{h}"]) for h in HEADS]
    value, grads = core.value_and_grad(fn, grad_position=tuple(range(6)))(*args)
    return value, grads, metrics_box


@pytest.mark.parametrize(
    "case",
    ["protenix_default", "protenix_all", "protenix_dense", "protenix_eval", "protenix_lowres"],
)
def test_protenix_loss(fx, case):
    value, grads, metrics = run_protenix_loss(fx, case)
    close(value, fx[f"{case}/out/loss"], f"{case} loss")
    close(grads[0], fx[f"{case}/out/grad_coordinate"], f"{case} coordinate gradient")
    for h, g in zip(HEADS, grads[1:], strict=True):
        close(g, fx[f"{case}/out/grad_{h}"], f"{case} {h} gradient")
    expected = {k.split("metric:", 1)[1] for k in fx if k.startswith(f"{case}/out/metric:")}
    assert set(metrics) == expected, f"{case}: metrics {sorted(metrics)} != {sorted(expected)}"
    for k in expected:
        close(metrics[k], fx[f"{case}/out/metric:{k}"], f"{case} metric {k}")


def test_protenix_loss_default_config_keys():
    """The loss weights and per-loss settings come from Protenix's config keys."""
    cfg = get_model_config("protenix_mini_default_v0.5.0")
    m = L.ProtenixLoss(cfg)
    assert m.loss_weight == {
        "plddt_loss": 1e-4, "pde_loss": 1e-4, "resolved_loss": 1e-4, "pae_loss": 0.0,
        "mse_loss": 4.0, "bond_loss": 0.0, "smooth_lddt_loss": 4.0, "distogram_loss": 3e-2,
    }  # fmt: skip
    assert m.distogram_loss.no_bins == 64 and m.plddt_loss.no_bins == 50
    assert m.smooth_lddt_loss.eps == 1e-6
    with pytest.raises(ValueError, match="mode"):
        m({}, {}, {}, mode="inference")


# ---- recompute, memory, finite differences, jit ---------------------------------------------------


def _protein_like(n_atom, n_sample, seed=0, dtype=np.float32):
    rng = np.random.default_rng(seed)
    steps = rng.standard_normal((n_atom, 3))
    steps = 1.5 * steps / np.linalg.norm(steps, axis=-1, keepdims=True)
    true = np.cumsum(steps, axis=0)
    pred = true[None] + 0.7 * rng.standard_normal((n_sample, n_atom, 3))
    d = np.linalg.norm(true[:, None] - true[None], axis=-1)
    mask = (d < 15.0) * (1 - np.eye(n_atom))
    return pred.astype(dtype), true.astype(dtype), mask.astype(dtype)


def _peak(fn):
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        out = fn()
        return tracemalloc.get_traced_memory()[1] - base, out
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("kind", ["dense", "plain", "sparse"])
def test_recompute_chunks_give_identical_gradients(kind):
    pred, true, mask = _protein_like(40, 5)
    sl = L.SmoothLDDTLoss(eps=1e-6)
    td = L.cdist(t(true), t(true))

    def fn(chunk):
        def f(x):
            if kind == "dense":
                return sl.dense_forward(x, t(true), t(mask), diffusion_chunk_size=chunk)
            if kind == "sparse":
                return sl.sparse_forward(x, t(true), t(mask), diffusion_chunk_size=chunk)
            return sl(L.cdist(x, x), td, None, t(mask), diffusion_chunk_size=chunk)

        return core.value_and_grad(f)(t(pred))

    v0, g0 = fn(None)
    for chunk in (1, 2, 5):
        v, g = fn(chunk)
        np.testing.assert_allclose(v.asnumpy(), v0.asnumpy(), rtol=1e-6)
        np.testing.assert_allclose(g.asnumpy(), g0.asnumpy(), rtol=1e-5, atol=1e-9)


def test_smooth_lddt_recompute_cuts_the_gradient_peak():
    """The [N_sample, N_atom, N_atom] activations of the smooth-lDDT loss dominate the memory of
    its gradient; recomputing each sample (Protenix's diffusion_lddt_chunk_size = 1) keeps one
    sample's pair tensors alive at a time."""
    n_atom, n_sample = 256, 8
    pred, true, mask = _protein_like(n_atom, n_sample)
    sl = L.SmoothLDDTLoss(eps=1e-6)
    truth, m = t(true), t(mask)
    td = L.cdist(truth, truth)

    def grad(chunk):
        f = lambda x: sl.dense_forward(x, truth, m, diffusion_chunk_size=chunk, true_distance=td)  # noqa: E731
        return core.grad(f)(t(pred))

    grad(None), grad(1)  # warm caches outside the measurement
    plain, g_plain = _peak(lambda: grad(None))
    cut, g_cut = _peak(lambda: grad(1))
    np.testing.assert_allclose(g_cut.asnumpy(), g_plain.asnumpy(), rtol=1e-5, atol=1e-9)
    pair = n_sample * n_atom * n_atom * 4  # one float32 [N_sample, N_atom, N_atom] tensor
    assert plain > 3 * pair, f"plain peak {plain / 2**20:.1f} MiB"
    assert cut * 4 <= plain, f"recompute peak {cut / 2**20:.1f} MiB vs {plain / 2**20:.1f} MiB"
    print(f"smooth-lDDT grad peak N_atom={n_atom} N_sample={n_sample}: "
          f"plain {plain / 2**20:.1f} MiB, recompute {cut / 2**20:.1f} MiB")  # fmt: skip


def test_finite_differences_float64():
    """Float64 central differences of the differentiable losses w.r.t. the coordinates."""
    pred, true, mask = _protein_like(10, 2, dtype=np.float64)
    zeros = np.zeros(10)
    cm = np.ones(10)
    cm[3] = 0
    bond = np.zeros((10, 10))
    for i in range(9):
        bond[i, i + 1] = bond[i + 1, i] = 1
    sl, bl, ml = L.SmoothLDDTLoss(eps=1e-6), L.BondLoss(), L.MSELoss()
    lig = zeros.copy()
    lig[-2:] = 1
    fns = {
        "smooth_lddt": lambda x: sl.dense_forward(x, t(true), t(mask), diffusion_chunk_size=1),
        "bond": lambda x: bl.sparse_forward(x, t(true), t(np.outer(cm, cm)), t(bond)),
        "mse": lambda x: ml(x, t(true), t(cm), t(zeros), t(zeros), t(lig)),
    }
    for name, f in fns.items():
        x0 = pred.copy()
        g = core.grad(f)(t(x0)).asnumpy()
        h = 1e-6
        rng = np.random.default_rng(1)
        for _ in range(6):
            idx = tuple(int(rng.integers(s)) for s in x0.shape)
            xp, xm = x0.copy(), x0.copy()
            xp[idx] += h
            xm[idx] -= h
            fd = (float(f(t(xp)).asnumpy()) - float(f(t(xm)).asnumpy())) / (2 * h)
            assert abs(fd - g[idx]) <= 1e-5 * max(1.0, abs(fd)), f"{name} {idx}: {fd} vs {g[idx]}"


def test_protenix_loss_under_jit(fx):
    """value_and_grad of ProtenixLoss under core.jit (masks closed over as constants) equals
    the eager result."""
    cfg, _ = protenix_cfg(fx, "protenix_all")
    module = L.ProtenixLoss(cfg)
    feat = {k: t(ex(fx, k)) for k in FEATS}
    label = {"coordinate": t(ex(fx, "true")), "coordinate_mask": t(ex(fx, "coordinate_mask"))}
    mini, noise = t(fx["protenix/in/coordinate_mini"]), t(fx["protenix/in/noise_level"])

    def fn(x, dist):
        pred = {"coordinate": x, "coordinate_mini": mini, "noise_level": noise,
                "distogram": dist}  # fmt: skip
        pred.update({h: t(fx[f"protenix/in/{h}"]) for h in HEADS[1:]})
        return module(feat, pred, label)[0]

    vg = core.value_and_grad(fn, grad_position=(0, 1))
    args = (t(ex(fx, "pred")), t(fx["protenix/in/distogram"]))
    v_eager, g_eager = vg(*args)
    v_jit, g_jit = core.jit(vg)(*args)
    close(v_jit, v_eager.asnumpy(), "jit loss", rtol=1e-5)
    for a, b in zip(g_jit, g_eager, strict=True):
        close(a, b.asnumpy(), "jit gradient", rtol=1e-5)
    close(v_jit, fx["protenix_all/out/loss"], "jit loss vs Protenix")


def test_traced_mask_is_refused():
    pl = L.DistogramLoss()
    with pytest.raises(ValueError, match="rep_atom_mask"):
        core.jit(lambda z, r: pl(z, ops.zeros((4, 3)), ops.ones((4,)), r))(
            ops.zeros((2, 2, 64)), t(np.array([1, 0, 1, 0]))
        )


# ---- live regeneration against the PyTorch reference ------------------------------------------

REPO = os.path.dirname(os.path.dirname(HERE))
REF = os.path.join(REPO, ".ref", "protenix-2.0.0")


@pytest.mark.parity
def test_live_fixture_matches_committed(fx):
    if not os.path.isdir(REF):
        pytest.skip(f"the PyTorch reference is not installed at {REF}")
    try:
        import torch  # noqa: F401
    except ImportError:
        pytest.skip("torch is not installed")
    out = tempfile.mkdtemp()
    try:
        env = dict(os.environ, PYTHONPATH=REF, LAYERNORM_TYPE="torch")
        script = os.path.join(HERE, "fixtures", "make_loss.py")
        subprocess.run([sys.executable, script, out], cwd=out, env=env, check=True,
                       capture_output=True, timeout=300)  # fmt: skip
        with np.load(os.path.join(out, "loss.npz")) as d:
            for k in fx:
                if fx[k].dtype.kind == "f":
                    np.testing.assert_allclose(d[k], fx[k], rtol=1e-6, atol=1e-7, err_msg=k)
    finally:
        shutil.rmtree(out, ignore_errors=True)
