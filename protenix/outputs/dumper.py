"""``DataDumper``: a prediction's files, in Protenix 2.0.0's layout (``runner/dumper.py``)::

    OUT/<name>/seed_<seed>/predictions/<name>_sample_<rank>.cif
    OUT/<name>/seed_<seed>/predictions/<name>_summary_confidence_sample_<rank>.json
    OUT/<name>/seed_<seed>/predictions/<name>_full_data_sample_<rank>.json  (need_atom_confidence)
    OUT/<name>/seed_<seed>/<name>_plddt.png, <name>_pae.png                 (plots)

``rank`` 0 is the sample with the highest ranking score (Protenix's ``argsort(argsort(-s))``;
ties keep sample order). B-factors are the atom pLDDT x 100 rounded to 2 decimals; the
full-data JSON drops ``atom_coordinate``/``atom_is_polymer`` and rounds to 2 decimals, as
Protenix. Every file is written atomically; the summary JSON is written last, so its presence
marks a finished sample. With ``meaningless`` (random weights) every JSON carries a
``"warning"`` key and every structure/plot says so.
"""

import json
import os
import sys

import numpy as np

from .plots import plot_pae, plot_plddt, token_plddt
from .structure import MEANINGLESS, atomic_write, write_mmcif, write_pdb

__all__ = ["DataDumper", "ranks", "to_jsonable"]


def to_jsonable(value, decimals=None):
    """numpy arrays/scalars (nested in dicts/lists) -> JSON types, optionally rounded."""
    if isinstance(value, dict):
        return {k: to_jsonable(v, decimals) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v, decimals) for v in value]
    if isinstance(value, (np.ndarray, np.generic)):
        if decimals is not None and np.issubdtype(value.dtype, np.floating):
            value = np.round(value, decimals)
        return value.tolist()
    if isinstance(value, float) and decimals is not None:
        return round(value, decimals)
    return value


def ranks(scores):
    """rank of each sample (0 = best) by descending score."""
    order = np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")
    r = np.empty(len(order), dtype=int)
    r[order] = np.arange(len(order))
    return r


class DataDumper:
    """Writes predictions under ``base_dir`` (see the module docstring).

    Args:
        base_dir: the output folder (``OUT``).
        need_atom_confidence: also write the full-data JSON (atom pLDDT, PAE, PDE, contact
            probabilities).
        sorted_by_ranking_score: rank file names by ranking score (else by sample index).
        pdb: also write ``<name>_sample_<rank>.pdb``.
        plots: write the pLDDT and PAE plots (needs matplotlib).
        meaningless: label every output as coming from random weights.
    """

    def __init__(self, base_dir, need_atom_confidence=False, sorted_by_ranking_score=True,
                 pdb=False, plots=True, meaningless=False):
        self.base_dir = os.fspath(base_dir)
        self.need_atom_confidence = need_atom_confidence
        self.sorted_by_ranking_score = sorted_by_ranking_score
        self.pdb = pdb
        self.plots = plots
        self.meaningless = meaningless

    def dump_dir(self, name, seed):
        return os.path.join(self.base_dir, name, f"seed_{seed}")

    def summary_path(self, name, seed, rank):
        return os.path.join(self.dump_dir(name, seed), "predictions",
                            f"{name}_summary_confidence_sample_{rank}.json")

    def is_done(self, name, seed, n_sample):
        """True when every sample's summary JSON of this (name, seed) exists."""
        return all(os.path.exists(self.summary_path(name, seed, r)) for r in range(n_sample))

    def dump(self, name, seed, coordinate, summary, full_data, atoms):
        """Write one seed's samples.

        Args:
            name: job name; seed: int.
            coordinate: [N_s, N_atom, 3] Angstrom.
            summary, full_data: lists of N_s dicts from
                :func:`protenix.outputs.confidence.compute_full_data_and_summary`
                (``return_full_data=True``: the B-factors and plots read ``atom_plddt`` and
                ``token_pair_pae``).
            atoms: :func:`protenix.data.build_atoms` of the job.

        Returns:
            list of (rank, sample index, summary dict) in rank order.
        """
        coordinate = np.asarray(coordinate)
        n_s = coordinate.shape[0]
        if len(summary) != n_s or len(full_data) != n_s:
            raise ValueError(f"DataDumper.dump({name!r}): {n_s} coordinate samples but "
                             f"{len(summary)} summaries and {len(full_data)} full-data dicts")
        rank = (ranks([s["ranking_score"] for s in summary]) if self.sorted_by_ranking_score
                else np.arange(n_s))
        pred_dir = os.path.join(self.dump_dir(name, seed), "predictions")
        os.makedirs(pred_dir, exist_ok=True)
        warn = {"warning": MEANINGLESS} if self.meaningless else {}
        for i in range(n_s):
            r = int(rank[i])
            b = np.round(np.asarray(full_data[i]["atom_plddt"], dtype=np.float64) * 100.0, 2)
            write_mmcif(os.path.join(pred_dir, f"{name}_sample_{r}.cif"), atoms, coordinate[i],
                        b, name=name, meaningless=self.meaningless)
            if self.pdb:
                write_pdb(os.path.join(pred_dir, f"{name}_sample_{r}.pdb"), atoms,
                          coordinate[i], b, meaningless=self.meaningless)
            if self.need_atom_confidence:
                full = {k: v for k, v in full_data[i].items()
                        if k not in ("atom_coordinate", "atom_is_polymer")}
                atomic_write(os.path.join(pred_dir, f"{name}_full_data_sample_{r}.json"),
                             json.dumps({**to_jsonable(full, 2), **warn}))
        for i in range(n_s):
            atomic_write(self.summary_path(name, seed, int(rank[i])),
                         json.dumps({**to_jsonable(summary[i]), **warn}, indent=4))
        # plots last: the structures and JSON above are the result, and a plot that fails
        # (a broken matplotlib backend, a full disk) is reported without losing them
        if self.plots:
            try:
                self._plots(name, seed, rank, full_data, atoms)
            except Exception as err:  # reported: the result is already on disk
                print(f"protenix outputs: the plots of {name} seed {seed} failed ({err!r}); "
                      f"the structures and confidence JSON in {pred_dir} are complete",
                      file=sys.stderr)
        return sorted(((int(rank[i]), i, summary[i]) for i in range(n_s)), key=lambda t: t[0])

    def _plots(self, name, seed, rank, full_data, atoms):
        order = np.argsort(rank)
        asym = np.asarray(full_data[0]["token_asym_id"])
        plddt = np.stack([token_plddt(np.asarray(full_data[i]["atom_plddt"]) * 100,
                                      full_data[i]["atom_to_token_idx"], len(asym))
                          for i in order])
        names = [c[2] for c in atoms["chains"]] if "chains" in atoms else None
        d = self.dump_dir(name, seed)
        plot_plddt(os.path.join(d, f"{name}_plddt.png"), plddt, asym, names,
                   labels=[f"rank {k}" for k in range(len(order))],
                   title=f"{name} seed {seed}: pLDDT per sample", meaningless=self.meaningless)
        plot_pae(os.path.join(d, f"{name}_pae.png"), full_data[order[0]]["token_pair_pae"], asym,
                 title=f"{name} seed {seed}: PAE of rank 0", meaningless=self.meaningless)
