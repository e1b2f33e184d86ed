"""Memory and time of the smooth-lDDT loss's gradient, and of a training step, with and without
recompute.

The smooth-lDDT loss (AF3 Algorithm 27) builds ``[N_sample, N_atom, N_atom]`` tensors (the
predicted distances, their errors, four sigmoids); a plain backward pass keeps several of
them alive. Protenix checkpoints the loss per chunk of ``diffusion_lddt_chunk_size`` samples
(default 1); here each chunk runs under ``core.recompute``. The peak is the largest array
memory above the inputs while the gradient runs (``tracemalloc``, which sees numpy's buffers);
the time is the best of ``--repeat`` runs (wall clock).

    python -m diffsci.protenix.train.bench                 # N_atom 1024, N_sample 16
    python -m diffsci.protenix.train.bench --jit           # the same under core.jit
    python -m diffsci.protenix.train.bench --tiny          # seconds (what the tests run)
    python -m diffsci.protenix.train.bench --train         # a jitted training step, see below

``--train``: one jitted training step (:func:`protenix.train.make_train_step`: ProtenixLoss,
value_and_grad, the optimizer) of a tiny Protenix (:func:`protenix.train.toy.tiny_config`,
``Protenix.train_forward``) on an ideal helix of ``--residues`` residues, with recompute on
(``blocks_per_ckpt=1`` in the MSA, template, Pairformer, diffusion and confidence stacks,
smooth-lDDT ``diffusion_lddt_chunk_size=1``) and off (all None).
"""

import argparse
import gc
import time
import tracemalloc

import numpy as np

from diffsci import core
from diffsci.protenix.model.loss import SmoothLDDTLoss, cdist


def example(n_atom, n_sample, seed=0):
    """A chain of atoms 1.5 A apart and noisy predictions; the lDDT mask (15 A radius)."""
    rng = np.random.default_rng(seed)
    steps = rng.standard_normal((n_atom, 3))
    steps = 1.5 * steps / np.linalg.norm(steps, axis=-1, keepdims=True)
    true = np.cumsum(steps, axis=0).astype(np.float32)
    pred = (true[None] + rng.standard_normal((n_sample, n_atom, 3))).astype(np.float32)
    t = core.tensor(true)
    dist = cdist(t, t)
    mask = (dist.asnumpy() < 15.0) * (1 - np.eye(n_atom, dtype=np.float32))
    return core.tensor(pred), t, dist, core.tensor(mask.astype(np.float32))


def measure(fn, repeat):
    """(peak bytes above the live memory before the call, best seconds)."""
    fn()  # warm caches
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        fn()
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return peak, best


def run(n_atom, n_sample, repeat=1, forms=("dense", "sparse"), use_jit=False):
    """Rows ``(form, chunk, peak MiB, seconds, |grad - plain grad| max)``."""
    pred, true, dist, mask = example(n_atom, n_sample)
    loss = SmoothLDDTLoss(eps=1e-6)
    rows = []
    for form in forms:
        ref = None
        for chunk in (None, 1):

            def f(x, form=form, chunk=chunk):
                if form == "dense":
                    return loss.dense_forward(x, true, mask, chunk, true_distance=dist)
                return loss.sparse_forward(x, true, mask, chunk)

            grad = core.jit(core.grad(f)) if use_jit else core.grad(f)
            out = {}

            def call(grad=grad, out=out):
                out["g"] = grad(pred)

            peak, secs = measure(call, repeat)
            g = out["g"].asnumpy()
            ref = g if ref is None else ref
            rows.append((form, chunk, peak / 2**20, secs, float(np.max(np.abs(g - ref)))))
    return rows


def train_step_rows(residues, n_sample, c_z, n_blocks, repeat=1, c_token=16, n_step_mini=2):
    """Rows ``(recompute, peak MiB, seconds, loss of the measured step)`` of one jitted
    training step of a tiny Protenix (:func:`protenix.train.toy.tiny_config`) on an ideal helix
    of ``residues`` residues, recompute off then on; the same seeds, so the same draws."""
    from diffsci.core import nn
    from diffsci.protenix.model.loss import ProtenixLoss
    from diffsci.protenix.model.protenix import Protenix

    from .step_random import StepRandom
    from .toy import helix_example, tiny_config
    from .train_step import make_train_step

    seq = ("GSAKLVEAGRWQMDTPYHNFIC" * (residues // 22 + 1))[:residues]
    feat, label = helix_example(seq)
    feat["resolution"] = np.array([2.0], np.float32)
    rows = []
    for on in (False, True):
        cfg = tiny_config(c_z=c_z, c_s=2 * c_z, c_token=c_token, n_blocks=n_blocks,
                          n_sample=n_sample, n_step_mini=n_step_mini, recompute=on)  # fmt: skip
        core.set_seed(0)
        net = Protenix(cfg).set_train(True)
        opt = nn.SGD(net.trainable_params(), learning_rate=0.0)  # the same weights every call
        rng = StepRandom(0)

        def forward(net=net, rng=rng):
            return net.train_forward(feat, label, rng=rng, N_cycle=1)[0]

        step = make_train_step(forward, ProtenixLoss(cfg), opt, feat, label)
        out = {}

        def call(step=step, out=out):
            core.set_seed(1)
            out["loss"] = float(step()[0].asnumpy())

        peak, secs = measure(call, repeat)
        rows.append((on, peak / 2**20, secs, out["loss"]))
    return rows, len(feat["ref_pos"])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n-atom", type=int, default=1024)
    p.add_argument("--n-sample", type=int, default=16)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--tiny", action="store_true", help="N_atom 96, N_sample 4, one repeat")
    p.add_argument("--jit", action="store_true", help="the loss gradient under core.jit")
    p.add_argument("--train", action="store_true", help="time and peak of a training step")
    p.add_argument("--residues", type=int, default=96, help="--train: helix length")
    p.add_argument("--c-z", type=int, default=64, help="--train: pair channels")
    p.add_argument("--n-blocks", type=int, default=4, help="--train: Pairformer blocks")
    a = p.parse_args(argv)
    if a.tiny:
        a.n_atom, a.n_sample, a.repeat = 96, 4, 1
        a.residues, a.c_z, a.n_blocks = 6, 8, 1
    if a.train:
        n_sample = 2 if a.tiny else a.n_sample
        rows, n_atom = train_step_rows(a.residues, n_sample, a.c_z, a.n_blocks, a.repeat)
        print(f"training step (tiny Protenix, jitted), {a.residues} residues ({n_atom} atoms), "
              f"c_z={a.c_z}, {a.n_blocks} Pairformer blocks, N_sample={n_sample}")  # fmt: skip
        print(f"{'recompute':10s} {'peak MiB':>10s} {'seconds':>9s} {'loss':>10s}")
        for on, mib, secs, value in rows:
            print(f"{'on' if on else 'off':10s} {mib:10.1f} {secs:9.3f} {value:10.5f}")
        return rows
    pair = a.n_sample * a.n_atom * a.n_atom * 4 / 2**20
    mode = "core.jit" if a.jit else "eager"
    print(f"smooth-lDDT loss gradient ({mode}), N_atom={a.n_atom}, N_sample={a.n_sample} "
          f"(one float32 [N_sample, N_atom, N_atom] tensor: {pair:.1f} MiB)")  # fmt: skip
    print(f"{'form':8s} {'chunk':>6s} {'peak MiB':>10s} {'seconds':>9s} {'max |dg|':>10s}")
    rows = run(a.n_atom, a.n_sample, a.repeat, use_jit=a.jit)
    for form, chunk, mib, secs, dg in rows:
        print(f"{form:8s} {chunk!s:>6s} {mib:10.1f} {secs:9.3f} {dg:10.2e}")
    return rows


if __name__ == "__main__":
    main()
