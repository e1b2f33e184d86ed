"""The model side of ``protenix predict``: where the weights are found and the one function
that calls the network (:func:`run_model`).

Weights lookup (:func:`find_weights`), first hit wins:

1. ``--weights PATH``: a checkpoint file (``.h5``/``.pt``/``.npz``) or a folder holding
   ``<model>.h5`` or ``<model>.pt``;
2. ``$PROTENIX_WEIGHTS_DIR/<model>.{h5,pt}``;
3. the user cache ``$XDG_CACHE_HOME/protenix/checkpoints`` (default
   ``~/.cache/protenix/checkpoints``), where ``protenix download MODEL`` puts them.

:func:`run_model` is the single seam between the command and the network. While
``protenix.model.protenix.Protenix`` is not in this build, only ``--random-weights`` runs: it
returns a seeded stand-in prediction with the shapes and value ranges of the real one
(coordinates: the CCD ideal residues laid along a line per chain, chains 25 A apart; logits:
Gaussian) so that everything around the network (features, confidences, files, ranking,
errors, re-runs) is exercised. Every output of such a run is labelled meaningless.
"""

import os
import time

import numpy as np

from ..model.weights import WeightsError

__all__ = ["CHECKPOINT_URL", "NetworkUnavailable", "cache_dir", "find_weights",
           "resolve_chunk_size", "run_model"]

# Protenix's published checkpoints (protenix/web_service/dependency_url.py): <base>/<model>.pt
CHECKPOINT_URL = "https://protenix.tos-cn-beijing.volces.com/checkpoint"
_SUFFIXES = (".h5", ".pt")


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
        f"get them with `protenix download {model}` (into the user cache), pass --weights PATH, "
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
    if requested != "auto":
        return requested
    infer = config["infer_setting"]
    if not infer.get("dynamic_chunk_size", False) or "chunk_size_thresholds" not in infer:
        return infer.get("chunk_size")
    for threshold, size in sorted((int(k), v) for k, v in infer["chunk_size_thresholds"].items()):
        if n_token <= threshold:
            return None if size == -1 else size
    return 32


def _progress(iterable, desc, enabled):
    if not enabled:
        return iterable
    from tqdm import tqdm

    return tqdm(iterable, desc=desc, leave=False, disable=None)


def run_model(features, atoms, *, config, weights_path, random_weights, n_cycle, n_step,
              n_sample, seed, dtype="fp32", device="CPU", chunk_size=None, progress=True,
              timings=None):
    """One seed of one job through the network.

    Args:
        features: :func:`protenix.data.featurize` output (numpy); atoms: ``build_atoms``.
        config: the model's ``ConfigDict``; weights_path: checkpoint (None with
            ``random_weights``); n_cycle/n_step/n_sample: recycles, diffusion steps, samples;
        seed: seeds the diffusion noise (and the random weights); dtype "fp32"/"bf16";
        device "CPU"/"GPU"; chunk_size: None, "auto" or an int (trunk row chunks;
        :func:`resolve_chunk_size` turns "auto" into Protenix's size for the job's length).
        timings: a dict that receives seconds per stage (trunk, diffusion, confidence).

    Returns:
        dict: ``coordinate`` [N_s, N_atom, 3] (Angstrom), ``pae_logits``/``pde_logits``
        [N_s, N_tok, N_tok, 64], ``plddt_logits`` [N_s, N_atom, 50], ``distogram_logits``
        [N_tok, N_tok, 64], ``num_recycles`` (int).
    """
    timings = {} if timings is None else timings
    chunk_size = resolve_chunk_size(chunk_size, len(features["asym_id"]), config)
    if not network_available():
        if not random_weights:
            raise NetworkUnavailable(
                "the network protenix.model.protenix.Protenix is not in this build yet; only "
                "--random-weights (a meaningless smoke test of the pipeline) runs")
        return _stand_in(features, atoms, n_cycle, n_step, n_sample, seed, progress, timings)
    raise NetworkUnavailable(
        "protenix.model.protenix.Protenix is present but protenix.cli.runner.run_model is not "
        "wired to it yet (see its docstring)")


def _stand_in(features, atoms, n_cycle, n_step, n_sample, seed, progress, timings):
    """Seeded stand-in prediction (random-weights smoke test without the network)."""
    rng = np.random.default_rng(seed)
    n_tok = len(features["asym_id"])
    n_atom = len(atoms["atom_name"])
    t0 = time.perf_counter()
    for _ in _progress(range(n_cycle), "trunk recycles", progress):
        pass
    distogram = rng.normal(size=(n_tok, n_tok, 64)).astype(np.float32)
    t1 = time.perf_counter()
    key = atoms["asym"] * 1_000_000 + atoms["res_id"]
    _, res_of_atom = np.unique(key, return_inverse=True)
    centred = atoms["ideal"].astype(np.float64).copy()
    for r in range(res_of_atom.max() + 1):
        m = res_of_atom == r
        centred[m] -= centred[m].mean(0)
    along = atoms["res_id"] * 3.8
    base = np.stack([along, atoms["asym"] * 25.0, np.zeros(n_atom)], -1) + centred
    coords = np.empty((n_sample, n_atom, 3))
    for s in range(n_sample):
        coords[s] = base
    for _ in _progress(range(n_step), "diffusion steps", progress):
        coords += rng.normal(scale=0.05, size=coords.shape)
    t2 = time.perf_counter()
    out = {
        "coordinate": coords.astype(np.float32),
        "pae_logits": rng.normal(size=(n_sample, n_tok, n_tok, 64)).astype(np.float32),
        "pde_logits": rng.normal(size=(n_sample, n_tok, n_tok, 64)).astype(np.float32),
        "plddt_logits": rng.normal(size=(n_sample, n_atom, 50)).astype(np.float32),
        "distogram_logits": distogram,
        "num_recycles": int(n_cycle),
    }
    timings["trunk"] = timings.get("trunk", 0.0) + t1 - t0
    timings["diffusion"] = timings.get("diffusion", 0.0) + t2 - t1
    return out
