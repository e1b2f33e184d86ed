"""What the geometry tests share: the sampler names and the central-difference gradient that
boundary normals are checked against."""

import numpy as np

SAMPLERS = ("uniform", "lhs", "halton", "sobol")


def fd_grad(sdf, p, h=1e-7):
    """Central differences of ``sdf`` at the points ``p`` ``[N, dim]``: ``[N, dim]``."""
    return np.stack([(sdf(p + h * e) - sdf(p - h * e)) / (2 * h) for e in np.eye(p.shape[1])], -1)
