"""Batching rule of ``argsort`` (``core/prims/sort.py``); it has no derivative (integer output)."""

from ..prims.sort import argsort
from ..vmap import axis_rule, batch_rules

batch_rules[argsort] = axis_rule(argsort, ("axis",))
