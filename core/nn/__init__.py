"""``core.nn``: cells, layers, initializers, losses, optimizers, schedules."""

from .cell import Cell as Cell
