"""Fourier neural operators: ``FNOBlocks``, ``FNO1D``, ``FNO2D``, ``FNO3D``.

Implements the architecture of Li et al., "Fourier Neural Operator for Parametric Partial
Differential Equations", ICLR 2021 (arXiv 2010.08895), section 4 and figure 2: a lifting ``P``
(pointwise, the input channels plus the grid coordinates to ``hidden_channels``), ``n_layers``
Fourier layers ``v <- act(K v + W v)`` (eq. 2: ``K`` the spectral convolution, ``W`` a
pointwise linear map) and a projection ``Q`` (pointwise MLP to ``out_channels``).

Names, constructor arguments, defaults and parameter names are MindFlow's
(``mindflow/cell/neural_operators/fno.py``): ``_lifting.{0,1}.weight``,
``_fno_blocks.{i}._convs._w_re...``, ``_fno_blocks.{i}._fno_skips.weight``,
``_projection.{0,2}.weight``; all bias-free, as there. Differences, each on purpose:

- the spectral convolution uses the FFT (:mod:`.spectral_conv`), so a model is not tied to
  ``resolutions``: it evaluates on any grid that holds ``n_modes`` (built at 256 points, it
  runs at 1024), and the positional embedding (MindFlow's ``get_grid_*d``: ``linspace(0, 1,
  n)`` per axis) is generated for the grid of each input;
- ``fno_compute_dtype`` defaults to float32 (MindFlow: float16, which it recommends for
  Ascend only; float32 is its recommendation for GPUs, and CPUs have no fast float16 matmul).
  Parameters are float32, or float64 where the matching compute dtype is float64;
- the whole network runs channels first (the Fourier layers' layout; the lifting and the
  projection are :class:`ChannelDense`, ``nn.Dense``'s parameters applied to axis 1), so only
  the input's and output's few channels are transposed, never the hidden ones;
- ``recompute=True`` (beyond MindFlow) recomputes each Fourier layer's activations in the
  backward pass (``Cell.recompute``, i.e. ``core.recompute``) to cut the peak memory of
  training and long rollouts.
"""


from diffsci import core
from diffsci.core import nn, ops

from ...utils.check_func import check_param_type
from ..activation import get_activation
from .spectral_conv import (
    SpectralConv1d,
    SpectralConv2d,
    SpectralConv3d,
    as_dim_list,
    check_compute_dtype,
    check_modes_fit,
    param_dtype_for,
)

__all__ = ["FNO", "FNO1D", "FNO2D", "FNO3D", "FNOBlocks", "grid_embedding"]

_SPECTRAL = {1: SpectralConv1d, 2: SpectralConv2d, 3: SpectralConv3d}


class _Lambda(nn.Cell):
    """A parameter-free callable (a core op) as a Cell, so it can sit in a SequentialCell."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def construct(self, x):
        return self.fn(x)


def activation_cell(act, name, where):
    """``act`` as a Cell: a name (``get_activation``; ``'identity'`` as in MindFlow's FNO), a
    Cell, or a callable."""
    if isinstance(act, str):
        return nn.Identity() if act == "identity" else get_activation(act)
    if isinstance(act, nn.Cell):
        return act
    if callable(act):
        return _Lambda(act)
    raise TypeError(f"{where}: {name} must be a name, a Cell or a callable, got {act!r}")


def _pointwise_conv_class(base):
    """A ``kernel_size=1`` convolution computed as a channel contraction.

    Same arguments, parameters and parameter names as ``base`` (nn.Conv1d/2d/3d, so MindFlow
    checkpoints map); the forward is one einsum over the channel axis instead of a general
    convolution, which is an order of magnitude faster for 1x1 kernels.
    """

    class PointwiseConv(base):
        def __init__(
            self,
            in_channels,
            out_channels,
            has_bias=False,
            weight_init="HeUniform",
            dtype=core.float32,
        ):
            super().__init__(
                in_channels,
                out_channels,
                1,
                has_bias=has_bias,
                weight_init=weight_init,
                dtype=dtype,
            )

        def construct(self, x):
            nd = self._nd
            if x.ndim < nd + 1 or x.shape[-nd - 1] != self.in_channels:
                raise ValueError(
                    f"{type(self).__name__}: input of shape {tuple(x.shape)} is not [..., C_in="
                    f"{self.in_channels}, {nd} spatial axes]"
                )
            w = ops.reshape(self.weight, (self.out_channels, self.in_channels))  # [C_out, C_in]
            s = "xyz"[:nd]
            y = ops.einsum(f"...i{s},oi->...o{s}", x, w)  # [..., C_out, *spatial]
            if self.bias is not None:
                y = y + ops.reshape(self.bias, (self.out_channels,) + (1,) * nd)
            return y

    PointwiseConv.__name__ = PointwiseConv.__qualname__ = f"Pointwise{base.__name__}"
    return PointwiseConv


class ChannelDense(nn.Dense):
    """MindFlow's dense layer (``nn.Dense``: the same arguments and ``weight [out, in]``,
    ``bias [out]``) applied to the channel axis 1 of ``[batch, in_channels, *grid]``: the
    lifting and projection of the FNO in its Fourier layers' channels-first layout, as one
    ``[out, in] @ [batch, in, n_1 * ... * n_d]`` product, so the hidden channels are never
    transposed (a transposed [batch, *grid, hidden] view costs a strided copy before each GEMM,
    forward and backward).

    Inputs ``[batch, in_channels, *grid]``; outputs ``[batch, out_channels, *grid]``.
    """

    def construct(self, x):
        if x.ndim < 2 or x.shape[1] != self.in_channels:
            raise ValueError(
                f"{type(self).__name__}: input of shape {tuple(x.shape)} is not [batch, "
                f"in_channels={self.in_channels}, *grid] (channels first)"
            )
        b, grid = x.shape[0], tuple(x.shape[2:])
        y = ops.matmul(self.weight, ops.reshape(x, (b, self.in_channels, -1)))  # [B, out, S]
        if self.bias is not None:
            y = y + ops.reshape(self.bias, (self.out_channels, 1))
        if self.activation is not None:
            y = self.activation(y)
        return ops.reshape(y, (b, self.out_channels, *grid))


PointwiseConv1d = _pointwise_conv_class(nn.Conv1d)
PointwiseConv2d = _pointwise_conv_class(nn.Conv2d)
PointwiseConv3d = _pointwise_conv_class(nn.Conv3d)
_POINTWISE = {1: PointwiseConv1d, 2: PointwiseConv2d, 3: PointwiseConv3d}


def grid_embedding(sizes, dtype=core.float32):
    """MindFlow's positional embedding (``mindflow.core.math.get_grid_{1,2,3}d``) for a grid
    of ``sizes``: ``linspace(0, 1, n)`` along each axis, as a Tensor ``[1, *sizes, d]``
    (channel ``k`` is the coordinate along spatial axis ``k``)."""
    from ...core.math import get_grid_1d, get_grid_2d, get_grid_3d

    grid = (get_grid_1d, get_grid_2d, get_grid_3d)[len(sizes) - 1](tuple(sizes))
    return core.tensor(grid, dtype=dtype)


class FNOBlocks(nn.Cell):
    r"""One Fourier layer of the FNO (Li et al. 2021, eq. 2): ``act(K x + W x)`` (``+ x`` with
    ``add_residual``), ``K`` the spectral convolution, ``W`` a bias-free 1x1 convolution.

    Args:
        in_channels: channels in, a positive int.
        out_channels: channels out, a positive int (equal to ``in_channels`` with
            ``add_residual``).
        n_modes: modes kept per spatial axis, an int or a list with one int per axis.
        resolutions: the grid, an int or a list (its length, 1 to 3, is the dimension).
        act: activation, a name, a Cell or a callable. Default ``'gelu'``.
        add_residual: add the input to the output. Default False.
        dft_compute_dtype: dtype of the spectral convolution. Default float32.
        fno_compute_dtype: dtype of the skip convolution ``W``. Default float32 (MindFlow:
            float16, see the module docstring).
        recompute: recompute this block's activations in the backward pass (beyond MindFlow).

    Inputs ``x``: ``[batch, in_channels, *grid]`` (channels first, any grid that holds
    ``n_modes``). Outputs ``[batch, out_channels, *grid]``.
    """

    def __init__(
        self,
        in_channels,
        out_channels,
        n_modes,
        resolutions,
        act="gelu",
        add_residual=False,
        dft_compute_dtype=core.float32,
        fno_compute_dtype=core.float32,
        recompute=False,
    ):
        super().__init__()
        where = "FNOBlocks"
        check_param_type(in_channels, f"{where}: in_channels", int, bool)
        check_param_type(out_channels, f"{where}: out_channels", int, bool)
        check_param_type(add_residual, f"{where}: add_residual", bool)
        self.in_channels, self.out_channels = in_channels, out_channels
        if isinstance(resolutions, int) and not isinstance(resolutions, bool):
            resolutions = [resolutions]
        if not isinstance(resolutions, (list, tuple)) or not 1 <= len(resolutions) <= 3:
            raise ValueError(
                f"{where}: resolutions must be an int or a list of 1 to 3 ints (one per spatial "
                f"axis), got {resolutions!r}"
            )
        d = len(resolutions)
        self.resolutions = as_dim_list(resolutions, d, "resolutions", where)
        if isinstance(n_modes, (list, tuple)) and len(n_modes) != d:
            raise ValueError(
                f"{where}: n_modes {list(n_modes)} and resolutions {self.resolutions} must have "
                f"the same length (one entry per spatial axis)"
            )
        self.n_modes = as_dim_list(n_modes, d, "n_modes", where)
        if add_residual and in_channels != out_channels:
            raise ValueError(
                f"{where}: add_residual needs in_channels == out_channels, got {in_channels} "
                f"and {out_channels}"
            )
        self.act = activation_cell(act, "act", where)
        self.add_residual = add_residual
        self.dft_compute_dtype = check_compute_dtype(dft_compute_dtype, "dft_compute_dtype", where)
        self.fno_compute_dtype = check_compute_dtype(fno_compute_dtype, "fno_compute_dtype", where)
        self._convs = _SPECTRAL[d](
            in_channels, out_channels, self.n_modes, self.resolutions, self.dft_compute_dtype
        )
        self._fno_skips = _POINTWISE[d](
            in_channels,
            out_channels,
            has_bias=False,
            weight_init="HeUniform",
            dtype=param_dtype_for(self.fno_compute_dtype),
        ).to_float(self.fno_compute_dtype)
        if recompute:
            self.recompute()

    def construct(self, x):
        y = self.act(self._convs(x) + self._fno_skips(x))  # [B, C_out, *grid]
        return y + x if self.add_residual else y


class FNO(nn.Cell):
    r"""The Fourier neural operator (Li et al. 2021): lifting, ``n_layers`` Fourier layers,
    projection; the base of :class:`FNO1D`, :class:`FNO2D`, :class:`FNO3D`.

    Args:
        in_channels: channels of the input function, a positive int.
        out_channels: channels of the output function, a positive int.
        n_modes: Fourier modes kept per spatial axis, an int or one int per axis.
        resolutions: the training grid, an int or one int per axis (1 to 3 axes; the length
            is the dimension). Inputs may come on other grids that hold ``n_modes``.
        hidden_channels: width of the Fourier layers. Default 20.
        lifting_channels: with a value, the lifting is two bias-free dense layers through
            this many channels (no activation between them, as in MindFlow); None (default):
            one dense layer.
        projection_channels: hidden width of the projection MLP; 0 or None: one dense layer.
            Default 128.
        n_layers: number of Fourier layers. Default 4.
        data_format: ``'channels_last'`` (default; ``[batch, *grid, channels]``) or
            ``'channels_first'`` (``[batch, channels, *grid]``), for inputs and outputs.
        fnoblock_act: activation of the Fourier layers (name, Cell or callable; also
            ``'identity'``). Default ``'gelu'``.
        mlp_act: activation inside the projection MLP. Default ``'gelu'``.
        add_residual: residual connection around each Fourier layer. Default False.
        positional_embedding: append the grid coordinates (``linspace(0, 1, n)`` per axis) to
            the input channels. Default True.
        dft_compute_dtype: dtype of the spectral convolutions. Default float32.
        fno_compute_dtype: dtype of the dense layers and the skip convolutions. Default
            float32 (MindFlow: float16; see the module docstring).
        recompute: recompute each Fourier layer in the backward pass (beyond MindFlow).

    Inputs ``x``: ``[batch, *grid, in_channels]`` (channels_last) or ``[batch, in_channels,
    *grid]`` (channels_first). Outputs: ``[batch, *grid, out_channels]`` or ``[batch,
    out_channels, *grid]``.
    """

    def __init__(
        self,
        in_channels,
        out_channels,
        n_modes,
        resolutions,
        hidden_channels=20,
        lifting_channels=None,
        projection_channels=128,
        n_layers=4,
        data_format="channels_last",
        fnoblock_act="gelu",
        mlp_act="gelu",
        add_residual=False,
        positional_embedding=True,
        dft_compute_dtype=core.float32,
        fno_compute_dtype=core.float32,
        recompute=False,
    ):
        super().__init__()
        where = type(self).__name__
        for value, name in (
            (in_channels, "in_channels"),
            (out_channels, "out_channels"),
            (hidden_channels, "hidden_channels"),
            (n_layers, "n_layers"),
        ):
            check_param_type(value, f"{where}: {name}", int, bool)
            if value < (0 if name == "n_layers" else 1):
                raise ValueError(f"{where}: {name} must be positive, got {value}")
        for value, name in (
            (lifting_channels, "lifting_channels"),
            (projection_channels, "projection_channels"),
        ):
            check_param_type(value, f"{where}: {name}", (int, type(None)), bool)
        check_param_type(data_format, f"{where}: data_format", str)
        if data_format not in ("channels_last", "channels_first"):
            raise ValueError(
                f"{where}: data_format must be 'channels_last' or 'channels_first', got "
                f"{data_format!r}"
            )
        check_param_type(positional_embedding, f"{where}: positional_embedding", bool)
        check_param_type(add_residual, f"{where}: add_residual", bool)
        if isinstance(resolutions, int) and not isinstance(resolutions, bool):
            resolutions = [resolutions]
        if not isinstance(resolutions, (list, tuple)) or not 1 <= len(resolutions) <= 3:
            raise ValueError(
                f"{where}: resolutions must be an int or a list of 1 to 3 ints (one per spatial "
                f"axis), got {resolutions!r}"
            )
        d = len(resolutions)
        if isinstance(n_modes, (list, tuple)) and len(n_modes) != d:
            raise ValueError(
                f"{where}: n_modes {list(n_modes)} and resolutions {list(resolutions)} must have "
                f"the same length (one entry per spatial axis)"
            )
        self.n_dim = d
        self.resolutions = as_dim_list(resolutions, d, "resolutions", where)
        self.n_modes = as_dim_list(n_modes, d, "n_modes", where)
        check_modes_fit(self.n_modes, self.resolutions, where)
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.hidden_channels = hidden_channels
        self.lifting_channels = lifting_channels
        self.projection_channels = projection_channels
        self.n_layers = n_layers
        self.data_format = data_format
        self.add_residual = add_residual
        self.positional_embedding = positional_embedding
        self.dft_compute_dtype = check_compute_dtype(dft_compute_dtype, "dft_compute_dtype", where)
        self.fno_compute_dtype = check_compute_dtype(fno_compute_dtype, "fno_compute_dtype", where)
        self.fnoblock_act = activation_cell(fnoblock_act, "fnoblock_act", where)
        self.mlp_act = activation_cell(mlp_act, "mlp_act", where)
        fdt = self.fno_compute_dtype
        pdt = param_dtype_for(fdt)
        c_in = in_channels + (d if positional_embedding else 0)

        def dense(i, o):  # nn.Dense's parameters, applied to [B, C, *grid] (channels first)
            return ChannelDense(i, o, has_bias=False, dtype=pdt).to_float(fdt)

        if lifting_channels:
            self._lifting = nn.SequentialCell(
                [dense(c_in, lifting_channels), dense(lifting_channels, hidden_channels)]
            )
        else:
            self._lifting = nn.SequentialCell(dense(c_in, hidden_channels))
        self._fno_blocks = nn.SequentialCell()
        for _ in range(n_layers):
            self._fno_blocks.append(
                FNOBlocks(
                    hidden_channels,
                    hidden_channels,
                    n_modes=self.n_modes,
                    resolutions=self.resolutions,
                    act=self.fnoblock_act,
                    add_residual=add_residual,
                    dft_compute_dtype=self.dft_compute_dtype,
                    fno_compute_dtype=fdt,
                    recompute=recompute,
                )
            )
        if projection_channels:
            self._projection = nn.SequentialCell(
                [
                    dense(hidden_channels, projection_channels),
                    self.mlp_act,
                    dense(projection_channels, out_channels),
                ]
            )
        else:
            self._projection = nn.SequentialCell(dense(hidden_channels, out_channels))
        # [B, *grid, C] <-> [B, C, *grid]
        self._input_perm = (0, d + 1, *range(1, d + 1))
        self._output_perm = (0, *range(2, d + 2), 1)

    def _check_input(self, x):
        where, d = type(self).__name__, self.n_dim
        c = self.in_channels
        last = self.data_format == "channels_last"
        layout = f"[batch, *grid ({d} axes), {c}]" if last else f"[batch, {c}, *grid ({d} axes)]"
        if x.ndim != d + 2:
            raise ValueError(
                f"{where}: input of shape {tuple(x.shape)} has {x.ndim} axes; expected "
                f"{layout} with data_format={self.data_format!r}"
            )
        got = x.shape[-1] if last else x.shape[1]
        if got != c:
            other = x.shape[1] if last else x.shape[-1]
            hint = ""
            if other == c:
                flip = "channels_first" if last else "channels_last"
                hint = (
                    f"; it looks like {flip} data: pass data_format={flip!r} or move the "
                    "channel axis"
                )
            raise ValueError(
                f"{where}: input of shape {tuple(x.shape)} does not match in_channels={c} "
                f"with data_format={self.data_format!r} (expected {layout}){hint}"
            )
        grid = tuple(x.shape[1:-1]) if last else tuple(x.shape[2:])
        check_modes_fit(self.n_modes, grid, where, what="input grid")
        return grid

    def construct(self, x):
        grid = self._check_input(x)
        # everything runs channels first, the Fourier layers' layout: only the input's and the
        # output's few channels are transposed, never the hidden ones
        if self.data_format == "channels_last":
            x = ops.transpose(x, self._input_perm)  # [B, C_in, *grid]
        if self.positional_embedding:
            pos = ops.transpose(grid_embedding(grid, x.dtype), self._input_perm)  # [1, d, *grid]
            pos = ops.broadcast_to(pos, (x.shape[0], self.n_dim, *grid))
            x = ops.concat((x, pos), axis=1)  # [B, C_in + d, *grid]
        x = self._lifting(x)  # [B, hidden, *grid]
        x = self._fno_blocks(x)  # [B, hidden, *grid]
        x = self._projection(x)  # [B, C_out, *grid]
        if self.data_format == "channels_last":
            x = ops.transpose(x, self._output_perm)  # [B, *grid, C_out]
        return x

    def extend_repr(self):
        return (
            f"in_channels={self.in_channels}, out_channels={self.out_channels}, "
            f"n_modes={self.n_modes}, resolutions={self.resolutions}, "
            f"hidden_channels={self.hidden_channels}, n_layers={self.n_layers}, "
            f"data_format={self.data_format!r}"
        )


class _FNOnD(FNO):
    """An FNO whose dimension is fixed: an int ``n_modes``/``resolutions`` is repeated."""

    _ndim = 0

    def __init__(
        self,
        in_channels,
        out_channels,
        n_modes,
        resolutions,
        hidden_channels=20,
        lifting_channels=None,
        projection_channels=128,
        n_layers=4,
        data_format="channels_last",
        fnoblock_act="gelu",
        mlp_act="gelu",
        add_residual=False,
        positional_embedding=True,
        dft_compute_dtype=core.float32,
        fno_compute_dtype=core.float32,
        recompute=False,
    ):
        name, d = type(self).__name__, self._ndim
        n_modes = as_dim_list(n_modes, d, "n_modes", name)
        resolutions = as_dim_list(resolutions, d, "resolutions", name)
        super().__init__(
            in_channels,
            out_channels,
            n_modes,
            resolutions,
            hidden_channels,
            lifting_channels,
            projection_channels,
            n_layers,
            data_format,
            fnoblock_act,
            mlp_act,
            add_residual,
            positional_embedding,
            dft_compute_dtype,
            fno_compute_dtype,
            recompute,
        )


class FNO1D(_FNOnD):
    r"""The 1D Fourier neural operator (Li et al. 2021); arguments as :class:`FNO`.

    Inputs ``[batch, n, in_channels]`` (channels_last) -> ``[batch, n, out_channels]``, for
    any ``n`` with ``n // 2 + 1 >= n_modes``.

    Example (Burgers, FNO paper section 5.1)::

        net = FNO1D(in_channels=1, out_channels=1, n_modes=16, resolutions=1024,
                    hidden_channels=64, projection_channels=256)
        u1 = net(u0)  # [batch, 1024, 1] -> [batch, 1024, 1]; also at 256 or 4096 points
    """

    _ndim = 1


class FNO2D(_FNOnD):
    r"""The 2D Fourier neural operator (Li et al. 2021); arguments as :class:`FNO`.

    Inputs ``[batch, n_1, n_2, in_channels]`` (channels_last) -> ``[batch, n_1, n_2,
    out_channels]``, with ``n_1 >= 2 * n_modes[0]`` and ``n_2 // 2 + 1 >= n_modes[1]``.
    """

    _ndim = 2


class FNO3D(_FNOnD):
    r"""The 3D Fourier neural operator (Li et al. 2021); arguments as :class:`FNO`.

    Inputs ``[batch, n_1, n_2, n_3, in_channels]`` (channels_last) -> ``[batch, n_1, n_2, n_3,
    out_channels]``; used for space-time (2D + time) problems in the paper (section 5.3).
    """

    _ndim = 3
