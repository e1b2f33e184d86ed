"""Pipeline overhead: one epoch over 1e5 small samples with shuffle + batch(256) + a trivial map,
ours (``datasets``) against ``torch.utils.data.DataLoader`` on the same random-access source
(issue 11, "Performance"; target ours/torch <= 1.0).

``python -m bench.datasets_pipeline [--n 100000] [--batch 256] [--repeats 5] [--quick]
[--json out.json]``

The source is one Python object with ``__getitem__``/``__len__``: sample i is
``(x[i], y[i])``, a [16] float32 array and an int64 label. Rows (each a full epoch, shuffled
anew, batches of 256, the last one short):

- ``map per batch``: ours ``GeneratorDataset(src, shuffle=True).batch(256).map(f)``; torch
  ``DataLoader(src, batch_size=256, shuffle=True)`` with ``f`` applied to each batch;
- ``map per sample``: ours ``GeneratorDataset(src, shuffle=True).map(f).batch(256)``; torch the
  same ``DataLoader`` over a dataset whose ``__getitem__`` applies ``f`` (torch's transform);
- ``arrays``: the data as arrays. Ours ``NumpySlicesDataset((x, y), shuffle=True)`` (one
  fancy-index per column and batch); torch ``TensorDataset`` through ``DataLoader`` (per sample),
  and torch's batched idiom, a ``BatchSampler`` whose index lists go to a ``__getitem__`` that
  fancy-indexes (``batch_size=None``).

``f(x, y) = (2 x, y)``. Ours yields ``core.Tensor`` (the default), torch yields torch tensors.
Every row runs in this process, single-threaded on the torch side (``num_workers=0``: worker
processes only add start-up and transfer costs for samples this small); ours runs its pipeline
in its prefetch thread. The time is the median over ``--repeats`` epochs, the rows interleaved.
The torch rows are skipped when torch is not installed.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import platform
import statistics
import time

import numpy as np

DIM = 16


class Source:
    """The random-access source both sides read: sample i is (x[i] [16] float32, y[i] int64)."""

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


def double_x(x, y):
    """The trivial map: [.., 16] float32, label -> (2 x, label)."""
    return x * 2.0, y


# ---- ours -----------------------------------------------------------------------------------


def ours_map_per_batch(src, batch):
    from diffsci import datasets

    return (
        datasets.GeneratorDataset(src, ["x", "y"], shuffle=True, seed=0).batch(batch).map(double_x)
    )


def ours_map_per_sample(src, batch):
    from diffsci import datasets

    return (
        datasets.GeneratorDataset(src, ["x", "y"], shuffle=True, seed=0).map(double_x).batch(batch)
    )


def ours_arrays(src, batch):
    from diffsci import datasets

    ds = datasets.NumpySlicesDataset((src.x, src.y), ["x", "y"], shuffle=True, seed=0)
    return ds.batch(batch).map(double_x)


def run_ours(ds):
    """One epoch; returns (samples seen, checksum of the labels)."""
    n, check = 0, 0
    for x, y in ds:
        n += x.shape[0]
        check += int(y.asnumpy().sum())
    return n, check


# ---- torch ----------------------------------------------------------------------------------


def torch_loader(kind, src, batch):
    import torch
    from torch.utils.data import BatchSampler, DataLoader, RandomSampler, TensorDataset

    g = torch.Generator().manual_seed(0)
    if kind == "DataLoader, f on each batch":
        return DataLoader(src, batch_size=batch, shuffle=True, generator=g), True
    if kind == "DataLoader, f in __getitem__":

        class Mapped(torch.utils.data.Dataset):
            def __len__(self):
                return len(src)

            def __getitem__(self, i):
                return double_x(*src[i])

        return DataLoader(Mapped(), batch_size=batch, shuffle=True, generator=g), False
    if kind == "TensorDataset":
        ds = TensorDataset(torch.from_numpy(src.x), torch.from_numpy(src.y))
        return DataLoader(ds, batch_size=batch, shuffle=True, generator=g), True
    if kind == "BatchSampler + fancy index":

        class Batched(torch.utils.data.Dataset):
            def __len__(self):
                return len(src)

            def __getitem__(self, idx):
                return torch.from_numpy(src.x[idx]), torch.from_numpy(src.y[idx])

        sampler = BatchSampler(RandomSampler(range(len(src)), generator=g), batch, False)
        return DataLoader(Batched(), sampler=sampler, batch_size=None), True
    raise KeyError(kind)


def run_torch(loader_and_flag):
    loader, map_here = loader_and_flag
    n, check = 0, 0
    for x, y in loader:
        if map_here:
            x, y = double_x(x, y)
        n += x.shape[0]
        check += int(y.sum())
    return n, check


# ---- the table ------------------------------------------------------------------------------

ROWS = [
    ("map per batch", ours_map_per_batch, ["DataLoader, f on each batch"]),
    ("map per sample", ours_map_per_sample, ["DataLoader, f in __getitem__"]),
    ("arrays", ours_arrays, ["TensorDataset", "BatchSampler + fancy index"]),
]


def _fmt(seconds):
    return f"{seconds * 1e3:.0f} ms" if seconds >= 0.01 else f"{seconds * 1e3:.2f} ms"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000, help="samples (default 1e5)")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=5, help="timed epochs per row")
    parser.add_argument("--quick", action="store_true", help="n=20000, 2 repeats")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    if args.quick:
        args.n, args.repeats = 20_000, 2
    have_torch = importlib.util.find_spec("torch") is not None

    rng = np.random.default_rng(0)
    src = Source(
        rng.standard_normal((args.n, DIM)).astype(np.float32),
        rng.integers(0, 10, args.n).astype(np.int64),
    )
    expected = (args.n, int(src.y.sum()))

    # every contestant: name -> zero-argument function running one epoch
    contestants = {}
    for row, make_ours, torch_kinds in ROWS:
        ds = make_ours(src, args.batch)
        contestants[(row, "ours")] = lambda ds=ds: run_ours(ds)
        for kind in torch_kinds if have_torch else []:
            loader = torch_loader(kind, src, args.batch)
            contestants[(row, f"torch {kind}")] = lambda loader=loader: run_torch(loader)

    times = {key: [] for key in contestants}
    for key, fn in contestants.items():  # warm-up, and every row sees every sample once
        got = fn()
        if got != expected:
            raise SystemExit(f"{key}: saw {got}, expected (samples, label sum) = {expected}")
    for _ in range(args.repeats):
        for key, fn in contestants.items():
            t0 = time.perf_counter()
            fn()
            times[key].append(time.perf_counter() - t0)
    median = {key: statistics.median(v) for key, v in times.items()}

    versions = [f"python {platform.python_version()}", f"numpy {np.__version__}"]
    if have_torch:
        import torch

        versions.append(f"torch {torch.__version__} ({torch.get_num_threads()} threads)")
    print(
        f"pipeline overhead: {args.n} samples [{DIM}] float32 + int64 label, shuffle + "
        f"batch({args.batch}) + map, median of {args.repeats} epochs; {', '.join(versions)}"
    )
    print()
    print("| row | torch counterpart | ours | torch | ours/torch |")
    print("|---|---|---|---|---|")
    results = []
    for row, _, torch_kinds in ROWS:
        ours = median[(row, "ours")]
        kinds = torch_kinds if have_torch else []
        if not kinds:
            print(f"| {row} | (torch not installed) | {_fmt(ours)} | - | - |")
            results.append({"row": row, "ours_s": ours})
        for kind in kinds:
            theirs = median[(row, f"torch {kind}")]
            print(f"| {row} | {kind} | {_fmt(ours)} | {_fmt(theirs)} | {ours / theirs:.2f}x |")
            results.append({"row": row, "torch": kind, "ours_s": ours, "torch_s": theirs,
                            "ratio": ours / theirs})  # fmt: skip
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"n": args.n, "batch": args.batch, "results": results}, fh, indent=1)
    return results


if __name__ == "__main__":
    main()
