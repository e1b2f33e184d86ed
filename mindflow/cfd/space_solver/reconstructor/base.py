"""Base class of the face reconstructors (MindFlow's ``Reconstructor`` interface).

A reconstructor turns cell averages into face values along one axis. Every scheme here is
written once, as the value at the right face ``i+1/2`` of cell ``i`` seen from the left
(``face_value``); the value seen from the right is the same formula on the mirrored stencil,
so the left/right symmetry holds to the last bit.

Faces and cells along ``axis`` (padded indexing, ``n`` interior cells, ``pad`` ghosts each
side): face ``f`` (``f = 0 .. n``) lies between padded cells ``pad - 1 + f`` and ``pad + f``.
"""

from __future__ import annotations


class Reconstructor:
    """Abstract base class of the reconstructors.

    Subclasses set ``half_width`` (the stencil of ``face_value`` has ``2 * half_width - 1``
    cells and needs ``pad >= half_width`` ghost cells) and implement ``face_value``.

    Args:
        mesh_info (MeshInfo): the mesh; reads ``pad`` and ``number_of_cells``.

    Raises:
        ValueError: if ``mesh_info.pad`` is smaller than the stencil needs.
    """

    name = "Reconstructor"
    half_width = 1

    def __init__(self, mesh_info):
        self.mesh_info = mesh_info
        self.pad = int(mesh_info.pad)
        if self.pad < self.half_width:
            raise ValueError(
                f"{self.name} needs pad_size >= {self.half_width} ghost cells, "
                f"got mesh.pad_size = {self.pad}"
            )

    def reconstruct_from_left(self, var, axis):
        """Face values from the cell on the left of each face.

        Args:
            var (Tensor): padded cell averages, [c, nx(+2 pad), ny(+2 pad), nz(+2 pad)].
            axis (int): 0, 1, 2 for x, y, z.

        Returns:
            Tensor: [c, ...] with ``n + 1`` faces along ``axis`` and the interior cells
            (ghosts removed) along the other axes.
        """
        return self.face_value(self.left_stencil(var, axis))

    def reconstruct_from_right(self, var, axis):
        """Face values from the cell on the right of each face; same shapes as the left."""
        return self.face_value(self.right_stencil(var, axis))

    def face_value(self, stencil):
        """Value at the right face of the centre cell of ``stencil``.

        Args:
            stencil (list[Tensor]): ``2 * half_width - 1`` arrays of the same shape, the
                cell values from upwind (far left) to downwind, the centre cell in the middle.

        Returns:
            Tensor: the reconstructed face value, same shape as each stencil entry.
        """
        raise NotImplementedError

    # stencils ---------------------------------------------------------------------------------
    def shifted(self, var, axis, offsets):
        """Slices of ``var`` along ``axis``: entry ``k`` holds, at face ``f``, the padded cell
        ``pad + f + offsets[k]``; the other axes are cropped to the interior.

        Args:
            var (Tensor): [c, ...] padded cell values.
            axis (int): 0, 1, 2.
            offsets (Sequence[int]): cell offsets relative to the cell right of each face.

        Returns:
            list[Tensor]: each [c, ...] with ``n + 1`` entries along ``axis``.
        """
        var = self._crop_other_axes(var, axis)
        n = int(self.mesh_info.number_of_cells[axis])
        size = var.shape[axis + 1]
        if size != n + 2 * self.pad:
            raise ValueError(
                f"{self.name}: expected {n} + 2 * {self.pad} padded cells along axis {axis}, "
                f"got shape {tuple(var.shape)}"
            )
        out = []
        for off in offsets:
            start = self.pad + off
            index = [slice(None)] * 4
            index[axis + 1] = slice(start, start + n + 1)
            out.append(var[tuple(index)])
        return out

    def left_stencil(self, var, axis):
        """Stencil of the cell left of each face, ordered upwind (left) to downwind."""
        r = self.half_width
        return self.shifted(var, axis, range(-r, r - 1))

    def right_stencil(self, var, axis):
        """Stencil of the cell right of each face, mirrored (ordered right to left)."""
        r = self.half_width
        return self.shifted(var, axis, range(r - 1, -r, -1))

    def _crop_other_axes(self, var, axis):
        """Drop the ghost cells of the active axes other than ``axis`` (MindFlow's _slice)."""
        if len(var.shape) != 4:
            raise ValueError(f"{self.name}: expected [c, nx, ny, nz], got shape {tuple(var.shape)}")
        index = [slice(None)] * 4
        for k in range(3):
            n = int(self.mesh_info.number_of_cells[k])
            if k != axis and var.shape[k + 1] != n:
                if var.shape[k + 1] != n + 2 * self.pad:
                    raise ValueError(
                        f"{self.name}: axis {k} has {var.shape[k + 1]} cells, expected {n} or "
                        f"{n} + 2 * {self.pad}; shape {tuple(var.shape)}"
                    )
                index[k + 1] = slice(self.pad, self.pad + n)
        return var[tuple(index)]


def normalized(alphas):
    """Weights ``alpha_k / sum(alpha)``."""
    total = alphas[0]
    for a in alphas[1:]:
        total = total + a
    inv = 1.0 / total
    return [a * inv for a in alphas]


def combine(weights, values):
    """``sum_k weights[k] * values[k]``."""
    out = weights[0] * values[0]
    for w, v in zip(weights[1:], values[1:], strict=True):
        out = out + w * v
    return out


def tiny(x, float64_value, float32_value):
    """A dtype-dependent small constant (float32 cannot hold 1e-40 without overflowing ratios)."""
    return float64_value if "64" in str(x.dtype) else float32_value


__all__ = ["Reconstructor", "combine", "normalized", "tiny"]
