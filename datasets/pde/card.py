"""The metadata card: what a data file holds and how it was made, stored inside the file.

A card is a small JSON object kept as the string attribute ``diffsci_card`` on the HDF5 file's
root, next to PDEBench's own attributes (which it never replaces)::

    {"pde": "burgers1d",                      # which equation (str, required)
     "parameters": {"nu": 0.1},               # the equation's parameters (SI or nondimensional,
                                              #   as the generator documents)
     "grid": {"nx": 1024, "nt": 201, "x": [0, 1], "t": [0, 1]},   # the discretisation
     "generator": "datasets.pde.generators.burgers_1d",           # what wrote the data
     "seed": 0,                               # the seed the generator drew with (or null)
     "version": "0.1.0"}                      # diffsci's version that wrote the file

Other keys are kept as given. Values must be JSON: numpy scalars and arrays are converted
(arrays to nested lists), anything else is an error naming the key.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from importlib import metadata
from typing import Any

import h5py
import numpy as np

__all__ = ["CARD_ATTR", "CARD_KEYS", "make_card", "normalize_card", "read_card"]

CARD_ATTR = "diffsci_card"
CARD_KEYS = ("pde", "parameters", "grid", "generator", "seed", "version")


def _diffsci_version() -> str:
    try:
        return metadata.version("diffsci")
    except metadata.PackageNotFoundError:  # running from a bare checkout
        return "unknown"


def _to_json(value: Any, key: str) -> Any:
    if isinstance(value, (str, bool, int, float)) or value is None:
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise TypeError(f"card: key {k!r} under {key!r} is not a string")
            out[k] = _to_json(v, f"{key}.{k}")
        return out
    if isinstance(value, (list, tuple)):
        return [_to_json(v, f"{key}[{i}]") for i, v in enumerate(value)]
    raise TypeError(f"card: {key!r} holds a {type(value).__name__}, which JSON cannot store")


def normalize_card(card: Mapping[str, Any]) -> dict[str, Any]:
    """Check a card and return a JSON-ready copy with every standard key present.

    Args:
        card: a mapping with at least ``"pde"`` (a non-empty string); ``parameters`` and
            ``grid`` default to ``{}``, ``generator`` and ``seed`` to ``None``, ``version`` to
            diffsci's version.

    Returns:
        a new dict: the standard keys first (in :data:`CARD_KEYS` order), then the others.

    Raises:
        TypeError / ValueError: naming the key that is missing or cannot be stored.
    """
    if not isinstance(card, Mapping):
        raise TypeError(f"card must be a dict, got {type(card).__name__}")
    if not isinstance(card.get("pde"), str) or not card["pde"]:
        raise ValueError(f"card needs 'pde', a non-empty string naming the equation; got {card!r}")
    seed = card.get("seed")
    if seed is not None and not isinstance(seed, (int, np.integer)):
        raise TypeError(f"card: 'seed' must be an int or None, got {seed!r}")
    defaults = {
        "parameters": {},
        "grid": {},
        "generator": None,
        "seed": None,
        "version": _diffsci_version(),
    }
    out = {"pde": card["pde"]}
    for key in CARD_KEYS[1:]:
        out[key] = _to_json(card.get(key, defaults[key]), key)
    for key, value in card.items():
        if key not in out:
            out[str(key)] = _to_json(value, str(key))
    return out


def make_card(
    pde: str,
    parameters: Mapping[str, Any] | None = None,
    grid: Mapping[str, Any] | None = None,
    generator: str | None = None,
    seed: int | None = None,
    version: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """Build a card (see the module docstring for the meaning of each key)."""
    card: dict[str, Any] = {"pde": pde, "parameters": parameters or {}, "grid": grid or {}}
    card.update(generator=generator, seed=seed, **extra)
    if version is not None:
        card["version"] = version
    return normalize_card(card)


def card_to_attr(card: Mapping[str, Any]) -> str:
    """The card as the JSON string stored in the ``diffsci_card`` attribute."""
    return json.dumps(normalize_card(card), sort_keys=False)


def card_from_attr(text: Any, where: str) -> dict[str, Any]:
    """Parse a stored ``diffsci_card`` attribute (str or bytes); errors name ``where``."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    try:
        card = json.loads(text)
    except (TypeError, json.JSONDecodeError) as e:
        raise ValueError(f"{where}: attribute {CARD_ATTR!r} is not valid JSON ({e})") from e
    if not isinstance(card, dict):
        raise ValueError(
            f"{where}: attribute {CARD_ATTR!r} holds {type(card).__name__}, not a dict"
        )
    return card


def read_card(path: str | os.PathLike | h5py.File) -> dict[str, Any] | None:
    """The card stored in a file, or ``None`` when it has none (e.g. PDEBench's own files).

    Args:
        path: an HDF5 file's path (``.h5`` / ``.hdf5``), or an open ``h5py.File``.
    """
    if isinstance(path, h5py.File):
        text = path.attrs.get(CARD_ATTR)
        return None if text is None else card_from_attr(text, path.filename)
    from .reader import open_pdebench  # errors for unreadable files are the reader's

    with open_pdebench(path) as f:
        return f.card
