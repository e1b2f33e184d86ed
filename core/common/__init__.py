"""``core.common``: MindSpore-compatible module paths (``core.common.initializer``)."""

from . import initializer as initializer
