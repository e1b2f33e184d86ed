"""Write ``mindelec_labels.npz`` from MindElec's own dataset of the inverse-scattering case.

MindElec (mindspore-ai/mindscience, ``MindElec/examples/AD_FDTD/fdtd_inverse/dataset``) ships
``epsr_labels.npy`` (float32 [100, 100], the true eps_r cell map) and ``ez_labels.npy``
(float32 [1500, 4, 8], E_z at the 8 receivers for each of the 4 sources, computed with its
own FDTD). We keep the first 350 steps (what its ``solve.py`` fits) and the map as a boolean
mask of the eps_r = 4 cells; the test compares our forward run and our disc geometry with them.

    python make_fixture.py <path to a mindscience checkout>
"""

import pathlib
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent


def main(root):
    dataset = pathlib.Path(root) / "MindElec/examples/AD_FDTD/fdtd_inverse/dataset"
    epsr = np.load(dataset / "epsr_labels.npy")
    ez = np.load(dataset / "ez_labels.npy")
    if epsr.shape != (100, 100) or ez.shape[1:] != (4, 8) or not set(np.unique(epsr)) <= {1, 4}:
        raise ValueError(f"unexpected MindElec labels: epsr {epsr.shape}, ez {ez.shape}")
    np.savez_compressed(
        HERE / "mindelec_labels.npz",
        ez=ez[:350].astype(np.float32),  # [350, 4, 8], V/m
        disc_mask=np.packbits(epsr == 4),  # 100 x 100 bits, row-major
    )


if __name__ == "__main__":
    main(sys.argv[1])
