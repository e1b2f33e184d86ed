"""Property tests of the a3m -> MSA arrays step against a direct character-by-character
reading of the a3m definition (HH-suite: uppercase and '-' are aligned columns, lowercase
letters are insertions, counted into the deletion value of the next aligned column)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from diffsci.protenix.data.constants import MSA_PROTEIN_SEQ_TO_ID
from diffsci.protenix.data.msa import dedup, rows_to_arrays

ALIGNED = "ACDEFGHIKLMNPQRSTVWYX-"
row_st = st.lists(st.tuples(st.text("acdefghiklmnpqrstvwy", max_size=3),
                            st.sampled_from(ALIGNED)), min_size=1, max_size=12)


def _naive(row):
    ids, dels, pending = [], [], 0
    for ch in row:
        if ch.islower():
            pending += 1
        else:
            ids.append(MSA_PROTEIN_SEQ_TO_ID[ch])
            dels.append(pending)
            pending = 0
    return ids, dels


@settings(max_examples=60, deadline=None)
@given(st.lists(row_st, min_size=1, max_size=5))
def test_rows_to_arrays_matches_the_a3m_definition(rows):
    texts = ["".join(ins + col for ins, col in r) for r in rows]
    width = max(len(r) for r in rows)
    msa, dele = rows_to_arrays(texts, width)
    for i, t in enumerate(texts):
        ids, dels = _naive(t)
        assert list(msa[i, :len(ids)]) == ids and list(dele[i, :len(dels)]) == dels
        assert not msa[i, len(ids):].any() and not dele[i, len(ids):].any()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["AC", "aAC", "AcC", "A-", "Aa-", "AC"]), min_size=1,
                max_size=8))
def test_dedup_keeps_first_of_equal_aligned_rows(rows):
    kept, descs = dedup(rows, [str(i) for i in range(len(rows))])
    keys = ["".join(c for c in r if not c.islower()) for r in rows]
    first = [i for i, k in enumerate(keys) if keys.index(k) == i]
    assert descs == [str(i) for i in first] and kept == [rows[i] for i in first]
    assert np.unique(["".join(c for c in r if not c.islower()) for r in kept]).size == len(kept)
