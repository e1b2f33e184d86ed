"""Write MindFlow's fno3d data files from ``datasets``' Navier-Stokes generator.

MindFlow downloads ``train_a.npy [N, s, s, T_in]`` (the first ``input_timestep`` vorticity
frames), ``train_u.npy [N, s, s, T_out]`` (the next ``output_timestep``) and the test pair into
``data.root_dir``; this writes the same files from
``datasets.pde.generators.generate_navier_stokes`` (nu = 1e-3, FNO's forcing and initial field
amplitude, frames every time unit, solved at ``input_resolution``^2 with dt = 5e-3):

    python examples/mindflow/operators/navier_stokes/fno3d/prepare_data.py   # 1000 + 200
    python examples/mindflow/operators/navier_stokes/fno3d/prepare_data.py \\
        --config-file-path ./configs/fno3d_tiny.yaml --n-train 4 --n-test 2

``--out-dir`` (default ``./navier_stokes_fno3d_train_out``, train.py's) becomes the working
directory, so a relative ``data.root_dir`` is under it; a relative ``--config-file-path`` is
looked up in the working directory, then next to this script. MindFlow's snake_case flags
(``--config_file_path``, ``--n_train`` ...) still work.
"""

import os

import numpy as np

from diffsci.datasets.pde.generators import generate_navier_stokes
from diffsci.mindflow.utils import load_yaml_config
from diffsci.scripts import ArgumentParser, default_out_dir, enter_out_dir


def prepare(config, n_train, n_test, seed=0, progress=True):
    """Generate ``n_train + n_test`` trajectories and write the four files; returns their
    paths (nothing is generated when all four exist)."""
    model, data = config["model"], config["data"]
    t_in, t_out = model["input_timestep"], model["output_timestep"]
    s = model["input_resolution"]
    root = data["root_dir"]
    names = ("train_a", "train_u", "test_a", "test_u")
    paths = [os.path.join(root, f"{name}.npy") for name in names]
    if all(os.path.exists(p) for p in paths):
        return paths
    os.makedirs(root, exist_ok=True)
    w = generate_navier_stokes(
        n_train + n_test,
        resolution=s,
        subsample=1,
        nu=1e-3,
        t_final=float(t_in + t_out - 1),
        n_time=t_in + t_out,
        dt=5e-3,
        scale=2 * 7**3,
        seed=seed,
        progress=progress,
    )["tensor"]  # [N, T, s, s]
    w = np.moveaxis(w, 1, -1).astype(np.float32)  # [N, s, s, T]
    splits = (
        w[:n_train, ..., :t_in],
        w[:n_train, ..., t_in:],
        w[n_train:, ..., :t_in],
        w[n_train:, ..., t_in:],
    )
    for path, array in zip(paths, splits, strict=True):
        np.save(path, array)
    return paths


if __name__ == "__main__":
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config-file-path", default="./configs/fno3d.yaml")
    parser.add_argument("--n-train", type=int, default=1000)
    parser.add_argument("--n-test", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--out-dir",
        default=default_out_dir("navier_stokes_fno3d_train"),
        help="the working directory of the run: the config's relative paths are taken from it",
    )
    args = parser.parse_args()
    enter_out_dir(args, __file__)
    prepare(load_yaml_config(args.config_file_path), args.n_train, args.n_test, args.seed)
