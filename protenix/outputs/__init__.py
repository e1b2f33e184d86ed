"""protenix.outputs: what a prediction leaves on disk, with Protenix 2.0.0's layout and keys.

- :mod:`.confidence`: pLDDT/PAE/PDE, pTM/ipTM and the chain-based scores, clash flag and
  ranking score from the confidence head's logits (Protenix's ``sample_confidence``).
- :mod:`.structure`: mmCIF (and PDB) writers, B-factor = pLDDT, atomic writes.
- :mod:`.dumper`: ``DataDumper`` (Protenix's ``runner/dumper.py`` tree:
  ``OUT/<name>/seed_<seed>/predictions/<name>_sample_<rank>.cif`` + summary JSON).
- :mod:`.plots`: pLDDT along the sequence and PAE matrices (matplotlib).
"""
