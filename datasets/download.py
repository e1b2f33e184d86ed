"""Streaming, resumable, checksum-verified, atomic downloads (``datasets.download``).

``download(url, path)`` streams the body into ``path + ".part"`` and renames it to ``path``
only once it is complete and its checksum matches; at no moment is there a partial or
unverified file at ``path``. An interrupted transfer keeps the ``.part`` file, and the next call
(or the automatic retry) asks the server for the rest with an HTTP ``Range: bytes=<have>-``
request (RFC 9110, section 14): a ``206 Partial Content`` reply is appended, a ``200 OK`` (a
server that ignores ranges) restarts from zero, a ``416 Range Not Satisfiable`` means the
``.part`` file is already complete or stale.

Only the standard library speaks HTTP here (``urllib``); progress is a tqdm bar.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import re
import urllib.error
import urllib.request
from pathlib import Path

from tqdm.auto import tqdm

__all__ = ["ChecksumError", "DownloadError", "download", "file_digest"]

_CONTENT_RANGE = re.compile(r"bytes\s+(\d+)-(\d+)/(\d+|\*)")
_UNSATISFIED_RANGE = re.compile(r"bytes\s+\*/(\d+)")


class DownloadError(OSError):
    """A download failed; the message names the URL and the HTTP status or network error."""


class ChecksumError(DownloadError):
    """A downloaded file's digest differs from the expected one (nothing is left at ``path``)."""


class _Interrupted(Exception):
    """The connection ended before the body did (the ``.part`` file is kept for resuming)."""


def file_digest(
    path: str | os.PathLike, algorithm: str = "sha256", chunk_size: int = 1 << 20
) -> str:
    """Hex digest of a file, read in chunks (``algorithm``: any ``hashlib`` name)."""
    h = hashlib.new(algorithm)
    with open(path, "rb") as fh:
        while block := fh.read(chunk_size):
            h.update(block)
    return h.hexdigest()


def _expected_digests(sha256: str | None, md5: str | None) -> dict[str, str]:
    out = {}
    for name, value in (("sha256", sha256), ("md5", md5)):
        if value is not None:
            value = value.strip().lower()
            size = hashlib.new(name).digest_size * 2
            if not re.fullmatch(rf"[0-9a-f]{{{size}}}", value):
                raise ValueError(f"{name} must be {size} hex digits, got {value!r}")
            out[name] = value
    return out


def _open(url: str, offset: int, timeout: float):
    headers = {"User-Agent": "diffsci-datasets/1 (urllib)", "Accept-Encoding": "identity"}
    if offset > 0:
        headers["Range"] = f"bytes={offset}-"
    request = urllib.request.Request(url, headers=headers)
    return urllib.request.urlopen(request, timeout=timeout)


class _Transfer:
    """The state of one download: the ``.part`` file, the bytes so far, the running digests."""

    def __init__(self, url: str, part: Path, algorithms: list[str], progress: bool, desc: str):
        self.url, self.part, self.algorithms = url, part, algorithms
        self.progress, self.desc = progress, desc
        self.hashes: dict[str, hashlib._Hash] = {}
        self.offset = 0
        self.truncate = True  # the next body starts the .part file afresh

    def restart(self) -> None:
        """Forget the ``.part`` file's contents: the next request asks for the whole body.

        The file itself is truncated only when a body arrives (an HTTP error creates none).
        """
        self.truncate = True
        self.offset = 0
        self.hashes = {a: hashlib.new(a) for a in self.algorithms}

    def adopt_part(self) -> None:
        """Continue from an existing ``.part`` file: hash what it holds, resume after it."""
        self.hashes = {a: hashlib.new(a) for a in self.algorithms}
        self.offset = 0
        self.truncate = False
        with open(self.part, "rb") as fh:
            while block := fh.read(1 << 20):
                for h in self.hashes.values():
                    h.update(block)
                self.offset += len(block)

    def run(self, timeout: float, chunk_size: int) -> None:
        """One request: append the body (or its missing tail) to the ``.part`` file.

        Raises ``_Interrupted`` when the connection ends early, ``DownloadError`` otherwise.
        """
        try:
            response = _open(self.url, self.offset, timeout)
        except urllib.error.HTTPError as e:
            e.close()
            if e.code == 416 and self.offset > 0:
                m = _UNSATISFIED_RANGE.search(e.headers.get("Content-Range", "") or "")
                if m and int(m.group(1)) == self.offset:
                    return  # the .part file already holds the whole body
                self.restart()  # stale .part (the file on the server changed): start over
                return self.run(timeout, chunk_size)
            raise DownloadError(f"{self.url}: HTTP {e.code} {e.reason}") from None
        except urllib.error.URLError as e:
            raise DownloadError(f"{self.url}: cannot connect ({e.reason})") from None
        except (TimeoutError, ConnectionError, http.client.HTTPException) as e:
            raise _Interrupted(f"no response ({e!r})") from e
        with response:
            total = self._start(response)
            with (
                open(self.part, "wb" if self.truncate else "ab") as out,
                tqdm(
                    total=total,
                    initial=self.offset,
                    unit="B",
                    unit_scale=True,
                    unit_divisor=1024,
                    desc=self.desc,
                    disable=not self.progress,
                ) as bar,
            ):
                self.truncate = False
                while True:
                    try:
                        block = response.read(chunk_size)
                    except (TimeoutError, ConnectionError, http.client.HTTPException) as e:
                        raise _Interrupted(f"{e!r} after {self.offset} bytes") from e
                    if not block:
                        break
                    out.write(block)
                    for h in self.hashes.values():
                        h.update(block)
                    self.offset += len(block)
                    bar.update(len(block))
        if total is not None and self.offset != total:
            raise _Interrupted(f"got {self.offset} of {total} bytes")

    def _start(self, response) -> int | None:
        """Check the reply's status against the request; return the full body's length."""
        status = response.status
        length = response.headers.get("Content-Length")
        length = int(length) if length is not None and length.isdigit() else None
        if status == 206:
            m = _CONTENT_RANGE.search(response.headers.get("Content-Range", "") or "")
            if m is None or int(m.group(1)) != self.offset:
                raise DownloadError(
                    f"{self.url}: asked for bytes {self.offset}- and got "
                    f"Content-Range {response.headers.get('Content-Range')!r}"
                )
            return None if m.group(3) == "*" else int(m.group(3))
        if status != 200:
            raise DownloadError(f"{self.url}: HTTP {status} {response.reason}")
        if self.offset > 0:  # the server ignored Range: its reply is the whole body
            self.restart()
        return length


def download(
    url: str,
    path: str | os.PathLike,
    sha256: str | None = None,
    resume: bool = True,
    progress: bool = True,
    *,
    md5: str | None = None,
    retries: int = 3,
    timeout: float = 60.0,
    chunk_size: int = 1 << 20,
) -> Path:
    """Download ``url`` to ``path``: streamed, resumable, verified, atomic.

    Args:
        url: an ``http(s)://`` (or any ``urllib``-supported) URL.
        path: the destination file; its folder is created if missing.
        sha256: the expected SHA-256 (64 hex digits), or ``None`` to skip that check.
        resume: continue from ``path + ".part"`` left by an interrupted download (with an HTTP
            Range request), and retry a dropped connection from where it stopped; ``False``
            discards any ``.part`` file and makes one attempt.
        progress: show a tqdm progress bar (bytes).
        md5: the expected MD5 (32 hex digits; PDEBench publishes these), or ``None``.
        retries: how many times a dropped connection is resumed within this call.
        timeout: seconds to wait for the server on each request and each read.
        chunk_size: bytes per read (memory use is about this, whatever the file's size).

    Returns:
        ``Path(path)``. If ``path`` already exists it is kept as it is when no checksum was given
        or when it matches; otherwise it is replaced only by a complete, verified download.

    Raises:
        DownloadError: an HTTP error (the message names the URL and the status, e.g.
            ``HTTP 404 Not Found``), a network error, or a connection dropped more than
            ``retries`` times (the ``.part`` file is kept: call again to resume).
        ChecksumError: the digest differs; the ``.part`` file is deleted and nothing is left at
            ``path`` (an older file there is left untouched).
    """
    path = Path(path)
    expected = _expected_digests(sha256, md5)
    if path.exists() and all(file_digest(path, a) == v for a, v in expected.items()):
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(path.name + ".part")
    transfer = _Transfer(url, part, sorted(expected), progress, path.name)
    if resume and part.exists():
        transfer.adopt_part()
    else:
        transfer.restart()
    attempts = 0
    while True:
        try:
            transfer.run(timeout, chunk_size)
            break
        except _Interrupted as e:
            attempts += 1
            if not resume or attempts > retries:
                if not resume:
                    part.unlink(missing_ok=True)
                    kept = "nothing kept"
                else:
                    kept = f"{part} kept ({transfer.offset} bytes): call again to resume"
                raise DownloadError(
                    f"{url}: connection lost ({e}) after {attempts} attempt(s); {kept}"
                ) from None
    for algorithm, want in expected.items():
        got = transfer.hashes[algorithm].hexdigest()
        if got != want:
            part.unlink(missing_ok=True)
            raise ChecksumError(
                f"{url}: {algorithm} mismatch: expected {want}, got {got} "
                f"({transfer.offset} bytes); nothing written to {path}"
            )
    os.replace(part, path)
    return path
