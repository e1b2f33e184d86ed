"""datasets.download against a local http.server on 127.0.0.1 (no network is ever used)."""

import hashlib
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from diffsci.datasets.download import ChecksumError, DownloadError, download
from diffsci.datasets.pde import PDEBENCH_FILES, PDEBenchFileInfo, download_pdebench

BODY = np.random.default_rng(1).integers(0, 256, 300_000, dtype=np.uint8).tobytes()
SHA = hashlib.sha256(BODY).hexdigest()
MD5 = hashlib.md5(BODY).hexdigest()


class Handler(BaseHTTPRequestHandler):
    """Serves ``server.files``; honours ``Range`` unless ``server.ranges`` is False; cuts the
    connection halfway through the body for the paths in ``server.cut_once`` (once each)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # keep the test output clean
        pass

    def do_GET(self):
        srv = self.server
        srv.log.append((self.path, self.headers.get("Range")))
        body = srv.files.get(self.path)
        if body is None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        start, status = 0, 200
        m = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range") or "")
        if m and srv.ranges:
            start = int(m.group(1))
            if start >= len(body):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(body)}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            status = 206
        chunk = body[start:]
        self.send_response(status)
        self.send_header("Content-Length", str(len(chunk)))
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        self.end_headers()
        srv.statuses.append(status)
        if self.path in srv.cut_once:
            srv.cut_once.discard(self.path)
            self.wfile.write(chunk[: len(chunk) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(chunk)


@pytest.fixture
def server():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.files = {"/data.bin": BODY}
    srv.ranges, srv.cut_once, srv.log, srv.statuses = True, set(), [], []
    srv.url = f"http://127.0.0.1:{srv.server_address[1]}"
    thread = threading.Thread(target=srv.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()
    thread.join()


def test_full_download_verified(server, tmp_path):
    path = tmp_path / "sub" / "data.bin"
    got = download(server.url + "/data.bin", path, sha256=SHA, md5=MD5.upper(), progress=True)
    assert got == path and path.read_bytes() == BODY
    assert sorted(p.name for p in path.parent.iterdir()) == ["data.bin"]
    assert server.log == [("/data.bin", None)]
    download(server.url + "/data.bin", path, sha256=SHA)  # present and verified: no request
    assert len(server.log) == 1


def test_resume_after_interruption_within_one_call(server, tmp_path):
    server.cut_once.add("/data.bin")
    path = tmp_path / "data.bin"
    download(server.url + "/data.bin", path, sha256=SHA, progress=False)
    assert path.read_bytes() == BODY
    assert server.log == [("/data.bin", None), ("/data.bin", f"bytes={len(BODY) // 2}-")]
    assert server.statuses == [200, 206]


def test_resume_across_calls_keeps_the_part_file(server, tmp_path):
    server.cut_once.add("/data.bin")
    path = tmp_path / "data.bin"
    with pytest.raises(
        DownloadError,
        match=r"http://127\.0\.0\.1:\d+/data\.bin: connection lost.*\.part kept \(150000 bytes\)",
    ):
        download(server.url + "/data.bin", path, sha256=SHA, retries=0, progress=False)
    part = tmp_path / "data.bin.part"
    assert not path.exists() and part.read_bytes() == BODY[: len(BODY) // 2]
    download(server.url + "/data.bin", path, sha256=SHA, progress=False)
    assert path.read_bytes() == BODY and not part.exists()
    assert server.log[-1] == ("/data.bin", f"bytes={len(BODY) // 2}-")


def test_resume_false_discards_the_part_file(server, tmp_path):
    part = tmp_path / "data.bin.part"
    part.write_bytes(b"garbage")
    path = download(server.url + "/data.bin", tmp_path / "data.bin", resume=False, progress=False)
    assert path.read_bytes() == BODY and server.log == [("/data.bin", None)]
    server.cut_once.add("/data.bin")
    with pytest.raises(DownloadError, match="nothing kept"):
        download(server.url + "/data.bin", tmp_path / "other.bin", resume=False, progress=False)
    assert not (tmp_path / "other.bin").exists() and not (tmp_path / "other.bin.part").exists()


def test_server_without_range_restarts_from_scratch(server, tmp_path):
    server.ranges = False
    (tmp_path / "data.bin.part").write_bytes(BODY[:1000])
    path = download(server.url + "/data.bin", tmp_path / "data.bin", sha256=SHA, progress=False)
    assert path.read_bytes() == BODY
    assert server.log == [("/data.bin", "bytes=1000-")] and server.statuses == [200]
    server.cut_once.add("/data.bin")  # interrupted, then resumed against a server that restarts
    path2 = download(server.url + "/data.bin", tmp_path / "again.bin", sha256=SHA, progress=False)
    assert path2.read_bytes() == BODY and server.statuses[-2:] == [200, 200]


def test_complete_part_file_is_finished_without_refetching(server, tmp_path):
    (tmp_path / "data.bin.part").write_bytes(BODY)
    path = download(server.url + "/data.bin", tmp_path / "data.bin", sha256=SHA, progress=False)
    assert path.read_bytes() == BODY and server.statuses == []  # the server answered 416


def test_checksum_mismatch_leaves_nothing(server, tmp_path):
    path = tmp_path / "data.bin"
    bad = "0" * 64
    with pytest.raises(
        ChecksumError, match=rf"/data\.bin: sha256 mismatch: expected {bad}, got {SHA}"
    ):
        download(server.url + "/data.bin", path, sha256=bad, progress=False)
    assert list(tmp_path.iterdir()) == []
    path.write_bytes(b"old contents")  # an older file is never replaced by an unverified one
    with pytest.raises(ChecksumError, match="md5 mismatch"):
        download(server.url + "/data.bin", path, md5="f" * 32, progress=False)
    assert path.read_bytes() == b"old contents" and sorted(p.name for p in tmp_path.iterdir()) == [
        "data.bin"
    ]
    download(server.url + "/data.bin", path, sha256=SHA, progress=False)  # wrong file replaced
    assert path.read_bytes() == BODY
    with pytest.raises(ValueError, match="sha256 must be 64 hex digits"):
        download(server.url + "/data.bin", path, sha256="abc")


def test_http_errors_name_url_and_status(server, tmp_path):
    with pytest.raises(
        DownloadError, match=r"http://127\.0\.0\.1:\d+/missing\.bin: HTTP 404 Not Found"
    ):
        download(server.url + "/missing.bin", tmp_path / "m.bin", progress=False)
    assert list(tmp_path.iterdir()) == []
    port = server.server_address[1]
    server.shutdown()
    server.server_close()
    with pytest.raises(
        DownloadError, match=rf"http://127\.0\.0\.1:{port}/data\.bin: cannot connect"
    ):
        download(f"http://127.0.0.1:{port}/data.bin", tmp_path / "d.bin", progress=False, retries=0)
    assert not (tmp_path / "d.bin").exists()


def test_pdebench_table_and_download(server, tmp_path, monkeypatch):
    assert len(PDEBENCH_FILES) == 375
    burgers = PDEBENCH_FILES["1D_Burgers_Sols_Nu0.1.hdf5"]
    assert burgers.url == "https://darus.uni-stuttgart.de/api/access/datafile/268185"
    assert (burgers.pde, burgers.folder, burgers.md5) == (
        "burgers",
        "1D/Burgers/Train/",
        "660ba1008d3843bf4e28d2895eb607ce",
    )
    assert all(re.fullmatch(r"[0-9a-f]{32}", i.md5) for i in PDEBENCH_FILES.values())
    assert PDEBENCH_FILES["2D_rdb_NA_NA.h5"].size == 6_200_000_000
    name = "1D_Advection_Sols_beta0.1.hdf5"
    monkeypatch.setitem(
        PDEBENCH_FILES,
        name,
        PDEBenchFileInfo("advection", name, server.url + "/data.bin", "1D/Advection/Train/", MD5),
    )
    for key in [k for k, v in PDEBENCH_FILES.items() if v.pde == "advection" and k != name]:
        monkeypatch.delitem(PDEBENCH_FILES, key)
    (path,) = download_pdebench(name, tmp_path, progress=False)
    assert path == tmp_path / "1D/Advection/Train" / name and path.read_bytes() == BODY
    assert download_pdebench("Advection", tmp_path, progress=False) == [path]
    monkeypatch.setitem(
        PDEBENCH_FILES,
        name,
        PDEBenchFileInfo("advection", name, server.url + "/data.bin", "x/", "0" * 32),
    )
    with pytest.raises(ChecksumError, match="md5 mismatch"):
        download_pdebench(name, tmp_path, progress=False)
    assert not (tmp_path / "x").joinpath(name).exists()
    with pytest.raises(
        KeyError, match=r"'heat' is neither a PDEBench file name nor a PDE; PDEs: \['1d_cfd'"
    ):
        download_pdebench("heat", tmp_path)
