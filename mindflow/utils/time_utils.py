"""Timing (MindFlow's ``mindflow/utils/time_utils.py``)."""

import functools
import time

from .log_utils import print_log

__all__ = ["log_timer"]


def log_timer(func):
    """Decorator: after each call of ``func``, print and log
    ``End-to-End total time: {seconds:.2f}s``. Returns ``func``'s result (MindFlow's wrapper
    drops it)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        start = time.time()
        result = func(*args, **kwargs)
        print_log(f"End-to-End total time: {time.time() - start:.2f}s")
        return result

    return wrapper
