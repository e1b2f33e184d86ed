"""End to end ``protenix pred``, ours against PyTorch Protenix 2.0.0, time per stage.

    python -m bench.protenix_pred                      # 64 residues, mini, 1 and default threads
    python -m bench.protenix_pred --threads 1          # one thread count only (0 = the default)
    python -m bench.protenix_pred --tiny               # 8 residues, tiny sizes, 1 cycle/step/sample
    python -m bench.protenix_pred --tiny --no-torch    # ours only (no reference needed)

One run: (1) a 64-residue protein job, written as FASTA for ours and as Protenix JSON for
PyTorch (same sequence, no MSA for both: single-sequence mode); (2) one set of random weights
for ``protenix_mini_default_v0.5.0`` as a Protenix checkpoint (``{"model": state_dict}``,
``torch.save``), made by PyTorch Protenix in a subprocess (all-zero output layers redrawn), which
both sides load; without the reference, our network's random weights written by
``core.save_checkpoint`` (HDF5, what ``protenix convert`` writes) and only ours runs; (3)
PyTorch's ``protenix pred`` path in a fresh process from outside the repository
(``bench/_protenix_pred_torch.py``: ``runner.batch_inference.get_default_runner``'s
configuration, ``InferenceRunner``, then ``infer_predict``'s steps; the offline CCD of
``tests/protenix/fixtures/make_features.py``, no download, no MSA/template/ESM, fp32, triangle
kernels "torch"); (4) ours, ``python -m diffsci.protenix pred -i JOB.fasta -o OUT -s 101 -n MODEL -c 4
-p 5 -e 5 --weights CKPT --msa none --no-plots -q --timings FILE``, in a fresh process. Then the
table: wall and CPU seconds per stage, both sides, and the ratios ours / PyTorch, for each
thread count (``--threads 1`` sets the BLAS/OpenMP variables, ``DIFFSCI_NUM_THREADS`` and
``torch.set_num_threads`` to 1; ``0`` leaves every library at its default). Both must have
written ``N_sample`` structures (checked).

Stages: ``startup`` (interpreter and imports until the command runs: the process's wall clock
minus the command's), ``features``, ``load`` (build the network, read the checkpoint),
``trunk`` / ``diffusion`` / ``confidence`` (distogram and confidence heads) / ``metrics``
(pLDDT, PAE, pTM, ranking from the logits; in PyTorch's forward after its heads), ``forward``
(= the four), ``write`` (mmCIF + JSON), each with wall and CPU seconds (``time.process_time``:
on a shared machine the steadier number), and ``process`` (the subprocess's wall clock, end to
end; PyTorch's without the offline-CCD setup, which a real run does not have).

Differences that favour PyTorch: its featurizer reads a 21-residue CCD here where a real run
unpickles the whole CCD's RDKit cache on its first job (its ``features`` is a lower bound).
Neutral ones: ours skips the plots (``--no-plots``; PyTorch draws none); PyTorch's runner
applies MC dropout to the recycled pair with probability 0.4 per seed
(``mc_dropout_apply_rate``), ours does not (a dropout mask per recycle).
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

from bench import protenix_model

REPO = pathlib.Path(__file__).resolve().parents[1]
REF = REPO / ".ref" / "protenix-2.0.0"
TORCH_DRIVER = REPO / "bench" / "_protenix_pred_torch.py"
MAKE_FEATURES = REPO / "tests" / "protenix" / "fixtures" / "make_features.py"
MODEL = "protenix_mini_default_v0.5.0"
SEED = 101
SEQ64 = "MKTAYIAKQRQISFVKSHFSRQLEERLGLIEVQAPILSRVGDGTQDNLSGAEKAVQVKVKALPDAQ"
TINY = protenix_model.TINY  # the tiny network config of the model bench
STAGES = ("startup", "features", "load", "trunk", "diffusion", "confidence", "metrics",
          "forward", "write", "process")  # fmt: skip
_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                "DIFFSCI_NUM_THREADS")  # fmt: skip


def reference_available():
    """(True, "") when PyTorch Protenix can run here, else (False, why)."""
    if not (REF / "runner" / "batch_inference.py").is_file():
        return False, f"PyTorch Protenix 2.0.0 is not installed under {REF}"
    try:
        import importlib.util

        if importlib.util.find_spec("torch") is None or importlib.util.find_spec("rdkit") is None:
            return False, "torch or rdkit is not installed"
    except (ImportError, ValueError):
        return False, "torch or rdkit is not importable"
    return True, ""


def write_job(work, name, seq):
    """The same protein as FASTA (ours) and Protenix JSON (PyTorch); returns both paths."""
    fasta = os.path.join(work, f"{name}.fasta")
    with open(fasta, "w") as f:
        f.write(f">{name}\n{seq}\n")
    js = os.path.join(work, f"{name}.json")
    with open(js, "w") as f:
        json.dump([{"name": name, "sequences": [{"proteinChain": {"sequence": seq,
                                                                  "count": 1}}]}], f)
    return fasta, js


def _env(threads, torch_side, root=None):
    env = dict(os.environ)
    for k in _THREAD_VARS:
        env.pop(k, None)
    if threads:
        env.update({k: str(threads) for k in _THREAD_VARS})
    if torch_side:
        env.update(PYTHONPATH=str(REF), LAYERNORM_TYPE="torch", PROTENIX_ROOT_DIR=root)
    else:
        env["PYTHONPATH"] = str(REPO)
    return env


def _check(proc, what):
    if proc.returncode != 0:
        raise RuntimeError(f"{what} failed (exit {proc.returncode}):\n"
                           f"{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}")


def make_checkpoint_torch(root, overrides=None):
    """PyTorch Protenix's random weights: ``root/checkpoint/<MODEL>.pt``."""
    args = {"mode": "ckpt", "model": MODEL, "overrides": overrides, "seed": SEED, "cycles": 1,
            "steps": 1, "samples": 1, "make_features": str(MAKE_FEATURES)}
    proc = subprocess.run([sys.executable, str(TORCH_DRIVER), json.dumps(args)],
                          cwd=tempfile.gettempdir(), env=_env(1, True, root),
                          capture_output=True, text=True)  # fmt: skip
    _check(proc, "PyTorch Protenix checkpoint")
    return json.loads(proc.stdout.strip().splitlines()[-1])["path"]


_OURS_CKPT = r"""
import json, sys
from diffsci import core
from diffsci.protenix.cli.runner import _redraw_zero_weights
from diffsci.protenix.config import get_model_config
from diffsci.protenix.model.protenix import Protenix
args = json.loads(sys.argv[1])
core.random.set_seed(0)
model = Protenix(get_model_config(args["model"], overrides=args["overrides"] or None))
_redraw_zero_weights(model)
core.save_checkpoint({n: p for n, p in model.parameters_and_names()}, args["path"])
"""


def make_checkpoint_ours(root, overrides=None):
    """Our network's random weights as an HDF5 checkpoint (no torch): ``root/<MODEL>.h5``."""
    path = os.path.join(root, f"{MODEL}.h5")
    proc = subprocess.run([sys.executable, "-c", _OURS_CKPT,
                           json.dumps({"model": MODEL, "overrides": overrides, "path": path})],
                          cwd=str(REPO), env=_env(1, False), capture_output=True, text=True)
    _check(proc, "our checkpoint")
    return path


def run_torch(root, js, out, threads, cycles, steps, samples, overrides=None):
    args = {"mode": "pred", "model": MODEL, "overrides": overrides, "seed": SEED,
            "cycles": cycles, "steps": steps, "samples": samples, "json": js, "out": out,
            "threads": threads or None, "make_features": str(MAKE_FEATURES)}
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, str(TORCH_DRIVER), json.dumps(args)],
                          cwd=tempfile.gettempdir(), env=_env(threads, True, root),
                          capture_output=True, text=True)  # fmt: skip
    process = time.perf_counter() - t
    _check(proc, "PyTorch protenix pred")
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    st = res["stages"]
    # startup: the interpreter until the script runs, and Protenix's imports; the offline-CCD
    # stand-in (``ccd_setup``, not part of a real run) is left out of the process time
    imports = st.pop("imports")
    st["startup"] = {"wall": imports["wall"] + (process - res["script_wall"]),
                     "cpu": imports["cpu"] + res["startup_cpu"]}
    st["process"] = {"wall": process - st["ccd_setup"]["wall"], "cpu": None}
    return st, res


def run_ours(ckpt, fasta, out, threads, cycles, steps, samples, overrides=None):
    tfile = os.path.join(out, "timings.json")
    cmd = [sys.executable, "-m", "diffsci.protenix", "pred", "-i", fasta, "-o", out, "-s", str(SEED),
           "-n", MODEL, "-c", str(cycles), "-p", str(steps), "-e", str(samples),
           "--weights", ckpt, "--msa", "none", "--no-plots", "-q", "--timings", tfile]
    if overrides:
        cmd += ["--config-overrides", json.dumps(overrides)]
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=str(REPO), env=_env(threads, False), capture_output=True,
                          text=True)
    process = time.perf_counter() - t
    _check(proc, "our protenix pred")
    with open(tfile) as f:
        res = json.load(f)
    if not res["jobs"]:
        raise RuntimeError(f"our protenix pred predicted nothing:\n{proc.stdout[-3000:]}")
    job = res["jobs"][0]
    st = {k: dict(v) for k, v in job["stages"].items()}
    net = st.pop("network")
    st["forward"] = {"wall": net["wall"] + st["metrics"]["wall"],
                     "cpu": net["cpu"] + st["metrics"]["cpu"]}
    st["startup"] = {"wall": process - res["run_wall"], "cpu": res["startup_cpu"]}
    st["process"] = {"wall": process, "cpu": None}
    return st, res


def count_structures(out, name):
    """mmCIF files written for ``name``, seed SEED."""
    d = os.path.join(out, name, f"seed_{SEED}", "predictions")
    return sorted(f for f in os.listdir(d) if f.endswith(".cif")) if os.path.isdir(d) else []


def _fmt(x):
    return "     -" if x is None else f"{x:6.2f}"


def table(rows, threads):
    """Text table of one thread count: rows = {side: stages}."""
    o, t = rows.get("ours"), rows.get("torch")
    head = f"threads={threads or 'default'}   {'ours wall':>9s} {'cpu':>6s}"
    if t:
        head += f"   {'torch wall':>10s} {'cpu':>6s}   {'ours/torch wall':>15s} {'cpu':>6s}"
    lines = [head]
    for k in STAGES:
        a = o.get(k, {})
        line = f"  {k:<12s}   {_fmt(a.get('wall')):>9s} {_fmt(a.get('cpu'))}"
        if t:
            b = t.get(k, {})
            ratio = [a[c] / b[c] if a.get(c) is not None and b.get(c) else None
                     for c in ("wall", "cpu")]
            line += (f"   {_fmt(b.get('wall')):>10s} {_fmt(b.get('cpu'))}   "
                     f"{_fmt(ratio[0]):>15s} {_fmt(ratio[1])}")
        lines.append(line)
    if t:
        proc = o["process"]["wall"] / t["process"]["wall"]
        fwd = [o["forward"][c] / t["forward"][c] for c in ("wall", "cpu")]
        lines.append(f"  ours / PyTorch: process {proc:.2f} (wall, end to end), forward "
                     f"{fwd[0]:.2f} (wall) {fwd[1]:.2f} (CPU)")
    return "\n".join(lines)


def run(n_res=64, threads=(1, 0), cycles=4, steps=5, samples=5, tiny=False, torch=True,
        work=None):
    """Runs the comparison; returns (text, {threads: {side: stages}})."""
    overrides = TINY if tiny else None
    seq = (SEQ64 * (n_res // len(SEQ64) + 1))[:n_res]
    name = f"p{n_res}"
    ok, why = reference_available()
    use_torch = torch and ok
    out_lines = [f"{MODEL}{' (tiny sizes)' if tiny else ''}, {n_res} residues, single sequence, "
                 f"cycles={cycles} steps={steps} samples={samples} seed={SEED}"]
    if torch and not ok:
        out_lines.append(f"PyTorch Protenix not run: {why}")
    results = {}
    with tempfile.TemporaryDirectory(prefix="bench_pred_", dir=work) as tmp:
        fasta, js = write_job(tmp, name, seq)
        t = time.perf_counter()
        ckpt = (make_checkpoint_torch(tmp, overrides) if use_torch
                else make_checkpoint_ours(tmp, overrides))
        out_lines.append(f"checkpoint {os.path.basename(ckpt)} ({os.path.getsize(ckpt) / 2**20:.0f}"
                         f" MiB, made by {'PyTorch' if use_torch else 'ours'} in "
                         f"{time.perf_counter() - t:.1f} s)")  # fmt: skip
        for i, th in enumerate(threads):
            rows = {}
            out = os.path.join(tmp, f"ours_{i}_{th}")
            rows["ours"], _ = run_ours(ckpt, fasta, out, th, cycles, steps, samples, overrides)
            n = len(count_structures(out, name))
            if n != samples:
                raise RuntimeError(f"ours wrote {n} structures, expected {samples} ({out})")
            if use_torch:
                tout = os.path.join(tmp, f"torch_{i}_{th}")
                rows["torch"], _ = run_torch(tmp, js, tout, th, cycles, steps, samples,
                                               overrides)
                n = len(count_structures(tout, name))
                if n != samples:
                    raise RuntimeError(f"PyTorch wrote {n} structures, expected {samples}")
            out_lines.append(table(rows, th))
            results[th] = rows
    return "\n".join(out_lines), results


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=64, help="residues (default: %(default)s)")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 0],
                    help="thread counts, 0 = every library's default (default: 1 0)")
    ap.add_argument("--cycles", type=int, default=4)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--samples", type=int, default=5)
    ap.add_argument("--tiny", action="store_true",
                    help="8 residues, tiny channel sizes, 1 cycle, 1 step, 1 sample, 1 thread")
    ap.add_argument("--no-torch", action="store_true", help="ours only")
    args = ap.parse_args(argv)
    if args.tiny:
        text, _ = run(8, (1,), 1, 1, 1, tiny=True, torch=not args.no_torch)
    else:
        text, _ = run(args.n, tuple(args.threads), args.cycles, args.steps, args.samples,
                      torch=not args.no_torch)
    print(text, flush=True)
    return text


if __name__ == "__main__":
    main()
