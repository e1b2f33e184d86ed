"""Predict structures: FASTA / a3m / Protenix JSON in, ranked mmCIF + confidence JSON + plots out.

    diffsci-protenix predict INPUT -o OUT [--model protenix_mini_default_v0.5.0] [--seeds 101,102] ...
    diffsci-protenix pred -i INPUT -o OUT -s 101 -n MODEL -c 4 -p 5 -e 5      (Protenix's flag names)

INPUT is a FASTA, a3m or Protenix JSON file, or a folder of them; every job and seed gives
``OUT/<name>/seed_<seed>/predictions/<name>_sample_<rank>.cif`` (rank 0 = best ranking score)
with ``<name>_summary_confidence_sample_<rank>.json`` (Protenix's keys) and the plots
``OUT/<name>/seed_<seed>/<name>_{plddt,pae}.png``. A job that fails writes its error to
``OUT/ERR/<name>.txt`` and the others go on; the exit status is the number of failed jobs.
Finished (job, seed) pairs are skipped on a re-run unless ``--overwrite``.

Time per stage (wall seconds, printed at the end; ``--timings FILE`` also writes them as JSON
with the CPU seconds): ``features`` (featurize + atoms), ``load`` (build the network and read
the weights, once per run), ``trunk``, ``diffusion``, ``confidence`` (the confidence and
distogram heads), ``metrics`` (pLDDT/PAE/pTM/ranking from the logits), ``write`` (files).
"""

import json
import os
import sys
import time
import traceback

import numpy as np

from ..config import get_model_config, load_config, model_names
from ..data import InputError, build_atoms, featurize, load_jobs
from ..model.weights import WeightsError
from ..outputs.confidence import compute_contact_prob, compute_full_data_and_summary
from ..outputs.dumper import DataDumper
from ..outputs.structure import MEANINGLESS, atomic_write
from . import runner

DEFAULT_MODEL = "protenix_mini_default_v0.5.0"
DEFAULT_MSA_SERVER = "https://api.colabfold.com"
STAGES = ("features", "load", "trunk", "diffusion", "confidence", "metrics", "write")


def add_arguments(p):
    p.add_argument("input", nargs="?", default=None,
                   help="FASTA, a3m or Protenix JSON file, or a folder of them")
    p.add_argument("-i", "--input", dest="input_opt", metavar="INPUT", default=None,
                   help="the same as the positional INPUT (Protenix's spelling)")
    p.add_argument("-o", "--out", "--out_dir", dest="out", default="./output",
                   help="output folder (default: %(default)s)")
    p.add_argument("-n", "--model", "--model_name", dest="model", default=DEFAULT_MODEL,
                   help=f"model name, one of {', '.join(model_names())} (default: %(default)s)")
    p.add_argument("--weights", default=None,
                   help="checkpoint file or folder (default: $PROTENIX_WEIGHTS_DIR, then the "
                        "user cache ~/.cache/protenix/checkpoints)")
    p.add_argument("-s", "--seeds", default="101",
                   help="comma-separated model seeds (default: %(default)s)")
    p.add_argument("-e", "--samples", "--sample", dest="samples", type=int, default=5,
                   help="diffusion samples per seed (default: %(default)s)")
    p.add_argument("-c", "--cycles", "--cycle", dest="cycles", type=int, default=None,
                   help="trunk recycles (default: the model's N_cycle, 4 for mini, 10 base)")
    p.add_argument("-p", "--steps", "--step", dest="steps", type=int, default=None,
                   help="diffusion steps (default: the model's N_step, 5 for mini, 200 base)")
    p.add_argument("--msa", choices=["a3m", "none", "server"], default="a3m",
                   help="a3m: the MSAs given in the input (none given = single sequence); "
                        "none: single-sequence mode; server: search --msa-server "
                        "(default: %(default)s)")
    p.add_argument("--msa-server", default=DEFAULT_MSA_SERVER,
                   help="ColabFold-compatible MMseqs2 server for --msa server "
                        "(default: %(default)s)")
    p.add_argument("-d", "--dtype", choices=["fp32", "bf16"], default="fp32",
                   help="inference dtype (default: %(default)s)")
    p.add_argument("--device", choices=["CPU", "GPU"], type=str.upper, default="CPU",
                   help="device (default: %(default)s)")
    p.add_argument("--chunk-size", default="auto",
                   help="trunk row chunk size: auto (Protenix's thresholds by length) or an "
                        "integer (default: %(default)s)")
    p.add_argument("--max-tokens", type=int, default=None,
                   help="refuse jobs above this many tokens (default: protenix.data's limit)")
    p.add_argument("--random-weights", action="store_true",
                   help="seeded random weights: a smoke test of the pipeline; every output is "
                        "labelled meaningless")
    p.add_argument("--overwrite", action="store_true",
                   help="redo finished jobs (default: skip them)")
    p.add_argument("--need-atom-confidence", "--need_atom_confidence",
                   dest="need_atom_confidence", action="store_true",
                   help="also write <name>_full_data_sample_<rank>.json (atom pLDDT, PAE, PDE, "
                        "contact probabilities)")
    p.add_argument("--pdb", action="store_true", help="also write PDB files")
    p.add_argument("--no-plots", action="store_true", help="do not draw the pLDDT/PAE plots")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    p.add_argument("--config-overrides", default=None, metavar="JSON",
                   help="a JSON/YAML file (or an inline JSON object) of config values deep-updated "
                        "onto the model's config, e.g. '{\"model\": {\"N_cycle\": 2}}' "
                        "(default: none)")
    p.add_argument("--timings", default=None, metavar="FILE",
                   help="write the wall and CPU seconds of every stage of every (job, seed) "
                        "as JSON to FILE (default: not written)")


def _seeds(text):
    try:
        seeds = [int(s) for s in str(text).split(",") if s.strip()]
    except ValueError:
        raise ValueError(f"--seeds {text!r}: expected comma-separated integers") from None
    if not seeds:
        raise ValueError(f"--seeds {text!r}: no seed given")
    return seeds


def _chunk(text):
    if text in (None, "auto"):
        return "auto"
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"--chunk-size {text!r}: expected 'auto' or an integer") from None
    return None if value <= 0 else value


def _write_error(out, name, message):
    atomic_write(os.path.join(out, "ERR", f"{name}.txt"), message.rstrip() + "\n")


def _log(msg, quiet=False):
    if not quiet:
        print(msg, file=sys.stderr, flush=True)


def predict_job(job, seed, args, config, weights_path, dumper, timings):
    """Features -> network -> confidences -> files for one (job, seed); returns the dumper's
    ranked (rank, sample, summary) list."""
    from tqdm import tqdm

    # one bar over the stages; the network's own bars count recycles and diffusion steps
    bar = tqdm(total=4, desc=f"{job['name']} seed {seed}", leave=False,
               disable=True if args.quiet else None)
    bar.set_postfix_str("features")
    t, c = time.perf_counter(), time.process_time()
    kw = {} if args.max_tokens is None else {"max_tokens": args.max_tokens}
    feats = featurize(job, seed=seed, use_msa=args.msa != "none", **kw)
    atoms = build_atoms(job)
    timings["features"] = time.perf_counter() - t
    timings["features_cpu"] = time.process_time() - c
    bar.update()
    bar.set_postfix_str("network")
    pred = runner.run_model(
        feats, atoms, config=config, weights_path=weights_path,
        random_weights=args.random_weights, n_cycle=args.n_cycle, n_step=args.n_step,
        n_sample=args.samples, seed=seed, dtype=args.dtype, device=args.device,
        chunk_size=args.chunk, progress=not args.quiet, timings=timings)
    bar.update()
    bar.set_postfix_str("confidence")
    t, c = time.perf_counter(), time.process_time()
    loss = config["loss"]
    bins = {k: {b: loss[k][b] for b in ("min_bin", "max_bin", "no_bins")}
            for k in ("plddt", "pae", "pde")}
    dist = config["model"]["distogram_head"] if "distogram_head" in config["model"] else {}
    contact = compute_contact_prob(pred["distogram_logits"],
                                   no_bins=dist.get("no_bins", 64) if dist else 64)
    is_polymer = np.ones(len(atoms["atom_name"]), dtype=np.int64)
    has_frame = np.ones(len(feats["asym_id"]), dtype=bool)  # every standard residue has a frame
    summary, full = compute_full_data_and_summary(
        pred["pae_logits"], pred["plddt_logits"], pred["pde_logits"], contact,
        feats["asym_id"], has_frame, pred["coordinate"], feats["atom_to_token_idx"], is_polymer,
        pred["num_recycles"], return_full_data=True, bins=bins,
        clash_threshold=config["metrics"]["clash"]["af3_clash_threshold"])
    timings["metrics"] = time.perf_counter() - t
    timings["metrics_cpu"] = time.process_time() - c
    bar.update()
    bar.set_postfix_str("write")
    t, c = time.perf_counter(), time.process_time()
    ranked = dumper.dump(job["name"], seed, pred["coordinate"], summary, full, atoms)
    timings["write"] = time.perf_counter() - t
    timings["write_cpu"] = time.process_time() - c
    bar.update()
    bar.close()
    return ranked


def _write_timings(path, stage_rows, startup_cpu, run_wall):
    """--timings FILE: {"startup_cpu": CPU s before the command ran (imports),
    "run_wall": wall s of the command after them, "jobs": [{"name", "seed", "total",
    "stages": {stage: {"wall": s, "cpu": s}}}]}; ``network`` is the whole forward (trunk,
    diffusion and confidence)."""
    jobs = []
    for name, seed, t, total in stage_rows:
        stages = {k: {"wall": float(t[k]), "cpu": t.get(f"{k}_cpu")} for k in STAGES if k in t}
        stages["network"] = {"wall": t.get("network"), "cpu": t.get("network_cpu")}
        jobs.append({"name": name, "seed": seed, "total": total, "stages": stages})
    atomic_write(path, json.dumps({"startup_cpu": startup_cpu, "run_wall": run_wall,
                                   "jobs": jobs}, indent=1) + "\n")


def _table(rows):
    head = ("job", "seed", "rank", "ranking", "pTM", "ipTM", "pLDDT", "time s")
    lines = ["  ".join(f"{h:>8s}" if i else f"{h:<20s}" for i, h in enumerate(head))]
    for r in rows:
        lines.append(f"{r[0][:20]:<20s}  {r[1]:>8d}  {r[2]:>8d}  {r[3]:>8.4f}  {r[4]:>8.4f}  "
                     f"{r[5]:>8.4f}  {r[6]:>8.2f}  {r[7]:>8.2f}")
    return "\n".join(lines)


def _overrides(text):
    """--config-overrides: None, an inline JSON object or a JSON/YAML file -> a dict."""
    if text is None:
        return None
    if text.lstrip().startswith("{"):
        try:
            value = json.loads(text)
        except json.JSONDecodeError as err:
            raise ValueError(f"--config-overrides: bad inline JSON ({err})") from None
    elif os.path.isfile(text):
        value = load_config(text)
    else:
        raise ValueError(f"--config-overrides {text!r}: neither a file nor a JSON object")
    if not isinstance(value, dict):
        raise ValueError(f"--config-overrides {text!r}: expected a mapping, got "
                         f"{type(value).__name__}")
    return value


def run(args):
    run_t0, startup_cpu = time.perf_counter(), time.process_time()
    path = args.input or args.input_opt
    if args.input and args.input_opt and args.input != args.input_opt:
        print(f"diffsci-protenix predict: two inputs given ({args.input!r} and -i {args.input_opt!r})",
              file=sys.stderr)
        return 2
    if not path:
        print("diffsci-protenix predict: no INPUT given (positional or -i/--input)", file=sys.stderr)
        return 2
    try:
        seeds = _seeds(args.seeds)
        args.chunk = _chunk(args.chunk_size)
        overrides = _overrides(getattr(args, "config_overrides", None))
        config = (get_model_config(args.model, overrides=overrides) if overrides
                  else get_model_config(args.model))
    except (ValueError, KeyError) as err:
        print(f"diffsci-protenix predict: {err.args[0] if err.args else err}", file=sys.stderr)
        return 2
    if args.samples < 1:
        print(f"diffsci-protenix predict: --samples {args.samples}: need at least 1", file=sys.stderr)
        return 2
    args.n_cycle = args.cycles if args.cycles is not None else int(config["model"]["N_cycle"])
    args.n_step = (args.steps if args.steps is not None
                   else int(config["sample_diffusion"]["N_step"]))
    if args.device == "GPU":
        try:
            from diffsci.core.backend import get_backend

            get_backend("GPU")
        except Exception as err:
            print(f"diffsci-protenix predict: --device GPU: no GPU backend here ({type(err).__name__}: "
                  f"{str(err).splitlines()[0] if str(err) else ''}); use --device CPU",
                  file=sys.stderr)
            return 2
    out = args.out
    os.makedirs(out, exist_ok=True)

    failed = {}

    def on_error(name, err):
        failed[name] = f"{type(err).__name__}: {err}"
        _write_error(out, name, failed[name])
        print(f"diffsci-protenix predict: {name}: {err}", file=sys.stderr)

    kw = {} if args.max_tokens is None else {"max_tokens": args.max_tokens}
    try:
        jobs = load_jobs(path, on_error=on_error, **kw)
    except InputError as err:
        print(f"diffsci-protenix predict: {err}", file=sys.stderr)
        return 1
    if not jobs and not failed:
        print(f"diffsci-protenix predict: no jobs in {path!r}", file=sys.stderr)
        return 1

    weights_path = None
    if args.random_weights:
        print(f"diffsci-protenix predict: WARNING: --random-weights: {MEANINGLESS}", file=sys.stderr)
    else:
        try:
            weights_path = runner.find_weights(args.model, args.weights)
        except WeightsError as err:
            print(f"diffsci-protenix predict: {err}", file=sys.stderr)
            for job in jobs:
                _write_error(out, job["name"], f"WeightsError: {err}")
            return min(255, len(jobs) + len(failed))

    client = None
    if args.msa == "server":
        from ..data import MSAServerClient

        client = MSAServerClient(args.msa_server)

    dumper = DataDumper(out, need_atom_confidence=args.need_atom_confidence, pdb=args.pdb,
                        plots=not args.no_plots, meaningless=args.random_weights)
    rows, stage_rows, skipped = [], [], []
    for job in jobs:
        name = job["name"]
        try:
            if client is not None:
                from ..data import add_server_msas

                t = time.perf_counter()
                add_server_msas(job, client)
                _log(f"{name}: MSA search {time.perf_counter() - t:.1f} s", args.quiet)
            for seed in seeds:
                if not args.overwrite and dumper.is_done(name, seed, args.samples):
                    skipped.append((name, seed))
                    _log(f"{name} seed {seed}: done already, skipped (--overwrite redoes it)",
                         args.quiet)
                    continue
                timings = {}
                t0 = time.perf_counter()
                ranked = predict_job(job, seed, args, config, weights_path, dumper, timings)
                total = time.perf_counter() - t0
                stage_rows.append((name, seed, timings, total))
                for rank, _i, s in ranked:
                    rows.append((name, seed, rank, float(s["ranking_score"]), float(s["ptm"]),
                                 float(s["iptm"]), float(s["plddt"]), total))
                _log(f"{name} seed {seed}: " + ", ".join(
                    f"{k} {timings[k]:.2f} s" for k in STAGES if k in timings)
                    + f" (total {total:.2f} s)", args.quiet)
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as err:  # one job's failure must not stop the others
            msg = f"{type(err).__name__}: {err}"
            detail = "".join(traceback.format_exception(type(err), err, err.__traceback__))
            failed[name] = msg
            _write_error(out, name, msg + "\n\n" + detail)
            print(f"diffsci-protenix predict: {name} failed: {msg} (OUT/ERR/{name}.txt)",
                  file=sys.stderr)
            continue
        err_file = os.path.join(out, "ERR", f"{name}.txt")
        if os.path.exists(err_file):
            os.unlink(err_file)
    if rows:
        print(_table(rows))
        print("time per stage (s):     " + "  ".join(f"{k:>10s}" for k in STAGES))
        for name, seed, t, total in stage_rows:
            print(f"  {name[:12]:<12s} seed {seed:<5d} " + "  ".join(
                f"{t.get(k, 0.0):>10.2f}" for k in STAGES) + f"   total {total:.2f}")
    if args.random_weights:
        print(f"WARNING: {MEANINGLESS}")
    if getattr(args, "timings", None):
        _write_timings(args.timings, stage_rows, startup_cpu, time.perf_counter() - run_t0)
    n_ok = len({r[0] for r in rows})
    print(f"diffsci-protenix predict: {n_ok} job(s) predicted, {len(skipped)} (job, seed) pair(s) "
          f"done already and skipped, {len(failed)} failed"
          + (f" ({', '.join(sorted(failed))}; see {os.path.join(out, 'ERR')})" if failed else ""))
    return min(255, len(failed))
