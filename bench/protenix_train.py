"""A training step of the real Protenix network (``Protenix.train_forward`` + ProtenixLoss +
``value_and_grad`` + optimizer under ``core.jit``, :func:`protenix.train.make_train_step`),
with and without recompute: wall seconds of the compiled step (best of ``--repeat``, after the
trace) and its peak array memory above the live memory before the call (``tracemalloc``,
which sees numpy's buffers). The network is :func:`protenix.train.toy.tiny_config` at the
asked sizes (one recycle, a 2-step mini-rollout), on an ideal helix of ``--residues`` residues.

    python -m bench.protenix_train                      # 32 residues, c_z 32, 2 blocks, 8 samples
    python -m bench.protenix_train --tiny               # seconds (what tests/protenix runs)

PyTorch Protenix's training step is not run here (not yet: its train forward needs the
symmetric-permutation object and the label pipeline of its data loader).
"""

import argparse

from diffsci.protenix.train import bench as _bench


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--residues", type=int, default=32)
    ap.add_argument("--c-z", type=int, default=32)
    ap.add_argument("--blocks", type=int, default=2)
    ap.add_argument("--samples", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--tiny", action="store_true", help="6 residues, c_z 8, 1 block, 2 samples")
    a = ap.parse_args(argv)
    if a.tiny:
        a.residues, a.c_z, a.blocks, a.samples, a.repeat = 6, 8, 1, 2, 1
    rows, n_atom = _bench.train_step_rows(a.residues, a.samples, a.c_z, a.blocks, a.repeat,
                                          c_token=2 * a.c_z)  # fmt: skip
    print(f"Protenix training step (jitted), {a.residues} residues ({n_atom} atoms), "
          f"c_z={a.c_z}, {a.blocks} blocks per stack, diffusion_batch_size={a.samples}")  # fmt: skip
    print(f"{'recompute':10s} {'peak MiB':>10s} {'seconds':>9s} {'loss':>10s}")
    for on, mib, secs, value in rows:
        print(f"{'on' if on else 'off':10s} {mib:10.1f} {secs:9.3f} {value:10.5f}")
    return rows


if __name__ == "__main__":
    main()
