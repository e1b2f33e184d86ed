"""Token/atom index helpers of Protenix (``protenix.model.utils``): broadcast token features to
their atoms, average atom features into their tokens."""

import numpy as np

from diffsci import core
from diffsci.core import ops

__all__ = ["aggregate_atom_to_token", "broadcast_token_to_atom"]


def _index(atom_to_token_idx):
    idx = atom_to_token_idx
    return idx if isinstance(idx, core.Tensor) else core.tensor(np.asarray(idx, np.int64))


def broadcast_token_to_atom(x_token, atom_to_token_idx):
    """Token embedding of each atom's token.

    Args:
        x_token: ``[..., N_token, d]``.
        atom_to_token_idx: ``[N_atom]`` ints (or ``[..., N_atom]`` with ``x_token``'s batch axes).

    Returns:
        ``[..., N_atom, d]``.
    """
    idx = _index(atom_to_token_idx)
    if idx.ndim == 1:
        return ops.take(x_token, idx, axis=x_token.ndim - 2)
    if tuple(idx.shape[:-1]) != tuple(x_token.shape[:-2]):
        raise ValueError(
            f"broadcast_token_to_atom: index of shape {tuple(idx.shape)} does not match the "
            f"batch axes of x_token {tuple(x_token.shape)}"
        )
    return ops.take_along_axis(x_token, ops.expand_dims(idx, -1), axis=-2)


def aggregate_atom_to_token(x_atom, atom_to_token_idx, n_token=None, reduce="mean"):
    """Sum or mean of the atom embeddings of each token (tokens without atoms get 0).

    Args:
        x_atom: ``[..., N_atom, d]``.
        atom_to_token_idx: ``[N_atom]`` ints.
        n_token: number of tokens (default: largest index + 1).
        reduce: "mean" or "sum".

    Returns:
        ``[..., N_token, d]``.
    """
    idx = np.asarray(_index(atom_to_token_idx).asnumpy(), np.int64)
    if idx.ndim != 1:
        raise ValueError(f"aggregate_atom_to_token: index must be [N_atom], got {idx.shape}")
    n_token = int(idx.max()) + 1 if n_token is None else int(n_token)
    shape = (*x_atom.shape[:-2], n_token, x_atom.shape[-1])
    out = ops.index_add_axis(ops.zeros(shape, dtype=x_atom.dtype), x_atom.ndim - 2,
                             core.tensor(idx), x_atom)  # fmt: skip
    if reduce == "sum":
        return out
    if reduce != "mean":
        raise ValueError(f"aggregate_atom_to_token: reduce must be 'mean' or 'sum', got {reduce!r}")
    count = np.bincount(idx, minlength=n_token).astype(np.float64)
    inv = np.where(count > 0, 1.0 / np.maximum(count, 1.0), 0.0)[:, None]
    return out * core.tensor(inv, dtype=x_atom.dtype)
