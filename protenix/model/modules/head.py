"""The distogram head (AF3 supplement Algorithm 1, line 17; AF2 supplement section 1.9.8), as
``protenix.model.modules.head`` (Protenix 2.0.0)."""

from diffsci.core import nn, ops

from .primitives import Linear

__all__ = ["DistogramHead"]


class DistogramHead(nn.Cell):
    """Symmetrised distogram logits ``l + l^T`` with ``l = Linear(z)``.

    Args:
        c_z: pair channels (128).
        no_bins: distance bins (64).
    """

    def __init__(self, c_z=128, no_bins=64):
        super().__init__()
        self.c_z, self.no_bins = c_z, no_bins
        self.linear = Linear(c_z, no_bins, initializer="zeros")

    def construct(self, z):
        """z ``[..., N_token, N_token, c_z]`` -> logits ``[..., N_token, N_token, no_bins]``."""
        logits = self.linear(z)
        return logits + ops.swapaxes(logits, -2, -3)
