"""``core.ops.operations`` (MindSpore's ``ops.operations``, imported ``as P``): the Primitive
classes, ``P.Concat(axis=1)(tensors)``. They are generated from the table in
``primitive_classes.py``, so their names are added to this namespace from it."""

from .composite import GradOperation as GradOperation
from .primitive_classes import PRIMITIVE_CLASSES
from .primitive_classes import Primitive as Primitive

globals().update(PRIMITIVE_CLASSES)

__all__ = ["GradOperation", "Primitive", *PRIMITIVE_CLASSES]
