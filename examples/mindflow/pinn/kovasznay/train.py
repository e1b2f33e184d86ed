"""MindFlow's ``physics_driven/navier_stokes/kovasznay/train.py`` on the core engine: the
script's code with its imports changed (``mindspore`` -> ``core``, ``mindflow`` -> ours) and
its command line (below).

Trains ``FCSequential`` (tanh, residual) with Adam on the Kovasznay problem of ``src/model.py``,
plots u, v, p into ``<out-dir>/images/`` and prints the relative L2 errors on 10000 test points.

    python examples/mindflow/pinn/kovasznay/train.py       # MindFlow's full run
    python examples/mindflow/pinn/kovasznay/train.py \\
        --config-file-path configs/kovasznay_cfg_tiny.yaml

``kovasznay_pinn.py`` is the recommended path (float64, Adam then L-BFGS, exact-solution plot).

Command line: kebab-case flags, MindFlow's spellings accepted (``diffsci.scripts``);
``--out-dir`` (default ``./kovasznay_pinn_train_out``) is the run's working directory, so every relative
path of the config lands in it (``diffsci.scripts.enter_out_dir``).
"""

import os
import time

import numpy as np
from src import Kovasznay, calculate_l2_error, create_dataset, visual

from diffsci.core import (
    context,
    jit,
    load_checkpoint,
    load_param_into_net,
    nn,
    ops,
    save_checkpoint,
    set_seed,
)
from diffsci.core import dtype as mstype
from diffsci.mindflow.cell import FCSequential
from diffsci.mindflow.utils import load_yaml_config
from diffsci.scripts import ArgumentParser, default_out_dir, enter_out_dir

set_seed(0)
np.random.seed(0)


def parse_args():
    """Parse arguments."""
    parser = ArgumentParser(description="kovasznay flow train")
    parser.add_argument(
        "--mode",
        type=str,
        default="GRAPH",
        choices=["GRAPH", "PYNATIVE"],
        help="Running in GRAPH_MODE OR PYNATIVE_MODE",
    )
    parser.add_argument(
        "--device-target",
        type=str,
        default="CPU",
        choices=["CPU", "GPU", "Ascend"],
        help="The target device to run, support 'Ascend', 'GPU', 'CPU'",
    )
    parser.add_argument("--device-id", type=int, default=0, help="ID of the target device")
    parser.add_argument(
        "--config-file-path",
        type=str,
        default="./configs//kovasznay_cfg.yaml",
        help="config file path",
    )
    parser.add_argument(
        "--out-dir",
        default=default_out_dir("kovasznay_pinn_train"),
        help="the working directory of the run: the config's relative paths are taken from it",
    )
    intput_args = parser.parse_args()

    return intput_args


def train(file_cfg):
    """Train and evaluate the network"""
    # load configurations
    config = load_yaml_config(file_cfg)

    # create dataset
    ds_train = create_dataset(config)

    # create network
    model = FCSequential(
        in_channels=config["model"]["in_channels"],
        out_channels=config["model"]["out_channels"],
        layers=config["model"]["layers"],
        neurons=config["model"]["neurons"],
        residual=config["model"]["residual"],
        act="tanh",
    )

    use_ascend = context.get_context(attr_key="device_target") == "Ascend"
    if use_ascend:
        model.to_float(mstype.float16)
    else:
        model.to_float(mstype.float32)

    if config["load_ckpt"]:
        param_dict = load_checkpoint(config["load_ckpt_path"])
        load_param_into_net(model, param_dict)

    params = model.trainable_params()
    optimizer = nn.Adam(params, learning_rate=config["optimizer"]["initial_lr"])

    # create the problem
    problem = Kovasznay(model)
    grad_fn = ops.value_and_grad(problem.get_loss, None, optimizer.parameters, has_aux=False)

    @jit
    def train_step(pde_data, bc_data):
        loss, grads = grad_fn(pde_data, bc_data)
        loss = ops.depend(loss, optimizer(grads))
        return loss

    def train_epoch(model, dataset, i_epoch):
        model.set_train()
        n_step = dataset.get_dataset_size()
        for i_step, (pde_data, bc_data) in enumerate(dataset):
            local_time_beg = time.time()
            loss = train_step(pde_data, bc_data)

            if i_step % 50 == 0:
                print(
                    f"\repoch: {i_epoch}, loss: {float(loss):>f}, time elapsed: {(time.time() - local_time_beg) * 1000:.1f}ms [{i_step + 1}/{n_step}]"
                )

    time_beg = time.time()
    for i_epoch in range(config["epochs"]):
        train_epoch(model, ds_train, i_epoch)
    print(f"End-to-End total time: {time.time() - time_beg} s")
    if config["save_ckpt"]:
        save_checkpoint(model, config["save_ckpt_path"])

    visual(model, config, resolution=config["visual_resolution"])

    n_samps = 10000  # Number of test samples
    ds_test = create_dataset(config, n_samps)
    return calculate_l2_error(problem, model, ds_test)


if __name__ == "__main__":
    print("pid:", os.getpid())
    args = parse_args()
    enter_out_dir(args, __file__)
    context.set_context(
        mode=context.GRAPH_MODE if args.mode.upper().startswith("GRAPH") else context.PYNATIVE_MODE,
        device_target=args.device_target,
        device_id=args.device_id,
    )
    print(f"Running in {args.mode.upper()} mode, using device id: {args.device_id}.")
    train(args.config_file_path)
