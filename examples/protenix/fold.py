"""Fold a small protein (a3m input: HP35 with a toy alignment) and a two-chain complex (FASTA,
GCN4 leucine zipper) with ``diffsci-protenix predict``.

    PYTHONPATH=. python examples/protenix/fold.py [--out-dir OUT] [--weights PATH] [--tiny]

It runs the command exactly as a user would::

    diffsci-protenix predict examples/protenix/hp35.a3m -o OUT --seeds 101 --samples 5
    diffsci-protenix predict examples/protenix/gcn4_dimer.fasta -o OUT --seeds 101 --samples 5

When no weights are found (``--weights``, ``$PROTENIX_WEIGHTS_DIR``, the user cache filled by
``diffsci-protenix download protenix_mini_default_v0.5.0``) or the network is not in this build, it
adds ``--random-weights``: the pipeline runs end to end and every file says the structures are
MEANINGLESS. ``--tiny``: one sample, one recycle and step, no plots (the test runs this).
``--out-dir`` defaults to ``./fold_out`` (``--out`` is the older spelling).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))

from diffsci.protenix.cli import main as cli_main  # noqa: E402
from diffsci.protenix.cli import runner  # noqa: E402
from diffsci.protenix.model.weights import WeightsError  # noqa: E402
from diffsci.scripts import ArgumentParser, default_out_dir  # noqa: E402

MODEL = "protenix_mini_default_v0.5.0"


def main(out_dir=None, weights=None, tiny=False):
    out = out_dir or default_out_dir("fold")
    random = not runner.network_available()
    try:
        runner.find_weights(MODEL, weights)
    except WeightsError:
        random = True
    if random:
        print("=" * 78 + "\nno weights or network: running with --random-weights; the structures"
              " below are MEANINGLESS (pipeline smoke test)\n" + "=" * 78)
    extra = ["--samples", "1", "--cycles", "1", "--steps", "1", "--no-plots", "-q"] if tiny \
        else ["--samples", "5"]
    if random:
        extra.append("--random-weights")
    if weights:
        extra += ["--weights", weights]
    codes = {}
    for name in ("hp35.a3m", "gcn4_dimer.fasta"):
        argv = ["predict", os.path.join(HERE, name), "-o", out, "--seeds", "101", *extra]
        print("$ protenix " + " ".join(argv))
        codes[name] = cli_main.main(argv)
    for root, _dirs, files in sorted(os.walk(out)):
        depth = os.path.relpath(root, out).count(os.sep)
        print("  " * depth + os.path.basename(root) + "/")
        for f in sorted(files):
            print("  " * (depth + 1) + f)
    return {"codes": codes, "random_weights": random, "out": out}


if __name__ == "__main__":
    ap = ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out-dir", aliases=["--out"], default=default_out_dir("fold"))
    ap.add_argument("--weights", default=None)
    ap.add_argument("--tiny", action="store_true")
    a = ap.parse_args()
    result = main(a.out_dir, a.weights, a.tiny)
    sys.exit(sum(result["codes"].values()))
