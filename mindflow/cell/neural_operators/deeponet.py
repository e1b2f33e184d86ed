"""Deep operator networks: DeepONet (Lu, Jin, Pang, Zhang & Karniadakis 2021, "Learning
nonlinear operators via DeepONet based on the universal approximation theorem of operators",
Nature Machine Intelligence 3, 218-229) and its multiple-input form MIONet (Jin, Meng & Lu 2022,
"MIONet: Learning multiple-input operators via tensor product", SIAM J. Sci. Comput. 44(6)).

MindFlow has no DeepONet; the API follows DeepXDE's (``DeepONetCartesianProd``,
``MIONetCartesianProd``) with MindFlow's conventions (layer lists, activation names, ``dtype``).
For branch inputs ``u_1 [B, m_1], ..., u_r [B, m_r]`` (each function sampled at its sensors) and
trunk input ``y`` (query points), the operator value is

    G(u_1, ..., u_r)(y) = sum_k  b^1_k(u_1) * ... * b^r_k(u_r) * t_k(y)  +  b_0

(one branch: the unstacked DeepONet of Lu et al., eq. 2; several: MIONet's low-rank tensor
product, eq. 3.3). With ``num_outputs = K > 1`` the ``p * K`` features of every net are split into
``K`` groups of ``p`` ("split both" of DeepXDE) and each output has its own bias.
"""

import itertools

from diffsci import core
from diffsci.core import Parameter, nn, ops

from ..activation import get_activation

__all__ = ["DeepONet"]


def _act(activation, where):
    act = get_activation(activation) if isinstance(activation, str) else activation
    if act is not None and not callable(act):
        raise TypeError(f"{where}: activation must be a name, a Cell or a callable, got {act!r}")
    return act


class _MLP(nn.Cell):
    """Dense layers ``layers[0] -> ... -> layers[-1]`` with ``activation`` between them (and after
    the last one when ``last_activation``): ``[..., layers[0]] -> [..., layers[-1]]``."""

    def __init__(self, layers, activation, last_activation, weight_init, dtype, where):
        super().__init__()
        if (
            not isinstance(layers, (list, tuple))
            or len(layers) < 2
            or not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in layers)
        ):
            raise ValueError(
                f"{where}: layer sizes must be a list of at least two positive ints "
                f"[in, hidden..., out], got {layers!r}"
            )
        self.dense = nn.CellList(
            [
                nn.Dense(a, b, weight_init=weight_init, bias_init="zeros", dtype=dtype)
                for a, b in itertools.pairwise(layers)
            ]
        )
        self.act = activation
        self.last_activation = bool(last_activation)
        self.sizes = tuple(layers)

    def construct(self, x):
        n = len(self.dense)
        for i, layer in enumerate(self.dense):
            x = layer(x)  # [..., layers[i + 1]]
            if self.act is not None and (i < n - 1 or self.last_activation):
                x = self.act(x)
        return x


class DeepONet(nn.Cell):
    r"""DeepONet with one branch net, or MIONet with several (product of branch features).

    Args:
        branch_layers: sizes ``[m, hidden..., p * num_outputs]`` of the branch net (its last
            layer is linear), or a list of such lists for MIONet (one branch per input function,
            all ending in the same width), or a Cell (or list of Cells) mapping
            ``[B, m] -> [B, p * num_outputs]``.
        trunk_layers: sizes ``[d, hidden..., p * num_outputs]`` of the trunk net, or a Cell
            mapping ``[..., d] -> [..., p * num_outputs]``.
        activation: name, Cell or callable for both nets, or a dict
            ``{"branch": ..., "trunk": ...}``. Default ``'tanh'``.
        trunk_last_activation: apply the activation to the trunk's output features too
            (DeepXDE's DeepONet does). Default True.
        num_outputs: number of output components ``K``. Default 1.
        weight_init: initializer of the Dense weights. Default ``'xavier_normal'`` (Glorot,
            DeepXDE's usual choice); biases start at zero.
        dtype: parameters' dtype. Default float32.

    Inputs:
        ``*branch_inputs, trunk_input`` (or one tuple of them): ``u_i [B, m_i]`` and ``y [N, d]``
        (the same points for every function: the Cartesian product) or ``[B, N, d]`` (points per
        function).

    Outputs:
        ``[B, N]`` for ``num_outputs=1``, else ``[B, N, num_outputs]``.
    """

    def __init__(
        self,
        branch_layers,
        trunk_layers,
        activation="tanh",
        trunk_last_activation=True,
        num_outputs=1,
        weight_init="xavier_normal",
        dtype=core.float32,
    ):
        super().__init__()
        where = "DeepONet"
        if isinstance(num_outputs, bool) or not isinstance(num_outputs, int) or num_outputs < 1:
            raise ValueError(f"{where}: num_outputs must be a positive int, got {num_outputs!r}")
        if isinstance(activation, dict):
            unknown = set(activation) - {"branch", "trunk"}
            if unknown:
                raise ValueError(
                    f"{where}: an activation dict takes the keys 'branch' and 'trunk', got "
                    f"{sorted(unknown)}"
                )
            act_branch = _act(activation.get("branch"), where)
            act_trunk = _act(activation.get("trunk"), where)
        else:
            act_branch = act_trunk = _act(activation, where)

        multi = isinstance(branch_layers, (list, tuple)) and all(
            isinstance(b, (list, tuple, nn.Cell)) for b in branch_layers
        )
        specs = list(branch_layers) if multi else [branch_layers]
        branches = []
        for i, spec in enumerate(specs):
            if isinstance(spec, nn.Cell):
                branches.append(spec)
            else:
                branches.append(
                    _MLP(spec, act_branch, False, weight_init, dtype, f"{where}: branch {i}")
                )
        self.branches = nn.CellList(branches)
        self.trunk = (
            trunk_layers
            if isinstance(trunk_layers, nn.Cell)
            else _MLP(trunk_layers, act_trunk, trunk_last_activation, weight_init, dtype, where)
        )
        widths = [getattr(b, "sizes", (None,))[-1] for b in branches]
        widths.append(getattr(self.trunk, "sizes", (None,))[-1])
        known = {w for w in widths if w is not None}
        if len(known) > 1:
            raise ValueError(
                f"{where}: every branch and the trunk must end in the same width p * num_outputs; "
                f"got branch widths {widths[:-1]} and trunk width {widths[-1]}"
            )
        width = known.pop() if known else None
        if width is not None and width % num_outputs:
            raise ValueError(
                f"{where}: the output width {width} is not a multiple of num_outputs={num_outputs}"
            )
        self.num_outputs = num_outputs
        self.num_branches = len(branches)
        self.b = Parameter(ops.zeros((num_outputs,), dtype=dtype), name="b")

    def construct(self, *inputs):
        if len(inputs) == 1 and isinstance(inputs[0], (tuple, list)):
            inputs = tuple(inputs[0])
        where, r = "DeepONet", self.num_branches
        if len(inputs) != r + 1:
            raise ValueError(
                f"{where}: expected {r} branch input(s) and one trunk input, got {len(inputs)} "
                f"inputs"
            )
        *us, y = inputs
        feats = None
        for i, (net, u) in enumerate(zip(self.branches, us)):
            if u.ndim != 2:
                raise ValueError(
                    f"{where}: branch input {i} of shape {tuple(u.shape)} must be [B, m] "
                    f"(B functions sampled at m sensors)"
                )
            f = net(u)  # [B, p K]
            feats = f if feats is None else feats * f  # MIONet: elementwise product
        if y.ndim not in (2, 3):
            raise ValueError(
                f"{where}: trunk input of shape {tuple(y.shape)} must be [N, d] (shared points) "
                f"or [B, N, d] (points per function)"
            )
        t = self.trunk(y)  # [N, p K] or [B, N, p K]
        if t.shape[-1] != feats.shape[-1]:
            raise ValueError(
                f"{where}: branch features {tuple(feats.shape)} and trunk features "
                f"{tuple(t.shape)} differ in width"
            )
        k = self.num_outputs
        p = feats.shape[-1] // k
        feats = ops.reshape(feats, (feats.shape[0], k, p))  # [B, K, p]
        if y.ndim == 2:
            t = ops.reshape(t, (t.shape[0], k, p))  # [N, K, p]
            out = ops.einsum("bkp,nkp->bnk", feats, t)  # [B, N, K]
        else:
            if y.shape[0] != feats.shape[0]:
                raise ValueError(
                    f"{where}: trunk input {tuple(y.shape)} has {y.shape[0]} point sets for "
                    f"{feats.shape[0]} functions"
                )
            t = ops.reshape(t, (*t.shape[:2], k, p))  # [B, N, K, p]
            out = ops.einsum("bkp,bnkp->bnk", feats, t)  # [B, N, K]
        out = out + self.b  # [B, N, K]
        return out[..., 0] if k == 1 else out
