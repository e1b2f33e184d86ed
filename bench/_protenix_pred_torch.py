"""PyTorch Protenix 2.0.0's ``protenix pred`` path, timed per stage (the reference half of
``bench/protenix_pred.py``; never imports our package).

Run from outside the repository with the reference on the path::

    cd /tmp && PYTHONPATH=<repo>/.ref/protenix-2.0.0 LAYERNORM_TYPE=torch \\
        PROTENIX_ROOT_DIR=<work> <repo>/.venv/bin/python <repo>/bench/_protenix_pred_torch.py \\
        '<json args>'

``args["mode"]``:

- ``"ckpt"``: build the network of ``args["model"]`` (with ``args["overrides"]`` deep-updated
  onto its config) from ``torch.manual_seed(0)``, redraw every all-zero weight matrix (Protenix
  starts its output layers at zero) ~ N(0, 1/fan_in), and ``torch.save({"model": state_dict})``
  to ``$PROTENIX_ROOT_DIR/checkpoint/<model>.pt``: the checkpoint that both sides load.
- ``"pred"``: ``protenix pred -i JOB.json -o OUT -s SEED -n MODEL -c N_cycle -p N_step
  -e N_sample -d fp32 --use_msa false --trimul_kernel torch --triatt_kernel torch``, i.e.
  ``runner.batch_inference.get_default_runner``'s config, ``InferenceRunner`` (build the
  network, ``torch.load`` + ``load_state_dict``, dumper) and then ``runner.inference.
  infer_predict``'s steps for the one job (``seed_everything``, the inference dataloader's
  featurizer, ``update_inference_configs``, ``InferenceRunner.predict``, ``DataDumper.dump``),
  each timed with ``time.perf_counter`` and ``time.process_time``; prints one JSON line.

Offline (no downloads): ``download_inference_cache`` is skipped (the checkpoint is already in
place; its other files, the CCD cache, are not needed by a protein job once Protenix's CCD
reader finds ``$PROTENIX_ROOT_DIR/common/components.cif``, written here with the 21 residues of
biotite's bundled CCD, and its RDKit-molecule cache is filled in memory, both as
``tests/protenix/fixtures/make_features.py`` does). That setup is not timed; a real run would
also unpickle the whole CCD's RDKit cache on its first job, so the featurize stage here is a
lower bound for PyTorch. ``esm`` (fair-esm, unused by the mini model) is stubbed when absent.
"""

import copy
import importlib.util
import json
import os
import sys
import time

WALL0, CPU0 = time.perf_counter(), time.process_time()
ARGS = json.loads(sys.argv[1])


def _deep_update(d, u):
    for k, v in u.items():
        if isinstance(v, dict) and isinstance(d.get(k), dict):
            _deep_update(d[k], v)
        else:
            d[k] = v
    return d


def _offline_ccd(root):
    """components.cif of the 21 residues under ``root`` + the in-memory RDKit cache."""
    spec = importlib.util.spec_from_file_location("_make_features", ARGS["make_features"])
    mf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mf)
    os.makedirs(os.path.join(root, "common"), exist_ok=True)
    mf.write_components(os.path.join(root, "common", "components.cif"))
    from protenix.data.core import ccd

    if not ccd.COMPONENTS_FILE.startswith(root):
        raise RuntimeError(f"Protenix reads its CCD from {ccd.COMPONENTS_FILE}, not under {root}"
                           " (PROTENIX_ROOT_DIR must be set before protenix is imported)")
    ccd._ccd_rdkit_mols.update(mf.rdkit_mols())


def _clock():
    return time.perf_counter(), time.process_time()


def _since(t):
    w, c = _clock()
    return {"wall": w - t[0], "cpu": c - t[1]}


def main():
    threads = ARGS.get("threads")
    t = _clock()
    import types

    try:
        import esm  # noqa: F401
    except ImportError:  # fair-esm: only the ESM variants call it
        sys.modules["esm"] = types.SimpleNamespace(FastaBatchedDataset=None, pretrained=None)
    import torch

    if threads:
        torch.set_num_threads(int(threads))
    import runner.inference as ri
    from configs.configs_base import configs as configs_base
    from configs.configs_data import data_configs
    from configs.configs_inference import inference_configs
    from configs.configs_model_type import model_configs
    from ml_collections.config_dict import ConfigDict
    from protenix.data.inference.infer_dataloader import get_inference_dataloader
    from protenix.utils.seed import seed_everything

    from protenix.config.config import parse_configs

    stages = {"imports": _since(t)}
    root = os.environ["PROTENIX_ROOT_DIR"]
    model_name = ARGS["model"]
    overrides = ARGS.get("overrides") or {}

    def default_configs():
        # runner.batch_inference.get_default_runner's configuration (that module imports
        # click, not installed here): base + data + inference defaults, the variant's
        # settings, then the command's flags; no download (offline, see the docstring)
        inference_configs["model_name"] = model_name
        inference_configs["dump_dir"] = ARGS.get("out", "./output")
        # (bench overrides, e.g. tiny sizes: before parsing, so that the values the config
        # refers to by name follow, and again after the variant's settings, so that they win)
        base = copy.deepcopy({**configs_base, "data": data_configs, **inference_configs})
        configs = parse_configs(configs=_deep_update(base, copy.deepcopy(overrides)),
                                fill_required_with_null=True)
        configs.seeds = [ARGS["seed"]]
        configs.update(ConfigDict(model_configs[model_name]))
        if overrides:
            configs.update(ConfigDict(copy.deepcopy(overrides)))
        configs.model.N_cycle = ARGS["cycles"]
        configs.sample_diffusion.N_sample = ARGS["samples"]
        configs.sample_diffusion.N_step = ARGS["steps"]
        configs.dtype = "fp32"
        configs.use_msa = False
        configs.triangle_multiplicative = "torch"
        configs.triangle_attention = "torch"
        configs.use_template = False
        configs.use_rna_msa = False
        configs.need_atom_confidence = False
        configs.sample_diffusion.guidance.enable = False
        return configs

    if ARGS["mode"] == "ckpt":
        import numpy as np

        configs = default_configs()
        from protenix.model.protenix import Protenix

        torch.manual_seed(0)
        model = Protenix(configs)
        rng = np.random.default_rng(0)
        with torch.no_grad():
            for _, p in model.named_parameters():
                if p.dim() >= 2 and not bool(p.any()):
                    fan_in = p.shape[-1] if p.dim() == 2 else p.shape[-2]
                    w = rng.standard_normal(tuple(p.shape)) / np.sqrt(fan_in)
                    p.copy_(torch.from_numpy(w.astype(np.float32)))
        path = os.path.join(root, "checkpoint", f"{model_name}.pt")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        torch.save({"model": model.state_dict()}, path)
        n = sum(p.numel() for p in model.parameters())
        print(json.dumps({"path": path, "params": n}))
        return

    t = _clock()
    _offline_ccd(root)
    stages["ccd_setup"] = _since(t)
    t = _clock()
    runner = ri.InferenceRunner(default_configs())  # builds the network, loads the checkpoint
    stages["load"] = _since(t)
    configs = runner.configs
    configs["input_json_path"] = ARGS["json"]  # preprocess_input: no MSA search (use_msa false)
    seed = ARGS["seed"]
    seed_everything(seed=seed, deterministic=configs.deterministic)
    t = _clock()
    dataloader = get_inference_dataloader(configs=configs)
    data, atom_array, err = next(iter(dataloader))[0]
    if err:
        raise RuntimeError(f"Protenix featurizer: {err}")
    stages["features"] = _since(t)
    logs = []
    forward = runner.model.forward

    def logged_forward(*a, **k):
        out = forward(*a, **k)
        logs.append(out[2])
        return out

    runner.model.forward = logged_forward
    # CPU clock marks around the stages that Protenix's time tracker times by wall clock:
    # trunk = get_pairformer_output, diffusion = from there to the distogram head (cache prep
    # + sampler), confidence = distogram head + contact probabilities + confidence head
    marks = {}

    def marked(obj, attr, before=None, after=None):
        fn = getattr(obj, attr)

        def wrapper(*a, **k):
            if before and before not in marks:
                marks[before] = time.process_time()
            out = fn(*a, **k)
            if after:
                marks[after] = time.process_time()
            return out

        setattr(obj, attr, wrapper)

    marked(runner.model, "get_pairformer_output", "trunk0", "trunk1")
    marked(runner.model.distogram_head, "forward", "conf0")
    marked(runner.model, "run_confidence_head", None, "conf1")
    t = _clock()
    configs = ri.update_inference_configs(configs, data["N_token"].item())
    runner.update_model_configs(configs)
    pred = runner.predict(data)
    stages["forward"] = _since(t)
    t = _clock()
    runner.dumper.dump(dataset_name="", pdb_id=data["sample_name"], seed=seed, pred_dict=pred,
                       atom_array=atom_array,
                       entity_poly_type={k: v for k, v in data["entity_poly_type"].items()
                                         if v != "non-polymer"})
    stages["write"] = _since(t)
    tt = logs[-1]["time"]
    cpu = {"trunk": marks["trunk1"] - marks["trunk0"],
           "diffusion": marks["conf0"] - marks["trunk1"],
           "confidence": marks["conf1"] - marks["conf0"]}
    for ours, theirs in (("trunk", "pairformer"), ("diffusion", "diffusion"),
                         ("confidence", "confidence")):
        stages[ours] = {"wall": float(tt[theirs]), "cpu": cpu[ours]}
    # after the heads Protenix's forward computes the summary confidences (our "metrics")
    stages["metrics"] = {"wall": stages["forward"]["wall"] - float(tt["model_forward"]),
                         "cpu": stages["forward"]["cpu"] - (marks["conf1"] - marks["trunk0"])}
    w, c = _clock()
    print(json.dumps({"stages": stages, "script_wall": w - WALL0, "script_cpu": c - CPU0,
                      "startup_cpu": CPU0, "threads": torch.get_num_threads(),
                      "N_token": int(data["N_token"].item()), "name": data["sample_name"]}))


if __name__ == "__main__":
    main()
