"""YAML load/save of configurations (Protenix's ``protenix.config.load_config`` /
``save_config``)."""

import os
import tempfile

import yaml

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
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w") as f:
            yaml.safe_dump(config, f)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
