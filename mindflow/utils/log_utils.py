"""Logging to the console and a file (MindFlow's ``mindflow/utils/log_utils.py``)."""

import logging
import os

__all__ = ["log_config", "print_log"]

_FORMAT = "%(asctime)s %(filename)s[line:%(lineno)d] %(levelname)s %(message)s"
_DATEFMT = "%a, %d %b %Y %H:%M:%S"
_handler = [None]  # the file handler log_config installed on the root logger


def log_config(log_dir="./logs", model_name="model", permission=0o644):
    """Send the log (root logger, level INFO) to ``{log_dir}/{model_name}.log``.

    The file is created afresh (mode ``'w'``) with the given ``permission`` and MindFlow's
    format (``time file[line:n] LEVEL message``). ``log_dir`` is created if missing. Calling
    it again closes the previous file and switches to the new one (MindFlow's
    ``logging.basicConfig`` would keep the first; any other handlers are left alone).

    Args:
        log_dir: directory of the log file. Default ``'./logs'``.
        model_name: the file's name without ``.log``. Default ``'model'``.
        permission: file mode bits of the log file. Default ``0o644``.

    Returns:
        str: the log file's path.
    """
    os.makedirs(log_dir, exist_ok=True)
    log_path = os.path.join(log_dir, f"{model_name}.log")
    root = logging.getLogger()
    if _handler[0] is not None:
        root.removeHandler(_handler[0])
        _handler[0].close()
    handler = logging.FileHandler(log_path, mode="w", encoding="utf-8")
    handler.setFormatter(logging.Formatter(_FORMAT, datefmt=_DATEFMT))
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    _handler[0] = handler
    os.chmod(log_path, permission)
    return log_path


def print_log(*msg, level=logging.INFO, enable_log=True):
    """Print ``msg`` to stdout and, with ``enable_log``, log it at ``level``.

    As in MindFlow, the printed line joins the messages with spaces (``print``) and the logged
    line with ``", "``.

    Args:
        *msg: the message(s).
        level: logging level. Default ``logging.INFO``.
        enable_log: False prints only (before ``log_config``, for example). Default True.
    """
    print(*msg)
    if not enable_log:
        return
    # the root logger itself: ``logging.log`` would add a stderr handler when none is set,
    # printing every message twice
    root = logging.getLogger()
    if len(msg) == 1:
        root.log(level, msg[0], stacklevel=2)
    else:
        root.log(level, ", ".join(str(m) for m in msg), stacklevel=2)
