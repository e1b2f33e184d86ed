"""Plots of a prediction (matplotlib, Agg): pLDDT along the sequence for every sample and the
PAE matrix, with chain boundaries marked (as ColabFold's ``*_plddt.png`` / ``*_pae.png``)."""

import numpy as np

from diffsci.core.atomic import atomic_path

from .structure import MEANINGLESS

__all__ = ["plot_pae", "plot_plddt", "token_plddt"]


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def token_plddt(atom_plddt, atom_to_token_idx, n_token):
    """Mean atom pLDDT per token: [..., N_atom] -> [..., N_token]."""
    a2t = np.asarray(atom_to_token_idx)
    counts = np.bincount(a2t, minlength=n_token)
    out = np.zeros(np.shape(atom_plddt)[:-1] + (n_token,))
    for t in range(n_token):
        out[..., t] = np.asarray(atom_plddt)[..., a2t == t].sum(-1)
    return out / np.maximum(counts, 1)


def _bounds(asym_id):
    asym = np.asarray(asym_id)
    return np.flatnonzero(asym[1:] != asym[:-1]) + 1


def _save(fig, path):
    with atomic_path(path, suffix=".png") as tmp:
        fig.savefig(tmp, dpi=100)


def plot_plddt(path, plddt, asym_id, chain_names=None, labels=None, title="", meaningless=False):
    """pLDDT (0-100) along the tokens, one line per sample (ranked order), background shaded by
    chain, AF's confidence bands as horizontal guides. plddt [N_s, N_token]."""
    plt = _pyplot()
    plddt = np.atleast_2d(plddt)
    asym = np.asarray(asym_id)
    fig, ax = plt.subplots(figsize=(8, 3.5))
    edges = np.r_[0, _bounds(asym), len(asym)]
    for k in range(len(edges) - 1):
        ax.axvspan(edges[k] + 0.5, edges[k + 1] + 0.5, color=f"C{k % 10}", alpha=0.12, lw=0)
        name = chain_names[k] if chain_names is not None else str(k)
        ax.text(0.5 * (edges[k] + edges[k + 1]) + 0.5, 95, f"chain {name}", ha="center",
                fontsize=8)
    x = np.arange(1, plddt.shape[-1] + 1)
    for s in range(plddt.shape[0]):
        ax.plot(x, plddt[s], lw=1.2, label=labels[s] if labels else f"rank {s}")
    for level in (50, 70, 90):
        ax.axhline(level, color="grey", lw=0.5, ls=":")
    ax.set_xlim(0.5, len(x) + 0.5)
    ax.set_ylim(0, 100)
    ax.set_xlabel("token (residue) index")
    ax.set_ylabel("pLDDT")
    ax.set_title((MEANINGLESS + "\n" if meaningless else "") + title, fontsize=9)
    ax.legend(fontsize=7, loc="lower right", ncol=min(plddt.shape[0], 5))
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)
    return path


def plot_pae(path, pae, asym_id, title="", meaningless=False):
    """The PAE matrix (Angstrom; row: aligned token, column: scored token) with chain
    boundaries. pae [N_token, N_token]."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5, 4.3))
    im = ax.imshow(np.asarray(pae), cmap="bwr", vmin=0, vmax=32, origin="upper",
                   extent=(0.5, len(pae) + 0.5, len(pae) + 0.5, 0.5))
    for b in _bounds(asym_id):
        ax.axhline(b + 0.5, color="k", lw=0.8)
        ax.axvline(b + 0.5, color="k", lw=0.8)
    fig.colorbar(im, ax=ax, label="expected position error (A)")
    ax.set_xlabel("scored token")
    ax.set_ylabel("aligned token")
    ax.set_title((MEANINGLESS + "\n" if meaningless else "") + title, fontsize=8)
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)
    return path
