"""``core.common.dtype``: MindSpore's ``mindspore.common.dtype`` path (``import
mindspore.common.dtype as mstype``) for core's dtypes."""

from ..dtypes import *  # noqa: F403
from ..dtypes import bool_, float16, float32, float64, int32, int64  # noqa: F401
