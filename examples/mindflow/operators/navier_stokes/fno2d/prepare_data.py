"""Write MindFlow's fno2d data files from ``datasets``' Navier-Stokes generator.

MindFlow downloads, into ``data.root_dir``, one-step pairs cut from 20-frame vorticity
trajectories (frames every time unit): ``train/inputs.npy`` and ``train/label.npy``
``[N_train * 19, s, s, 1, 1]`` (frame k and frame k + 1, ``NHWTC``) and, per test trajectory,
``test/inputs.npy`` / ``test/label.npy`` ``[N_test, 19, s, s, 1, 1]`` (frames 0..18 and 1..19;
``src/utils.py`` rolls out 10 steps from frame 9). This writes the same files from
``datasets.pde.generators.generate_navier_stokes`` (FNO's forcing and initial field amplitude;
MindFlow's case is nu = 1e-5, solved at 256^2 and kept on every 4th point as FNO did):

    python examples/mindflow/operators/navier_stokes/fno2d/prepare_data.py   # 1000 + 200
    python examples/mindflow/operators/navier_stokes/fno2d/prepare_data.py \\
        --config-file-path ./configs/fno2d_tiny.yaml --n-train 4 --n-test 2 --nu 1e-3 \\
        --solve-resolution 16 --dt 0.02

``--out-dir`` (default ``./navier_stokes_fno2d_train_out``, train.py's) becomes the working
directory, so a relative ``data.root_dir`` is under it; a relative ``--config-file-path`` is
looked up in the working directory, then next to this script. MindFlow's snake_case flags
(``--config_file_path``, ``--n_train`` ...) still work.
"""

import os

import numpy as np

from diffsci.datasets.pde.generators import generate_navier_stokes
from diffsci.mindflow.utils import load_yaml_config
from diffsci.scripts import ArgumentParser, default_out_dir, enter_out_dir

N_TIME = 20  # frames t = 0, 1, ..., 19 (src/utils.py reads frames up to 19)


def prepare(config, n_train, n_test, nu=1e-5, solve_resolution=256, dt=1e-3, seed=0, progress=True):
    """Generate ``n_train + n_test`` trajectories and write the four files; returns their
    paths (nothing is generated when ``root_dir/train`` exists, as MindFlow's create_npy)."""
    s = config["model"]["input_resolution"]
    root = config["data"]["root_dir"]
    paths = [
        os.path.join(root, split, f"{name}.npy")
        for split in ("train", "test")
        for name in ("inputs", "label")
    ]
    if os.path.exists(os.path.join(root, "train")):
        return paths
    if solve_resolution % s:
        raise ValueError(
            f"prepare_data: solve_resolution {solve_resolution} must be a multiple of the "
            f"config's input_resolution {s}"
        )
    w = generate_navier_stokes(
        n_train + n_test,
        resolution=solve_resolution,
        subsample=solve_resolution // s,
        nu=nu,
        t_final=float(N_TIME - 1),
        n_time=N_TIME,
        dt=dt,
        scale=2 * 7**3,
        seed=seed,
        progress=progress,
    )["tensor"].astype(np.float32)[..., None, None]  # [N, 20, s, s, 1, 1]
    train, test = w[:n_train], w[n_train:]
    arrays = (
        train[:, :-1].reshape(-1, s, s, 1, 1),  # frame k      [N_train * 19, s, s, 1, 1]
        train[:, 1:].reshape(-1, s, s, 1, 1),  # frame k + 1
        test[:, :-1],  # [N_test, 19, s, s, 1, 1]
        test[:, 1:],
    )
    for path, array in zip(paths, arrays, strict=True):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        np.save(path, array)
    return paths


if __name__ == "__main__":
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config-file-path", default="./configs/fno2d.yaml")
    parser.add_argument("--n-train", type=int, default=1000)
    parser.add_argument("--n-test", type=int, default=200)
    parser.add_argument("--nu", type=float, default=1e-5)
    parser.add_argument("--solve-resolution", type=int, default=256)
    parser.add_argument("--dt", type=float, default=1e-3, help="the solver's step")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--out-dir",
        default=default_out_dir("navier_stokes_fno2d_train"),
        help="the working directory of the run: the config's relative paths are taken from it",
    )
    args = parser.parse_args()
    enter_out_dir(args, __file__)
    prepare(
        load_yaml_config(args.config_file_path),
        args.n_train,
        args.n_test,
        args.nu,
        args.solve_resolution,
        args.dt,
        args.seed,
    )
