"""train process (MindElec's ``time_domain_maxwell/train.py`` with its imports changed to our
packages: ``mindspore`` -> ``core``, ``mindelec`` -> ``mindelec``; its ``config.json`` is
``config.yaml`` here, the same keys and values).

What MindSpore has and the engine does not need is noted where it was: float16 sub-networks
(``to_float``: training here is float32), ``DynamicLossScaleManager`` (no loss scaling in
float32), ``ModelCheckpoint``/``CheckpointConfig`` (``core.train.CheckpointCallback``), the
``GRAPH_MODE`` context (``core.set_context(mode=core.GRAPH_MODE)``: the Solver compiles the
step with ``core.jit``). ``time_domain_maxwell.py`` is the script with the FDTD comparison,
plots and a ``--tiny`` mode; this one is the port, run tiny by the tests through
``train(config)``.
"""

import math
import os
import sys
import time

import numpy as np
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from src import (
    Maxwell2DMur,
    MultiStepLR,
    create_random_dataset,
    get_test_data,
)

import diffsci.core as ms
from diffsci.core import (
    Tensor,
    context,
    nn,
    set_seed,
)
from diffsci.core.nn.init import HeUniform
from diffsci.core.train import CheckpointCallback
from diffsci.mindelec.architecture import MTLWeightedLossCell, MultiScaleFCCell
from diffsci.mindelec.common import L2
from diffsci.mindelec.loss import Constraints
from diffsci.mindelec.solver import EvalCallback, LossAndTimeMonitor, Solver


def load_config():
    """load config"""
    with open(os.path.join(os.path.dirname(__file__), "config.yaml")) as f:
        config = yaml.safe_load(f)
    return config


def train(config, sampling=None):
    """training process; ``sampling``: optional ``(src, no_src, bc)`` sampling dicts (the
    tests' tiny sizes). Returns the solver and the loss monitor."""
    if config["random_sampling"]:
        elec_train_dataset = create_random_dataset(config, *(sampling or ()))
    else:
        raise NotImplementedError("existing-data training: use create_random_dataset")
    train_dataset = elec_train_dataset.create_dataset(
        batch_size=config["train_batch_size"],
        shuffle=True,
        prebatched_data=True,
        drop_remainder=True,
    )
    steps_per_epoch = len(elec_train_dataset)
    print("check train dataset size: ", len(elec_train_dataset))

    # define network
    model = MultiScaleFCCell(
        config["input_size"],
        config["output_size"],
        layers=config["layers"],
        neurons=config["neurons"],
        input_scale=config["input_scale"],
        residual=config["residual"],
        weight_init=HeUniform(negative_slope=math.sqrt(5)),
        act="sin",
        num_scales=config["num_scales"],
        amp_factor=config["amp_factor"],
        scale_factor=config["scale_factor"],
    )

    # MindElec: model.cell_list.to_float(ms.float16) -- float32 here
    mtl = MTLWeightedLossCell(num_losses=elec_train_dataset.num_dataset)

    # define problem
    train_prob = {}
    for dataset in elec_train_dataset.all_datasets:
        train_prob[dataset.name] = Maxwell2DMur(
            model=model,
            config=config,
            domain_name=dataset.name + "_points",
            ic_name=dataset.name + "_points",
            bc_name=dataset.name + "_points",
        )
    print("check problem: ", train_prob)
    train_constraints = Constraints(elec_train_dataset, train_prob)

    # optimizer
    params = model.trainable_params() + mtl.trainable_params()
    lr_scheduler = MultiStepLR(
        config["lr"],
        config["milestones"],
        config["lr_gamma"],
        steps_per_epoch,
        config["train_epoch"],
    )
    lr = lr_scheduler.get_lr()
    optim = nn.Adam(params, learning_rate=Tensor(lr))

    if config["load_ckpt"]:
        param_dict = ms.load_checkpoint(config["load_ckpt_path"])
        ms.load_param_into_net(model, param_dict)
        ms.load_param_into_net(mtl, param_dict)
    # define solver
    solver = Solver(
        model,
        optimizer=optim,
        mode="PINNs",
        train_constraints=train_constraints,
        test_constraints=None,
        metrics={"l2": L2(), "distance": nn.MAELoss()},
        loss_fn="smooth_l1_loss",
        mtl_weighted_cell=mtl,
    )

    loss_time_callback = LossAndTimeMonitor(steps_per_epoch)
    callbacks = [loss_time_callback]
    if config.get("train_with_eval", False):
        inputs, label = get_test_data(config["test_data_path"])
        predict_callback = EvalCallback(
            model,
            inputs.reshape(-1, 3),
            label.reshape(-1, 3),
            config["output_scale"],
            config["predict_interval"],
            config["test_batch_size"],
            ["Ex", "Ey", "Hz"],
        )
        callbacks += [predict_callback]
    if config["save_ckpt"]:
        ckpoint_cb = CheckpointCallback(
            every_n_steps=10,
            keep_max=2,
            prefix="ckpt_maxwell_frq1e9",
            directory=config["save_ckpt_path"],
        )
        callbacks += [ckpoint_cb]

    solver.train(config["train_epoch"], train_dataset, callbacks=callbacks, dataset_sink_mode=True)
    return solver, loss_time_callback


if __name__ == "__main__":
    set_seed(123456)
    np.random.seed(123456)
    context.set_context(mode=context.GRAPH_MODE, device_target="CPU")
    print("pid:", os.getpid())
    configs = load_config()
    print(f"check config: {configs}")
    time_beg = time.time()
    train(configs)
    print(f"End-to-End total time: {time.time() - time_beg} s")
