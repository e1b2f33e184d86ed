"""``featurize(job, seed=0)``: a Protenix JSON job (protein chains) -> the model's input features.

Follows Protenix 2.0.0's inference data path (``InferenceDataset.process_one``: the atom array
built from the CCD, AF3 tokenisation, ``Featurizer.get_all_input_features``, the MSA featurizer,
the template featurizer without templates) and the AF3 supplement section 2.8 (Table 5):

- atoms: per residue the CCD heavy atoms in CCD order (built-in table, ``ccd_table.py``); the
  leaving atom ``OXT`` stays only on a chain's last residue (the C-N peptide bond removes it).
- tokens: one per standard residue, centre atom CA; chains ordered as the job lists them
  (``count`` copies of an entity follow each other), chain ids ``A, B, ... Z, AA, ...`` skipping
  ids given explicitly (``"id"``).
- reference conformer: CCD ideal coordinates, centred per residue (``ref_space_uid``), then a
  random rigid motion per residue (translation uniform in [-1, 1]^3 Angstrom applied first, then
  a uniformly random rotation), as Protenix's ``random_transform(apply_augmentation=True)``.
  Protenix generates its standard-residue conformers with RDKit ETKDG; ours are the CCD ideal
  ones (its own fallback), so ``ref_pos`` agrees up to that conformer source and the motion.

The all-zero pairwise features (``token_bonds``, ``bond_mask``, the constraint maps, the dummy
template's atoms and pairwise features) are read-only broadcast views that take no memory.

Shapes: N_token tokens, N_atom atoms, N_msa MSA rows; the dtypes are Protenix's after its
``data_type_transform`` (index features int64, masks int64 unless noted, one-hots float32 for
``restype`` and int64 for ``ref_element``/``ref_atom_name_chars``).
"""

import itertools
import os

import numpy as np

from .ccd_table import CCD_TABLE
from .constants import ELEMENT_INDEX, N_RESTYPE, PROTEIN_1TO3, STD_RESIDUES_WITH_GAP
from .msa import msa_features
from .parsers import DEFAULT_MAX_TOKENS, InputError, check_job, parse_a3m

__all__ = ["build_atoms", "chain_ids", "featurize", "random_rotation"]

MAX_TEMPLATES = 4
N_DENSE_ATOMS = 24
N_DISTOGRAM_BINS = 39
CONSTRAINT_CHANNELS = (("contact_atom", 2), ("contact", 2), ("pocket", 1), ("substructure", 4))


def _zeros(shape, dtype):
    """An all-zero feature as a read-only broadcast view: the shape and dtype of Protenix's
    dense zeros without the memory (``template_distogram`` alone is 5.6 GB at 3000 tokens);
    ``np.array(x)`` gives a writable copy."""
    return np.broadcast_to(np.zeros((), dtype=dtype), shape)


def _letters(n):
    """1 -> A, 26 -> Z, 27 -> AA (Protenix's ``int_to_letters``)."""
    out = ""
    while n > 0:
        n, r = divmod(n - 1, 26)
        out = chr(65 + r) + out
    return out


def chain_ids(job):
    """Chain ids of the job's chains in order: explicit ``id`` lists, else A, B, ... skipping
    the explicit ones. Returns ``[(entity_index, copy_index, chain_id, sequence, body)]``."""
    used = {cid for e in job["sequences"] for cid in (e["proteinChain"].get("id") or [])}
    out, k = [], 0
    for ei, entry in enumerate(job["sequences"]):
        body = entry["proteinChain"]
        ids = body.get("id")
        for c in range(body.get("count", 1)):
            if ids:
                cid = str(ids[c])
            else:
                while _letters(k + 1) in used:
                    k += 1
                cid = _letters(k + 1)
                used.add(cid)
                k += 1
            out.append((ei, c, cid, body["sequence"], body))
    return out


def build_atoms(job):
    """Atom-level arrays of the job (one entry per heavy atom, in token order).

    Returns:
        dict of numpy arrays [N_atom]: ``asym`` (chain index = ``asym_id``), ``chain_id``
        (label, str), ``entity`` (index into job["sequences"]), ``res_id`` (1-based),
        ``res_name``, ``atom_name``, ``element``, ``charge``, ``ideal`` [N_atom, 3] (Angstrom),
        and the list ``chains`` (chain_ids()). The atoms are those of ``featurize`` in the same
        order (``atom_to_token_idx`` etc. index them), for writing structures.
    """
    chains = chain_ids(job)
    cols = {k: [] for k in ("asym", "entity", "res_id", "res_name", "atom_name", "element",
                            "charge", "ideal")}
    for asym, (ei, _c, _cid, seq, _body) in enumerate(chains):
        for i, letter in enumerate(seq):
            code = PROTEIN_1TO3[letter]
            last = i == len(seq) - 1
            for name, element, charge, leaving, xyz in CCD_TABLE[code]["atoms"]:
                if leaving and not last:
                    continue
                cols["asym"].append(asym)
                cols["entity"].append(ei)
                cols["res_id"].append(i + 1)
                cols["res_name"].append(code)
                cols["atom_name"].append(name)
                cols["element"].append(element)
                cols["charge"].append(charge)
                cols["ideal"].append(xyz)
    out = {k: np.array(v) for k, v in cols.items()}
    out["ideal"] = out["ideal"].astype(np.float32).reshape(-1, 3)
    out["chain_id"] = np.array([chains[a][2] for a in out["asym"]], dtype=object)
    out["chains"] = chains
    return out


def random_rotation(rng):
    """A uniformly random rotation matrix [3, 3]: the unit quaternion of 4 normal draws is
    uniform on S^3 (Shoemake, Graphics Gems III, 1992), as scipy's ``Rotation.random``."""
    q = rng.standard_normal(4)
    w, x, y, z = q / np.linalg.norm(q)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


# Protenix's older JSON: "msa": {"precomputed_msa_dir": DIR} holding these two files
_OLD_MSA_FILES = {"pairedMsa": "pairing.a3m", "unpairedMsa": "non_pairing.a3m"}


def _read_msa(body, key, path_key, seq, where):
    text, file = body.get(key), None
    if text is None and not body.get(path_key) and isinstance(body.get("msa"), dict):
        old = os.path.join(body["msa"].get("precomputed_msa_dir") or "", _OLD_MSA_FILES[key])
        if body["msa"].get("precomputed_msa_dir") and os.path.isfile(old):
            file = old
    if text is None and (body.get(path_key) or file):
        file = file or body[path_key]
        if not os.path.isfile(file):
            raise InputError(f"{path_key} of {where}: no such file", file)
        with open(file) as f:
            text = f.read()
    if not text:
        return []
    descs, rows = parse_a3m(text, name=file or f"{where}.{key}", query=seq)
    return list(zip(descs, rows))


def featurize(job, seed=0, max_tokens=DEFAULT_MAX_TOKENS, use_msa=True, max_msa_size=16384,
              msa_pair_as_unpair=True, bond_mask=True):
    """Protenix's inference features of one job.

    Args:
        job: a Protenix JSON job dict (``{"name", "sequences": [{"proteinChain": {...}}]}``),
            as from :func:`protenix.data.load_jobs`; MSAs as ``unpairedMsa``/``pairedMsa``
            text or ``unpairedMsaPath``/``pairedMsaPath`` files (a3m).
        seed: seeds the random rigid motion of each residue's reference conformer.
        max_tokens: token limit (``InputError`` above it).
        use_msa: False ignores the MSAs (single-sequence mode; the MSA is then the query, as
            Protenix builds it from an empty alignment).
        max_msa_size: MSA rows kept in all (Protenix: 16384).
        msa_pair_as_unpair: Protenix's inference default (True): paired rows also join the
            unpaired MSA.
        bond_mask: False leaves out ``bond_mask`` [N_atom, N_atom] int64 (all zeros for protein
            chains and not read by Protenix's model at inference; a zero-memory view here, but
            8 N_atom^2 bytes, 4.6 GB at 3000 residues, wherever a consumer copies it).

    Returns:
        dict of numpy arrays with Protenix's keys, shapes and dtypes (``constraint_feature`` is a
        dict of zero constraint maps [N_token, N_token, C]).
    """
    check_job(job, max_tokens=max_tokens)
    atoms = build_atoms(job)
    chains = atoms.pop("chains")
    atoms.pop("chain_id")
    n_atom = len(atoms["atom_name"])
    res_key = atoms["asym"] * 1_000_000 + atoms["res_id"]
    starts = np.flatnonzero(np.r_[True, res_key[1:] != res_key[:-1]])
    n_tok = len(starts)
    tok_of_atom = np.cumsum(np.r_[False, res_key[1:] != res_key[:-1]])
    names = atoms["atom_name"]
    ca = np.flatnonzero(names == "CA")
    assert len(ca) == n_tok

    f = {}
    # --- token features (Table 5)
    tok_asym = atoms["asym"][ca]
    entity_str = np.array([str(atoms["entity"][i] + 1) for i in ca])
    # Protenix numbers entities by the sorted *strings* "1", "2", ... ("10" < "2")
    entity_rank = {e: k for k, e in enumerate(np.sort(np.unique(entity_str)))}
    f["token_index"] = np.arange(n_tok, dtype=np.int64)
    f["residue_index"] = atoms["res_id"][ca].astype(np.int64)
    f["asym_id"] = tok_asym.astype(np.int64)
    f["entity_id"] = np.array([entity_rank[e] for e in entity_str], dtype=np.int64)
    f["sym_id"] = np.array([chains[a][1] for a in tok_asym], dtype=np.int64)
    restype = np.array([STD_RESIDUES_WITH_GAP[r] for r in atoms["res_name"][ca]])
    f["restype"] = np.eye(N_RESTYPE, dtype=np.float32)[restype]
    f["token_bonds"] = _zeros((n_tok, n_tok), np.float32)

    # --- reference conformer
    rng = np.random.default_rng(seed)
    ref_pos = np.empty((n_atom, 3), dtype=np.float32)
    bounds = np.r_[starts, n_atom]
    for s, e in itertools.pairwise(bounds):
        p = atoms["ideal"][s:e] - atoms["ideal"][s:e].mean(axis=0)
        t = rng.uniform(-1.0, 1.0, size=3)
        ref_pos[s:e] = (p + t) @ random_rotation(rng).T
    f["ref_pos"] = ref_pos
    f["ref_mask"] = np.ones(n_atom, dtype=np.int64)
    elem = np.array([ELEMENT_INDEX[e] for e in atoms["element"]])
    f["ref_element"] = np.eye(len(ELEMENT_INDEX), dtype=np.int64)[elem]
    f["ref_charge"] = atoms["charge"].astype(np.int64)
    chars = np.array([[min(max(ord(c) - 32, 0), 63) for c in n.ljust(4)[:4]] for n in names])
    f["ref_atom_name_chars"] = np.eye(64, dtype=np.int64)[chars]
    f["ref_space_uid"] = tok_of_atom.astype(np.int64)   # (asym, res_id) pairs are sorted here

    # --- frames: N, CA, C of each residue
    frame = np.zeros((n_tok, 3), dtype=np.int64)
    for t, (s, e) in enumerate(itertools.pairwise(bounds)):
        local = list(names[s:e])
        frame[t] = [s + local.index(a) for a in ("N", "CA", "C")]
    f["has_frame"] = np.ones(n_tok, dtype=np.int64)
    f["frame_atom_index"] = frame

    # --- atom-level extras
    f["atom_to_token_idx"] = tok_of_atom.astype(np.int64)
    tokatom = np.zeros(n_atom, dtype=np.int64)
    for s, e in itertools.pairwise(bounds):
        tokatom[s:e] = np.arange(e - s)       # CCD order is Protenix's RES_ATOMS_DICT order
    f["atom_to_tokatom_idx"] = tokatom
    f["is_protein"] = np.ones(n_atom, dtype=np.int64)
    for k in ("is_ligand", "is_dna", "is_rna"):
        f[k] = np.zeros(n_atom, dtype=np.int64)
    f["resolution"] = np.array([-1.0], dtype=np.float32)

    # --- chain permutation ids: one molecule per chain, numbered in sorted chain-id order
    cids = [c[2] for c in chains]
    mol_of_asym = {a: k for k, a in enumerate(sorted(range(len(cids)), key=lambda a: cids[a]))}
    mol_id = np.array([mol_of_asym[a] for a in atoms["asym"]], dtype=np.int64)
    ent_mol, ent_of_mol = {}, {}
    for m in range(len(cids)):
        asym = next(a for a, k in mol_of_asym.items() if k == m)
        ent_of_mol[m] = ent_mol.setdefault(chains[asym][0], len(ent_mol))
    f["mol_id"] = mol_id
    f["mol_atom_index"] = np.zeros(n_atom, dtype=np.int64)
    for m in np.unique(mol_id):
        sel = mol_id == m
        f["mol_atom_index"][sel] = np.arange(sel.sum())
    f["entity_mol_id"] = np.array([ent_of_mol[m] for m in mol_id], dtype=np.int64)

    # --- representative-atom masks
    is_ca = (names == "CA").astype(np.int64)
    gly = atoms["res_name"] == "GLY"
    f["pae_rep_atom_mask"] = is_ca
    f["plddt_m_rep_atom_mask"] = is_ca.copy()
    f["distogram_rep_atom_mask"] = ((~gly & (names == "CB")) | (gly & (names == "CA"))
                                    ).astype(np.int64)
    f["modified_res_mask"] = np.zeros(n_atom, dtype=np.int64)
    if bond_mask:
        f["bond_mask"] = _zeros((n_atom, n_atom), np.int64)
    f["constraint_feature"] = {k: _zeros((n_tok, n_tok, c), np.float32)
                               for k, c in CONSTRAINT_CHANNELS}

    # --- templates: none (one all-gap template, padded to 4)
    aatype = np.zeros((MAX_TEMPLATES, n_tok), dtype=np.int64)
    aatype[0] = STD_RESIDUES_WITH_GAP["-"]
    f["template_aatype"] = aatype
    f["template_atom_positions"] = _zeros((MAX_TEMPLATES, n_tok, N_DENSE_ATOMS, 3), np.float32)
    f["template_atom_mask"] = _zeros((MAX_TEMPLATES, n_tok, N_DENSE_ATOMS), bool)
    f["template_pseudo_beta_mask"] = _zeros((MAX_TEMPLATES, n_tok, n_tok), np.float32)
    f["template_distogram"] = _zeros((MAX_TEMPLATES, n_tok, n_tok, N_DISTOGRAM_BINS),
                                       np.float32)
    f["template_unit_vector"] = _zeros((MAX_TEMPLATES, n_tok, n_tok, 3), np.float32)
    f["template_backbone_frame_mask"] = _zeros((MAX_TEMPLATES, n_tok, n_tok), np.float32)

    # --- MSA
    msa_chains = []
    for _ei, _c, cid, seq, body in chains:
        where = f"job {job.get('name')!r} chain {cid}"
        paired = _read_msa(body, "pairedMsa", "pairedMsaPath", seq, where) if use_msa else []
        unpaired = (_read_msa(body, "unpairedMsa", "unpairedMsaPath", seq, where)
                    if use_msa else [])
        msa_chains.append({"sequence": seq, "paired": paired, "unpaired": unpaired})
    f.update(msa_features(msa_chains, max_msa_size=max_msa_size,
                          msa_pair_as_unpair=msa_pair_as_unpair))
    return f
