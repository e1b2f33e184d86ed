"""Memory and time of the smooth-lDDT loss's gradient with and without recompute.

The smooth-lDDT loss (AF3 Algorithm 27) builds ``[N_sample, N_atom, N_atom]`` tensors (the
predicted distances, their errors, four sigmoids); a plain backward pass keeps several of
them alive. Protenix checkpoints the loss per chunk of ``diffusion_lddt_chunk_size`` samples
(default 1); here each chunk runs under ``core.recompute``. The peak is the largest array
memory above the inputs while the gradient runs (``tracemalloc``, which sees numpy's buffers);
the time is the best of ``--repeat`` runs (wall clock).

    python -m protenix.train.bench                 # N_atom 1024, N_sample 16
    python -m protenix.train.bench --tiny          # seconds (what the tests run)
"""

import argparse
import gc
import time
import tracemalloc

import numpy as np

import core
from protenix.model.loss import SmoothLDDTLoss, cdist


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


def run(n_atom, n_sample, repeat=1, forms=("dense", "sparse")):
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

            grad = core.grad(f)
            out = {}

            def call(grad=grad, out=out):
                out["g"] = grad(pred)

            peak, secs = measure(call, repeat)
            g = out["g"].asnumpy()
            ref = g if ref is None else ref
            rows.append((form, chunk, peak / 2**20, secs, float(np.max(np.abs(g - ref)))))
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n-atom", type=int, default=1024)
    p.add_argument("--n-sample", type=int, default=16)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--tiny", action="store_true", help="N_atom 96, N_sample 4, one repeat")
    a = p.parse_args(argv)
    if a.tiny:
        a.n_atom, a.n_sample, a.repeat = 96, 4, 1
    pair = a.n_sample * a.n_atom * a.n_atom * 4 / 2**20
    print(f"smooth-lDDT loss gradient, N_atom={a.n_atom}, N_sample={a.n_sample} "
          f"(one float32 [N_sample, N_atom, N_atom] tensor: {pair:.1f} MiB)")  # fmt: skip
    print(f"{'form':8s} {'chunk':>6s} {'peak MiB':>10s} {'seconds':>9s} {'max |dg|':>10s}")
    rows = run(a.n_atom, a.n_sample, a.repeat)
    for form, chunk, mib, secs, dg in rows:
        print(f"{form:8s} {chunk!s:>6s} {mib:10.1f} {secs:9.3f} {dg:10.2e}")
    return rows


if __name__ == "__main__":
    main()
