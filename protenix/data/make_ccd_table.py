"""Write ``protenix/data/ccd_table.py``: the built-in CCD rows of the 20 standard residues + UNK.

Protenix reads residue chemistry from the wwPDB Chemical Component Dictionary
(``components.cif``). For protein chains only 21 components are ever needed, so instead of a
download we commit their rows, taken once from the CCD copy that biotite ships
(``biotite.structure.info.get_ccd()``, the ``data`` extra)::

    PYTHONPATH=. .venv/bin/python -m diffsci.protenix.data.make_ccd_table

Kept per residue, in CCD ``_chem_comp_atom`` order: the heavy atoms (hydrogens dropped, as
Protenix's ``get_component_atom_array(keep_hydrogens=False)``), with their element
(``type_symbol``), formal charge (``charge``), leaving-atom flag
(``pdbx_leaving_atom_flag``: ``OXT``, kept only on a chain's last residue) and ideal
coordinates (``pdbx_model_Cartn_{x,y,z}_ideal``, Angstrom); plus ``one_letter_code`` and
``type`` from ``_chem_comp``.
"""

import os
import pprint

CODES = ("ALA", "ARG", "ASN", "ASP", "CYS", "GLN", "GLU", "GLY", "HIS", "ILE", "LEU", "LYS",
         "MET", "PHE", "PRO", "SER", "THR", "TRP", "TYR", "VAL", "UNK")
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ccd_table.py")


def build_table():
    """Returns {code: {"one_letter_code", "type", "atoms": [(name, element, charge, leaving,
    (x, y, z)), ...]}} read from biotite's bundled CCD."""
    import biotite
    import biotite.structure.info as info

    table = {}
    for code in CODES:
        comp = info.get_from_ccd("chem_comp", code)
        atoms = info.get_from_ccd("chem_comp_atom", code)
        col = {k: atoms[k].as_array(str) for k in (
            "atom_id", "type_symbol", "charge", "pdbx_leaving_atom_flag",
            "pdbx_model_Cartn_x_ideal", "pdbx_model_Cartn_y_ideal", "pdbx_model_Cartn_z_ideal")}
        entries = []
        for i in range(len(col["atom_id"])):
            element = col["type_symbol"][i].upper()
            if element in ("H", "D"):
                continue
            xyz = tuple(round(float(col[f"pdbx_model_Cartn_{c}_ideal"][i]), 3) for c in "xyz")
            entries.append((str(col["atom_id"][i]), element, int(col["charge"][i]),
                            bool(col["pdbx_leaving_atom_flag"][i] == "Y"), xyz))
        table[code] = {
            "one_letter_code": str(comp["one_letter_code"].as_array(str)[0]),
            "type": str(comp["type"].as_array(str)[0]),
            "atoms": entries,
        }
    return table, biotite.__version__


def main():
    table, version = build_table()
    text = (
        '"""Built-in CCD rows of the 20 standard amino acids + UNK (generated; do not edit).\n\n'
        "Made by ``python -m diffsci.protenix.data.make_ccd_table`` from the Chemical Component\n"
        f"Dictionary bundled with biotite {version}. Per residue: ``one_letter_code``, ``type``\n"
        "and ``atoms``, the heavy atoms in CCD order as (name, element, formal charge,\n"
        'leaving-atom flag, ideal coordinates in Angstrom).\n"""\n\n'
        f"BIOTITE_VERSION = {version!r}\n\n"
        f"CCD_TABLE = {pprint.pformat(table, width=96, sort_dicts=False)}\n"
    )
    with open(OUT, "w") as f:
        f.write(text)
    print("wrote", OUT, sum(len(v["atoms"]) for v in table.values()), "atoms")


if __name__ == "__main__":
    main()
