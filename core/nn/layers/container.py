"""Containers of cells: SequentialCell, CellList, CellDict.

Sub-cells are registered under their key (``"0"``, ``"1"``, ... for lists), so parameter names
read ``"0.weight"``, ``"blocks.3.norm.gamma"``.
"""

from collections import OrderedDict

from ..cell import Cell

__all__ = ["CellDict", "CellList", "SequentialCell"]


def _check_cell(cell, owner):
    if not isinstance(cell, Cell):
        raise TypeError(f"{owner}: expected a Cell, got {type(cell).__name__}")
    return cell


class _CellSeq(Cell):
    """An ordered run of cells stored under string keys."""

    def _items(self):
        return list(self._cells.items())

    def _reset(self, items):
        """Replace the registered cells by ``items`` (a list of (key, cell)), in that order."""
        for key in list(self._cells):
            delattr(self, key)
        for key, cell in items:
            setattr(self, key, cell)

    def _renumbered(self, cells):
        return [(str(i), c) for i, c in enumerate(cells)]

    def _index(self, index):
        n = len(self._cells)
        if not isinstance(index, int):
            raise TypeError(
                f"{type(self).__name__}: index must be an int or slice, got {type(index).__name__}"
            )
        if not -n <= index < n:
            raise IndexError(f"{type(self).__name__}: index {index} out of range for {n} cells")
        return index % n

    def __len__(self):
        return len(self._cells)

    def __iter__(self):
        return iter(list(self._cells.values()))

    def __setitem__(self, index, cell):
        key = self._items()[self._index(index)][0]
        setattr(self, key, _check_cell(cell, type(self).__name__))

    def __delitem__(self, index):
        items = self._items()
        if isinstance(index, slice):
            drop = set(range(len(items))[index])
        else:
            drop = {self._index(index)}
        keep = [kv for i, kv in enumerate(items) if i not in drop]
        numeric = all(k == str(i) for i, (k, _) in enumerate(items))
        self._reset(self._renumbered([c for _, c in keep]) if numeric else keep)

    def append(self, cell):
        """Add ``cell`` at the end; returns self."""
        _check_cell(cell, type(self).__name__)
        key = str(len(self._cells))
        while key in self._cells:
            key = str(int(key) + 1)
        setattr(self, key, cell)
        return self

    def extend(self, cells):
        """Append every cell of the iterable ``cells``; returns self."""
        for c in cells:
            self.append(c)
        return self

    def insert(self, index, cell):
        """Insert ``cell`` before position ``index`` (the cells are renumbered)."""
        _check_cell(cell, type(self).__name__)
        cells = [c for _, c in self._items()]
        n = len(cells)
        index = max(0, min(n, index if index >= 0 else n + index))
        cells.insert(index, cell)
        self._reset(self._renumbered(cells))


class SequentialCell(_CellSeq):
    """Cells applied one after the other: ``SequentialCell(a, b, c)(x) == c(b(a(x)))``.

    Accepts cells as arguments, one list/tuple of cells, or one OrderedDict of named cells.
    Supports ``len``, iteration, ``seq[i]``, ``seq[i:j]`` (a new SequentialCell sharing the
    cells), ``seq[i] = cell``, ``del seq[i]``, ``append``, ``extend``, ``insert``.
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], (OrderedDict, dict)):
            for key, cell in args[0].items():
                setattr(self, str(key), _check_cell(cell, "SequentialCell"))
        else:
            cells = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) else args
            for i, cell in enumerate(cells):
                setattr(self, str(i), _check_cell(cell, "SequentialCell"))

    def __getitem__(self, index):
        items = self._items()
        if isinstance(index, slice):
            return SequentialCell([c for _, c in items[index]])
        if isinstance(index, str):
            return self._cells[index]
        return items[self._index(index)][1]

    def construct(self, x):
        for i, (key, cell) in enumerate(self._cells.items()):
            try:
                x = cell(x)
            except Exception as err:
                raise _in_layer(err, i, key, cell) from None
        return x


# Exception types rebuilt with the layer named in their message; others get a note instead
# (their constructors take other arguments, or callers match on their exact attributes).
_REWORDED = (
    TypeError,
    ValueError,
    RuntimeError,
    IndexError,
    NotImplementedError,
    ZeroDivisionError,
)


def _in_layer(err, index, key, cell):
    """``err`` naming the SequentialCell layer it came from (index, key and class); the original
    traceback is kept. Nested SequentialCells name every level, outermost last."""
    where = f"layer {index}" if key == str(index) else f"layer {index} ({key!r})"
    where = f"in SequentialCell {where}: {type(cell).__name__}"
    if type(err) in _REWORDED and len(err.args) <= 1:
        new = type(err)(f"{err} [{where}]")
        return new.with_traceback(err.__traceback__)
    err.add_note(where)
    return err


class CellList(_CellSeq):
    """A list of cells (registered, so their parameters are found); it has no construct.

    Supports ``len``, iteration, indexing and slicing (a new CellList), assignment, ``del``,
    ``append``, ``extend``, ``insert`` and ``+=``.
    """

    def __init__(self, args=None):
        super().__init__()
        if args is not None:
            self.extend(args)

    def __getitem__(self, index):
        items = self._items()
        if isinstance(index, slice):
            return CellList([c for _, c in items[index]])
        return items[self._index(index)][1]

    def __iadd__(self, cells):
        return self.extend(cells)

    def construct(self, *args, **kwargs):
        raise NotImplementedError("CellList has no construct(); iterate over it instead")


class CellDict(Cell):
    """An ordered dict of named cells (registered under their keys).

    Supports ``len``, iteration over keys, ``d[key]``, ``d[key] = cell``, ``del d[key]``,
    ``in``, ``keys``, ``values``, ``items``, ``update``, ``pop``, ``clear``.
    """

    def __init__(self, args=None):
        super().__init__()
        if args is not None:
            self.update(args)

    def _check_key(self, key):
        if not isinstance(key, str) or not key or "." in key:
            raise KeyError(f"CellDict: key must be a non-empty str without '.', got {key!r}")
        if key not in self._cells and (key in self.__dict__ or hasattr(type(self), key)):
            raise KeyError(f"CellDict: key {key!r} would shadow an attribute of the CellDict")
        return key

    def __getitem__(self, key):
        return self._cells[key]

    def __setitem__(self, key, cell):
        setattr(self, self._check_key(key), _check_cell(cell, "CellDict"))

    def __delitem__(self, key):
        if key not in self._cells:
            raise KeyError(key)
        delattr(self, key)

    def __contains__(self, key):
        return key in self._cells

    def __len__(self):
        return len(self._cells)

    def __iter__(self):
        return iter(list(self._cells))

    def keys(self):
        return list(self._cells.keys())

    def values(self):
        return list(self._cells.values())

    def items(self):
        return list(self._cells.items())

    def pop(self, key):
        cell = self._cells[key]
        delattr(self, key)
        return cell

    def clear(self):
        for key in list(self._cells):
            delattr(self, key)

    def update(self, cells):
        """Add ``(key, cell)`` pairs from a dict or an iterable of pairs."""
        pairs = cells.items() if isinstance(cells, (dict, CellDict)) else cells
        for pair in pairs:
            if len(pair) != 2:
                raise ValueError(f"CellDict.update: expected (key, cell) pairs, got {pair!r}")
            self[pair[0]] = pair[1]

    def construct(self, *args, **kwargs):
        raise NotImplementedError("CellDict has no construct(); index it instead")
