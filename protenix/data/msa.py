"""MSA features of protein chains, as Protenix 2.0.0's inference MSA featurizer builds them.

Per chain (AlphaFold-Multimer's MSA pipeline, kept by AF3 supplement section 2.3 and Protenix's
``FeatureAssemblyLine``):

1. the unpaired a3m is deduplicated (rows equal after removing insertions; first kept); the
   paired a3m is kept as is, and used only when the job has more than one distinct protein
   sequence (``need_pairing``). Chains of <= 4 residues get the query alone. An empty MSA is the
   query alone. With ``msa_pair_as_unpair`` (Protenix's inference default) the paired rows are
   prepended to the unpaired ones before deduplication.
2. rows -> residue ids (``MSA_PROTEIN_SEQ_TO_ID``) and deletion counts (insertions before
   each aligned column); ``profile`` = column frequencies of the 32 classes over the unpaired
   rows, ``deletion_mean`` = column mean of the unpaired deletion counts.
3. pairing (only if ``need_pairing``): species ids from UniProt/UniRef descriptions; species
   present in >= 2 chains are grouped by how many chains have them (most first); within a
   group, rows are aligned species by species (each species truncated to its smallest hit
   count over chains, at most 600; chains without it get an all-gap row), and sorted by the sum
   of log row indices; the query row always comes first; at most ``max_msa_size // 2`` rows.
   Unpaired rows equal to a paired row of the same chain are then dropped, and paired rows that
   are gaps in every chain are removed.
4. merge: paired blocks side by side (rows matched across chains); unpaired blocks padded
   with gap rows to the deepest chain and placed side by side below the paired rows.
"""

import re
import string

import numpy as np

from .constants import MSA_PROTEIN_SEQ_TO_ID, N_RESTYPE

GAP = 31
_DROP_LOWER = str.maketrans("", "", string.ascii_lowercase)
_UNIPROT = re.compile(
    r"(?:tr|sp)\|[A-Z0-9]{6,10}(?:_\d+)?\|(?:[A-Z0-9]{1,10}_)(?P<SpeciesId>[A-Z0-9]{1,5})")
_UNIREF = re.compile(r"^UniRef100_[^_]+_([^_/]+)")
_LUT = np.full(128, -1, dtype=np.int64)
for _ch, _v in MSA_PROTEIN_SEQ_TO_ID.items():
    _LUT[ord(_ch)] = _v


def species_id(description):
    """Species of an MSA row from its UniProt (``sp|P12345|NAME_SPECIES``) or UniRef
    (``UniRef100_<acc>_<taxid>``) description; ``""`` when there is none."""
    d = description.strip()
    m = _UNIPROT.match(d)
    if m:
        return m.group("SpeciesId")
    m = _UNIREF.match(d)
    return m.group(1) if m else ""


def dedup(rows, descs):
    """Keeps the first of rows equal after removing lowercase insertions."""
    seen, out_r, out_d = set(), [], []
    for r, d in zip(rows, descs):
        key = r.translate(_DROP_LOWER)
        if key not in seen:
            seen.add(key)
            out_r.append(r)
            out_d.append(d)
    return out_r, out_d


def rows_to_arrays(rows, width):
    """a3m rows -> (msa ids [n, width] int64, deletion counts [n, width] int64)."""
    msa = np.zeros((len(rows), width), dtype=np.int64)
    dele = np.zeros((len(rows), width), dtype=np.int64)
    for i, row in enumerate(rows):
        codes = _LUT[np.frombuffer(row.encode("ascii"), dtype=np.uint8)]
        aligned = codes >= 0
        inserts = np.cumsum(~aligned)[aligned]
        n = min(int(aligned.sum()), width)
        msa[i, :n] = codes[aligned][:n]
        dele[i, :n] = np.diff(inserts, prepend=0)[:n]
    return msa, dele


def _chain_msa(query, rows, descs):
    if not rows:
        rows, descs = [query], ["Original query"]
    msa, dele = rows_to_arrays(rows, len(query))
    return {"msa": msa, "deletion_matrix": dele,
            "species": np.array([species_id(d) for d in descs], dtype=object)}


def _pair(chains, max_paired, max_per_species=600):
    """Species pairing of the chains' paired blocks (step 3 of the module docstring)."""
    species_rows, counts, min_hits = [], {}, {}
    for c in chains:
        ids = c["paired"]["species"]
        if ids.size == 0 or (ids.size == 1 and not ids[0]):
            species_rows.append({})
            continue
        order = np.argsort(ids, kind="quicksort")
        uniq, first = np.unique(ids[order], return_index=True)
        groups = dict(zip(uniq, np.split(np.arange(len(ids))[order], first[1:])))
        species_rows.append(groups)
        for s, idx in groups.items():
            counts[s] = counts.get(s, 0) + 1
            min_hits[s] = min(min_hits.get(s, max_per_species), len(idx))
    by_count = {}
    for s, n in counts.items():
        if s and n > 1:
            by_count.setdefault(n, []).append(s)
    blocks, total = [np.zeros((1, len(chains)), dtype=np.int64)], 0
    for n in sorted(by_count, reverse=True):
        rows = []
        for s in by_count[n]:
            cols = [g[s][:min_hits[s]] if s in g else np.full(min_hits[s], -1)
                    for g in species_rows]
            rows.append(np.stack(cols, axis=1))
        rows = np.concatenate(rows, axis=0)
        score = np.sum(np.log(np.abs(rows.astype(np.float32)) + 1e-10), axis=1)
        blocks.append(rows[np.argsort(score, kind="quicksort")])
        total += rows.shape[0]
        if total >= max_paired:
            break
    sel = np.concatenate(blocks, axis=0)[:max_paired]
    for i, c in enumerate(chains):
        p = c["paired"]
        msa = np.concatenate([p["msa"], np.full((1, p["msa"].shape[1]), GAP)], axis=0)
        dele = np.concatenate([p["deletion_matrix"],
                               np.zeros((1, p["msa"].shape[1]), np.int64)], axis=0)
        c["paired"] = {"msa": msa[sel[:, i]], "deletion_matrix": dele[sel[:, i]]}
    for c in chains:   # unpaired rows already present among the paired rows go
        seen = {r.astype(np.int8).tobytes() for r in c["paired"]["msa"]}
        keep = [k for k, r in enumerate(c["unpaired"]["msa"].astype(np.int8))
                if r.tobytes() not in seen]
        for key in ("msa", "deletion_matrix", "species"):
            c["unpaired"][key] = c["unpaired"][key][keep]
    return chains


def msa_features(chains, max_msa_size=16384, msa_pair_as_unpair=True):
    """MSA features of protein chains in token order.

    Args:
        chains: one dict per chain (asym) in order: ``sequence`` (str), ``paired`` and
            ``unpaired``: lists of ``(description, a3m row)`` (query first; may be empty).
        max_msa_size: Protenix's ``max_msa_size`` (16384): rows kept in all.
        msa_pair_as_unpair: prepend the paired rows to the unpaired MSA (Protenix inference).

    Returns:
        dict with Protenix's keys: ``msa`` [N_msa, N_token] int64 (0..31), ``msa_mask`` bool,
        ``deletion_matrix`` int8 (clipped to [-128, 127]), ``deletion_value``
        (2/pi arctan(d/3)) and ``has_deletion`` float32, ``profile`` [N_token, 32] and
        ``deletion_mean`` [N_token] float32, and the ``*_num_alignments`` int64 scalars.
    """
    need_pairing = len({c["sequence"] for c in chains}) > 1
    work = []
    for c in chains:
        seq, short = c["sequence"], len(c["sequence"]) <= 4
        p_rows = [] if short else list(c["paired"])
        u_rows = [] if short else list(c["unpaired"])
        if msa_pair_as_unpair and c["paired"]:
            u_rows = list(c["paired"]) + list(c["unpaired"])
            if short:
                u_rows = []
        ur, ud = dedup([r for _, r in u_rows], [d for d, _ in u_rows])
        unpaired = _chain_msa(seq, ur, ud)
        paired = _chain_msa(seq, [r for _, r in p_rows] if need_pairing else [],
                            [d for d, _ in p_rows] if need_pairing else [])
        prof = np.stack([(unpaired["msa"] == k).sum(axis=0) for k in range(N_RESTYPE)], axis=1)
        work.append({
            "unpaired": unpaired, "paired": paired,
            "profile": (prof / unpaired["msa"].shape[0]).astype(np.float32),
            "deletion_mean": unpaired["deletion_matrix"].mean(axis=0),
        })
    max_p = max_msa_size // 2
    if need_pairing:
        work = _pair(work, max_p)
    keep = np.any(np.concatenate([w["paired"]["msa"] for w in work], axis=1) != GAP, axis=1)
    for w in work:
        w["paired"] = {k: v[keep] for k, v in w["paired"].items() if k != "species"}
    for w in work:
        n_p = min(w["paired"]["msa"].shape[0], max_p)
        n_u = max(0, min(w["unpaired"]["msa"].shape[0], max_msa_size - n_p))
        w["paired"] = {k: w["paired"][k][:n_p] for k in ("msa", "deletion_matrix")}
        w["unpaired"] = {k: w["unpaired"][k][:n_u] for k in ("msa", "deletion_matrix")}
    depth_u = max(w["unpaired"]["msa"].shape[0] for w in work)
    depth_p = max(w["paired"]["msa"].shape[0] for w in work)

    def side_by_side(block, key, depth, pad):
        parts = []
        for w in work:
            a = w[block][key]
            parts.append(np.concatenate(
                [a, np.full((depth - a.shape[0], a.shape[1]), pad, a.dtype)], axis=0))
        return np.concatenate(parts, axis=1)

    msa = np.concatenate([side_by_side("paired", "msa", depth_p, GAP),
                          side_by_side("unpaired", "msa", depth_u, GAP)], axis=0)
    dele = np.concatenate([side_by_side("paired", "deletion_matrix", depth_p, 0),
                           side_by_side("unpaired", "deletion_matrix", depth_u, 0)], axis=0)
    msa = np.clip(msa, -128, 127).astype(np.int8).astype(np.int64)
    dele = np.clip(dele, -128, 127).astype(np.int8)
    n_u, n_p = np.int64(max(1, depth_u)), np.int64(depth_p)
    return {
        "msa": msa,
        "msa_mask": np.ones(msa.shape, dtype=bool),
        "deletion_matrix": dele,
        "deletion_value": (np.arctan(dele / 3.0) * (2.0 / np.pi)).astype(np.float32),
        "has_deletion": np.clip(dele, 0.0, 1.0).astype(np.float32),
        "profile": np.concatenate([w["profile"] for w in work], axis=0),
        "deletion_mean": np.concatenate([w["deletion_mean"] for w in work]).astype(np.float32),
        "prot_unpaired_num_alignments": n_u,
        "prot_paired_num_alignments": n_p,
        "rna_unpaired_num_alignments": np.int64(1),
        "rna_pair_num_alignments": np.int64(1),
        "prot_pair_num_alignments": n_p,
        "prot_unpair_num_alignments": n_u,
        "rna_unpair_num_alignments": np.int64(1),
    }
