"""The whole Protenix network at inference, ours against PyTorch Protenix 2.0.0: the mini model
(``protenix_mini_default_v0.5.0``, random weights) on one protein chain, the same features
(our ``protenix.data.featurize``, single-sequence MSA), 4 recycles, 5 diffusion steps, 5
samples, float32.

    python -m bench.protenix_model                     # 64 residues, 1 thread, ours and PyTorch
    python -m bench.protenix_model --n 64 128 --threads 2
    python -m bench.protenix_model --tiny              # what a smoke test runs (ours, tiny sizes)

Each side runs in a fresh subprocess with ``--threads`` threads (``core.set_num_threads`` /
``torch.set_num_threads`` and the BLAS variables): build the network (seeded random
parameters), then the forward ``--repeat`` times; the row has the best forward's wall and CPU
seconds (``time.process_time``; on a shared machine the CPU seconds are the steadier number),
the build time and the process's peak RSS. PyTorch runs from outside the repository with the
reference on its path (``.ref/protenix-2.0.0``, ``LAYERNORM_TYPE=torch``, triangle kernels
"torch"), under ``torch.no_grad`` with ``mc_dropout_apply_rate=0``; ours with the default
(unchunked: plain) inference paths.
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[1]
REF = REPO / ".ref" / "protenix-2.0.0"
SEQ = (  # residues cycled to the asked length
    "MKTAYIAKQRQISFVKSHFSRQLEERLGLIEVQAPILSRVGDGTQDNLSGAEKAVQVKVKALPDAQFEVVHSLAKWKRQT"
    "LGQHDFSAGEGLYTHMKALRPDEDRLSPLHSVYVDQWDWERVMGDGERQFSTLKSTVEAIWAGIKATEAAVSEEFGLAPF"
    "LPDQIHFVHSQELLSRYPDLDAKGRERAIAKDLGAVFLVGIGGKLSDGHRHDVRAPDYDDWSTPSELGHAGLNGDILVWN"
    "PVLEDAFELSSMGIRVDADTLKHQLALTGDEDRLELEWHQALLRGEMPQTIGGGIGQSRLTMLLLQLPHIGQVQAGVWPA"
    "ACRERLAENDFSF"
)
TINY = {
    "c_s": 32, "c_z": 8, "c_token": 16, "c_s_inputs": 16 + 65, "c_atom": 8, "c_atompair": 4,
    "model": {
        "input_embedder": {"c_token": 16}, "msa_module": {"c_m": 8, "n_blocks": 1},
        "template_embedder": {"c": 8}, "pairformer": {"n_blocks": 1},
        "diffusion_module": {"c_token": 16, "atom_encoder": {"n_blocks": 1, "n_heads": 2},
                             "transformer": {"n_blocks": 1, "n_heads": 2},
                             "atom_decoder": {"n_blocks": 1, "n_heads": 2}},
        "confidence_head": {"n_blocks": 1},
    },
}  # fmt: skip

_OURS = r"""
import json, resource, sys, time
import numpy as np
from diffsci import core
args = json.loads(sys.argv[1])
core.set_num_threads(args["threads"])
from diffsci.protenix.config import get_model_config
from diffsci.protenix.model.protenix import Protenix
feats = dict(np.load(args["features"]))
cfg = get_model_config(args["model"], overrides=args["overrides"] or None)
t = time.perf_counter()
core.random.set_seed(0)
model = Protenix(cfg).set_train(False)
build = time.perf_counter() - t
best = None
for _ in range(args["repeat"]):
    core.random.set_seed(1)
    t, c = time.perf_counter(), time.process_time()
    pred, _, _ = model(feats, N_cycle=args["cycles"], N_step=args["steps"],
                       N_sample=args["samples"], chunk_size=None, dtype="fp32")
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    assert np.isfinite(pred["coordinate"].asnumpy()).all()
    best = (wall, cpu) if best is None or wall < best[0] else best
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"wall": best[0], "cpu": best[1], "build": build, "rss_mib": rss}))
"""

_TORCH = r"""
import copy, json, resource, sys, time
from collections.abc import Mapping
import numpy as np, torch
args = json.loads(sys.argv[1])
torch.set_num_threads(args["threads"])
from configs.configs_base import configs as configs_base
from configs.configs_data import data_configs
from configs.configs_inference import inference_configs
from configs.configs_model_type import model_configs
from protenix.config import parse_configs
from protenix.model.protenix import Protenix

def update(d, u):
    for k, v in u.items():
        if isinstance(v, Mapping) and isinstance(d.get(k), Mapping):
            update(d[k], v)
        else:
            d[k] = v
    return d

base = copy.deepcopy({**configs_base, "data": data_configs, **inference_configs})
update(base, copy.deepcopy(model_configs[args["model"]]))
update(base, {"triangle_attention": "torch", "triangle_multiplicative": "torch",
              "model": {"N_cycle": args["cycles"]},
              "sample_diffusion": {"N_step": args["steps"], "N_sample": args["samples"]}})
configs = parse_configs(configs=base, arg_str=None, fill_required_with_null=True)
feats = {k: torch.from_numpy(v) for k, v in np.load(args["features"]).items()}
t = time.perf_counter()
torch.manual_seed(0)
model = Protenix(configs).eval()
build = time.perf_counter() - t
best = None
for _ in range(args["repeat"]):
    torch.manual_seed(1)
    t, c = time.perf_counter(), time.process_time()
    with torch.no_grad():
        pred, _, _ = model(input_feature_dict=dict(feats), label_full_dict=None, label_dict=None,
                           mode="inference", mc_dropout_apply_rate=0.0)
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    best = (wall, cpu) if best is None or wall < best[0] else best
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"wall": best[0], "cpu": best[1], "build": build, "rss_mib": rss}))
"""


def features(n_res, path):
    """Our featurizer's output for an ``n_res``-residue chain (single sequence), as an npz of
    its arrays (the empty constraint maps left out: both sides skip them when disabled)."""
    sys.path.insert(0, str(REPO))
    from diffsci.protenix.data import featurize

    seq = (SEQ * (n_res // len(SEQ) + 1))[:n_res]
    job = {"name": f"bench{n_res}", "sequences": [{"proteinChain": {"sequence": seq, "count": 1}}]}
    f = featurize(job, seed=0, use_msa=False)
    np.savez(path, **{k: v for k, v in f.items() if isinstance(v, np.ndarray)})


def _run(code, args, threads, torch_side):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads), DIFFSCI_NUM_THREADS=str(threads))  # fmt: skip
    if torch_side:
        env.update(PYTHONPATH=str(REF), LAYERNORM_TYPE="torch")
        cwd = tempfile.gettempdir()  # outside the repository: our package never shadows it
    else:
        env["PYTHONPATH"] = str(REPO)
        cwd = str(REPO)
    out = subprocess.run([sys.executable, "-c", code, json.dumps(args)], cwd=cwd, env=env,
                         capture_output=True, text=True, check=True)  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(n_res=64, threads=1, cycles=4, steps=5, samples=5, repeat=2, torch=True, tiny=False,
        model="protenix_mini_default_v0.5.0"):
    """Rows (strings) and results (dicts) of one protein length."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "features.npz")
        features(n_res, path)
        args = {"features": path, "model": model, "cycles": cycles, "steps": steps,
                "samples": samples, "repeat": repeat, "threads": threads,
                "overrides": TINY if tiny else None}  # fmt: skip
        res = {"ours": _run(_OURS, args, threads, False)}
        if torch and not tiny:
            res["torch"] = _run(_TORCH, args, threads, True) if REF.is_dir() else None
    what = f"{model} N={n_res} cycles={cycles} steps={steps} samples={samples} threads={threads}"
    rows = []
    for side, r in res.items():
        if r is None:
            rows.append(f"{side}: reference not installed ({REF})")
            continue
        rows.append(f"{side:5s} {what}: forward {r['wall']:.2f} s wall, {r['cpu']:.2f} s CPU; "
                    f"build {r['build']:.1f} s; peak RSS {r['rss_mib']:.0f} MiB")  # fmt: skip
    if res.get("torch"):
        o, t = res["ours"], res["torch"]
        rows.append(f"ours / PyTorch: {o['wall'] / t['wall']:.2f} (wall), "
                    f"{o['cpu'] / t['cpu']:.2f} (CPU)")  # fmt: skip
    return rows, res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[64], help="residues")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--cycles", type=int, default=4)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--samples", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--no-torch", action="store_true", help="ours only")
    ap.add_argument("--tiny", action="store_true", help="ours at tiny sizes, 8 residues")
    args = ap.parse_args(argv)
    rows = []
    if args.tiny:
        rows += run(8, 1, 1, 1, 1, 1, torch=False, tiny=True)[0]
    else:
        for n in args.n:
            rows += run(n, args.threads, args.cycles, args.steps, args.samples, args.repeat,
                        torch=not args.no_torch)[0]  # fmt: skip
    for r in rows:
        print(r, flush=True)
    return rows


if __name__ == "__main__":
    main()
