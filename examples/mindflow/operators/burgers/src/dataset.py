"""dataset

MindFlow's burgers/fno1d ``src/dataset.py``: ``create_training_dataset`` is MindFlow's as
written; ``create_npy``, which in MindFlow cuts its downloaded 8192-point file
(``train/inputs.npy``, ``train/label.npy``) into the train and test sets, here writes the same
four files from ``datasets``' Burgers generator (the FNO paper's data, nu = 0.1, u(., 0) ->
u(., 1)) when they are missing, atomically: ``{train,test}/{inputs,label}.npy [N, s, 1]``
with s = 8192 / ``step``, generated at ``s`` points (train.py's ``expand_dims(label, -2)``
needs the trailing channel axis on the test labels).
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


def create_npy(data_params, step=8):
    '''create inputs and label data for trainset and testset'''
    data_path = data_params["root_dir"]
    train_size = data_params["train"]["num_samples"]
    test_size = data_params["test"]["num_samples"]
    s = 2 ** 13 // data_params["step"]

    train_path = os.path.join(data_path, "train")
    test_path = os.path.join(data_path, "test")
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
    y_train = label[:train_size].reshape(train_size, s, 1)
    x_test = inputs[-test_size:].reshape(test_size, s, 1)
    y_test = label[-test_size:].reshape(test_size, s, 1)
    for name, array in zip(names, (x_train, y_train, x_test, y_test)):
        _save(name, array)


def create_training_dataset(data_params, model_params, shuffle=True, drop_remainder=True, is_train=True):
    """create dataset"""
    create_npy(data_params)
    data_path = data_params["root_dir"]
    if is_train:
        train_path = os.path.abspath(os.path.join(data_path, "train"))
        input_path = os.path.join(train_path, "inputs.npy")
        print_log('input_path: ', np.load(input_path).shape)
        label_path = os.path.join(train_path, "label.npy")
        print_log('label_path: ', np.load(label_path).shape)
    else:
        test_path = os.path.abspath(os.path.join(data_path, "test"))
        input_path = os.path.join(test_path, "inputs.npy")
        label_path = os.path.join(test_path, "label.npy")
    burgers_1d_data = ExistedDataConfig(name=data_params["name"],
                                        data_dir=[input_path, label_path],
                                        columns_list=["inputs", "label"],
                                        data_format="npy")
    dataset = Dataset(existed_data_list=[burgers_1d_data])
    data_loader = dataset.create_dataset(batch_size=data_params["batch_size"],
                                         shuffle=shuffle,
                                         drop_remainder=drop_remainder)

    operations = [lambda x, y: (x.reshape(-1, data_params["resolution"],
                                          data_params["t_in"], model_params["out_channels"]),
                                y.reshape(-1, data_params["resolution"],
                                          data_params["t_out"], model_params["out_channels"]))]
    data_loader = data_loader.map(operations, input_columns=["burgers1d_inputs", "burgers1d_label"])
    return data_loader
