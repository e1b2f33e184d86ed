"""Confidence metrics of a prediction from the confidence head's logits (numpy).

The definitions are those of the AlphaFold 3 supplement (section 5.9: pLDDT, PAE, PDE from
binned logits; pTM/ipTM, eq. 17-18 of 5.9.1, with the TM-score normalisation
``d0(N) = 1.24 (max(N, 19) - 15)^(1/3) - 1.8``; clash detection and the ranking score of
section 5.9.3) as Protenix 2.0.0 implements them (``protenix.model.sample_confidence``,
``protenix.metrics.clash``): the function names, the bin conventions (bin centres of
``n`` equal bins over ``[min_bin, max_bin]``) and the per-sample summary keys follow Protenix,
so the JSON files we write carry the same numbers (checked on fixtures made by Protenix).

Shapes: ``N_s`` samples, ``N_token`` tokens, ``N_atom`` atoms, ``B`` bins. Distances in
Angstrom; pLDDT in [0, 1] per atom (the summary's ``plddt`` is its mean times 100, as Protenix).
"""

import numpy as np

__all__ = [
    "BIN_PARAMS", "calculate_chain_based_gpde", "calculate_chain_based_plddt",
    "calculate_chain_based_ptm", "calculate_clash", "calculate_iptm", "calculate_normalization",
    "calculate_ptm", "compute_contact_prob", "compute_full_data_and_summary", "get_bin_centers",
    "logits_to_prob", "logits_to_score",
]

# Protenix configs_base.py: loss.{plddt,pde,pae,distogram} bins, metrics.clash
BIN_PARAMS = {
    "plddt": {"min_bin": 0.0, "max_bin": 1.0, "no_bins": 50},
    "pde": {"min_bin": 0.0, "max_bin": 32.0, "no_bins": 64},
    "pae": {"min_bin": 0.0, "max_bin": 32.0, "no_bins": 64},
    "distogram": {"min_bin": 2.3125, "max_bin": 21.6875, "no_bins": 64},
}
AF3_CLASH_THRESHOLD = 1.1  # Angstrom


def get_bin_centers(min_bin, max_bin, no_bins):
    """Centres [no_bins] of ``no_bins`` equal bins over [min_bin, max_bin]."""
    width = (max_bin - min_bin) / no_bins
    return min_bin + width * (np.arange(no_bins) + 0.5)


def logits_to_prob(logits, axis=-1):
    """Softmax over the bin axis, in the logits' precision when float32 (as Protenix; relative
    error ~1e-7 of each probability), else float64; in place on one temporary."""
    x = np.asarray(logits)
    x = np.array(x, dtype=np.float32 if x.dtype == np.float32 else np.float64)
    x -= x.max(axis=axis, keepdims=True)
    np.exp(x, out=x)
    x /= x.sum(axis=axis, keepdims=True)
    return x


def logits_to_score(logits, min_bin, max_bin, no_bins, return_prob=False):
    """Expected value of the binned quantity: ``softmax(logits) @ bin_centres``.

    logits [..., B] -> score [...] (and the probabilities [..., B] with ``return_prob``)."""
    if np.shape(logits)[-1] != no_bins:
        raise ValueError(f"logits_to_score: logits have {np.shape(logits)[-1]} bins on the last "
                         f"axis, expected no_bins={no_bins}")
    prob = logits_to_prob(logits)
    score = prob @ get_bin_centers(min_bin, max_bin, no_bins)
    return (score, prob) if return_prob else score


def compute_contact_prob(distogram_logits, min_bin=2.3125, max_bin=21.6875, no_bins=64,
                         thres=8.0):
    """P(distance < thres) [N_token, N_token] from distogram logits [N_token, N_token, B]:
    the probability mass of the bins whose centre is below ``thres`` (Protenix)."""
    prob = logits_to_prob(distogram_logits)
    k = int((get_bin_centers(min_bin, max_bin, no_bins) < thres).sum())
    return prob[..., :k].sum(-1)


def calculate_normalization(n):
    """TM-score d0 (AF3 supplement eq. 18): 1.24 (max(N, 19) - 15)^(1/3) - 1.8."""
    return 1.24 * (max(n, 19) - 15) ** (1.0 / 3.0) - 1.8


def _tm_weights(n, min_bin, max_bin, no_bins):
    d0 = calculate_normalization(n)
    return 1.0 / (1.0 + (get_bin_centers(min_bin, max_bin, no_bins) / d0) ** 2)


def _mask_tokens(pae_prob, has_frame, asym_id, token_mask):
    if token_mask is None:
        return pae_prob, has_frame, asym_id
    m = np.asarray(token_mask, dtype=bool)
    pae_prob = pae_prob[..., m, :, :][..., :, m, :]
    return pae_prob, has_frame[m], (None if asym_id is None else asym_id[m])


def calculate_ptm(pae_prob, has_frame, min_bin=0.0, max_bin=32.0, no_bins=64, token_mask=None):
    """pTM (AF3 eq. 17): max over aligned tokens i with a frame of the mean over j of the
    expected TM term. pae_prob [..., N, N, B] -> [...]; 0 where no token has a frame."""
    pae_prob, has_frame, _ = _mask_tokens(pae_prob, np.asarray(has_frame, bool), None,
                                          token_mask)
    if not has_frame.any():
        return np.zeros(pae_prob.shape[:-3])
    tt = pae_prob @ _tm_weights(has_frame.shape[-1], min_bin, max_bin, no_bins)
    return tt.mean(axis=-1)[..., has_frame].max(axis=-1)


def calculate_iptm(pae_prob, has_frame, asym_id, min_bin=0.0, max_bin=32.0, no_bins=64,
                   token_mask=None, eps=1e-8):
    """ipTM (AF3 eq. 17 restricted to pairs in different chains): for each aligned token i
    with a frame, the mean TM term over tokens j of another chain; the max over i.
    pae_prob [..., N, N, B] -> [...]."""
    pae_prob, has_frame, asym_id = _mask_tokens(
        pae_prob, np.asarray(has_frame, bool), np.asarray(asym_id), token_mask)
    if not has_frame.any():
        return np.zeros(pae_prob.shape[:-3])
    tt = pae_prob @ _tm_weights(has_frame.shape[-1], min_bin, max_bin, no_bins)
    diff = asym_id[None, :] != asym_id[:, None]
    per_i = (tt * diff).sum(axis=-1) / (eps + diff.sum(axis=-1))
    return per_i[..., has_frame].max(axis=-1)


def _contiguous(asym_id):
    """asym ids renumbered 0..n_chain-1 in sorted order (Protenix's remap of gaps)."""
    uniq, inv = np.unique(np.asarray(asym_id), return_inverse=True)
    return inv.reshape(-1), len(uniq)


def calculate_chain_based_ptm(pae_prob, has_frame, asym_id, token_is_ligand, min_bin=0.0,
                              max_bin=32.0, no_bins=64):
    """chain_ptm [..., C], chain_iptm [..., C], chain_pair_iptm [..., C, C] and
    chain_pair_iptm_global [..., C, C] as Protenix defines them (C chains).

    chain_pair_iptm[a, b]: ipTM over the tokens of chains a and b; chain_iptm[a]: mean of
    chain_pair_iptm[i, j] over ordered pairs touching a whose first chain has a frame;
    chain_pair_iptm_global[a, b]: chain_iptm of the ligand chain if one is a ligand, else the
    mean of both chain_iptm."""
    has_frame = np.asarray(has_frame, bool)
    asym, n = _contiguous(asym_id)
    lig = np.asarray(token_is_ligand, bool)
    masks = [asym == a for a in range(n)]
    chain_is_lig = [lig[m].sum() >= m.sum() // 2 for m in masks]
    batch = pae_prob.shape[:-3]
    pair = np.zeros(batch + (n, n))
    for a in range(n):
        for b in range(a + 1, n):
            pair[..., a, b] = pair[..., b, a] = calculate_iptm(
                pae_prob, has_frame, asym, min_bin, max_bin, no_bins, token_mask=masks[a] | masks[b])
    chain_ptm = np.zeros(batch + (n,))
    for a in range(n):
        chain_ptm[..., a] = calculate_ptm(pae_prob, has_frame, min_bin, max_bin, no_bins,
                                          token_mask=masks[a])
    frame = [bool((masks[i] & has_frame).any()) for i in range(n)]
    chain_iptm = np.zeros(batch + (n,))
    for a in range(n):
        vals = [pair[..., i, j] for i in range(n) for j in range(n)
                if (i == a or j == a) and i != j and frame[i]]
        if vals:
            chain_iptm[..., a] = np.mean(np.stack(vals, axis=-1), axis=-1)
    glob = np.zeros(batch + (n, n))
    for a in range(n):
        for b in range(n):
            if a == b:
                continue
            if chain_is_lig[a]:
                glob[..., a, b] = chain_iptm[..., a]
            elif chain_is_lig[b]:
                glob[..., a, b] = chain_iptm[..., b]
            else:
                glob[..., a, b] = 0.5 * (chain_iptm[..., a] + chain_iptm[..., b])
    return {"chain_ptm": chain_ptm, "chain_iptm": chain_iptm, "chain_pair_iptm": pair,
            "chain_pair_iptm_global": glob}


def calculate_chain_based_gpde(token_pair_pde, contact_probs, asym_id, eps=1e-8):
    """chain_gpde [..., C] and chain_pair_gpde [..., C, C]: the contact-weighted mean PDE
    within a chain / between two chains (Protenix)."""
    asym, n = _contiguous(asym_id)
    batch = token_pair_pde.shape[:-2]

    def gpde(m1, m2):
        c = contact_probs[..., m1, :][..., m2]
        p = token_pair_pde[..., m1, :][..., m2]
        return (p * c).sum(axis=(-1, -2)) / (c.sum(axis=(-1, -2)) + eps)

    chain = np.zeros(batch + (n,))
    pair = np.zeros(batch + (n, n))
    for a in range(n):
        chain[..., a] = gpde(asym == a, asym == a)
        for b in range(a + 1, n):
            pair[..., a, b] = pair[..., b, a] = gpde(asym == a, asym == b)
    return {"chain_gpde": chain, "chain_pair_gpde": pair}


def calculate_chain_based_plddt(atom_plddt, asym_id, atom_to_token_idx):
    """chain_plddt [N_s, C] (mean atom pLDDT of a chain, in [0, 1]) and chain_pair_plddt
    [N_s, C, C] (over the atoms of two chains)."""
    asym, n = _contiguous(asym_id)
    atom_chain = asym[np.asarray(atom_to_token_idx)]
    batch = atom_plddt.shape[:-1]
    chain = np.zeros(batch + (n,))
    pair = np.zeros(batch + (n, n))
    for a in range(n):
        chain[..., a] = atom_plddt[..., atom_chain == a].mean(-1)
        for b in range(n):
            if a != b:
                pair[..., a, b] = atom_plddt[..., (atom_chain == a) | (atom_chain == b)].mean(-1)
    return {"chain_plddt": chain, "chain_pair_plddt": pair}


def calculate_clash(pred_coordinate, asym_id, atom_to_token_idx, is_polymer,
                    threshold=AF3_CLASH_THRESHOLD):
    """AF3 clash flag per sample (supplement 5.9.3): two polymer chains clash when more than
    100 of their atom pairs, or more than half of the smaller chain's atom count, are closer
    than ``threshold`` Angstrom. pred_coordinate [N_s, N_atom, 3] -> bool [N_s]."""
    x = np.asarray(pred_coordinate, dtype=np.float64)
    asym, n = _contiguous(asym_id)
    atom_chain = asym[np.asarray(atom_to_token_idx)]
    poly = np.asarray(is_polymer, bool)
    out = np.zeros(x.shape[0], dtype=bool)
    atoms = [atom_chain == a for a in range(n)]
    # a chain is a ligand chain when its atoms are not polymer atoms (Protenix: one type/chain)
    is_lig = [not poly[m].any() for m in atoms]
    for s in range(x.shape[0]):
        for a in range(n):
            for b in range(a + 1, n):
                if is_lig[a] or is_lig[b]:
                    continue
                xa, xb = x[s, atoms[a]], x[s, atoms[b]]
                d2 = ((xa[:, None, :] - xb[None, :, :]) ** 2).sum(-1)
                total = int((d2 < threshold * threshold).sum())
                if total > 100 or total / min(len(xa), len(xb)) > 0.5:
                    out[s] = True
    return out


def compute_full_data_and_summary(pae_logits, plddt_logits, pde_logits, contact_probs,
                                  token_asym_id, token_has_frame, atom_coordinate,
                                  atom_to_token_idx, atom_is_polymer, N_recycle,
                                  return_full_data=False, bins=None,
                                  clash_threshold=AF3_CLASH_THRESHOLD):
    """Per-sample summary confidences (and full data) as Protenix's function of this name.

    Args:
        pae_logits, pde_logits: [N_s, N_token, N_token, B]; plddt_logits [N_s, N_atom, B].
        contact_probs: [N_token, N_token] or [N_s, N_token, N_token].
        token_asym_id [N_token], token_has_frame [N_token], atom_to_token_idx [N_atom],
        atom_is_polymer [N_atom]; atom_coordinate [N_s, N_atom, 3] Angstrom; N_recycle int.
        bins: override of :data:`BIN_PARAMS` (``{"plddt": {...}, "pae": ..., "pde": ...}``).

    Returns:
        (summary, full_data): lists of N_s dicts. Summary keys: plddt (0-100), gpde, ptm, iptm,
        chain_gpde, chain_pair_gpde, chain_ptm, chain_iptm, chain_pair_iptm,
        chain_pair_iptm_global, chain_plddt, chain_pair_plddt, has_clash, num_recycles,
        disorder, ranking_score (= 0.8 ipTM + 0.2 pTM + 0.5 disorder - 100 has_clash). Full
        data (with ``return_full_data``): atom_plddt (0-1), token_pair_pde, contact_probs,
        token_pair_pae, token_has_frame, token_asym_id, atom_to_token_idx, atom_is_polymer,
        atom_coordinate; else ``[{}]`` as Protenix.
    """
    b = {k: dict(v) for k, v in BIN_PARAMS.items()}
    for k, v in (bins or {}).items():
        b[k].update(v)
    pae_logits = np.asarray(pae_logits)
    n_s = pae_logits.shape[0]
    asym = np.asarray(token_asym_id)
    has_frame = np.asarray(token_has_frame, bool)
    a2t = np.asarray(atom_to_token_idx)
    poly = np.asarray(atom_is_polymer)
    contact = np.asarray(contact_probs, dtype=np.float64)
    if contact.ndim == 2:
        contact = np.broadcast_to(contact, (n_s,) + contact.shape)
    for name, arr in (("plddt_logits", plddt_logits), ("pde_logits", pde_logits),
                      ("atom_coordinate", atom_coordinate), ("contact_probs", contact)):
        if np.shape(arr)[0] != n_s:
            raise ValueError(f"compute_full_data_and_summary: {name} has {np.shape(arr)[0]} "
                             f"samples, pae_logits has {n_s}")
    token_is_lig = np.zeros(len(asym), dtype=np.int64)
    np.add.at(token_is_lig, a2t, (1 - poly).astype(np.int64))
    token_is_lig = token_is_lig > 0

    atom_plddt = logits_to_score(plddt_logits, **b["plddt"])
    pde = logits_to_score(pde_logits, **b["pde"])
    pae, pae_prob = logits_to_score(pae_logits, **b["pae"], return_prob=True)
    s = {
        "plddt": atom_plddt.mean(-1) * 100,
        "gpde": (pde * contact).sum(axis=(-1, -2)) / contact.sum(axis=(-1, -2)),
        "ptm": calculate_ptm(pae_prob, has_frame, **b["pae"]),
        "iptm": calculate_iptm(pae_prob, has_frame, asym, **b["pae"]),
    }
    s.update(calculate_chain_based_gpde(pde, contact, asym))
    s.update(calculate_chain_based_ptm(pae_prob, has_frame, asym, token_is_lig, **b["pae"]))
    s.update(calculate_chain_based_plddt(atom_plddt, asym, a2t))
    s["has_clash"] = calculate_clash(atom_coordinate, asym, a2t, poly, clash_threshold)
    s["disorder"] = np.zeros(n_s)
    s["ranking_score"] = (0.8 * s["iptm"] + 0.2 * s["ptm"] + 0.5 * s["disorder"]
                          - 100 * s["has_clash"])
    summary = []
    for i in range(n_s):
        d = {k: v[i] for k, v in s.items()}
        d["num_recycles"] = int(N_recycle)
        summary.append(d)
    if not return_full_data:
        return summary, [{}]
    full = []
    for i in range(n_s):
        full.append({
            "atom_plddt": atom_plddt[i], "token_pair_pde": pde[i], "contact_probs": contact[i],
            "token_pair_pae": pae[i], "token_has_frame": has_frame, "token_asym_id": asym,
            "atom_to_token_idx": a2t, "atom_is_polymer": poly,
            "atom_coordinate": np.asarray(atom_coordinate)[i],
        })
    return summary, full
