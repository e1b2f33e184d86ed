"""YAML experiment configuration (MindFlow's ``mindflow/utils/load_config.py``)."""

import os

import yaml

__all__ = ["load_yaml_config"]


def _make_paths_absolute(base_dir, config):
    """``config`` with every string value whose key ends in ``_path`` made absolute against
    ``base_dir``, in nested dicts too (MindFlow's rule; lists are left as they are)."""
    for key, value in config.items():
        if isinstance(value, dict):
            config[key] = _make_paths_absolute(base_dir, value)
        elif isinstance(key, str) and key.endswith("_path") and isinstance(value, str):
            config[key] = os.path.abspath(os.path.join(base_dir, value))
    return config


def load_yaml_config(file_path):
    """Load a YAML configuration file into a dict.

    As in MindFlow, the values of keys ending in ``_path`` (at any depth of nested mappings)
    are made absolute against the current working directory, so a script can change directory
    afterwards; an absolute value stays as it is.

    Args:
        file_path: path of the ``.yaml`` file (str or ``os.PathLike``).

    Returns:
        dict: the configuration.

    Raises:
        FileNotFoundError: no file at ``file_path``.
        ValueError: the file's top level is not a mapping (an empty file, a list...).
    """
    path = os.fspath(file_path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"load_yaml_config: no configuration file at {path!r}")
    with open(path, encoding="utf-8") as stream:
        config = yaml.safe_load(stream)
    if not isinstance(config, dict):
        raise ValueError(
            f"load_yaml_config: {path!r} must hold a mapping of keys to values at its top level, "
            f"got {type(config).__name__}"
        )
    return _make_paths_absolute(os.path.abspath("."), config)
