"""The network of MindFlow's Poisson cases (its ``src/model.py``): four Dense layers of widths
8b, 4b, 2b, b with the activation ``x exp(-x^2 / (2 e))``, then a weight-normalized linear
output (Salimans & Kingma 2016)."""

import math

import diffsci.core as ms
from diffsci.core import Parameter, nn, ops
from diffsci.core import numpy as ms_np
from diffsci.core.common.initializer import HeUniform, Normal, initializer


class ExpDeacy(nn.Cell):
    """``x exp(-x^2 / (2 e))`` elementwise (MindFlow's spelling)."""

    def __init__(self):
        super().__init__()
        self.factor = ms.Tensor(-1 / (2 * math.e))
        self.exp = ops.Exp()
        self.square = ops.Square()

    def construct(self, x):
        return x * self.exp(self.factor * self.square(x))


class LinearWN(nn.Cell):
    """``x @ (g^2 w / rms_row(w)) + b``: a linear layer ``[..., in] -> [..., out]`` whose weight
    ``[in, out]`` is normalized by the root mean square of each row."""

    def __init__(
        self, in_features, out_features, weight_init="normal", g_init="normal", bias_init="zeros"
    ):
        super().__init__()
        self.weight = Parameter(
            initializer(weight_init, [in_features, out_features]), name="weight"
        )
        self.sqrt_g = Parameter(initializer(g_init, out_features), name="sqrt_g")
        self.bias = Parameter(initializer(bias_init, out_features), name="bias")

    def construct(self, x):
        weight = self.weight
        weight = weight / ms_np.sqrt(ms_np.mean(weight * weight, axis=-1, keepdims=True))
        weight = self.sqrt_g * self.sqrt_g * weight
        return ms_np.matmul(x, weight) + self.bias


def create_model(input_size, base_neurons):
    """``[N, input_size] -> [N, 1]``."""
    return nn.SequentialCell(
        nn.Dense(input_size, 8 * base_neurons, HeUniform(), activation=ExpDeacy()),
        nn.Dense(8 * base_neurons, 4 * base_neurons, HeUniform(), activation=ExpDeacy()),
        nn.Dense(4 * base_neurons, 2 * base_neurons, HeUniform(), activation=ExpDeacy()),
        nn.Dense(2 * base_neurons, base_neurons, HeUniform(), activation=ExpDeacy()),
        LinearWN(base_neurons, 1, HeUniform(), Normal(sigma=0.1)),
    )
