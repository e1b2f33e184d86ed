"""Slab decomposition of a grid axis across ranks, shared by the domains' distributed solvers
(``mindflow.cfd.distributed``, ``mindelec.fdtd.distributed``): a domain never imports another,
so the rule lives here."""

__all__ = ["slab_bounds"]


def slab_bounds(n, size, rank, halo, what="grid"):
    """``(start, stop)`` of rank ``rank``'s slab of an ``n``-cell axis cut in ``size`` parts.

    Raises:
        ValueError: ``size`` does not divide ``n``, or a slab is thinner than ``halo`` cells
            (the same message on every rank, raised before any message is sent).
    """
    n, size = int(n), int(size)
    if size < 1:
        raise ValueError(f"domain decomposition: the world size must be >= 1, got {size}")
    if n % size:
        raise ValueError(
            f"domain decomposition of the {what}: {size} ranks do not divide the {n} cells "
            f"along x (the first axis); use a world size that divides {n}"
        )
    local = n // size
    if local < halo:
        raise ValueError(
            f"domain decomposition of the {what}: {size} ranks leave slabs of {local} cells "
            f"along x, thinner than the halo of {halo} cells the stencil needs; use at most "
            f"{n // max(halo, 1)} ranks"
        )
    return rank * local, (rank + 1) * local
