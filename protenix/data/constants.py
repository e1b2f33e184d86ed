"""Vocabularies of Protenix's features (AF3 supplement Table 5), for protein chains.

``STD_RESIDUES_WITH_GAP``: the 32 ``restype`` classes (20 amino acids + UNK, 4 RNA + N,
4 DNA + DN, gap), ``ELEMENTS``: the 128 ``ref_element`` classes (atomic numbers 1..118 by
upper-case symbol, then ``UNK_ELEM_119..128``), ``MSA_PROTEIN_SEQ_TO_ID``: a3m letters ->
restype ids (B -> D, Z -> E, U -> C, J/O/X -> UNK).
"""

PROTEIN_1TO3 = {
    "A": "ALA", "R": "ARG", "N": "ASN", "D": "ASP", "C": "CYS", "Q": "GLN", "E": "GLU",
    "G": "GLY", "H": "HIS", "I": "ILE", "L": "LEU", "K": "LYS", "M": "MET", "F": "PHE",
    "P": "PRO", "S": "SER", "T": "THR", "W": "TRP", "Y": "TYR", "V": "VAL", "X": "UNK",
}
_RES = ["ALA", "ARG", "ASN", "ASP", "CYS", "GLN", "GLU", "GLY", "HIS", "ILE", "LEU", "LYS",
        "MET", "PHE", "PRO", "SER", "THR", "TRP", "TYR", "VAL", "UNK",
        "A", "G", "C", "U", "N", "DA", "DG", "DC", "DT", "DN", "-"]
STD_RESIDUES_WITH_GAP = {name: i for i, name in enumerate(_RES)}
N_RESTYPE = len(STD_RESIDUES_WITH_GAP)     # 32

MSA_PROTEIN_SEQ_TO_ID = {
    "A": 0, "B": 3, "C": 4, "D": 3, "E": 6, "F": 13, "G": 7, "H": 8, "I": 9, "J": 20,
    "K": 11, "L": 10, "M": 12, "N": 2, "O": 20, "P": 14, "Q": 5, "R": 1, "S": 15, "T": 16,
    "U": 4, "V": 19, "W": 17, "X": 20, "Y": 18, "Z": 6, "-": 31,
}

_SYMBOLS = (
    "H He Li Be B C N O F Ne Na Mg Al Si P S Cl Ar K Ca Sc Ti V Cr Mn Fe Co Ni Cu Zn Ga Ge "
    "As Se Br Kr Rb Sr Y Zr Nb Mo Tc Ru Rh Pd Ag Cd In Sn Sb Te I Xe Cs Ba La Ce Pr Nd Pm Sm "
    "Eu Gd Tb Dy Ho Er Tm Yb Lu Hf Ta W Re Os Ir Pt Au Hg Tl Pb Bi Po At Rn Fr Ra Ac Th Pa U "
    "Np Pu Am Cm Bk Cf Es Fm Md No Lr Rf Db Sg Bh Hs Mt Ds Rg Cn Nh Fl Mc Lv Ts Og"
).split()
ELEMENTS = [s.upper() for s in _SYMBOLS] + [f"UNK_ELEM_{i}" for i in range(119, 129)]
ELEMENT_INDEX = {e: i for i, e in enumerate(ELEMENTS)}
assert len(_SYMBOLS) == 118 and len(ELEMENTS) == 128
