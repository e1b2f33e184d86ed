"""``autograd.scipy``: only ``special`` and ``linalg`` are mapped; the rest is missing."""
