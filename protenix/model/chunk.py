"""Protenix's dynamic chunk-size rule for block-wise inference, and ``chunk_size="auto"``.

Protenix 2.0.0 (``protenix/model/protenix.py::Protenix._get_dynamic_chunk_size``, thresholds
in ``configs/configs_base.py`` under ``infer_setting``) picks the trunk's chunk size from the
number of tokens when ``infer_setting.dynamic_chunk_size`` is on: the thresholds, read as
integers and sorted, map the first threshold ``>= N_token`` to its size, ``-1`` meaning no
chunking (None); above the largest threshold the size is 32. Without thresholds the fixed
``infer_setting.chunk_size`` is used.

The trunk modules (``PairformerBlock``, ``PairformerStack``, ``MSAModule``,
``TemplateEmbedder``) accept ``chunk_size="auto"`` and resolve it here from their pair
tensor's ``N_token`` with Protenix's default thresholds.
"""

from collections.abc import Mapping

__all__ = [
    "DEFAULT_CHUNK_SIZE_THRESHOLDS",
    "LARGEST_INPUT_CHUNK_SIZE",
    "get_dynamic_chunk_size",
    "resolve_chunk_size",
]

# configs_base.py ``infer_setting.chunk_size_thresholds`` (Protenix 2.0.0): N_token -> rows
DEFAULT_CHUNK_SIZE_THRESHOLDS = {"1024": -1, "1536": 512, "2048": 256, "2560": 128}
# the size Protenix uses above the largest threshold ("extreme case for very large proteins")
LARGEST_INPUT_CHUNK_SIZE = 32


def get_dynamic_chunk_size(n_token, thresholds=None):
    """The chunk size for ``n_token`` tokens under Protenix's threshold rule.

    Args:
        n_token: number of tokens (int >= 0).
        thresholds: ``{N_token bound (str or int): chunk size (int, -1 = no chunking)}``;
            default :data:`DEFAULT_CHUNK_SIZE_THRESHOLDS`.

    Returns:
        int rows per chunk, or None for no chunking.
    """
    n_token = int(n_token)
    if n_token < 0:
        raise ValueError(f"get_dynamic_chunk_size: n_token must be >= 0, got {n_token}")
    thresholds = DEFAULT_CHUNK_SIZE_THRESHOLDS if thresholds is None else thresholds
    pairs = []
    for key, size in thresholds.items():
        try:
            pairs.append((int(key), int(size)))
        except (TypeError, ValueError):
            raise ValueError(
                f"get_dynamic_chunk_size: threshold {key!r}: {size!r} is not int: int"
            ) from None
    for bound, size in sorted(pairs):
        if n_token <= bound:
            return None if size == -1 else size
    return LARGEST_INPUT_CHUNK_SIZE


def resolve_chunk_size(chunk_size, n_token, infer_setting=None):
    """A module's ``chunk_size`` argument as rows (int) or None.

    Args:
        chunk_size: None or an int (returned as is), or ``"auto"``.
        n_token: number of tokens (the pair tensor's ``N``).
        infer_setting: Protenix's ``infer_setting`` mapping (``dynamic_chunk_size``,
            ``chunk_size_thresholds``, ``chunk_size``); None: the default thresholds.
            With ``dynamic_chunk_size`` off, or without thresholds, ``"auto"`` gives the
            fixed ``chunk_size`` of the setting (as Protenix).

    Returns:
        int or None.
    """
    if isinstance(chunk_size, str):
        if chunk_size != "auto":
            raise ValueError(f"chunk_size {chunk_size!r}: expected None, an int or 'auto'")
        if infer_setting is None:
            return get_dynamic_chunk_size(n_token)
        if not isinstance(infer_setting, Mapping):
            raise TypeError(f"infer_setting: expected a mapping, got {type(infer_setting).__name__}")
        fixed = infer_setting.get("chunk_size")
        if not infer_setting.get("dynamic_chunk_size", False):
            return fixed
        if infer_setting.get("chunk_size_thresholds") is None:
            return fixed
        return get_dynamic_chunk_size(n_token, infer_setting["chunk_size_thresholds"])
    return chunk_size
