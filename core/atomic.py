"""Atomic file writes: a temporary file in the target's folder, renamed over the target only
when complete, so a reader sees the old file or the whole new one and a failed write leaves
an existing file untouched. The new file gets the mode a plain ``open(path, "w")`` would
(0666 less the umask: 0644 under umask 022), not ``mkstemp``'s private 0600.

One path for every writer in diffsci (checkpoints, HDF5 data, mmCIF/JSON, Touchstone, plots):

    with atomic_path("m.ckpt.h5") as tmp:       # any writer that takes a file name
        h5py.File(tmp, "w") ...
    atomic_write("summary.json", text)          # text or bytes
"""

import contextlib
import os
import tempfile
import threading

_UMASK_LOCK = threading.Lock()


def new_file_mode():
    """The permission bits a newly created file gets under the current umask."""
    with _UMASK_LOCK:  # os.umask can only be read by setting it; restore at once
        mask = os.umask(0o022)
        os.umask(mask)
    return 0o666 & ~mask


@contextlib.contextmanager
def atomic_path(path, suffix=".tmp", fsync=True):
    """Yield a temporary file name next to ``path``; on a clean exit give it the umask's mode,
    flush it to disk (``fsync``) and rename it to ``path``; on an error remove it.

    ``suffix`` ends the temporary name (``.png`` for writers that infer the format from it).
    Raises FileNotFoundError naming the folder when the target's folder does not exist.
    """
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"cannot write {path!r}: folder {directory!r} does not exist")
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=suffix,
                               dir=directory)
    os.close(fd)
    try:
        yield tmp
        os.chmod(tmp, new_file_mode())
        if fsync:
            with open(tmp, "rb+") as fh:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.remove(tmp)
        raise


def atomic_write(path, data, fsync=True):
    """Write ``data`` (str: UTF-8 text, or bytes) to ``path`` atomically (see atomic_path)."""
    mode, encoding = ("w", "utf-8") if isinstance(data, str) else ("wb", None)
    with atomic_path(path, fsync=fsync) as tmp, open(tmp, mode, encoding=encoding) as f:
        f.write(data)
