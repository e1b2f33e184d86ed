"""MSA server client against a stand-in ColabFold MMseqs2 server on 127.0.0.1 (no network).

The stand-in speaks ColabFold's protocol (``POST /ticket/msa|pair`` with ``q`` and ``mode``,
``GET /ticket/<id>``, ``GET /result/download/<id>`` -> tar.gz of NUL-separated a3m blocks)
as colabfold's ``run_mmseqs2`` expects it.
"""

import io
import json
import tarfile
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import numpy as np
import pytest

from diffsci.protenix.data import featurize
from diffsci.protenix.data.msa_server import (
    MSAServerClient,
    MSAServerError,
    add_server_msas,
    split_result_a3m,
)

SEQ_A, SEQ_B = "MKTAYIAKQR", "GSHMLEDPVW"


def _tar(files):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


class StandIn:
    """A tiny ColabFold-like server: answers from canned alignments of the known queries."""

    HITS: ClassVar = {SEQ_A: [("UniRef100_A1_9606", "MKSAYIAKQR"), ("UniRef100_A2_10090", "MK-AYIAkKQR")],
            SEQ_B: [("UniRef100_B1_9606", "GSHMLEDPVF"), ("UniRef100_B2_562", "GTHMLEDPVW")]}
    ENV: ClassVar = {SEQ_A: [("MGYP0001", "MKTAYLAKQR")], SEQ_B: [("MGYP0002", "-SHMLEDPV-")]}

    def __init__(self, first_status="RUNNING", final_status="COMPLETE", ratelimit_once=False):
        self.requests, self.jobs = [], {}
        self.first_status, self.final_status = first_status, final_status
        self.ratelimit_once = ratelimit_once
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _send(self, code, body, ctype="application/json"):
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self):
                n = int(self.headers.get("Content-Length", 0))
                form = urllib.parse.parse_qs(self.rfile.read(n).decode())
                outer.requests.append(("POST", self.path, form, self.headers.get("User-Agent")))
                if outer.ratelimit_once:
                    outer.ratelimit_once = False
                    return self._send(200, json.dumps({"status": "RATELIMIT"}).encode())
                ticket = f"t{len(outer.jobs)}"
                outer.jobs[ticket] = (self.path, form["q"][0], form["mode"][0])
                self._send(200, json.dumps({"id": ticket, "status": outer.first_status}).encode())

            def do_GET(self):
                outer.requests.append(("GET", self.path, None, self.headers.get("User-Agent")))
                parts = self.path.strip("/").split("/")
                if parts[0] == "ticket":
                    return self._send(200, json.dumps({"id": parts[1],
                                                       "status": outer.final_status}).encode())
                if parts[:2] == ["result", "download"]:
                    return self._send(200, outer.result(parts[2]), "application/gzip")
                self._send(404, b"{}")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def result(self, ticket):
        path, q, _mode = self.jobs[ticket]
        lines = q.strip().splitlines()
        queries = [(lines[i][1:], lines[i + 1]) for i in range(0, len(lines), 2)]
        if path.endswith("pair"):
            # row k of every query from the same species (ColabFold's paired output)
            blocks = [f">{n}\n{s}\n" + "".join(f">{d}\n{r}\n" for d, r in self.HITS[s][:1])
                      for n, s in queries]
            return _tar({"pair.a3m": "\x00".join(blocks)})
        uniref = "\x00".join(f">{n}\n{s}\n" + "".join(f">{d}\n{r}\n" for d, r in self.HITS[s])
                             for n, s in queries)
        env = "\x00".join(f">{n}\n{s}\n" + "".join(f">{d}\n{r}\n" for d, r in self.ENV[s])
                          for n, s in queries)
        return _tar({"uniref.a3m": uniref, "bfd.mgnify30.metaeuk30.smag30.a3m": env})

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


def test_split_result_blocks():
    text = ">101\nAAA\n>h\nAAC\n\x00>102\nGGG\n"
    assert split_result_a3m(text) == {101: ">101\nAAA\n>h\nAAC\n", 102: ">102\nGGG\n"}


def test_search_and_featurize_a_complex(tmp_path):
    job = {"name": "cx", "sequences": [{"proteinChain": {"sequence": SEQ_A, "count": 2}},
                                       {"proteinChain": {"sequence": SEQ_B, "count": 1}}]}
    with StandIn() as srv:
        client = MSAServerClient(srv.url, user_agent="test-agent", poll_s=0.0,
                                 cache_dir=str(tmp_path / "cache"))
        add_server_msas(job, client)
        posts = [r for r in srv.requests if r[0] == "POST"]
        assert [p[1] for p in posts] == ["/ticket/msa", "/ticket/pair"]
        assert posts[0][2]["q"] == [f">101\n{SEQ_A}\n>102\n{SEQ_B}\n"]
        assert posts[0][2]["mode"] == ["env"] and posts[1][2]["mode"] == ["pairgreedy"]
        assert all(r[3] == "test-agent" for r in srv.requests)
        assert any(r[1] == "/ticket/t0" for r in srv.requests)     # polled while RUNNING
        n = len(srv.requests)
        add_server_msas(json.loads(json.dumps(job)), client)          # cached: no new request
        assert len(srv.requests) == n
    a = job["sequences"][0]["proteinChain"]
    # uniref block then the environmental hits, the query row not repeated
    assert a["unpairedMsa"] == (f">101\n{SEQ_A}\n>UniRef100_A1_9606\nMKSAYIAKQR\n"
                                f">UniRef100_A2_10090\nMK-AYIAkKQR\n>MGYP0001\nMKTAYLAKQR\n")
    assert a["pairedMsa"] == f">101\n{SEQ_A}\n>UniRef100_A1_9606\nMKSAYIAKQR\n"
    f = featurize(job)
    # paired row 1: the 9606 hits of A, A and B side by side
    assert f["msa"].shape[1] == 30
    np.testing.assert_array_equal(f["msa"][1, 20:], [7, 15, 8, 12, 10, 6, 3, 14, 19, 13])
    assert f["deletion_matrix"].max() == 1


def test_monomer_search_is_unpaired_only():
    job = {"name": "m", "sequences": [{"proteinChain": {"sequence": SEQ_B, "count": 2}}]}
    with StandIn(first_status="COMPLETE", ratelimit_once=True) as srv:
        add_server_msas(job, MSAServerClient(srv.url, poll_s=0.0))
        posts = [r[1] for r in srv.requests if r[0] == "POST"]
    assert posts == ["/ticket/msa", "/ticket/msa"]     # RATELIMIT -> resubmitted; no pairing
    assert "pairedMsa" not in job["sequences"][0]["proteinChain"]
    assert featurize(job)["msa"].shape == (1 + 4, 20)


def test_server_errors_name_the_url():
    with StandIn(final_status="ERROR") as srv:
        client = MSAServerClient(srv.url, poll_s=0.0)
        with pytest.raises(MSAServerError, match=rf"{srv.url}: search ERROR"):
            client.search([SEQ_A])
    client = MSAServerClient("http://127.0.0.1:9", poll_s=0.0, timeout_s=2.0)
    with pytest.raises(MSAServerError, match=r"127\.0\.0\.1:9/ticket/msa: cannot connect"):
        client.search([SEQ_A])
