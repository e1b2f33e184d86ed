# Copyright 2023 Huawei Technologies Co., Ltd
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
# http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
# ==============================================================================
"""dataset

MindFlow's burgers/kno1d ``src/dataset.py``: ``create_training_dataset`` is MindFlow's as
written. ``create_npy``, which in MindFlow cuts its downloaded 8192-point files
(``inputs.npy``, ``label.npy``: the FNO paper's Burgers data, nu = 0.1, u(., 0) -> u(., 1)) into
train and test sets at every ``step``-th point, here writes the same four files from
``datasets``' Burgers generator at s = 8192 / ``step`` points when they are missing, atomically,
in MindFlow's shapes: inputs ``[N, s, 1]``, labels ``[N, s]``. (MindFlow's version opens the
output paths with ``os.fdopen``, which takes a file descriptor, so it cannot write them.)
"""
# ruff: noqa
# fmt: off
import os
import numpy as np

from diffsci.core.atomic import atomic_path
from diffsci.datasets.pde.generators import generate_burgers
from diffsci.mindflow.data import Dataset, ExistedDataConfig
from diffsci.mindflow.utils import print_log

EPS = 1e-8


def _save(path, array):
    with atomic_path(path, suffix=".npy") as tmp:
        np.save(tmp, array)


def create_npy(config, step=32):
    '''create inputs and label data for trainset and testset'''
    data_dir = config["root_dir"]
    train_size = config["train"]["num_samples"]
    test_size = config["test"]["num_samples"]
    s = 2 ** 13 // config["step"]

    train_path = os.path.join(data_dir, "train")
    test_path = os.path.join(data_dir, "test")
    names = [os.path.join(p, f) for p in (train_path, test_path) for f in ("inputs.npy", "label.npy")]
    if all(os.path.exists(n) for n in names):
        print_log("Data preparation finished")
        return
    os.makedirs(train_path, exist_ok=True)
    os.makedirs(test_path, exist_ok=True)

    u = generate_burgers(train_size + test_size, resolution=s, nu=0.1, t_final=1.0, n_time=2,
                         seed=0, progress=False)["tensor"].astype(np.float32)  # [N, 2, s]
    inputs, label = u[:, 0], u[:, 1]
    x_train = inputs[:train_size].reshape(train_size, s, 1)
    y_train = label[:train_size]
    x_test = inputs[-test_size:].reshape(test_size, s, 1)
    y_test = label[-test_size:]
    for name, array in zip(names, (x_train, y_train, x_test, y_test)):
        _save(name, array)


def create_training_dataset(config, shuffle=True, drop_remainder=False, is_train=True):
    """create dataset"""
    create_npy(config)
    data_dir = config["root_dir"]
    if is_train:
        train_path = os.path.join(data_dir, "train")
        input_path = os.path.join(train_path, "inputs.npy")
        label_path = os.path.join(train_path, "label.npy")
    else:
        test_path = os.path.join(data_dir, "test")
        input_path = os.path.join(test_path, "inputs.npy")
        label_path = os.path.join(test_path, "label.npy")
    print_log('input_path: ', np.load(input_path).shape)
    print_log('label_path: ', np.load(label_path).shape)
    burgers_1d_data = ExistedDataConfig(name=config["name"],
                                        data_dir=[input_path, label_path],
                                        columns_list=["inputs", "label"],
                                        data_format="npy")
    dataset = Dataset(existed_data_list=[burgers_1d_data])
    data_loader = dataset.create_dataset(batch_size=config["batch_size"],
                                         shuffle=shuffle,
                                         drop_remainder=drop_remainder)
    return data_loader
