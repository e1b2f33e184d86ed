"""MindFlow's ``physics_driven/navier_stokes/taylor_green/train.py`` on the core engine: the
script's code with its imports changed (``mindspore`` -> ``core``, ``mindflow`` -> ours) and
its command line (below). One fix: MindFlow's ``train()`` reads
``./configs/taylor_green_2D.yaml`` whatever ``--config_file_path`` says (whose default names
the Burgers yaml); here ``train`` takes the path, defaulting to that yaml.

Trains ``MultiScaleFCSequential`` (one scale, inputs centred and scaled to [-1, 1]) with Adam
through ``core.data_sink``, prints the relative L2 errors of u, v, p every
``eval_interval_epochs`` and writes the flow fields and the error over time into
``<out-dir>/videos/``.

    python examples/mindflow/pinn/taylor_green/train.py       # MindFlow's full run
    python examples/mindflow/pinn/taylor_green/train.py \\
        --config-file-path configs/taylor_green_2D_tiny.yaml

``taylor_green_pinn.py`` is the recommended path (float64, Adam then L-BFGS; forward and
inverse).

Command line: kebab-case flags, MindFlow's spellings accepted (``diffsci.scripts``);
``--out-dir`` (default ``./taylor_green_pinn_train_out``) is the run's working directory, so every relative
path of the config lands in it (``diffsci.scripts.enter_out_dir``).
"""

import os
import time

import numpy as np
from src import (
    NavierStokes2D,
    calculate_l2_error,
    create_test_dataset,
    create_training_dataset,
    visual,
)

import diffsci.core as mindspore
from diffsci.core import context, jit, load_checkpoint, load_param_into_net, nn, ops, set_seed
from diffsci.mindflow.cell import MultiScaleFCSequential
from diffsci.mindflow.utils import load_yaml_config, log_timer, print_log
from diffsci.scripts import ArgumentParser, default_out_dir, enter_out_dir

set_seed(123456)
np.random.seed(123456)


def parse_args():
    """Parse input args"""
    parser = ArgumentParser(description="navier stokes train")
    parser.add_argument(
        "--mode",
        type=str,
        default="GRAPH",
        choices=["GRAPH", "PYNATIVE"],
        help="Running in GRAPH_MODE OR PYNATIVE_MODE",
    )
    parser.add_argument(
        "--save-graphs",
        type=bool,
        default=False,
        choices=[True, False],
        help="Whether to save intermediate compilation graphs",
    )
    parser.add_argument("--save-graphs-path", type=str, default="./graphs")
    parser.add_argument(
        "--device-target",
        type=str,
        default="CPU",
        choices=["CPU", "GPU", "Ascend"],
        help="The target device to run, support 'Ascend', 'GPU', 'CPU'",
    )
    parser.add_argument("--device-id", type=int, default=0, help="ID of the target device")
    parser.add_argument("--config-file-path", type=str, default="./configs/taylor_green_2D.yaml")
    parser.add_argument(
        "--out-dir",
        default=default_out_dir("taylor_green_pinn_train"),
        help="the working directory of the run: the config's relative paths are taken from it",
    )
    return parser.parse_args()


@log_timer
def train(config_file_path="./configs/taylor_green_2D.yaml"):
    """Train and evaluate the network"""
    # load configurations
    config = load_yaml_config(config_file_path)

    # create training dataset
    taylor_dataset = create_training_dataset(config)
    train_dataset = taylor_dataset.create_dataset(
        batch_size=config["data"]["train"]["batch_size"],
        shuffle=True,
        prebatched_data=True,
        drop_remainder=True,
    )

    print(train_dataset.get_col_names)

    # create test dataset
    inputs, label = create_test_dataset(config)

    coord_min = np.array(config["geometry"]["coord_min"] + [config["geometry"]["time_min"]]).astype(
        np.float32
    )
    coord_max = np.array(config["geometry"]["coord_max"] + [config["geometry"]["time_max"]]).astype(
        np.float32
    )
    input_center = list(0.5 * (coord_max + coord_min))
    input_scale = list(2.0 / (coord_max - coord_min))

    model = MultiScaleFCSequential(
        in_channels=config["model"]["in_channels"],
        out_channels=config["model"]["out_channels"],
        layers=config["model"]["layers"],
        neurons=config["model"]["neurons"],
        residual=config["model"]["residual"],
        act=config["model"]["activation"],
        num_scales=1,
        input_scale=input_scale,
        input_center=input_center,
    )

    if config["model"]["load_ckpt"]:
        param_dict = load_checkpoint(config["summary"]["ckpt_dir"])
        load_param_into_net(model, param_dict)

    params = model.trainable_params()
    optimizer = nn.Adam(params, learning_rate=config["optimizer"]["learning_rate"])
    problem = NavierStokes2D(model, re=config["summary"]["Re"])

    if use_ascend:
        from diffsci.core.amp import DynamicLossScaler, all_finite, auto_mixed_precision

        loss_scaler = DynamicLossScaler(1024, 2, 100)
        auto_mixed_precision(model, "O3")

    def forward_fn(pde_data, ic_data, bc_data):
        loss = problem.get_loss(pde_data, ic_data, bc_data)
        if use_ascend:
            loss = loss_scaler.scale(loss)
        return loss

    grad_fn = ops.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=False)

    @jit
    def train_step(pde_data, ic_data, bc_data):
        loss, grads = grad_fn(pde_data, ic_data, bc_data)
        if use_ascend:
            loss = loss_scaler.unscale(loss)
            is_finite = all_finite(grads)
            if is_finite:
                grads = loss_scaler.unscale(grads)
                loss = ops.depend(loss, optimizer(grads))
            loss_scaler.adjust(is_finite)
        else:
            loss = ops.depend(loss, optimizer(grads))
        return loss

    epochs = config["data"]["train"]["epochs"]
    steps_per_epochs = train_dataset.get_dataset_size()
    print_log(f"number of steps_per_epochs: {steps_per_epochs}")
    sink_process = mindspore.data_sink(train_step, train_dataset, sink_size=1)
    errors = None
    for epoch in range(1, 1 + epochs):
        # train
        local_time_beg = time.time()
        model.set_train(True)
        for _ in range(steps_per_epochs):
            step_train_loss = sink_process()
        local_time_end = time.time()
        epoch_seconds = local_time_end - local_time_beg
        step_seconds = (epoch_seconds / steps_per_epochs) * 1000
        print_log(
            f"epoch: {epoch} train loss: {step_train_loss} "
            f"epoch time: {epoch_seconds:5.3f}s step time: {step_seconds:5.3f}ms"
        )
        model.set_train(False)
        if epoch % config["summary"]["eval_interval_epochs"] == 0:
            errors = calculate_l2_error(model, inputs, label, config)

    visual(model, epochs, inputs, label)
    return errors


if __name__ == "__main__":
    print("pid:", os.getpid())
    args = parse_args()
    enter_out_dir(args, __file__)
    context.set_context(
        mode=context.GRAPH_MODE if args.mode.upper().startswith("GRAPH") else context.PYNATIVE_MODE,
        save_graphs=args.save_graphs,
        save_graphs_path=args.save_graphs_path,
        device_target=args.device_target,
        device_id=args.device_id,
    )
    print(f"Running in {args.mode.upper()} mode, using device id: {args.device_id}.")
    use_ascend = context.get_context(attr_key="device_target") == "Ascend"
    train(args.config_file_path)
