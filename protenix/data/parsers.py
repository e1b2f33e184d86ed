"""Input parsers: FASTA, a3m and Protenix's JSON job format -> Protenix JSON job dicts.

A *job* is one entry of Protenix's inference JSON (``runner/inference.py -i job.json``)::

    {"name": "7pzb", "sequences": [
        {"proteinChain": {"sequence": "MKT...", "count": 2,
                          "unpairedMsaPath": "a.a3m", "pairedMsaPath": "a_pair.a3m"}},
        ...]}

Only protein chains are supported; DNA/RNA/ligand/ion entries raise :class:`InputError`
naming the entry. Every error names the file, line and character (1-based) of the bad
input. Conventions of the inputs:

- FASTA (ColabFold's ``colabfold_batch``; read here rather than with Biopython's
  ``SeqIO``, which gives no line/column to report, and checked against it in the tests): one record per job; a complex is ``A:B`` in one
  record, or one record per chain written ``>name|chain`` (consecutive records with the same
  ``name``; the ``chain`` part, 1-4 letters or digits, becomes the chain id; a header with
  several ``|`` such as UniProt's ``sp|P69905|HBA_HUMAN`` is a plain job name). Identical sequences of one job become one
  entity with ``count`` copies, at the position of the first copy (Protenix's entity model).
- a3m (HH-suite): the first row is the query; lowercase letters are insertions (not aligned
  columns), ``-`` is a gap, every other row has as many aligned columns as the query.
  ColabFold's complex a3m starts with ``#len1,len2,...<TAB>count1,count2,...``; a row with
  residues in more than one chain's columns is a *paired* row, a row with residues in one
  chain's columns is an *unpaired* row of that chain.
"""

import json
import os
import re
import string

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "InputError",
    "a3m_query",
    "attach_a3m",
    "check_job",
    "jobs_from_a3m",
    "jobs_from_fasta",
    "load_jobs",
    "parse_a3m",
    "parse_fasta",
    "split_complex_a3m",
]

# 20 standard amino acids; X (unknown) maps to UNK as in Protenix's PROTEIN_1to3
PROTEIN_LETTERS = "ACDEFGHIKLMNPQRSTVWYX"
DEFAULT_MAX_TOKENS = 5120
UNSUPPORTED_ENTITIES = ("dnaSequence", "rnaSequence", "ligand", "ion")


# a3m rows: letters (upper: aligned residue, lower: insertion), '-' (gap), '.' (insert-state
# gap, A2M); B/Z/U/O/J are the ambiguous/rare amino-acid letters Protenix maps
_A3M_BAD = re.compile(r"[^A-Za-z.\-]")
_A3M_UNALIGNED = str.maketrans("", "", string.ascii_lowercase + ".")


class InputError(ValueError):
    """Bad input, located: ``file:line:column: message`` (line and column 1-based)."""

    def __init__(self, message, file=None, line=None, column=None):
        self.message, self.file, self.line, self.column = message, file, line, column
        where = ":".join(str(x) for x in (file or "<input>", line, column) if x is not None)
        super().__init__(f"{where}: {message}")


def _read(source):
    """(text, name) from a path or from text (``name`` = path, or None for text)."""
    if isinstance(source, os.PathLike) or (
            isinstance(source, str) and "\n" not in source and os.path.isfile(source)):
        path = os.fspath(source)
        with open(path) as f:
            return f.read(), path
    return source, None


def _check_letters(seq, file, positions, what="sequence"):
    """``positions[i]`` = (line, column) of ``seq[i]`` in the input."""
    for i, ch in enumerate(seq):
        if ch not in PROTEIN_LETTERS:
            raise InputError(
                f"unknown residue letter {ch!r} in {what} (allowed: {PROTEIN_LETTERS}; "
                "use X for an unknown residue, read as UNK)", file, *positions[i])


# --------------------------------------------------------------------------- FASTA


def parse_fasta(source, name=None):
    """Reads FASTA records.

    Args:
        source: a path, or FASTA text.
        name: the file name used in errors when ``source`` is text.

    Returns:
        list of ``(description, sequence, line, column)``: ``line`` is the 1-based line of the
        header, the sequence is the concatenation of the following lines (whitespace removed,
        upper-cased), ``column`` maps each sequence index back to ``(line, column)`` of input.
    """
    text, path = _read(source)
    file = path or name
    records = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip("\r\n")
        if not line.strip() or line.startswith(";"):
            continue
        if line.startswith(">"):
            records.append([line[1:].strip(), [], lineno, []])
            continue
        if not records:
            raise InputError("sequence before the first '>' header", file, lineno, 1)
        for col, ch in enumerate(line, 1):
            if ch.isspace():
                continue
            records[-1][1].append(ch.upper())
            records[-1][3].append((lineno, col))
    if not records:
        raise InputError("no FASTA record ('>' header) found", file, 1, 1)
    return [(d, "".join(s), ln, pos) for d, s, ln, pos in records]


def _entities(chains):
    """[(chain_id or None, sequence)] -> Protenix 'sequences' list, identical sequences merged."""
    order, ids = {}, {}
    for cid, seq in chains:
        order.setdefault(seq, len(order))
        ids.setdefault(seq, []).append(cid)
    out = []
    for seq in sorted(order, key=order.get):
        entry = {"sequence": seq, "count": len(ids[seq])}
        if ids[seq][0] is not None:
            entry["id"] = ids[seq]
        out.append({"proteinChain": entry})
    return out


def _job_name(desc):
    name = desc.split()[0] if desc.split() else "job"
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def _report(on_error, job_name, err):
    """Raise ``err``, or hand it to ``on_error(job_name, err)`` and go on."""
    if on_error is None:
        raise err
    on_error(job_name, err)


def jobs_from_fasta(source, name=None, max_tokens=DEFAULT_MAX_TOKENS, on_error=None):
    """FASTA -> list of Protenix job dicts (see the module docstring for the conventions).

    Args:
        on_error: ``None`` raises the first bad job's error; a callable
            ``on_error(job_name, InputError)`` receives each bad job's error instead, and the
            good jobs are returned (a file that cannot be read as FASTA still raises).

    Raises:
        InputError: empty sequence, unknown residue letter, duplicate chain id or job name,
            a ``name|chain`` record holding several chains, or a job above ``max_tokens``.
    """
    text, path = _read(source)
    file = path or name
    groups = []
    for desc, seq, line, pos in parse_fasta(text, name=file):
        head = desc.split()[0] if desc.split() else ""
        job_name, chain_id = _job_name(head), None
        if head.count("|") == 1:      # name|chain (UniProt's sp|ACC|NAME stays a plain name)
            job_name, chain_id = head.split("|")
            job_name = _job_name(job_name)
        if (chain_id is not None and groups and groups[-1]["named"]
                and groups[-1]["name"] == job_name):
            g = groups[-1]
        else:
            g = {"name": job_name, "line": line, "chains": [], "chain_lines": {},
                 "named": chain_id is not None, "error": None}
            groups.append(g)
        if g["error"] is not None:
            continue
        try:
            if chain_id is not None and not (chain_id.isalnum() and len(chain_id) <= 4):
                raise InputError(f"bad chain id {chain_id!r} in header '>{desc}' (expected "
                                 ">name|chain with a chain id of 1-4 letters or digits)",
                                 file, line, 2 + len(job_name) + 1)
            if chain_id is not None and chain_id in g["chain_lines"]:
                raise InputError(f"duplicate chain id {chain_id!r} in job {job_name!r} (first "
                                 f"at line {g['chain_lines'][chain_id]})",
                                 file, line, 2 + len(job_name) + 1)
            g["chain_lines"][chain_id] = line
            parts, start = seq.split(":"), 0
            if chain_id is not None and len(parts) > 1:
                raise InputError(f"record '>{desc}' names chain {chain_id!r} but holds "
                                 f"{len(parts)} ':'-separated chains", file, line, 1)
            for part in parts:
                if not part:
                    col = pos[start] if start < len(pos) else (line, len(desc) + 2)
                    raise InputError(f"empty sequence in record '>{desc}'", file, *col)
                _check_letters(part, file, pos[start:start + len(part)])
                g["chains"].append((chain_id, part))
                start += len(part) + 1
        except InputError as e:
            g["error"] = e
    out, seen = [], {}
    for g in groups:
        try:
            if g["error"] is not None:
                raise g["error"]
            if g["name"] in seen:
                raise InputError(f"duplicate job name {g['name']!r} (first at line "
                                 f"{seen[g['name']]})", file, g["line"], 2)
            n_tok = sum(len(s) for _, s in g["chains"])
            if n_tok > max_tokens:
                raise InputError(f"job {g['name']!r} has {n_tok} tokens, above the limit of "
                                 f"{max_tokens} (raise it with max_tokens / --max-tokens)",
                                 file, g["line"], 1)
            out.append({"name": g["name"], "sequences": _entities(g["chains"])})
        except InputError as e:
            _report(on_error, g["name"], e)
        seen.setdefault(g["name"], g["line"])
    return out


# --------------------------------------------------------------------------- a3m


def parse_a3m(source, name=None, query=None):
    """Reads an a3m alignment and checks it.

    Args:
        source: a path or a3m text.
        name: the file name used in errors when ``source`` is text.
        query: if given, the expected query sequence: the first row, without gaps and
            insertions, must equal it.

    Returns:
        ``(descriptions, rows)``: the header texts (without ``>``) and the rows as written
        (insertions kept lowercase). A ColabFold ``#...`` first line is skipped.

    Raises:
        InputError: no rows, a row with a letter that is not an amino acid, gap or insertion,
            a row whose aligned length differs from the query's, or a query that differs from
            ``query`` (naming the first differing column).
    """
    text, path = _read(source)
    file = path or name
    descs, rows, lines = [], [], []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or (lineno == 1 and line.startswith("#")):
            continue
        if line.startswith(">"):
            descs.append(line[1:])
            rows.append([])
            lines.append([lineno, None])
            continue
        if not rows:
            raise InputError("a3m row before the first '>' header", file, lineno, 1)
        if lines[-1][1] is None:
            lines[-1][1] = lineno
        rows[-1].append(line)
    rows = ["".join(r) for r in rows]
    if not rows:
        raise InputError("empty a3m: no '>' record", file, 1, 1)
    width = None
    for i, (row, (hline, sline)) in enumerate(zip(rows, lines)):
        if not row:
            raise InputError(f"empty a3m row '>{descs[i]}'", file, hline, 1)
        bad = _A3M_BAD.search(row)
        if bad:
            raise InputError(f"bad a3m character {bad.group()!r} in row '>{descs[i]}'",
                             file, sline, bad.start() + 1)
        n = len(row.translate(_A3M_UNALIGNED))       # uppercase letters and '-'
        if width is None:
            width = n
        elif n != width:
            raise InputError(f"a3m row '>{descs[i]}' has {n} aligned columns (uppercase + '-'), "
                             f"the query has {width}", file, sline, 1)
    if query is not None:
        q = "".join(ch for ch in rows[0] if ch.isupper())
        if q != query:
            k = next((k for k in range(min(len(q), len(query))) if q[k] != query[k]),
                     min(len(q), len(query)))
            got = q[k] if k < len(q) else "<end>"
            want = query[k] if k < len(query) else "<end>"
            raise InputError(f"a3m query (first row '>{descs[0]}') differs from the chain "
                             f"sequence at residue {k + 1}: {got!r} vs {want!r} (a3m of "
                             f"{len(q)} residues, sequence of {len(query)})",
                             file, lines[0][1], _col_of_residue(rows[0], k))
    return descs, rows


def _col_of_residue(row, k):
    n = 0
    for j, ch in enumerate(row):
        if ch.isupper():
            if n == k:
                return j + 1
            n += 1
    return len(row) + 1


def a3m_query(source, name=None):
    """The query sequence (first row, gaps and insertions removed) of an a3m."""
    _descs, rows = parse_a3m(source, name=name)
    return "".join(ch for ch in rows[0] if ch.isupper())


def split_complex_a3m(source, name=None):
    """ColabFold's complex a3m -> per-unique-chain (sequence, count, paired a3m, unpaired a3m).

    The first line ``#L1,L2,...<TAB>n1,n2,...`` gives the chain lengths and copy numbers. A row
    is cut into chain segments by aligned columns (insertions stay with the residue they
    precede). The query row opens both blocks of every chain.

    Returns:
        list of dicts ``{"sequence", "count", "pairedMsa", "unpairedMsa"}``; a monomer a3m
        (no ``#`` line) gives one entry with ``pairedMsa`` empty.
    """
    text, path = _read(source)
    file = path or name
    first = text.lstrip().splitlines()[0] if text.strip() else ""
    descs, rows = parse_a3m(text, name=file)
    if not first.startswith("#"):
        q = "".join(ch for ch in rows[0] if ch.isupper())
        return [{"sequence": q, "count": 1, "pairedMsa": "",
                 "unpairedMsa": "".join(f">{d}\n{r}\n" for d, r in zip(descs, rows))}]
    try:
        lens_s, cards_s = first[1:].split("\t")
        lens = [int(x) for x in lens_s.split(",")]
        cards = [int(x) for x in cards_s.split(",")]
        assert len(lens) == len(cards)
    except (ValueError, AssertionError):
        raise InputError(f"bad ColabFold a3m header {first!r} (expected "
                         "'#len1,len2<TAB>count1,count2')", file, 1, 1) from None
    bounds = [sum(lens[:i]) for i in range(len(lens) + 1)]
    out = []
    segs_all = []
    for row in rows:
        segs, cur, n = [[] for _ in lens], 0, 0
        for ch in row:
            while cur < len(lens) - 1 and n >= bounds[cur + 1]:
                cur += 1
            segs[cur].append(ch)
            if ch.isupper() or ch == "-":
                n += 1
        segs_all.append(["".join(s) for s in segs])
    query_segs = segs_all[0]
    for c in range(len(lens)):
        seq = "".join(ch for ch in query_segs[c] if ch.isupper())
        paired = [(descs[0], query_segs[c])]
        unpaired = [(descs[0], query_segs[c])]
        for d, segs in zip(descs[1:], segs_all[1:]):
            has = [any(ch.isalpha() and ch != "-" for ch in s if ch.isupper()) for s in segs]
            if sum(has) > 1:
                paired.append((d, segs[c]))
            elif has[c]:
                if segs[c] != query_segs[c]:   # ColabFold repeats the query per chain
                    unpaired.append((d, segs[c]))
        out.append({
            "sequence": seq, "count": cards[c],
            "pairedMsa": "".join(f">{d}\n{s}\n" for d, s in paired) if len(lens) > 1 else "",
            "unpairedMsa": "".join(f">{d}\n{s}\n" for d, s in unpaired),
        })
    return out


def jobs_from_a3m(source, name=None, max_tokens=DEFAULT_MAX_TOKENS):
    """One job from an a3m (ColabFold style: the job is named after the file, the query row
    gives the sequence, the alignment its MSA; complex a3m with a ``#`` line supported)."""
    text, path = _read(source)
    file = path or name
    job_name = _job_name(os.path.splitext(os.path.basename(file))[0] if file else "a3m")
    sequences = []
    for chain in split_complex_a3m(text, name=file):
        entry = {"sequence": chain["sequence"], "count": chain["count"],
                 "unpairedMsa": chain["unpairedMsa"]}
        if chain["pairedMsa"]:
            entry["pairedMsa"] = chain["pairedMsa"]
        sequences.append({"proteinChain": entry})
    job = {"name": job_name, "sequences": sequences}
    check_job(job, file=file, max_tokens=max_tokens)
    return [job]


def attach_a3m(job, source, name=None):
    """Adds the MSA of an a3m file to a job's chains (in place; returns the job).

    A monomer a3m goes to the job's one entity; a ColabFold complex a3m (``#`` line) gives one
    chain per entity, in order. The query row(s) must equal the job's sequences.

    Raises:
        InputError: naming the a3m's query row and the first differing residue, or the
            header line when the chain count differs.
    """
    text, path = _read(source)
    file = path or name
    chains = split_complex_a3m(text, name=file)
    entities = [e["proteinChain"] for e in job["sequences"]]
    if len(chains) != len(entities):
        raise InputError(f"a3m has {len(chains)} chain(s), job {job.get('name')!r} has "
                         f"{len(entities)} distinct sequence(s)", file, 1, 1)
    qline = next(i for i, ln in enumerate(text.splitlines(), 1)
                 if ln.strip() and not ln.startswith((">", "#")))
    for k, (chain, body) in enumerate(zip(chains, entities)):
        if chain["sequence"] != body["sequence"]:
            q, want = chain["sequence"], body["sequence"]
            i = next((i for i in range(min(len(q), len(want))) if q[i] != want[i]),
                     min(len(q), len(want)))
            got_ch = q[i] if i < len(q) else "<end>"
            want_ch = want[i] if i < len(want) else "<end>"
            raise InputError(f"a3m query of chain {k + 1} differs from the job's sequence at "
                             f"residue {i + 1}: {got_ch!r} vs {want_ch!r} (a3m of {len(q)} "
                             f"residues, sequence of {len(want)})", file, qline, None)
        for key in ("unpairedMsaPath", "pairedMsaPath"):
            body.pop(key, None)
        body["unpairedMsa"] = chain["unpairedMsa"]
        if chain["pairedMsa"]:
            body["pairedMsa"] = chain["pairedMsa"]
    return job


# --------------------------------------------------------------------------- JSON


def _json_line(text, needle, start=0):
    """1-based (line, column) of the first ``needle`` at or after character ``start``."""
    k = text.find(needle, start)
    if k < 0:
        return None, None
    return text.count("\n", 0, k) + 1, k - text.rfind("\n", 0, k)


def check_job(job, file=None, max_tokens=DEFAULT_MAX_TOKENS, text=None):
    """Validates one Protenix job dict (protein chains only); returns it.

    ``text`` (the JSON source) lets errors name a line; without it they name the entry.
    """
    def where(needle=None):
        if text is None or needle is None:
            return file, None, None
        return (file, *_json_line(text, needle, text.find(json.dumps(job.get("name", "")))))

    name = job.get("name") if isinstance(job, dict) else None
    if not isinstance(job, dict) or not isinstance(job.get("sequences"), list):
        raise InputError(f"job {name!r}: expected an object with 'name' and a 'sequences' list",
                         *where())
    if not job["sequences"]:
        raise InputError(f"job {name!r}: 'sequences' is empty", *where('"sequences"'))
    for key in ("covalent_bonds", "constraint"):
        if job.get(key):
            raise InputError(f"job {name!r}: {key!r} is not supported yet (protein chains "
                             "only)", *where(f'"{key}"'))
    ids, n_tok = {}, 0
    for k, entry in enumerate(job["sequences"]):
        if not isinstance(entry, dict) or len(entry) != 1:
            raise InputError(f"job {name!r}: sequences[{k}] must hold exactly one entity "
                             f"(proteinChain)", *where())
        (kind, body), = entry.items()
        if kind in UNSUPPORTED_ENTITIES:
            raise InputError(f"job {name!r}: sequences[{k}] is a {kind!r} entry, not supported "
                             "yet (protein chains only)", *where(f'"{kind}"'))
        if kind != "proteinChain":
            raise InputError(f"job {name!r}: sequences[{k}] has unknown entity type {kind!r}",
                             *where(f'"{kind}"'))
        if body.get("modifications"):
            raise InputError(f"job {name!r}: sequences[{k}] has 'modifications' (modified "
                             "residues), not supported yet", *where('"modifications"'))
        seq = body.get("sequence")
        if not isinstance(seq, str) or not seq:
            raise InputError(f"job {name!r}: sequences[{k}] has an empty sequence",
                             *where('"sequence"'))
        for i, ch in enumerate(seq):
            if ch not in PROTEIN_LETTERS:
                f, ln, col = where(seq)
                raise InputError(
                    f"job {name!r}: unknown residue letter {ch!r} at residue {i + 1} of "
                    f"sequences[{k}] (allowed: {PROTEIN_LETTERS}; X is read as UNK)",
                    f, ln, None if col is None else col + i)
        count = body.get("count", 1)
        if not isinstance(count, int) or count < 1:
            raise InputError(f"job {name!r}: sequences[{k}] count must be a positive integer, "
                             f"got {count!r}", *where('"count"'))
        for cid in body.get("id") or []:
            if cid in ids:
                raise InputError(f"job {name!r}: duplicate chain id {cid!r} (sequences[{ids[cid]}]"
                                 f" and sequences[{k}])", *where(f'"{cid}"'))
            ids[cid] = k
        if body.get("id") and len(body["id"]) != count:
            raise InputError(f"job {name!r}: sequences[{k}] has {len(body['id'])} ids for count "
                             f"{count}", *where('"id"'))
        n_tok += len(seq) * count
    if n_tok > max_tokens:
        raise InputError(f"job {name!r} has {n_tok} tokens, above the limit of {max_tokens} "
                         "(raise it with max_tokens / --max-tokens)", *where())
    return job


def jobs_from_json(source, name=None, max_tokens=DEFAULT_MAX_TOKENS, on_error=None):
    """Protenix's JSON input (a list of jobs, or one job) -> validated list of job dicts.

    ``on_error(job_name, InputError)``, if given, receives each bad job's error (the others are
    returned); without it the first error is raised.

    MSA paths (``unpairedMsaPath``/``pairedMsaPath``) relative to the JSON file are made
    relative to the current directory.
    """
    text, path = _read(source)
    file = path or name
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"invalid JSON: {e.msg}", file, e.lineno, e.colno) from None
    jobs = data if isinstance(data, list) else [data]
    seen, good = set(), []
    for k, job in enumerate(jobs):
        job_name = job.get("name", f"job{k}") if isinstance(job, dict) else f"job{k}"
        try:
            check_job(job, file=file, max_tokens=max_tokens, text=text)
            if job["name"] in seen:
                raise InputError(f"duplicate job name {job['name']!r}", file,
                                 *_json_line(text, json.dumps(job["name"]),
                                             text.find(json.dumps(job["name"])) + 1))
        except InputError as e:
            _report(on_error, job_name, e)
            continue
        seen.add(job["name"])
        good.append(job)
        if path:
            base = os.path.dirname(os.path.abspath(path))
            for entry in job["sequences"]:
                body = entry["proteinChain"]
                for key in ("unpairedMsaPath", "pairedMsaPath"):
                    if body.get(key) and not os.path.isabs(body[key]):
                        body[key] = os.path.join(base, body[key])
    return good


def load_jobs(path, max_tokens=DEFAULT_MAX_TOKENS, on_error=None):
    """Any input -> list of job dicts: ``.json`` (Protenix), ``.a3m`` (ColabFold), a FASTA file
    (any other suffix), or a directory of those (sorted by name).

    ``on_error(job_name, InputError)``, if given, receives the error of each bad job (or of a
    whole unreadable file, named by its stem) and the good jobs are returned; without it the
    first error is raised.
    """
    if os.path.isdir(path):
        jobs = []
        for entry in sorted(os.listdir(path)):
            if os.path.splitext(entry)[1].lower() in (".json", ".a3m", ".fasta", ".fa", ".faa"):
                jobs.extend(load_jobs(os.path.join(path, entry), max_tokens=max_tokens,
                                      on_error=on_error))
        return jobs
    if not os.path.isfile(path):
        raise InputError("no such input file or directory", path)
    ext = os.path.splitext(path)[1].lower()
    try:
        if ext == ".json":
            return jobs_from_json(path, max_tokens=max_tokens, on_error=on_error)
        if ext == ".a3m":
            return jobs_from_a3m(path, max_tokens=max_tokens)
        return jobs_from_fasta(path, max_tokens=max_tokens, on_error=on_error)
    except InputError as e:
        _report(on_error, _job_name(os.path.splitext(os.path.basename(path))[0]), e)
        return []
