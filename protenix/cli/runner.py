"""The model side of ``diffsci-protenix predict``: where the weights are found and the one function
that calls the network (:func:`run_model`).

Weights lookup (:func:`find_weights`), first hit wins:

1. ``--weights PATH``: a checkpoint file (``.h5``/``.pt``/``.npz``) or a folder holding
   ``<model>.h5`` or ``<model>.pt``;
2. ``$PROTENIX_WEIGHTS_DIR/<model>.{h5,pt}``;
3. the user cache ``$XDG_CACHE_HOME/protenix/checkpoints`` (default
   ``~/.cache/protenix/checkpoints``), where ``diffsci-protenix download MODEL`` puts them.

:func:`run_model` is the single seam between the command and the network
(``protenix.model.protenix.Protenix``, built from the variant's config and kept for the next
call with the same config and weights). With ``--random-weights`` it is the real network with
seeded random parameters (Protenix's initializers drawn from core's generator seeded with
:data:`RANDOM_WEIGHTS_SEED`, the same for every job and seed; the layers Protenix starts at
zero redrawn, so the outputs are not constant), so everything around and inside the network
runs; every output of such a run is labelled meaningless.
"""

import os

import numpy as np

from ..model.weights import WeightsError

__all__ = ["CHECKPOINT_URL", "RANDOM_WEIGHTS_SEED", "NetworkUnavailable", "build_network",
           "cache_dir", "find_weights", "resolve_chunk_size", "run_model"]

# Protenix's published checkpoints (protenix/web_service/dependency_url.py): <base>/<model>.pt
CHECKPOINT_URL = "https://protenix.tos-cn-beijing.volces.com/checkpoint"
_SUFFIXES = (".h5", ".pt")
RANDOM_WEIGHTS_SEED = 0
_NETWORK = {}  # the last built network: {"key": ..., "model": Protenix}


class NetworkUnavailable(RuntimeError):
    """The network class this command needs is not in this build."""


def cache_dir():
    """``$XDG_CACHE_HOME/protenix/checkpoints`` (default ``~/.cache/protenix/checkpoints``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "protenix", "checkpoints")


def weight_places(model, weights=None):
    """The candidate paths, in lookup order, as (description, path)."""
    places = []
    if weights:
        if os.path.isdir(weights):
            places += [("--weights", os.path.join(weights, model + s)) for s in _SUFFIXES]
        else:
            places.append(("--weights", weights))
    env = os.environ.get("PROTENIX_WEIGHTS_DIR")
    if env:
        places += [("$PROTENIX_WEIGHTS_DIR", os.path.join(env, model + s)) for s in _SUFFIXES]
    places += [("user cache", os.path.join(cache_dir(), model + s)) for s in _SUFFIXES]
    return places


def find_weights(model, weights=None):
    """Path of ``model``'s checkpoint (see the module docstring) or a ``WeightsError`` that
    lists every place looked at and how to get the weights."""
    places = weight_places(model, weights)
    if weights and not os.path.isdir(weights) and not os.path.isfile(weights):
        raise WeightsError(f"--weights {weights!r}: no such file or folder")
    for _, path in places:
        if os.path.isfile(path):
            return path
    looked = "\n".join(f"  {what}: {path}" for what, path in places)
    if "PROTENIX_WEIGHTS_DIR" not in os.environ:
        looked += "\n  $PROTENIX_WEIGHTS_DIR: (not set)"
    raise WeightsError(
        f"no weights found for model {model!r}; looked in:\n{looked}\n"
        f"get them with `diffsci-protenix download {model}` (into the user cache), pass --weights PATH, "
        "or run a smoke test with --random-weights (meaningless structures)")


def network_available():
    """True when ``protenix.model.protenix.Protenix`` is importable."""
    try:
        from ..model.protenix import Protenix  # noqa: F401
    except ImportError:
        return False
    return True


def resolve_chunk_size(requested, n_token, config):
    """The trunk chunk size for ``n_token`` tokens: an int or None (no chunking) as given, or
    for ``"auto"`` Protenix's dynamic rule (``infer_setting.chunk_size_thresholds``: the first
    threshold >= n_token gives the size, -1 meaning none; 32 above the largest)."""
    from diffsci.protenix.model.chunk import resolve_chunk_size as _resolve

    if requested != "auto":
        return requested
    return _resolve("auto", n_token, config["infer_setting"])


def _redraw_zero_weights(model):
    """Protenix zero-initialises its output layers (adaLN-Zero gates, transitions' last layer,
    the PAE/PDE/pLDDT/resolved and distogram heads), which would make a random-weights run's
    confidences constant: every all-zero weight matrix is redrawn ~ N(0, 1/fan_in) (seeded)."""
    from diffsci import core

    rng = np.random.default_rng(RANDOM_WEIGHTS_SEED)
    for _, p in model.parameters_and_names():
        shape = tuple(p.shape)
        if len(shape) >= 2 and not np.any(p.asnumpy()):
            fan_in = shape[-1] if len(shape) == 2 else shape[-2]
            w = rng.standard_normal(shape) / np.sqrt(fan_in)
            p.set_data(core.tensor(w.astype(np.float32), dtype=p.dtype))


def build_network(config, weights_path=None, random_weights=False):
    """The Protenix network of ``config`` with the checkpoint at ``weights_path`` (loaded by
    name, strict unless the config's ``load_strict`` is False) or, with ``random_weights``,
    seeded random parameters; in eval mode. The last one built is reused for the same config
    and weights. From a checkpoint the network is built under ``core.nn.init.skip_init``
    (the mini model's random initial values took 5 s to draw and were then overwritten); the
    parameters a non-strict load finds no entry for get their initial values afterwards, the
    same draws as without skipping (the generator was left untouched)."""
    import json

    from diffsci import core

    from ..model.protenix import Protenix
    from ..model.weights import load_weights

    if not random_weights and not weights_path:
        raise WeightsError("build_network: no weights path (and not --random-weights)")
    key = (json.dumps(config, sort_keys=True, default=str), None if random_weights else
           os.path.abspath(weights_path))  # fmt: skip
    if _NETWORK.get("key") == key:
        return _NETWORK["model"]
    _NETWORK.clear()
    if random_weights:
        core.random.set_seed(RANDOM_WEIGHTS_SEED)
    if random_weights:
        model = Protenix(config)
        _redraw_zero_weights(model)
    else:
        with core.nn.init.skip_init():
            model = Protenix(config)
        res = load_weights(model, weights_path, strict=bool(config.get("load_strict", True)))
        if res.missing_keys:
            fresh = dict(Protenix(config).parameters_and_names())
            params = dict(model.parameters_and_names())
            for name in res.missing_keys:
                params[name].set_data(fresh[name])
    model.set_train(False)
    _NETWORK.update(key=key, model=model)
    return model


def run_model(features, atoms, *, config, weights_path, random_weights, n_cycle, n_step,
              n_sample, seed, dtype="fp32", device="CPU", chunk_size=None, progress=True,
              timings=None):
    """One seed of one job through the network.

    Args:
        features: :func:`protenix.data.featurize` output (numpy); atoms: ``build_atoms``.
        config: the model's ``ConfigDict``; weights_path: checkpoint (None with
            ``random_weights``); n_cycle/n_step/n_sample: recycles, diffusion steps, samples;
        seed: seeds the random draws (MSA subsample, diffusion noise and augmentations:
            core's generator); dtype "fp32"/"bf16" (bf16: the trunk's recycles in bfloat16,
            diffusion and confidence in float32, as Protenix);
        device "CPU"/"GPU"; chunk_size: None, "auto" or an int (trunk row chunks;
        :func:`resolve_chunk_size` turns "auto" into Protenix's size for the job's length).
        progress: show tqdm bars (stderr, not kept) of the recycles and the diffusion steps.
        timings: a dict that receives wall seconds per stage: ``load`` (building the network
            and reading the weights; 0 when the network of the last call is reused),
            ``trunk``, ``diffusion``, ``confidence`` (the confidence and distogram heads) and
            ``network`` (the whole forward); ``<stage>_cpu``: the same stages' CPU seconds
            (``time.process_time``).

    Returns:
        dict: ``coordinate`` [N_s, N_atom, 3] (Angstrom), ``pae_logits``/``pde_logits``
        [N_s, N_tok, N_tok, 64], ``plddt_logits`` [N_s, N_atom, 50], ``distogram_logits``
        [N_tok, N_tok, 64], ``num_recycles`` (int).
    """
    import time

    from diffsci import core

    timings = {} if timings is None else timings
    chunk_size = resolve_chunk_size(chunk_size, len(features["asym_id"]), config)
    if not network_available():
        raise NetworkUnavailable("the network protenix.model.protenix.Protenix is not importable")
    t, c = time.perf_counter(), time.process_time()
    model = build_network(config, weights_path, random_weights)
    timings["load"] = timings.get("load", 0.0) + time.perf_counter() - t
    timings["load_cpu"] = timings.get("load_cpu", 0.0) + time.process_time() - c
    core.random.set_seed(int(seed))
    bars = {}

    def on_progress(stage, i, n):
        # one bar per stage ("recycle", "diffusion"), created at its first step
        if stage not in bars:
            from tqdm import tqdm

            bars[stage] = tqdm(total=n, desc=stage, leave=False, unit="step")
        bars[stage].update(i - bars[stage].n)

    t, c = time.perf_counter(), time.process_time()
    try:
        # MC dropout on the recycled pair with Protenix's inference probability (its
        # runner passes configs.mc_dropout_apply_rate, 0.4, to every forward)
        mc_rate = float(config.get("mc_dropout_apply_rate", 0.0))
        pred, _, log = model(features, N_cycle=int(n_cycle), N_step=int(n_step),
                             N_sample=int(n_sample), chunk_size=chunk_size, dtype=dtype,
                             mc_dropout_apply_rate=mc_rate,
                             progress=on_progress if progress else None)  # fmt: skip
    finally:
        for bar in bars.values():
            bar.close()
    timings["network"] = timings.get("network", 0.0) + time.perf_counter() - t
    timings["network_cpu"] = timings.get("network_cpu", 0.0) + time.process_time() - c
    times = log["time"]
    for ours, theirs in (("trunk", "pairformer"), ("diffusion", "diffusion"),
                         ("confidence", "confidence")):  # fmt: skip
        timings[ours] = timings.get(ours, 0.0) + times.get(theirs, 0.0)
        key = f"{ours}_cpu"
        timings[key] = timings.get(key, 0.0) + times.get(f"{theirs}_cpu", 0.0)
    return {
        "coordinate": pred["coordinate"].asnumpy().astype(np.float32),
        "pae_logits": pred["pae"].asnumpy(),
        "pde_logits": pred["pde"].asnumpy(),
        "plddt_logits": pred["plddt"].asnumpy(),
        "distogram_logits": pred["distogram"].asnumpy(),
        "num_recycles": int(n_cycle),
    }
