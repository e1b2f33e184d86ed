"""Structure files of a prediction: mmCIF (PDBx ``atom_site``) and PDB, written atomically.

The atom table is :func:`protenix.data.build_atoms`'s (one row per heavy atom in the model's
atom order: ``chain_id``, ``entity``, ``res_id``, ``res_name``, ``atom_name``, ``element``,
``charge``); coordinates [N_atom, 3] in Angstrom; the B-factor column carries the per-atom pLDDT
(0-100), as Protenix and AlphaFold write it. The mmCIF has the ``entity``, ``entity_poly``,
``entity_poly_seq``, ``struct_asym`` and ``atom_site`` categories (PDBx/mmCIF dictionary,
https://mmcif.wwpdb.org) that biopython's ``MMCIFParser`` and gemmi read.
"""

import os

import numpy as np

from diffsci.core.atomic import atomic_write as _atomic_write

__all__ = ["atomic_write", "to_mmcif", "to_pdb", "write_mmcif", "write_pdb"]

MEANINGLESS = "RANDOM WEIGHTS: this structure is meaningless (smoke test output)"


def atomic_write(path, text):
    """Write ``text`` to ``path`` (its folder made if missing) through ``core.atomic``: readers
    see the old file or the complete new one, never a part; the file gets the umask's mode."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    _atomic_write(path, text)
    return path


def _check(atoms, coords, b_factor):
    n = len(atoms["atom_name"])
    coords = np.asarray(coords, dtype=np.float64)
    if coords.shape != (n, 3):
        raise ValueError(f"structure writer: coordinates have shape {coords.shape}, the atom "
                         f"table has {n} atoms (expected ({n}, 3))")
    if not np.isfinite(coords).all():
        bad = int(np.flatnonzero(~np.isfinite(coords).all(-1))[0])
        raise ValueError(f"structure writer: atom {bad} ({atoms['atom_name'][bad]} of "
                         f"{atoms['res_name'][bad]} {atoms['res_id'][bad]} chain "
                         f"{atoms['chain_id'][bad]}) has a non-finite coordinate")
    if b_factor is None:
        b_factor = np.zeros(n)
    b_factor = np.asarray(b_factor, dtype=np.float64)
    if b_factor.shape != (n,):
        raise ValueError(f"structure writer: b_factor has shape {b_factor.shape}, expected "
                         f"({n},)")
    return coords, b_factor


def _chains(atoms):
    """[(chain_id, entity, [(res_id, res_name)])] in file order."""
    out, seen = [], {}
    for cid, ent, rid, rname in zip(atoms["chain_id"], atoms["entity"], atoms["res_id"],
                                    atoms["res_name"]):
        if cid not in seen:
            seen[cid] = len(out)
            out.append((str(cid), int(ent), []))
        res = out[seen[cid]][2]
        if not res or res[-1][0] != int(rid):
            res.append((int(rid), str(rname)))
    return out


def _q(s):
    """A CIF value: quoted when it has spaces or starts with a reserved character."""
    s = str(s)
    if s == "" or any(c.isspace() for c in s) or s[0] in "_#$'\"[];":
        return f'"{s}"' if "'" in s else f"'{s}'"
    return s


def to_mmcif(atoms, coords, b_factor=None, name="prediction", meaningless=False):
    """mmCIF text of one model. ``meaningless`` adds a title saying the structure comes from
    random weights (``--random-weights``)."""
    coords, b_factor = _check(atoms, coords, b_factor)
    block = "".join(c if c.isalnum() or c in "-_." else "_" for c in str(name)) or "prediction"
    chains = _chains(atoms)
    lines = [f"data_{block}", "#", f"_entry.id {_q(block)}", "#"]
    title = MEANINGLESS if meaningless else f"Protenix (diffsci) prediction of {name}"
    lines += [f"_struct.entry_id {_q(block)}", f"_struct.title {_q(title)}", "#"]
    entities = {}
    for _cid, ent, res in chains:
        entities.setdefault(ent, res)
    comps = sorted({rname for _c, _e, res in chains for _r, rname in res})
    lines += ["loop_", "_chem_comp.id", "_chem_comp.type", "_chem_comp.mon_nstd_flag"]
    lines += [f"{c} {_q('PEPTIDE LINKING' if c == 'GLY' else 'L-PEPTIDE LINKING')} "
              f"{'n' if c == 'UNK' else 'y'}" for c in comps]
    lines.append("#")
    lines += ["loop_", "_entity.id", "_entity.type"]
    lines += [f"{e + 1} polymer" for e in sorted(entities)]
    lines += ["#", "loop_", "_entity_poly.entity_id", "_entity_poly.type",
              "_entity_poly.pdbx_strand_id"]
    for e in sorted(entities):
        strands = ",".join(c for c, ent, _ in chains if ent == e)
        lines.append(f"{e + 1} polypeptide(L) {_q(strands)}")
    lines += ["#", "loop_", "_entity_poly_seq.entity_id", "_entity_poly_seq.num",
              "_entity_poly_seq.mon_id", "_entity_poly_seq.hetero"]
    for e in sorted(entities):
        lines += [f"{e + 1} {rid} {rname} n" for rid, rname in entities[e]]
    lines += ["#", "loop_", "_struct_asym.id", "_struct_asym.entity_id"]
    lines += [f"{_q(c)} {ent + 1}" for c, ent, _ in chains]
    cols = ["group_PDB", "id", "type_symbol", "label_atom_id", "label_alt_id", "label_comp_id",
            "label_asym_id", "label_entity_id", "label_seq_id", "pdbx_PDB_ins_code", "Cartn_x",
            "Cartn_y", "Cartn_z", "occupancy", "B_iso_or_equiv", "pdbx_formal_charge",
            "auth_seq_id", "auth_comp_id", "auth_asym_id", "auth_atom_id", "pdbx_PDB_model_num"]
    lines += ["#", "loop_"] + [f"_atom_site.{c}" for c in cols]
    for i in range(len(coords)):
        cid, rn, an = _q(atoms["chain_id"][i]), atoms["res_name"][i], _q(atoms["atom_name"][i])
        rid = int(atoms["res_id"][i])
        x, y, z = coords[i]
        lines.append(
            f"ATOM {i + 1} {atoms['element'][i]} {an} . {rn} {cid} {int(atoms['entity'][i]) + 1} "
            f"{rid} ? {x:.3f} {y:.3f} {z:.3f} 1.00 {b_factor[i]:.2f} "
            f"{int(atoms['charge'][i])} {rid} {rn} {cid} {an} 1")
    lines.append("#")
    return "\n".join(lines) + "\n"


def to_pdb(atoms, coords, b_factor=None, meaningless=False):
    """PDB text (ATOM/TER/END records, PDB format v3.3 columns). Chain ids must be one
    character and there must be at most 99999 atoms."""
    coords, b_factor = _check(atoms, coords, b_factor)
    if len(coords) > 99999:
        raise ValueError(f"PDB writer: {len(coords)} atoms do not fit the PDB format "
                         "(at most 99999); write mmCIF")
    long_ids = sorted({str(c) for c in atoms["chain_id"] if len(str(c)) != 1})
    if long_ids:
        raise ValueError(f"PDB writer: chain ids {long_ids} are not one character; write mmCIF")
    lines = []
    if meaningless:
        lines.append(f"REMARK   1 {MEANINGLESS}")
    serial = 0
    for i in range(len(coords)):
        serial += 1
        name = str(atoms["atom_name"][i])
        el = str(atoms["element"][i])
        # atom names of 1-char elements start in column 14 (PDB convention), others in 13
        field = f" {name:<3s}" if len(el) == 1 and len(name) < 4 else f"{name:<4s}"
        q = int(atoms["charge"][i])
        charge = f"{abs(q)}{'+' if q > 0 else '-'}" if q else "  "
        x, y, z = coords[i]
        lines.append(
            f"ATOM  {serial:5d} {field} {atoms['res_name'][i]:>3s} {atoms['chain_id'][i]}"
            f"{int(atoms['res_id'][i]):4d}    {x:8.3f}{y:8.3f}{z:8.3f}{1.0:6.2f}"
            f"{b_factor[i]:6.2f}          {el:>2s}{charge}")
        last = i == len(coords) - 1 or atoms["chain_id"][i + 1] != atoms["chain_id"][i]
        if last:
            serial += 1
            lines.append(f"TER   {serial:5d}      {atoms['res_name'][i]:>3s} "
                         f"{atoms['chain_id'][i]}{int(atoms['res_id'][i]):4d}")
    lines.append("END")
    return "\n".join(lines) + "\n"


def write_mmcif(path, atoms, coords, b_factor=None, name="prediction", meaningless=False):
    """Write :func:`to_mmcif` atomically; returns the path."""
    return atomic_write(path, to_mmcif(atoms, coords, b_factor, name, meaningless))


def write_pdb(path, atoms, coords, b_factor=None, meaningless=False):
    """Write :func:`to_pdb` atomically; returns the path."""
    return atomic_write(path, to_pdb(atoms, coords, b_factor, meaningless))
