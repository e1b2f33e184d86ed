"""Protenix's training losses (``protenix.model.loss`` of Protenix 2.0.0) on core ops.

The AlphaFold 3 supplement (Abramson et al. 2024, Nature 630) defines the loss
``L = alpha_confidence (L_plddt + L_pde + L_resolved + alpha_pae L_pae)
+ alpha_diffusion L_diffusion + alpha_distogram L_distogram`` (Sec. 4, eq. 6) with the
diffusion loss ``L_diffusion = (t^2 + sigma_data^2) / (t sigma_data)^2 (L_MSE + alpha_bond
L_bond) + L_smooth_lddt`` (eqs. 2-6), and Protenix weights the smooth-lDDT term too
(``loss.weight.smooth_lddt``). Classes and names are Protenix's:

- :class:`SmoothLDDTLoss` (Algorithm 27), plain (distances given), ``dense_forward``
  (coordinates, all atom pairs) and ``sparse_forward`` (only the pairs of the lDDT mask);
- :class:`BondLoss` (eq. 5), plain and ``sparse_forward``;
- :class:`MSELoss` (eqs. 2-4) with :func:`weighted_rigid_align` (Algorithm 28);
- :class:`DistogramLoss`, :class:`PDELoss`, :class:`PAELoss` (with Algorithms 29-30,
  :func:`expressCoordinatesInFrame`, :func:`compute_alignment_error_squared`),
  :class:`PLDDTLoss` (Sec. 4.3.1, :func:`calculate_atom_bespoke_lddt`),
  :class:`ExperimentallyResolvedLoss`;
- :class:`ProtenixLoss`, the weighted sum with Protenix's config keys
  (``configs.loss.weight.alpha_*``, ``configs.loss.diffusion_lddt_chunk_size``, ...).

Memory: the smooth-lDDT loss's ``[N_sample, N_atom, N_atom]`` distance tensors are a
training step's largest activations. With ``diffusion_lddt_chunk_size`` (Protenix default 1)
each chunk of samples runs under :func:`core.recompute`, as Protenix checkpoints it, so the
backward pass keeps only the coordinates and re-derives one chunk's pair tensors at a time
(``dense_forward`` also recomputes the chunk's distance matrix, which Protenix keeps);
``None`` is the plain, all-at-once path. Values and gradients are the same either way.

Labels (bins, alignments, lDDT targets) carry no gradient, as in Protenix (``no_grad``). The
masks that select atoms or tokens (``rep_atom_mask``, ``coordinate_mask`` where Protenix
indexes with it, ``has_frame``, ``frame_atom_index``, the sparse losses' pair masks) are
features, read as concrete arrays; under :func:`core.jit` pass them as constants (closed over)
rather than traced arguments. Coordinates are in Angstrom.
"""

import logging

import numpy as np

from diffsci import core
from diffsci.core import nn, ops

__all__ = [
    "BondLoss",
    "DistogramLoss",
    "ExperimentallyResolvedLoss",
    "MSELoss",
    "PAELoss",
    "PDELoss",
    "PLDDTLoss",
    "ProtenixLoss",
    "SmoothLDDTLoss",
    "align_pred_to_true",
    "calculate_atom_bespoke_lddt",
    "cdist",
    "compute_alignment_error_squared",
    "compute_lddt_mask",
    "expressCoordinatesInFrame",
    "gather_frame_atom_by_indices",
    "loss_reduction",
    "softmax_cross_entropy",
    "weighted_rigid_align",
]

logger = logging.getLogger(__name__)

_CONFIDENCE_LOSSES = ("plddt_loss", "pde_loss", "resolved_loss", "pae_loss")


# ---- helpers ---------------------------------------------------------------------------------


def _tensor(x, dtype=None):
    """``x`` as a core Tensor (numpy arrays and Python numbers converted), cast to ``dtype``."""
    if not isinstance(x, core.Tensor):
        x = core.tensor(np.asarray(x))
    if dtype is not None and x.dtype != dtype:
        x = ops.astype(x, dtype)
    return x


def _concrete(x, what):
    """A mask or index feature as a numpy array; it decides shapes, so it cannot be traced."""
    if isinstance(x, core.Tensor):
        try:
            return np.asarray(x.asnumpy())
        except Exception as err:  # a tracer under core.jit / vmap
            raise ValueError(
                f"protenix loss: {what} selects atoms/tokens and must be a concrete array "
                "(pass it as a constant, not a traced argument)"
            ) from err
    return np.asarray(x)


def _indices(mask, what):
    """Positions where a 1-d mask is nonzero, as an int64 Tensor."""
    m = _concrete(mask, what)
    if m.ndim != 1:
        raise ValueError(f"protenix loss: {what} must be 1-d, got shape {m.shape}")
    return core.tensor(np.nonzero(m)[0].astype(np.int64))


def _select(x, idx, axis):
    return ops.take(x, idx, axis=axis % x.ndim)


def _n_chunks(n, chunk):
    return n // chunk + (n % chunk != 0)


def _sample_chunk(x, i, chunk):
    """``x[..., i*chunk:(i+1)*chunk, :, :]`` (the N_sample axis is -3)."""
    return x[..., i * chunk : (i + 1) * chunk, :, :]


def loss_reduction(loss, method="mean"):
    """Reduce over all axes: "mean", "sum" (or "add"), "max", "min"; None keeps ``loss``."""
    if method is None:
        return loss
    if method not in ("mean", "sum", "add", "max", "min"):
        raise ValueError(f"loss_reduction: unknown method {method!r}")
    return {"mean": ops.mean, "sum": ops.sum, "add": ops.sum, "max": ops.max, "min": ops.min}[
        method
    ](loss)


def cdist(a, b=None):
    """Euclidean distances ``|a_i - b_j|`` computed from the differences (torch's
    ``donot_use_mm_for_euclid_dist``), with gradient 0 where a distance is 0 (as torch's).

    Args:
        a: ``[..., P, 3]``; b: ``[..., R, 3]`` (default ``a``).

    Returns:
        ``[..., P, R]``.
    """
    b = a if b is None else b
    diff = ops.expand_dims(a, -2) - ops.expand_dims(b, -3)  # [..., P, R, 3]
    sq = ops.sum(diff * diff, axis=-1)
    pos = ops.greater(sq, 0.0)
    return ops.where(pos, ops.sqrt(ops.where(pos, sq, ops.ones_like(sq))), ops.zeros_like(sq))


def _off_diagonal(n, dtype):
    return core.tensor(1.0 - np.eye(n), dtype=dtype)


def softmax_cross_entropy(logits, labels):
    """``-sum(labels * log_softmax(logits), -1)``: logits and labels ``[..., C]`` -> ``[...]``."""
    return -ops.sum(labels * ops.log_softmax(logits, axis=-1), axis=-1)


def _one_hot(bins, n, dtype):
    return ops.one_hot(ops.astype(bins, core.int64), n, dtype=dtype)


def _count_above(x, boundaries):
    """Number of boundaries strictly below each value of ``x`` (``sum(x[..., None] > b)``)."""
    return ops.sum(ops.astype(ops.greater(ops.expand_dims(x, -1), boundaries), core.int64), -1)


def _linspace(start, stop, num, dtype):
    return ops.linspace(float(start), float(stop), int(num), dtype=dtype)


# ---- smooth lDDT (Algorithm 27) and bond loss (eq. 5) -------------------------------------------


class SmoothLDDTLoss(nn.Cell):
    """AF3 Algorithm 27: ``1 - mean_samples[sum_lm c_lm e_lm / sum_lm c_lm]`` with
    ``e_lm = 1/4 sum_{t in 0.5,1,2,4} sigmoid(t - |d_lm - d_lm^GT|)``.

    Args:
        eps: added to the denominator (Protenix default 1e-10; its config uses 1e-6).
        reduction: over the batch axes ("mean", "sum", None).
    """

    def __init__(self, eps=1e-10, reduction="mean"):
        super().__init__()
        self.eps = float(eps)
        self.reduction = reduction

    def _chunk_forward(self, pred_distance, true_distance, c_lm=None):
        """Per-sample lDDT ``[..., N_sample]`` from distances ``[..., N_sample, N, N]`` (dense,
        with ``c_lm`` ``[..., 1, N, N]``) or pair lists ``[..., N_sample, P]`` (sparse)."""
        dist_diff = ops.abs(pred_distance - true_distance)
        eps_lm = 0.0
        for threshold in (0.5, 1.0, 2.0, 4.0):
            eps_lm = eps_lm + 0.25 * ops.sigmoid(threshold - dist_diff)
        if c_lm is not None:
            return ops.sum(c_lm * eps_lm, axis=(-1, -2)) / (ops.sum(c_lm, axis=(-1, -2)) + self.eps)
        return ops.mean(eps_lm, axis=-1)

    def _finish(self, lddt):
        lddt = ops.mean(lddt, axis=-1)  # [...]
        return 1 - loss_reduction(lddt, method=self.reduction)

    def _c_lm(self, lddt_mask, dtype):
        c = _tensor(lddt_mask)
        c = ops.astype(ops.not_equal(c, 0), dtype)
        return ops.stop_gradient(ops.expand_dims(c, -3))  # [..., 1, N_atom, N_atom]

    def construct(self, pred_distance, true_distance, distance_mask, lddt_mask,
                  diffusion_chunk_size=None):  # fmt: skip
        """Smooth-lDDT loss from distances.

        Args:
            pred_distance: ``[..., N_sample, N_atom, N_atom]`` predicted distances (Angstrom).
            true_distance: ``[..., N_atom, N_atom]``.
            distance_mask: ``[N_atom, N_atom]`` (unused, as in Protenix: ``lddt_mask`` has it).
            lddt_mask: ``[..., N_atom, N_atom]`` pairs within the inclusion radius.
            diffusion_chunk_size: samples per recomputed chunk; None: all at once.

        Returns:
            ``[]`` (or ``[...]`` with ``reduction=None``).
        """
        del distance_mask
        c_lm = self._c_lm(lddt_mask, pred_distance.dtype)
        true_distance = _tensor(true_distance, pred_distance.dtype)
        if diffusion_chunk_size is None:
            lddt = self._chunk_forward(pred_distance, true_distance, c_lm)
        else:
            chunk = int(diffusion_chunk_size)
            fn = core.recompute(self._chunk_forward)
            lddt = ops.concatenate(
                [
                    fn(_sample_chunk(pred_distance, i, chunk), true_distance, c_lm)
                    for i in range(_n_chunks(pred_distance.shape[-3], chunk))
                ],
                axis=-1,
            )
        return self._finish(lddt)

    forward = construct

    def sparse_forward(self, pred_coordinate, true_coordinate, lddt_mask,
                       diffusion_chunk_size=None):  # fmt: skip
        """The smooth-lDDT loss over the pairs of ``lddt_mask`` only (no ``[N, N]`` tensors).

        Args:
            pred_coordinate: ``[N_sample, N_atom, 3]``.
            true_coordinate: ``[N_atom, 3]``.
            lddt_mask: ``[N_atom, N_atom]`` (concrete).
            diffusion_chunk_size: samples per recomputed chunk; None: all at once.
        """
        m = _concrete(lddt_mask, "SmoothLDDTLoss.sparse_forward lddt_mask")
        li, mi = (core.tensor(v.astype(np.int64)) for v in np.nonzero(m))
        true_coordinate = _tensor(true_coordinate, pred_coordinate.dtype)
        true_lm = ops.norm(_select(true_coordinate, li, -2) - _select(true_coordinate, mi, -2),
                           axis=-1)  # fmt: skip

        def pair_lddt(x, true_lm):
            d = ops.norm(_select(x, li, -2) - _select(x, mi, -2), axis=-1)  # [..., S, P]
            return self._chunk_forward(d, true_lm)

        if diffusion_chunk_size is None:
            lddt = pair_lddt(pred_coordinate, true_lm)
        else:
            chunk = int(diffusion_chunk_size)
            fn = core.recompute(pair_lddt)
            lddt = ops.concatenate(
                [
                    fn(_sample_chunk(pred_coordinate, i, chunk), true_lm)
                    for i in range(_n_chunks(pred_coordinate.shape[-3], chunk))
                ],
                axis=-1,
            )
        return self._finish(lddt)

    def dense_forward(self, pred_coordinate, true_coordinate, lddt_mask,
                      diffusion_chunk_size=None, true_distance=None):  # fmt: skip
        """The smooth-lDDT loss from coordinates over all atom pairs.

        Args:
            pred_coordinate: ``[..., N_sample, N_atom, 3]``.
            true_coordinate: ``[..., N_atom, 3]``.
            lddt_mask: ``[..., N_atom, N_atom]``.
            diffusion_chunk_size: samples per recomputed chunk (the chunk's distance matrix is
                recomputed in the backward pass too); None: all at once.
            true_distance: precomputed ``[..., N_atom, N_atom]`` true distances (optional).
        """
        c_lm = self._c_lm(lddt_mask, pred_coordinate.dtype)
        if true_distance is None:
            tc = _tensor(true_coordinate, pred_coordinate.dtype)
            true_distance = cdist(tc, tc)
        true_distance = ops.stop_gradient(_tensor(true_distance, pred_coordinate.dtype))

        def chunk_lddt(x, true_distance, c_lm):
            return self._chunk_forward(cdist(x, x), true_distance, c_lm)

        if diffusion_chunk_size is None:
            lddt = chunk_lddt(pred_coordinate, true_distance, c_lm)
        else:
            chunk = int(diffusion_chunk_size)
            fn = core.recompute(chunk_lddt)
            lddt = ops.concatenate(
                [
                    fn(_sample_chunk(pred_coordinate, i, chunk), true_distance, c_lm)
                    for i in range(_n_chunks(pred_coordinate.shape[-3], chunk))
                ],
                axis=-1,
            )
        return self._finish(lddt)


class BondLoss(nn.Cell):
    """AF3 eq. 5: mean over bonded pairs of ``(|x_l - x_m| - |x_l^GT - x_m^GT|)^2``.

    Args:
        eps: added to the denominator (Protenix adds it per pair: ``sum(bond_mask + eps)``).
        reduction: over the batch axes.
    """

    def __init__(self, eps=1e-6, reduction="mean"):
        super().__init__()
        self.eps = float(eps)
        self.reduction = reduction

    def _chunk_forward(self, pred_distance, true_distance, bond_mask):
        err = (pred_distance - ops.expand_dims(true_distance, -3)) ** 2
        return ops.sum(err * bond_mask, axis=(-1, -2)) / ops.sum(bond_mask + self.eps,
                                                                 axis=(-1, -2))  # fmt: skip

    def construct(self, pred_distance, true_distance, distance_mask, bond_mask,
                  per_sample_scale=None, diffusion_chunk_size=None):  # fmt: skip
        """Bond loss from distances.

        Args:
            pred_distance: ``[..., N_sample, N_atom, N_atom]``.
            true_distance: ``[..., N_atom, N_atom]``.
            distance_mask, bond_mask: ``[N_atom, N_atom]`` (or with batch axes).
            per_sample_scale: ``[..., N_sample]`` noise-level weights (optional).
            diffusion_chunk_size: samples per recomputed chunk; None: all at once.
        """
        dt = pred_distance.dtype
        mask = ops.stop_gradient(
            ops.expand_dims(_tensor(bond_mask, dt) * _tensor(distance_mask, dt), -3)
        )
        true_distance = _tensor(true_distance, dt)
        if diffusion_chunk_size is None:
            loss = self._chunk_forward(pred_distance, true_distance, mask)
        else:
            chunk = int(diffusion_chunk_size)
            fn = core.recompute(self._chunk_forward)
            loss = ops.concatenate(
                [
                    fn(_sample_chunk(pred_distance, i, chunk), true_distance, mask)
                    for i in range(_n_chunks(pred_distance.shape[-3], chunk))
                ],
                axis=-1,
            )
        if per_sample_scale is not None:
            loss = loss * _tensor(per_sample_scale, dt)
        return loss_reduction(ops.mean(loss, axis=-1), method=self.reduction)

    forward = construct

    def sparse_forward(self, pred_coordinate, true_coordinate, distance_mask, bond_mask,
                       per_sample_scale=None):  # fmt: skip
        """The bond loss over the bonded pairs only.

        Args:
            pred_coordinate: ``[..., N_sample, N_atom, 3]``; true_coordinate ``[..., N_atom, 3]``.
            distance_mask, bond_mask: ``[N_atom, N_atom]`` (concrete).
            per_sample_scale: ``[..., N_sample]`` (optional).

        Returns:
            ``[...]`` (no reduction, as Protenix's); 0 when there is no bond.
        """
        dt = pred_coordinate.dtype
        m = _concrete(bond_mask, "BondLoss bond_mask") * _concrete(
            distance_mask, "BondLoss distance_mask"
        )
        if not np.any(m):
            return ops.zeros((), dtype=dt)
        i, j = (core.tensor(v.astype(np.int64)) for v in np.nonzero(m))
        tc = _tensor(true_coordinate, dt)
        pred_d = ops.norm(_select(pred_coordinate, i, -2) - _select(pred_coordinate, j, -2),
                          axis=-1)  # fmt: skip
        true_d = ops.norm(_select(tc, i, -2) - _select(tc, j, -2), axis=-1)
        loss = ops.mean((pred_d - true_d) ** 2, axis=-1)  # [..., N_sample]
        if per_sample_scale is not None:
            loss = loss * _tensor(per_sample_scale, dt)
        return ops.mean(loss, axis=-1)


def compute_lddt_mask(true_distance, distance_mask, is_nucleotide, is_nucleotide_threshold=30.0,
                      is_not_nucleotide_threshold=15.0):  # fmt: skip
    """The lDDT pair mask ``c_lm`` with AF3's bespoke inclusion radius (30 A when atom ``l`` is
    in a nucleotide, else 15 A), diagonal and atoms without coordinates removed.

    Args:
        true_distance: ``[..., N_atom, N_atom]``.
        distance_mask: ``[..., N_atom, N_atom]``.
        is_nucleotide: ``[..., N_atom]``.

    Returns:
        ``[..., N_atom, N_atom]`` (float, not symmetric).
    """
    d = _tensor(true_distance)
    dt = d.dtype
    nuc = ops.astype(ops.not_equal(_tensor(is_nucleotide), 0), dt)[..., None]
    c = ops.astype(ops.less(d, is_nucleotide_threshold), dt) * nuc + ops.astype(
        ops.less(d, is_not_nucleotide_threshold), dt
    ) * (1 - nuc)
    c = c * _off_diagonal(d.shape[-1], dt)
    return c * _tensor(distance_mask, dt)


# ---- distogram, PDE, PAE, resolved -------------------------------------------------------------


class DistogramLoss(nn.Cell):
    """Cross entropy of the distogram head against the binned distances of the tokens'
    representative atoms (AF2/AF3; bins ``linspace(min_bin, max_bin, no_bins - 1)`` as
    boundaries).

    Args:
        min_bin, max_bin (Angstrom), no_bins, eps, reduction: Protenix's.
    """

    def __init__(self, min_bin=2.3125, max_bin=21.6875, no_bins=64, eps=1e-6, reduction="mean"):
        super().__init__()
        self.min_bin, self.max_bin, self.no_bins = float(min_bin), float(max_bin), int(no_bins)
        self.eps = float(eps)
        self.reduction = reduction

    def calculate_label(self, true_coordinate, coordinate_mask, rep_atom_mask):
        """One-hot true bins ``[..., N_token, N_token, no_bins]`` and the pair mask
        ``[..., N_token, N_token]``."""
        tc = _tensor(true_coordinate)
        boundaries = _linspace(self.min_bin, self.max_bin, self.no_bins - 1, tc.dtype)
        rep = _indices(rep_atom_mask, "DistogramLoss rep_atom_mask")
        x = _select(tc, rep, -2)
        bins = _count_above(cdist(x, x), boundaries)
        tm = _select(_tensor(coordinate_mask, tc.dtype), rep, -1)
        pair = tm[..., :, None] * tm[..., None, :]
        return _one_hot(bins, self.no_bins, tc.dtype), pair

    def construct(self, logits, true_coordinate, coordinate_mask, rep_atom_mask):
        """Args: logits ``[..., N_token, N_token, no_bins]``; true_coordinate ``[..., N_atom,
        3]``; coordinate_mask ``[N_atom]``; rep_atom_mask ``[N_atom]`` (one atom per token)."""
        true_bins, pair = self.calculate_label(
            ops.stop_gradient(_tensor(true_coordinate, logits.dtype)),
            coordinate_mask,
            rep_atom_mask,
        )
        errors = softmax_cross_entropy(logits, ops.stop_gradient(true_bins))
        pair = ops.stop_gradient(pair)
        loss = ops.sum(errors * pair, axis=(-1, -2)) / (self.eps + ops.sum(pair, axis=(-1, -2)))
        return loss_reduction(loss, method=self.reduction)

    forward = construct


class PDELoss(nn.Cell):
    """Predicted distance error loss (AF3 Sec. 4.3.3): cross entropy against the binned
    ``|d_ij^pred - d_ij^GT|`` of representative atoms (``no_bins`` bins on
    ``[min_bin, max_bin]``).

    Args:
        min_bin, max_bin (Angstrom), no_bins, eps, reduction: Protenix's.
    """

    def __init__(self, min_bin=0, max_bin=32, no_bins=64, eps=1e-6, reduction="mean"):
        super().__init__()
        self.min_bin, self.max_bin, self.no_bins = float(min_bin), float(max_bin), int(no_bins)
        self.eps = float(eps)
        self.reduction = reduction

    def calculate_label(self, pred_coordinate, true_coordinate, coordinate_mask, rep_atom_mask):
        """One-hot bins ``[..., N_sample, N_token, N_token, no_bins]`` and the pair mask."""
        pc = ops.stop_gradient(_tensor(pred_coordinate))
        tc = _tensor(true_coordinate, pc.dtype)
        boundaries = _linspace(self.min_bin, self.max_bin, self.no_bins + 1, pc.dtype)
        rep = _indices(rep_atom_mask, "PDELoss rep_atom_mask")
        t = _select(tc, rep, -2)
        p = _select(pc, rep, -2)
        err = ops.abs(cdist(p, p) - ops.expand_dims(cdist(t, t), -3))
        bins = ops.clip(_count_above(err, boundaries), 1, self.no_bins)
        tm = _select(_tensor(coordinate_mask, pc.dtype), rep, -1)
        pair = tm[..., :, None] * tm[..., None, :]
        return _one_hot(bins - 1, self.no_bins, pc.dtype), pair

    def construct(self, logits, pred_coordinate, true_coordinate, coordinate_mask, rep_atom_mask):
        """Args: logits ``[..., N_sample, N_token, N_token, no_bins]``; pred_coordinate
        ``[..., N_sample, N_atom, 3]``; true_coordinate ``[..., N_atom, 3]``; coordinate_mask,
        rep_atom_mask ``[N_atom]``."""
        true_bins, pair = self.calculate_label(pred_coordinate, true_coordinate, coordinate_mask,
                                               rep_atom_mask)  # fmt: skip
        errors = softmax_cross_entropy(logits, ops.stop_gradient(true_bins))
        pair = ops.stop_gradient(pair)
        denom = self.eps + ops.sum(pair, axis=(-1, -2))
        loss = ops.sum(errors * ops.expand_dims(pair, -3), axis=(-1, -2))
        loss = ops.mean(loss / ops.expand_dims(denom, -1), axis=-1)
        return loss_reduction(loss, method=self.reduction)

    forward = construct


def _normalize(x, eps):
    """``x / max(|x|, eps)`` along the last axis (torch ``F.normalize``)."""
    return x / ops.maximum(ops.norm(x, axis=-1, keepdims=True), eps)


def expressCoordinatesInFrame(coordinate, frames, eps=1e-8):
    """AF3 Algorithm 29: coordinates in each frame's orthonormal basis.

    A frame is three atoms ``(a, b, c)`` with ``b`` the origin; ``e1 = norm(w1 + w2)``,
    ``e2 = norm(w2 - w1)``, ``e3 = e1 x e2`` with ``w1 = norm(a - b)``, ``w2 = norm(c - b)``.

    Args:
        coordinate: ``[..., N_atom, 3]``.
        frames: ``[..., N_frame, 3 (atoms), 3 (xyz)]``.

    Returns:
        ``[..., N_frame, N_atom, 3]``.
    """
    a, b, c = frames[..., 0, :], frames[..., 1, :], frames[..., 2, :]
    w1 = _normalize(a - b, eps)
    w2 = _normalize(c - b, eps)
    e1 = _normalize(w1 + w2, eps)
    e2 = _normalize(w2 - w1, eps)
    e3 = ops.cross(e1, e2, axis=-1)
    d = ops.expand_dims(coordinate, -3) - ops.expand_dims(b, -2)  # [..., N_frame, N_atom, 3]
    return ops.stack([ops.sum(d * ops.expand_dims(e, -2), axis=-1) for e in (e1, e2, e3)], axis=-1)


def gather_frame_atom_by_indices(coordinate, frame_atom_index, dim=-2):
    """The three atoms of each frame.

    Args:
        coordinate: ``[..., N_atom, 3]`` (``dim=-2``) or a mask ``[N_atom]`` (``dim=-1``).
        frame_atom_index: ``[N_frame, 3]`` atom indices (concrete).

    Returns:
        ``[..., N_frame, 3, 3]`` (or ``[N_frame, 3]`` for a mask).
    """
    idx = _concrete(frame_atom_index, "frame_atom_index").astype(np.int64)
    if idx.ndim != 2 or idx.shape[-1] != 3:
        raise ValueError(f"gather_frame_atom_by_indices: frame_atom_index must be [N_frame, 3], "
                         f"got {idx.shape}")  # fmt: skip
    x = _tensor(coordinate)
    parts = [_select(x, core.tensor(idx[:, k]), dim) for k in range(3)]
    return ops.stack(parts, axis=dim % (x.ndim + 1))


def compute_alignment_error_squared(pred_coordinate, true_coordinate, pred_frames, true_frames):
    """AF3 Algorithm 30 without the square root.

    Args:
        pred_coordinate: ``[..., N_sample, N_token, 3]``; true_coordinate ``[..., N_token, 3]``.
        pred_frames: ``[..., N_sample, N_frame, 3, 3]``; true_frames ``[..., N_frame, 3, 3]``.

    Returns:
        ``[..., N_sample, N_frame, N_token]`` squared aligned errors (Angstrom^2).
    """
    xp = expressCoordinatesInFrame(pred_coordinate, pred_frames)
    xt = expressCoordinatesInFrame(true_coordinate, true_frames)
    return ops.sum((xp - ops.expand_dims(xt, -4)) ** 2, axis=-1)


class PAELoss(nn.Cell):
    """Predicted aligned error loss (AF3 Sec. 4.3.2): cross entropy against the binned
    aligned error ``e_ij`` of token ``j`` in the frame of token ``i`` (bins of ``e^2`` on
    ``linspace(min_bin, max_bin, no_bins + 1)^2``).

    Args:
        min_bin, max_bin (Angstrom), no_bins, eps, reduction: Protenix's.
    """

    def __init__(self, min_bin=0, max_bin=32, no_bins=64, eps=1e-6, reduction="mean"):
        super().__init__()
        self.min_bin, self.max_bin, self.no_bins = float(min_bin), float(max_bin), int(no_bins)
        self.eps = float(eps)
        self.reduction = reduction

    def calculate_label(self, pred_coordinate, true_coordinate, coordinate_mask, rep_atom_mask,
                        frame_atom_index, has_frame):  # fmt: skip
        """``(squared_pae [..., N_sample, N_frame, N_token], one-hot bins [..., N_sample,
        N_frame, N_token, no_bins], frame/token pair mask [N_frame, N_token])``."""
        pc = ops.stop_gradient(_tensor(pred_coordinate))
        tc = _tensor(true_coordinate, pc.dtype)
        cmask = _concrete(coordinate_mask, "PAELoss coordinate_mask").astype(bool)
        hf = _concrete(has_frame, "PAELoss has_frame").astype(bool)
        fai = _concrete(frame_atom_index, "PAELoss frame_atom_index").astype(np.int64)
        if fai.ndim != 2 or hf.ndim != 1:
            raise ValueError(f"PAELoss: frame_atom_index [N_token, 3] and has_frame [N_token] "
                             f"expected, got {fai.shape} and {hf.shape}")  # fmt: skip
        fai = fai[hf]
        pred_frames = gather_frame_atom_by_indices(pc, fai)
        true_frames = gather_frame_atom_by_indices(tc, fai)
        frame_ok = cmask[fai].sum(-1) >= 3  # [N_frame]
        rep = np.nonzero(_concrete(rep_atom_mask, "PAELoss rep_atom_mask"))[0]
        token_ok = cmask[rep]
        pair_np = frame_ok[:, None] & token_ok[None, :]  # [N_frame, N_token]
        pair = core.tensor(pair_np.astype(np.dtype(pc.dtype.name)))
        rep_t = core.tensor(rep.astype(np.int64))
        sq = compute_alignment_error_squared(_select(pc, rep_t, -2), _select(tc, rep_t, -2),
                                             pred_frames, true_frames) * pair  # fmt: skip
        boundaries = _linspace(self.min_bin, self.max_bin, self.no_bins + 1, pc.dtype) ** 2
        bins = _count_above(sq, boundaries)
        bins = ops.where(core.tensor(pair_np), bins, ops.full_like(bins, self.no_bins))
        bins = ops.clip(bins, 1, self.no_bins)
        return sq, _one_hot(bins - 1, self.no_bins, pc.dtype), pair

    def construct(self, logits, pred_coordinate, true_coordinate, coordinate_mask,
                  frame_atom_index, rep_atom_mask, has_frame):  # fmt: skip
        """Args: logits ``[..., N_sample, N_token, N_token, no_bins]``; pred_coordinate
        ``[..., N_sample, N_atom, 3]``; true_coordinate ``[..., N_atom, 3]``; coordinate_mask,
        rep_atom_mask ``[N_atom]``; frame_atom_index ``[N_token, 3]``; has_frame ``[N_token]``."""
        _, true_bins, pair = self.calculate_label(pred_coordinate, true_coordinate,
                                                  coordinate_mask, rep_atom_mask,
                                                  frame_atom_index, has_frame)  # fmt: skip
        frames = _indices(has_frame, "PAELoss has_frame")
        loss = softmax_cross_entropy(_select(logits, frames, -3), ops.stop_gradient(true_bins))
        denom = self.eps + ops.sum(pair, axis=(-1, -2))
        loss = ops.sum(loss * ops.expand_dims(pair, -3), axis=(-1, -2))
        loss = ops.mean(loss / ops.expand_dims(denom, -1), axis=-1)
        return loss_reduction(loss, self.reduction)

    forward = construct


class ExperimentallyResolvedLoss(nn.Cell):
    """Cross entropy of the 2-class "experimentally resolved" head against the coordinate
    mask (AF3 Sec. 4.3.4).

    Args:
        eps, reduction: Protenix's.
    """

    def __init__(self, eps=1e-6, reduction="mean"):
        super().__init__()
        self.eps = float(eps)
        self.reduction = reduction

    def construct(self, logits, coordinate_mask, atom_mask=None):
        """Args: logits ``[..., N_sample, N_atom, 2]``; coordinate_mask ``[..., N_atom]``;
        atom_mask ``[..., N_atom]`` atoms counted (optional: all)."""
        dt = logits.dtype
        cm = ops.astype(_tensor(coordinate_mask), core.int64)
        labels = ops.expand_dims(ops.one_hot(cm, 2, dtype=dt), -3)
        errors = softmax_cross_entropy(logits, labels)  # [..., N_sample, N_atom]
        if atom_mask is None:
            loss = ops.mean(errors, axis=-1)
        else:
            am = ops.expand_dims(_tensor(atom_mask, dt), -2)
            loss = ops.sum(errors * am, axis=-1) / (self.eps + ops.sum(am, axis=-1))
        return loss_reduction(ops.mean(loss, axis=-1), method=self.reduction)

    forward = construct


# ---- weighted rigid alignment (Algorithm 28) and the MSE loss (eqs. 2-4) -------------------------


def align_pred_to_true(pred_pose, true_pose, atom_mask=None, weight=None,
                       allowing_reflection=False):  # fmt: skip
    """The weighted Kabsch superposition of ``pred_pose`` onto ``true_pose``.

    Args:
        pred_pose, true_pose: ``[..., N, 3]``.
        atom_mask: ``[..., N]`` (optional).
        weight: ``[..., N]`` or ``[N]`` per-atom weights (optional).
        allowing_reflection: allow an improper rotation.

    Returns:
        ``(aligned [..., N, 3], rot [..., 3, 3], translate [..., 1, 3])`` with
        ``aligned = (pred - centroid_pred) rot^T + centroid_true``.
    """
    dt = pred_pose.dtype
    true_pose = _tensor(true_pose, dt)
    if atom_mask is not None:
        atom_mask = _tensor(atom_mask, dt)
        pred_pose = pred_pose * atom_mask[..., None]
        true_pose = true_pose * atom_mask[..., None]
    else:
        atom_mask = ops.ones(tuple(pred_pose.shape[:-1]), dtype=dt)
    weight = atom_mask if weight is None else _tensor(weight, dt) * atom_mask
    w = weight[..., None]
    n = ops.sum(weight, axis=-1, keepdims=True)[..., None]
    pred_c = ops.sum(pred_pose * w, axis=-2, keepdims=True) / n
    true_c = ops.sum(true_pose * w, axis=-2, keepdims=True) / n
    pred_0 = pred_pose - pred_c
    true_0 = true_pose - true_c
    h = ops.matmul(ops.swapaxes(pred_0 * w, -1, -2), true_0 * atom_mask[..., None])
    u, _, vh = ops.svd(h)
    u = ops.swapaxes(u, -1, -2)
    v = ops.swapaxes(vh, -1, -2)
    if not allowing_reflection:
        det = ops.det(ops.matmul(v, u))
        one = ops.ones_like(det)
        diag = ops.stack([one, one, det], axis=-1)[..., :, None] * ops.eye(3, dtype=dt)
        rot = ops.matmul(v, ops.matmul(diag, u))
    else:
        rot = ops.matmul(v, u)
    rot_t = ops.swapaxes(rot, -1, -2)
    translate = true_c - ops.matmul(pred_c, rot_t)
    return ops.matmul(pred_0, rot_t) + true_c, rot, translate


def weighted_rigid_align(x, x_target, atom_weight, stop_gradient=True):
    """AF3 Algorithm 28: ``x`` rotated and translated onto ``x_target`` (weighted, no
    reflection).

    Args:
        x, x_target: ``[..., N_atom, 3]``.
        atom_weight: ``[..., N_atom]`` or ``[N_atom]``.
        stop_gradient: detach the result (Protenix runs it under no_grad).

    Returns:
        ``[..., N_atom, 3]``.
    """
    x = _tensor(x)
    w = _tensor(atom_weight, x.dtype)
    if w.ndim == x.ndim - 1:
        if tuple(w.shape[:-1]) != tuple(x.shape[:-2]):
            raise ValueError(f"weighted_rigid_align: atom_weight {tuple(w.shape)} does not match "
                             f"x {tuple(x.shape)}")  # fmt: skip
    elif not (w.ndim == 1 and w.shape[-1] == x.shape[-2]):
        raise ValueError(f"weighted_rigid_align: atom_weight {tuple(w.shape)} does not match "
                         f"x {tuple(x.shape)}")  # fmt: skip
    if stop_gradient:
        x, x_target, w = (ops.stop_gradient(_tensor(t, x.dtype)) for t in (x, x_target, w))
    aligned, _, _ = align_pred_to_true(x, x_target, atom_mask=None, weight=w)
    return ops.stop_gradient(aligned) if stop_gradient else aligned


class MSELoss(nn.Cell):
    """AF3 eqs. 2-4: ``weight_mse * mean_samples[sum_l w_l |x_l - x_l^GT,aligned|^2 / N]``
    with ``w_l = 1 + 5 is_dna + 5 is_rna + 10 is_ligand`` (atoms with coordinates) and the
    ground truth aligned onto each predicted sample by :func:`weighted_rigid_align`.
    """

    def __init__(self, weight_mse=1 / 3, weight_dna=5.0, weight_rna=5.0, weight_ligand=10.0,
                 eps=1e-6, reduction="mean"):  # fmt: skip
        super().__init__()
        self.weight_mse = float(weight_mse)
        self.weight_dna, self.weight_rna = float(weight_dna), float(weight_rna)
        self.weight_ligand = float(weight_ligand)
        self.eps = float(eps)
        self.reduction = reduction

    def weighted_rigid_align(self, pred_coordinate, true_coordinate, coordinate_mask, is_dna,
                             is_rna, is_ligand):  # fmt: skip
        """``(true coordinates aligned to each sample [..., N_sample, N_atom, 3], atom weights
        [N_atom] or [..., N_sample, N_atom])``, both without gradient."""
        pc = ops.stop_gradient(_tensor(pred_coordinate))
        dt = pc.dtype
        n_sample = pc.shape[-3]
        cm = _tensor(coordinate_mask, dt)
        weight = (1 + self.weight_dna * _tensor(is_dna, dt) + self.weight_rna * _tensor(is_rna, dt)
                  + self.weight_ligand * _tensor(is_ligand, dt)) * cm  # fmt: skip
        tc = _tensor(true_coordinate, dt) * cm[..., None]
        pc = pc * cm[..., None, :, None]
        tc = ops.broadcast_to(ops.expand_dims(tc, -3), (*tc.shape[:-2], n_sample, *tc.shape[-2:]))
        if weight.ndim > 1:
            weight = ops.broadcast_to(ops.expand_dims(weight, -2),
                                      (*weight.shape[:-1], n_sample, weight.shape[-1]))  # fmt: skip
        aligned = weighted_rigid_align(tc, pc, weight, stop_gradient=True)
        return ops.stop_gradient(aligned), ops.stop_gradient(weight)

    def construct(self, pred_coordinate, true_coordinate, coordinate_mask, is_dna, is_rna,
                  is_ligand, per_sample_scale=None):  # fmt: skip
        """Args: pred_coordinate ``[..., N_sample, N_atom, 3]``; true_coordinate ``[..., N_atom,
        3]``; coordinate_mask, is_dna, is_rna, is_ligand ``[N_atom]``; per_sample_scale
        ``[..., N_sample]`` (optional)."""
        aligned, weight = self.weighted_rigid_align(
            pred_coordinate, true_coordinate, coordinate_mask, is_dna, is_rna, is_ligand
        )
        dt = pred_coordinate.dtype
        se = ops.sum((pred_coordinate - aligned) ** 2, axis=-1)  # [..., N_sample, N_atom]
        cm = _tensor(coordinate_mask, dt)
        mse = ops.sum(weight * se, axis=-1) / (ops.sum(cm, axis=-1, keepdims=True) + self.eps)
        if per_sample_scale is not None:
            mse = mse * _tensor(per_sample_scale, dt)
        return loss_reduction(self.weight_mse * ops.mean(mse, axis=-1), method=self.reduction)

    forward = construct


# ---- pLDDT (Sec. 4.3.1) ---------------------------------------------------------------------------


def calculate_atom_bespoke_lddt(pred_coordinate, true_coordinate, is_nucleotide, is_polymer,
                                rep_atom_mask, is_nucleotide_threshold=30.0,
                                is_not_nucleotide_threshold=15.0):  # fmt: skip
    """Per-atom lDDT against the representative polymer atoms ``m`` (AF3 Sec. 4.3.1), not
    normalised: ``(sum_m 1/4 sum_t [|d_lm - d_lm^GT| < t] c_lm, sum_m c_lm)``.

    Args:
        pred_coordinate: ``[..., N_sample, N_atom, 3]``; true_coordinate ``[..., N_atom, 3]``.
        is_nucleotide, is_polymer, rep_atom_mask: ``[N_atom]`` (concrete masks).

    Returns:
        ``(per_atom_lddt, per_atom_weight)``, each ``[..., N_sample, N_atom, 1]`` (the weight
        broadcasts over samples).
    """
    pc = ops.stop_gradient(_tensor(pred_coordinate))
    dt = pc.dtype
    tc = _tensor(true_coordinate, dt)
    m_np = (_concrete(rep_atom_mask, "rep_atom_mask") * _concrete(is_polymer, "is_polymer")) != 0
    m_idx = core.tensor(np.nonzero(m_np)[0].astype(np.int64))
    pred_d = cdist(pc, _select(pc, m_idx, -2))  # [..., N_sample, N_atom, N_m]
    true_d = cdist(tc, _select(tc, m_idx, -2))  # [..., N_atom, N_m]
    delta = ops.abs(pred_d - ops.expand_dims(true_d, -3))
    lddt_lm = 0.0
    for t in (0.5, 1.0, 2.0, 4.0):
        lddt_lm = lddt_lm + ops.astype(ops.less(delta, t), dt)
    lddt_lm = lddt_lm * 0.25
    nuc_np = _concrete(is_nucleotide, "is_nucleotide").astype(bool)[m_np]
    nuc = core.tensor(nuc_np.astype(np.dtype(dt.name)))
    locality = ops.astype(ops.less(true_d, is_nucleotide_threshold), dt) * nuc + ops.astype(
        ops.less(true_d, is_not_nucleotide_threshold), dt
    ) * (1 - nuc)
    n_atom = tc.shape[-2]
    diag = (1.0 - np.eye(n_atom))[:, m_np]
    pair = ops.expand_dims(locality * core.tensor(diag, dtype=dt), -3)
    return (ops.sum(lddt_lm * pair, axis=-1, keepdims=True),
            ops.sum(pair, axis=-1, keepdims=True))  # fmt: skip


class PLDDTLoss(nn.Cell):
    """pLDDT loss as Protenix computes it: cross entropy against the binned per-atom lDDT
    (``no_bins`` bins on ``[min_bin, max_bin]``, the lDDT normalised by its pair count).

    Args:
        min_bin, max_bin, no_bins, is_nucleotide_threshold, is_not_nucleotide_threshold (A),
        eps, normalize, reduction: Protenix's.
    """

    def __init__(self, min_bin=0, max_bin=1, no_bins=50, is_nucleotide_threshold=30.0,
                 is_not_nucleotide_threshold=15.0, eps=1e-6, normalize=True,
                 reduction="mean"):  # fmt: skip
        super().__init__()
        self.normalize = bool(normalize)
        self.min_bin, self.max_bin, self.no_bins = float(min_bin), float(max_bin), int(no_bins)
        self.eps = float(eps)
        self.reduction = reduction
        self.is_nucleotide_threshold = float(is_nucleotide_threshold)
        self.is_not_nucleotide_threshold = float(is_not_nucleotide_threshold)

    def bins_from_lddt(self, per_atom_lddt, per_atom_weight):
        """One-hot bins ``[..., N_sample, N_atom, no_bins]`` of ``[..., N_sample, N_atom, 1]``
        lDDT values."""
        x = per_atom_lddt
        if self.normalize:
            x = x / (per_atom_weight + self.eps)
        boundaries = _linspace(self.min_bin, self.max_bin, self.no_bins + 1, x.dtype)
        bins = ops.clip(_count_above(x[..., 0], boundaries), 1, self.no_bins)
        return _one_hot(bins - 1, self.no_bins, x.dtype)

    def forward_given_atom_lddt(self, logits, per_atom_lddt, per_atom_weight):
        """Args: logits ``[..., N_sample, N_atom, no_bins]``; per_atom_lddt, per_atom_weight
        ``[..., N_sample, N_atom, 1]``."""
        true_bins = ops.stop_gradient(self.bins_from_lddt(per_atom_lddt, per_atom_weight))
        loss = softmax_cross_entropy(logits, true_bins)
        loss = ops.mean(ops.mean(loss, axis=-1), axis=-1)
        return loss_reduction(loss, method=self.reduction)

    def construct(self, logits, pred_coordinate, true_coordinate, coordinate_mask, is_nucleotide,
                  is_polymer, rep_atom_mask):  # fmt: skip
        """Args: logits ``[..., N_sample, N_atom, no_bins]``; pred_coordinate ``[..., N_sample,
        N_atom, 3]``; true_coordinate ``[..., N_atom, 3]``; coordinate_mask, is_nucleotide,
        is_polymer, rep_atom_mask ``[N_atom]`` (concrete)."""
        cm = _concrete(coordinate_mask, "PLDDTLoss coordinate_mask").astype(bool)
        arrays = {
            "is_nucleotide": _concrete(is_nucleotide, "is_nucleotide"),
            "is_polymer": _concrete(is_polymer, "is_polymer"),
            "rep_atom_mask": _concrete(rep_atom_mask, "rep_atom_mask"),
        }
        for name, a in arrays.items():
            if a.shape != cm.shape or cm.ndim != 1:
                raise ValueError(f"PLDDTLoss: {name} of shape {a.shape} must match "
                                 f"coordinate_mask {cm.shape} ([N_atom])")  # fmt: skip
        keep = core.tensor(np.nonzero(cm)[0].astype(np.int64))
        lddt, weight = calculate_atom_bespoke_lddt(
            _select(ops.stop_gradient(_tensor(pred_coordinate)), keep, -2),
            _select(_tensor(true_coordinate), keep, -2),
            arrays["is_nucleotide"][cm].astype(bool),
            arrays["is_polymer"][cm].astype(bool),
            arrays["rep_atom_mask"][cm].astype(bool),
            self.is_nucleotide_threshold,
            self.is_not_nucleotide_threshold,
        )
        return self.forward_given_atom_lddt(_select(logits, keep, -2), lddt, weight)

    forward = construct


# ---- the aggregate -----------------------------------------------------------------------------


def _cfg(configs, *keys, default=None):
    node = configs
    for k in keys:
        if not isinstance(node, dict) or k not in node:
            return default
        node = node[k]
    return node


class ProtenixLoss(nn.Cell):
    """The weighted sum of Protenix's losses (``ProtenixLoss`` of ``protenix.model.loss``).

    Weights (``configs.loss.weight``): confidence losses ``alpha_confidence *
    alpha_except_pae`` (pLDDT, PDE, resolved) and ``alpha_confidence * alpha_pae`` (PAE), MSE
    ``alpha_diffusion``, bond ``alpha_diffusion * alpha_bond``, smooth lDDT ``alpha_diffusion
    * smooth_lddt``, distogram ``alpha_distogram``. In training mode the MSE and bond losses
    are scaled per sample by ``(t^2 + sigma_data^2) / (t sigma_data)^2`` (AF3 eq. 6) and the
    confidence losses score the mini-rollout ``coordinate_mini``; confidence losses count only
    for examples with ``resolution`` in ``configs.loss.resolution``.

    Args:
        configs: a config with Protenix's keys: ``loss`` (as ``configs_base.py``),
            ``loss_metrics_sparse_enable``, ``sigma_data``, optional ``train_confidence_only``
            (e.g. :func:`protenix.config.get_model_config`).
    """

    def __init__(self, configs):
        super().__init__()
        object.__setattr__(self, "configs", configs)
        w = configs["loss"]["weight"]
        self.alpha_confidence = float(w["alpha_confidence"])
        self.alpha_pae = float(w["alpha_pae"])
        self.alpha_except_pae = float(w["alpha_except_pae"])
        self.alpha_diffusion = float(w["alpha_diffusion"])
        self.alpha_distogram = float(w["alpha_distogram"])
        self.alpha_bond = float(w["alpha_bond"])
        self.weight_smooth_lddt = float(w["smooth_lddt"])
        self.lddt_radius = {"is_nucleotide_threshold": 30.0, "is_not_nucleotide_threshold": 15.0}
        conf = self.alpha_confidence * self.alpha_except_pae
        self.loss_weight = {
            "plddt_loss": conf,
            "pde_loss": conf,
            "resolved_loss": conf,
            "pae_loss": self.alpha_confidence * self.alpha_pae,
            "mse_loss": self.alpha_diffusion,
            "bond_loss": self.alpha_diffusion * self.alpha_bond,
            "smooth_lddt_loss": self.alpha_diffusion * self.weight_smooth_lddt,
            "distogram_loss": self.alpha_distogram,
        }
        loss = configs["loss"]
        self.plddt_loss = PLDDTLoss(**dict(loss["plddt"]), **self.lddt_radius)
        self.pde_loss = PDELoss(**dict(loss["pde"]))
        self.resolved_loss = ExperimentallyResolvedLoss(**dict(loss["resolved"]))
        self.pae_loss = PAELoss(**dict(loss["pae"]))
        self.mse_loss = MSELoss(**dict(loss["diffusion"]["mse"]))
        self.bond_loss = BondLoss(**dict(loss["diffusion"]["bond"]))
        self.smooth_lddt_loss = SmoothLDDTLoss(**dict(loss["diffusion"]["smooth_lddt"]))
        self.distogram_loss = DistogramLoss(**dict(loss["distogram"]))

    @property
    def _sparse(self):
        return bool(_cfg(self.configs, "loss_metrics_sparse_enable", default=True))

    def calculate_label(self, feat_dict, label_dict):
        """``label_dict`` plus ``distance_mask``, ``lddt_mask`` and (dense settings)
        ``distance``, all ``[..., N_atom, N_atom]`` and without gradient (a new dict)."""
        label_dict = dict(label_dict)
        coord = ops.stop_gradient(_tensor(label_dict["coordinate"]))
        cm = _tensor(label_dict["coordinate_mask"], coord.dtype)
        distance_mask = cm[..., :, None] * cm[..., None, :]
        distance = cdist(coord, coord) * distance_mask
        is_nuc = ops.logical_or(ops.not_equal(_tensor(feat_dict["is_rna"]), 0),
                                ops.not_equal(_tensor(feat_dict["is_dna"]), 0))  # fmt: skip
        label_dict["lddt_mask"] = compute_lddt_mask(distance, distance_mask, is_nuc,
                                                    **self.lddt_radius)  # fmt: skip
        label_dict["distance_mask"] = distance_mask
        if not self._sparse or self.configs["loss"]["diffusion_lddt_loss_dense"]:
            label_dict["distance"] = distance
        return label_dict

    def calculate_prediction(self, pred_dict):
        """``pred_dict`` plus the predicted ``distance`` ``[..., N_sample, N_atom, N_atom]``
        when the sparse losses are off (a new dict)."""
        pred_dict = dict(pred_dict)
        if not self._sparse:
            pred_dict["distance"] = cdist(pred_dict["coordinate"], pred_dict["coordinate"])
        return pred_dict

    def aggregate_losses(self, loss_fns, has_valid_resolution=None):
        """``(sum of weight * loss, metrics)``; confidence losses are zeroed (and left out of
        the metrics) when ``has_valid_resolution`` is 0."""
        cum_loss = 0.0
        metrics = {}
        for name, fn in loss_fns.items():
            weight = self.loss_weight[name]
            out = fn()
            loss, sub = out if isinstance(out, tuple) else (out, {})
            metrics.update({f"{name}/{k}": v for k, v in sub.items()})
            if (has_valid_resolution is not None and not has_valid_resolution
                    and name in _CONFIDENCE_LOSSES):  # fmt: skip
                loss = 0.0 * loss
            else:
                metrics[name] = ops.stop_gradient(loss)
                metrics[f"weighted_{name}"] = weight * ops.stop_gradient(loss)
            cum_loss = cum_loss + weight * loss
        metrics["loss"] = ops.stop_gradient(cum_loss)
        return cum_loss, metrics

    def calculate_losses(self, feat_dict, pred_dict, label_dict, mode="train"):
        """The weighted loss and its metrics (Protenix's keys: ``smooth_lddt_loss``,
        ``bond_loss``, ``mse_loss``, ``distogram_loss``, ``plddt_loss``, ``pde_loss``,
        ``resolved_loss``, ``pae_loss``, their ``weighted_*`` and ``loss``)."""
        if mode not in ("train", "eval"):
            raise ValueError(f"ProtenixLoss: mode must be 'train' or 'eval', got {mode!r}")
        cfg = self.configs
        lcfg = cfg["loss"]
        confidence_only = bool(_cfg(cfg, "train_confidence_only", default=False))
        scale = None
        if mode == "train":
            conf_key = "coordinate_mini"
            if not confidence_only:
                t = _tensor(pred_dict["noise_level"], pred_dict["coordinate"].dtype)
                sd = float(cfg["sigma_data"])
                scale = (t**2 + sd**2) / (sd * t) ** 2
        else:
            conf_key = "coordinate"
        loss_fns = {}
        if not (confidence_only and mode == "train"):
            lddt_chunk = lcfg["diffusion_lddt_chunk_size"]
            if lcfg["diffusion_lddt_loss_dense"]:
                loss_fns["smooth_lddt_loss"] = lambda: self.smooth_lddt_loss.dense_forward(
                    pred_dict["coordinate"], label_dict["coordinate"], label_dict["lddt_mask"],
                    diffusion_chunk_size=lddt_chunk, true_distance=label_dict.get("distance"))  # fmt: skip
            elif lcfg["diffusion_sparse_loss_enable"]:
                loss_fns["smooth_lddt_loss"] = lambda: self.smooth_lddt_loss.sparse_forward(
                    pred_dict["coordinate"], label_dict["coordinate"], label_dict["lddt_mask"],
                    diffusion_chunk_size=lddt_chunk)  # fmt: skip
            else:
                loss_fns["smooth_lddt_loss"] = lambda: self.smooth_lddt_loss(
                    pred_dict["distance"], label_dict["distance"], label_dict["distance_mask"],
                    label_dict["lddt_mask"], diffusion_chunk_size=lddt_chunk)  # fmt: skip
            if lcfg["diffusion_sparse_loss_enable"]:
                loss_fns["bond_loss"] = lambda: self.bond_loss.sparse_forward(
                    pred_dict["coordinate"], label_dict["coordinate"], label_dict["distance_mask"],
                    feat_dict["bond_mask"], per_sample_scale=scale)  # fmt: skip
            else:
                loss_fns["bond_loss"] = lambda: self.bond_loss(
                    pred_dict["distance"], label_dict["distance"], label_dict["distance_mask"],
                    feat_dict["bond_mask"], per_sample_scale=scale,
                    diffusion_chunk_size=lcfg["diffusion_bond_chunk_size"])  # fmt: skip
            loss_fns["mse_loss"] = lambda: self.mse_loss(
                pred_dict["coordinate"], label_dict["coordinate"], label_dict["coordinate_mask"],
                feat_dict["is_dna"], feat_dict["is_rna"], feat_dict["is_ligand"],
                per_sample_scale=scale)  # fmt: skip
            if "distogram" in pred_dict:
                loss_fns["distogram_loss"] = lambda: self.distogram_loss(
                    pred_dict["distogram"], label_dict["coordinate"],
                    label_dict["coordinate_mask"], feat_dict["distogram_rep_atom_mask"])  # fmt: skip

        resolution = float(_concrete(feat_dict["resolution"], "resolution").reshape(-1)[0])
        rcfg = lcfg["resolution"]
        valid = float(rcfg["min"]) <= resolution <= float(rcfg["max"])

        if all(k in pred_dict for k in ("plddt", "pde", "pae", "resolved")):
            cm = _concrete(label_dict["coordinate_mask"], "coordinate_mask").astype(bool)
            keep = core.tensor(np.nonzero(cm)[0].astype(np.int64))
            nuc = (_concrete(feat_dict["is_rna"], "is_rna") + _concrete(feat_dict["is_dna"],
                                                                        "is_dna")) != 0  # fmt: skip
            lddt, lddt_w = calculate_atom_bespoke_lddt(
                _select(ops.stop_gradient(pred_dict[conf_key]), keep, -2),
                _select(_tensor(label_dict["coordinate"]), keep, -2),
                nuc[cm],
                1 - _concrete(feat_dict["is_ligand"], "is_ligand")[cm],
                _concrete(feat_dict["plddt_m_rep_atom_mask"], "plddt_m_rep_atom_mask")[cm] != 0,
                **self.lddt_radius,
            )
            loss_fns["plddt_loss"] = lambda: self.plddt_loss.forward_given_atom_lddt(
                _select(pred_dict["plddt"], keep, -2), lddt, lddt_w
            )
            loss_fns["pde_loss"] = lambda: self.pde_loss(
                pred_dict["pde"], ops.stop_gradient(pred_dict[conf_key]),
                label_dict["coordinate"], label_dict["coordinate_mask"],
                feat_dict["distogram_rep_atom_mask"])  # fmt: skip
            loss_fns["resolved_loss"] = lambda: self.resolved_loss(
                pred_dict["resolved"], label_dict["coordinate_mask"]
            )
            loss_fns["pae_loss"] = lambda: self.pae_loss(
                pred_dict["pae"], ops.stop_gradient(pred_dict[conf_key]),
                label_dict["coordinate"], label_dict["coordinate_mask"],
                feat_dict["frame_atom_index"], feat_dict["pae_rep_atom_mask"],
                feat_dict["has_frame"])  # fmt: skip
        return self.aggregate_losses(loss_fns, valid)

    def construct(self, feat_dict, pred_dict, label_dict, mode="train"):
        """The total loss and the metrics.

        Args:
            feat_dict: features: ``is_dna``, ``is_rna``, ``is_ligand`` ``[N_atom]``,
                ``bond_mask`` ``[N_atom, N_atom]``, ``distogram_rep_atom_mask``,
                ``plddt_m_rep_atom_mask``, ``pae_rep_atom_mask`` ``[N_atom]``,
                ``frame_atom_index`` ``[N_token, 3]``, ``has_frame`` ``[N_token]``,
                ``resolution`` ``[1]`` (Angstrom). Masks are read as concrete arrays.
            pred_dict: ``coordinate`` ``[N_sample, N_atom, 3]``, ``noise_level``
                ``[N_sample]`` (train), ``distogram`` ``[N_token, N_token, no_bins]`` and the
                confidence heads ``plddt``, ``pde``, ``pae``, ``resolved`` with
                ``coordinate_mini`` (train) when present.
            label_dict: ``coordinate`` ``[N_atom, 3]``, ``coordinate_mask`` ``[N_atom]``.
            mode: "train" or "eval" (eval: samples in chunks of
                ``loss.diffusion_chunk_size_outer``, losses averaged over samples).

        Returns:
            ``(loss [], metrics dict)``; the input dicts are not modified.
        """
        if mode not in ("train", "eval"):
            raise ValueError(f"ProtenixLoss: mode must be 'train' or 'eval', got {mode!r}")
        label_dict = self.calculate_label(feat_dict, label_dict)
        if mode == "train":
            pred_dict = self.calculate_prediction(pred_dict)
            return self.calculate_losses(feat_dict, pred_dict, label_dict, mode)
        if "coordinate" not in pred_dict:
            raise KeyError("ProtenixLoss: missing key 'coordinate' in pred_dict")
        n_sample = pred_dict["coordinate"].shape[-3]
        chunk = self.configs["loss"]["diffusion_chunk_size_outer"]
        chunk = n_sample if chunk is None else int(chunk)
        per_sample = ("coordinate", "plddt", "pae", "pde", "resolved")
        cum, metrics = 0.0, {}
        for i in range(_n_chunks(n_sample, chunk)):
            n_i = min(chunk, n_sample - i * chunk)
            sub = {}
            for key, value in pred_dict.items():
                if key in per_sample:
                    sub[key] = value[i * chunk : (i + 1) * chunk]
                elif key == "noise_level":
                    sub[key] = value[i * chunk : (i + 1) * chunk]
                else:
                    sub[key] = value
            sub = self.calculate_prediction(sub)
            loss_i, metrics_i = self.calculate_losses(feat_dict, sub, label_dict, mode)
            cum = cum + loss_i * n_i
            for key, value in metrics_i.items():
                if "per_sample" in key:
                    metrics[key] = (ops.concatenate([metrics[key], value], axis=-1)
                                    if key in metrics else value)  # fmt: skip
                else:
                    metrics[key] = metrics[key] + value * n_i if key in metrics else value * n_i
        metrics = {k: (v if "per_sample" in k else v / n_sample) for k, v in metrics.items()}
        return cum / n_sample, metrics

    forward = construct
