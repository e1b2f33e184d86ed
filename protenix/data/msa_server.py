"""Client of a ColabFold-compatible MMseqs2 MSA server (``--msa-server URL``).

The protocol is ColabFold's ``run_mmseqs2`` (api.colabfold.com, also served by self-hosted
``colabfold`` MSA servers):

1. ``POST {url}/ticket/msa`` (unpaired search; ``mode`` = ``env`` | ``all`` |
   ``env-nofilter`` | ``nofilter``) or ``POST {url}/ticket/pair`` (paired search, ``mode`` =
   ``pairgreedy`` (ColabFold's default) | ``paircomplete``, ``-env`` appended to also pair
   environmental hits), form fields ``q`` = FASTA of the unique query sequences
   named ``>101``, ``>102``, ... and ``mode``; the reply is JSON ``{"id", "status"}``.
2. ``GET {url}/ticket/{id}`` until ``status`` is ``COMPLETE`` (``PENDING``/``RUNNING``/
   ``UNKNOWN``: wait; ``RATELIMIT``: wait and resubmit; ``ERROR``/``MAINTENANCE``: fail).
3. ``GET {url}/result/download/{id}``: a ``.tar.gz`` holding ``uniref.a3m`` (and
   ``bfd.mgnify30.metaeuk30.smag30.a3m`` for ``env`` modes), or ``pair.a3m``; each file holds
   one a3m block per query, blocks separated by a NUL byte, each opening with its ``>10N``
   query row.

:func:`add_server_msas` fills a job's chains with the results (``unpairedMsa`` always,
``pairedMsa`` when the job has more than one distinct sequence), so ``featurize`` uses them.
"""

import io
import json
import os
import tarfile
import time
import urllib.error
import urllib.parse
import urllib.request

from diffsci.core.atomic import atomic_write

__all__ = ["MSAServerClient", "MSAServerError", "add_server_msas", "split_result_a3m"]

UNPAIRED_FILES = ("uniref.a3m", "bfd.mgnify30.metaeuk30.smag30.a3m")
PAIRED_FILES = ("pair.a3m",)
FIRST_ID = 101


class MSAServerError(RuntimeError):
    """The MSA server failed, naming the URL and what it answered."""


def split_result_a3m(text):
    """One result file -> {query number (101, ...): a3m text}; blocks split at NUL bytes."""
    out, key = {}, None
    for block in text.split("\x00"):
        lines = block.strip("\n").splitlines()
        if not lines or not lines[0].startswith(">"):
            continue
        key = int(lines[0][1:].split()[0])
        out[key] = "\n".join(lines) + "\n"
    return out


class MSAServerClient:
    """Talks to one server.

    Args:
        url: the server's base URL (``https://api.colabfold.com``).
        user_agent: sent as ``User-Agent`` (ColabFold asks clients to name themselves).
        poll_s: seconds between status polls (ColabFold waits 5 to 60 s).
        timeout_s: socket timeout of each request.
        max_wait_s: give up after this long without ``COMPLETE``.
        use_env: also search the environmental databases (ColabFold's default, mode ``env``).
        use_filter: ColabFold's diversity filter of the unpaired hits (mode ``env``/``all``;
            False: ``env-nofilter``/``nofilter``).
        pairing_strategy: ``"greedy"`` (ColabFold's default: pair a species' hits even when
            some chains lack it) or ``"complete"`` (only species found in every chain).
        pair_env: append ``-env`` to the pairing mode.
        cache_dir: if set, results are kept there per (mode, sequences) and reused.
    """

    def __init__(self, url, user_agent="diffsci-protenix", poll_s=5.0, timeout_s=30.0,
                 max_wait_s=3600.0, use_env=True, use_filter=True, pairing_strategy="greedy",
                 pair_env=False, cache_dir=None):
        if pairing_strategy not in ("greedy", "complete"):
            raise ValueError(f"MSAServerClient: pairing_strategy must be 'greedy' or "
                             f"'complete', got {pairing_strategy!r}")
        self.url = url.rstrip("/")
        self.user_agent, self.poll_s, self.timeout_s = user_agent, poll_s, timeout_s
        self.max_wait_s, self.use_env, self.use_filter = max_wait_s, use_env, use_filter
        self.pairing_strategy, self.pair_env = pairing_strategy, pair_env
        self.cache_dir = cache_dir

    # -- HTTP
    def _request(self, path, data=None):
        body = urllib.parse.urlencode(data).encode() if data is not None else None
        req = urllib.request.Request(f"{self.url}/{path}", data=body,
                                     headers={"User-Agent": self.user_agent})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as r:
                return r.read()
        except urllib.error.HTTPError as e:
            raise MSAServerError(f"MSA server {self.url}/{path}: HTTP {e.code} {e.reason}") from e
        except (urllib.error.URLError, OSError) as e:
            raise MSAServerError(f"MSA server {self.url}/{path}: cannot connect ({e})") from e

    def _json(self, path, data=None):
        raw = self._request(path, data)
        try:
            return json.loads(raw)
        except ValueError:
            raise MSAServerError(f"MSA server {self.url}/{path}: reply is not JSON: "
                                 f"{raw[:200]!r}") from None

    def _mode(self, paired):
        if paired:
            return f"pair{self.pairing_strategy}" + ("-env" if self.pair_env else "")
        if self.use_filter:
            return "env" if self.use_env else "all"
        return "env-nofilter" if self.use_env else "nofilter"

    # -- one search
    def search(self, sequences, paired=False):
        """Runs one search; returns {sequence: a3m text} for the unique ``sequences``.

        Unpaired: the uniref and environmental blocks of a query joined (the repeated query row
        of the second file dropped). Paired: the query's rows of ``pair.a3m`` (row k of every
        chain comes from the same organism).
        """
        uniq = list(dict.fromkeys(sequences))
        mode = self._mode(paired)
        cache = None
        if self.cache_dir:
            import hashlib

            key = hashlib.sha256(json.dumps([mode, uniq]).encode()).hexdigest()[:24]
            cache = os.path.join(self.cache_dir, f"{key}.json")
            if os.path.isfile(cache):
                with open(cache) as f:
                    return json.load(f)
        query = "".join(f">{FIRST_ID + i}\n{s}\n" for i, s in enumerate(uniq))
        endpoint = "ticket/pair" if paired else "ticket/msa"
        t0 = time.monotonic()
        out = self._json(endpoint, {"q": query, "mode": mode})
        while True:
            status = out.get("status")
            if status == "COMPLETE":
                break
            if status in ("ERROR", "MAINTENANCE") or status is None:
                what = status if status else f"reply without status: {out!r}"
                raise MSAServerError(f"MSA server {self.url}: search {what} (mode "
                                     f"{mode}; check the sequences, or retry later)")
            if time.monotonic() - t0 > self.max_wait_s:
                raise MSAServerError(f"MSA server {self.url}: no result after "
                                     f"{self.max_wait_s:.0f} s (last status {status})")
            time.sleep(self.poll_s)
            if status == "RATELIMIT" or "id" not in out:
                out = self._json(endpoint, {"q": query, "mode": mode})
            else:
                ticket = out["id"]
                out = self._json(f"ticket/{ticket}")
                out.setdefault("id", ticket)
        raw = self._request(f"result/download/{out['id']}")
        try:
            tar = tarfile.open(fileobj=io.BytesIO(raw), mode="r:gz")
        except tarfile.TarError as e:
            raise MSAServerError(f"MSA server {self.url}: download of {out['id']} is not a "
                                 f"tar.gz ({e})") from None
        names = PAIRED_FILES if paired else UNPAIRED_FILES
        blocks = {}
        with tar:
            members = {os.path.basename(m.name): m for m in tar.getmembers() if m.isfile()}
            if names[0] not in members:
                raise MSAServerError(f"MSA server {self.url}: result has no {names[0]} "
                                     f"(files: {sorted(members)})")
            for n in names:
                if n not in members:
                    continue
                text = tar.extractfile(members[n]).read().decode()
                for k, a3m in split_result_a3m(text).items():
                    if k in blocks:     # drop the query row repeated at the top of the block
                        a3m = "\n".join(a3m.splitlines()[2:]) + "\n"
                    blocks[k] = blocks.get(k, "") + a3m
        result = {}
        for i, s in enumerate(uniq):
            if FIRST_ID + i not in blocks:
                raise MSAServerError(f"MSA server {self.url}: no alignment for query "
                                     f">{FIRST_ID + i} ({s[:20]}...)")
            result[s] = blocks[FIRST_ID + i]
        if cache:
            os.makedirs(self.cache_dir, exist_ok=True)
            atomic_write(cache, json.dumps(result))
        return result


def add_server_msas(job, client):
    """Fills every protein chain of ``job`` (in place; returns it) with server MSAs:
    ``unpairedMsa`` from an unpaired search, and ``pairedMsa`` from a paired search when the
    job has more than one distinct sequence (Protenix pairs only then)."""
    seqs = [e["proteinChain"]["sequence"] for e in job["sequences"]]
    unpaired = client.search(seqs, paired=False)
    paired = client.search(seqs, paired=True) if len(set(seqs)) > 1 else {}
    for e in job["sequences"]:
        body = e["proteinChain"]
        for key in ("unpairedMsaPath", "pairedMsaPath"):
            body.pop(key, None)
        body["unpairedMsa"] = unpaired[body["sequence"]]
        if body["sequence"] in paired:
            body["pairedMsa"] = paired[body["sequence"]]
    return job
