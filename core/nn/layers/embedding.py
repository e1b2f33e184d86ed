"""Embedding: a lookup table of vectors indexed by integer ids."""

from ... import dtypes as _dt
from ... import ops
from ..cell import Cell
from ._common import make_parameter

__all__ = ["Embedding"]


class Embedding(Cell):
    """Rows of ``embedding_table`` picked by integer ids.

    Args:
        vocab_size: number of rows V.
        embedding_size: row length E.
        use_one_hot: compute ``one_hot(ids) @ table`` instead of a gather (same result; dense
            gradient).
        embedding_table: initializer of the ``[V, E]`` table; MindSpore's default 'normal'
            (N(0, 0.01^2)).
        dtype: dtype of the ids (MindSpore's argument; int32 or int64 ids are accepted
            whatever it is). The table is float32 unless ``embedding_table`` is a Tensor.
        padding_idx: None, or a row that starts at zero and receives no gradient.

    Shapes:
        ids ``[...]`` (integers in [0, V)) -> ``[..., E]``.
    """

    def __init__(
        self,
        vocab_size,
        embedding_size,
        use_one_hot=False,
        embedding_table="normal",
        dtype=_dt.int32,
        padding_idx=None,
    ):
        super().__init__()
        self.vocab_size, self.embedding_size = int(vocab_size), int(embedding_size)
        self.use_one_hot = bool(use_one_hot)
        if padding_idx is not None:
            if not -self.vocab_size <= padding_idx < self.vocab_size:
                raise ValueError(
                    f"Embedding: padding_idx {padding_idx} out of range for vocab_size {vocab_size}"
                )
            padding_idx = int(padding_idx) % self.vocab_size
        self.padding_idx = padding_idx
        table = make_parameter(
            embedding_table, (self.vocab_size, self.embedding_size), _dt.float32, "embedding_table"
        )
        if padding_idx is not None:
            table.set_data(ops.index_update(table, padding_idx, 0.0))
        self.embedding_table = table

    def construct(self, ids):
        if ids.dtype.kind not in "iu":
            raise TypeError(f"Embedding: ids must be integers, got {ids.dtype}")
        if self.use_one_hot:
            hot = ops.one_hot(ids, self.vocab_size, dtype=self.embedding_table.dtype)  # [..., V]
            out = ops.matmul(hot, self.embedding_table)  # [..., E]
        else:
            out = ops.take(self.embedding_table, ids, axis=0)  # [..., E]
        if self.padding_idx is not None:
            pad = ops.expand_dims(ids == self.padding_idx, -1)  # [..., 1]
            out = ops.where(pad, ops.stop_gradient(out), out)
        return out

    def extend_repr(self):
        return f"vocab_size={self.vocab_size}, embedding_size={self.embedding_size}, padding_idx={self.padding_idx}"
