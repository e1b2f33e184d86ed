"""Evaluation and plots of MindFlow's 2-D Taylor-Green case (its ``src/utils.py``; MindFlow
writes an .avi of every time with OpenCV, here one PNG of three times)."""

import collections
import os

import numpy as np

from diffsci.core import Tensor
from diffsci.core import dtype as mstype

TaylorGreenError = collections.namedtuple(
    "TaylorGreenError", ["l2_error", "l2_error_u", "l2_error_v", "l2_error_p"]
)


def _model_dtype(model):
    params = model.trainable_params()
    return params[0].dtype if params else mstype.float32


def _get_prediction(model, inputs, batch_size):
    """``model`` on ``inputs [..., 3]`` in batches, as float64 ``[M, 3]``."""
    flat = inputs.reshape(-1, inputs.shape[-1])
    dtype = _model_dtype(model)
    out = [
        model(Tensor(flat[i : i + batch_size], dtype)).asnumpy()
        for i in range(0, len(flat), batch_size)
    ]
    return np.concatenate(out).astype(np.float64)


def _calculate_error(label, prediction):
    error = label - prediction

    def rel(k):
        sl = (Ellipsis, k) if k is not None else (Ellipsis,)
        return np.sqrt(np.sum(error[sl] ** 2)) / np.sqrt(np.sum(label[sl] ** 2))

    return TaylorGreenError(rel(None), rel(0), rel(1), rel(2))


def calculate_l2_error(model, inputs, label, config):
    """Print and return the relative L2 errors of ``u, v, p`` and of all three together."""
    prediction = _get_prediction(model, inputs, config["data"]["test"]["batch_size"])
    errors = _calculate_error(label.reshape(-1, 3).astype(np.float64), prediction)
    print(
        "    l2_error, U: ",
        errors.l2_error_u,
        ", V: ",
        errors.l2_error_v,
        ", P: ",
        errors.l2_error_p,
        ", Total: ",
        errors.l2_error,
    )
    print("=" * 98)
    return errors


def visual(model, epoch, input_data, label, path="./videos"):
    """Label, prediction and |error| of ``u, v, p`` at the first, middle and last time of
    ``input_data [n_t, n_x, n_y, 3]`` (``FlowField_<epoch>.png``) and the relative L2 errors
    at every time (``TimeError_<epoch>.png``); returns the two paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(path, exist_ok=True)
    n_t = input_data.shape[0]
    predict = _get_prediction(model, input_data, 8192).reshape(label.shape)
    times = sorted({0, n_t // 2, n_t - 1})
    fig, axes = plt.subplots(len(times), 9, figsize=(22, 2.4 * len(times)), squeeze=False)
    for r, t in enumerate(times):
        for j, name in enumerate("UVP"):
            lab, pre = label[t, :, :, j], predict[t, :, :, j]
            lo, hi = np.percentile(label[..., j], [0.5, 99.5])
            for i, (kind, field) in enumerate(
                (("label", lab), ("predict", pre), ("error", np.abs(pre - lab)))
            ):
                lims = (0.0, None) if kind == "error" else (lo, hi)
                ax = axes[r, 3 * j + i]
                im = ax.imshow(field.T, origin="lower", cmap="jet", vmin=lims[0], vmax=lims[1])
                ax.set_title(f"{name} {kind}, t={input_data[t, 0, 0, 2]:.2f}", fontsize=7)
                ax.set_xticks([])
                ax.set_yticks([])
                fig.colorbar(im, ax=ax, fraction=0.046)
    fig.tight_layout()
    paths = [os.path.join(path, f"FlowField_{epoch}.png")]
    fig.savefig(paths[-1], dpi=80)
    plt.close(fig)

    lab = label.reshape(n_t, -1, 3)
    err = lab - predict.reshape(n_t, -1, 3)
    t_axis = input_data[:, 0, 0, 2]
    fig, ax = plt.subplots()
    for k, style, name in ((0, "b--", "U"), (1, "g-.", "V")):
        rel = np.linalg.norm(err[:, :, k], axis=1) / np.linalg.norm(lab[:, :, k], axis=1)
        ax.plot(t_axis, rel, style, label=f"l2_error of {name}")
    total = np.linalg.norm(err[:, :, :2], axis=(1, 2)) / np.linalg.norm(lab[:, :, :2], axis=(1, 2))
    ax.plot(t_axis, total, "r-", label="l2_error of All")
    ax.set(xlabel="time", ylabel="l2_error")
    ax.legend()
    paths.append(os.path.join(path, f"TimeError_{epoch}.png"))
    fig.savefig(paths[-1])
    plt.close(fig)
    return paths
