"""YAML load/save of configurations (Protenix's ``protenix.config.load_config`` /
``save_config``)."""

import os

import yaml

from diffsci.core.atomic import atomic_write

from .config_dict import ConfigDict

__all__ = ["load_config", "save_config"]


def load_config(path):
    """A configuration read from a YAML file, as a plain nested dict (``yaml.safe_load``: no
    Python objects are built from the file)."""
    with open(path) as f:
        return yaml.safe_load(f)


def save_config(config, path):
    """Write ``config`` (a ConfigDict or a dict) as YAML; the file is replaced atomically."""
    if isinstance(config, ConfigDict):
        config = config.to_dict()
    atomic_write(path, yaml.safe_dump(config))
