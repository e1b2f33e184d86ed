"""Normalization layers: LayerNorm, GroupNorm, BatchNorm1d/2d/3d (MindSpore 2.x arguments).

Parameter names follow MindSpore: ``gamma`` (scale), ``beta`` (shift), and for batch norm the
non-trainable ``moving_mean`` / ``moving_variance``.
"""

from ... import dtypes as _dt
from ... import ops
from ..cell import Cell
from ._common import make_parameter

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "GroupNorm", "LayerNorm"]


class LayerNorm(Cell):
    """Layer normalization (Ba et al. 2016) over the trailing axes.

    ``y = (x - mean) / sqrt(var + epsilon) * gamma + beta`` with mean and (biased) variance over
    the axes ``begin_norm_axis..-1``; ``gamma``/``beta`` have shape ``normalized_shape`` and
    broadcast over the axes from ``begin_params_axis``.

    Args:
        normalized_shape: int or tuple: the trailing shape of ``gamma``/``beta``.
        begin_norm_axis: first axis of the statistics (default -1).
        begin_params_axis: first axis covered by ``gamma``/``beta`` (default -1).
        gamma_init, beta_init: initializers ('ones', 'zeros').
        epsilon: MindSpore's default 1e-7.
        dtype: parameter dtype.

    Shapes:
        x ``[..., *normalized_shape]`` -> same shape.
    """

    def __init__(
        self,
        normalized_shape,
        begin_norm_axis=-1,
        begin_params_axis=-1,
        gamma_init="ones",
        beta_init="zeros",
        epsilon=1e-7,
        dtype=_dt.float32,
    ):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        if not isinstance(normalized_shape, (tuple, list)):
            raise TypeError(
                f"LayerNorm: normalized_shape must be an int, tuple or list, got {normalized_shape!r}"
            )
        self.normalized_shape = tuple(int(d) for d in normalized_shape)
        self.begin_norm_axis, self.begin_params_axis = int(begin_norm_axis), int(begin_params_axis)
        self.epsilon = float(epsilon)
        self.gamma = make_parameter(gamma_init, self.normalized_shape, dtype, "gamma")
        self.beta = make_parameter(beta_init, self.normalized_shape, dtype, "beta")

    def construct(self, x):
        nd = x.ndim
        norm_axis = self.begin_norm_axis % nd if -nd <= self.begin_norm_axis < nd else None
        params_axis = self.begin_params_axis % nd if -nd <= self.begin_params_axis < nd else None
        if (
            norm_axis is None
            or params_axis is None
            or tuple(x.shape[params_axis:]) != self.normalized_shape
        ):
            raise ValueError(
                f"LayerNorm: input of shape {tuple(x.shape)} does not match normalized_shape "
                f"{self.normalized_shape} with begin_norm_axis={self.begin_norm_axis}, "
                f"begin_params_axis={self.begin_params_axis}"
            )
        if norm_axis == params_axis:
            return ops.layer_norm(x, self.normalized_shape, self.gamma, self.beta, self.epsilon)
        stats_shape = tuple(x.shape[norm_axis:])
        y = ops.layer_norm(x, stats_shape, None, None, self.epsilon)
        return y * self.gamma + self.beta

    def extend_repr(self):
        return (
            f"normalized_shape={self.normalized_shape}, begin_norm_axis={self.begin_norm_axis}, "
            f"begin_params_axis={self.begin_params_axis}, epsilon={self.epsilon}"
        )


class GroupNorm(Cell):
    """Group normalization (Wu & He 2018): statistics per example over groups of channels.

    Args:
        num_groups: number of groups; ``num_channels`` must be divisible by it.
        num_channels: C.
        eps: added to the variance (1e-5).
        affine: False freezes ``gamma``/``beta`` (they stay ones/zeros unless loaded).
        gamma_init, beta_init, dtype: as LayerNorm.

    Shapes:
        x ``[N, C, *]`` -> same shape.
    """

    def __init__(
        self,
        num_groups,
        num_channels,
        eps=1e-5,
        affine=True,
        gamma_init="ones",
        beta_init="zeros",
        dtype=_dt.float32,
    ):
        super().__init__()
        self.num_groups, self.num_channels = int(num_groups), int(num_channels)
        if self.num_groups < 1 or self.num_channels % self.num_groups:
            raise ValueError(
                f"GroupNorm: num_channels={num_channels} must be divisible by num_groups={num_groups}"
            )
        self.eps, self.affine = float(eps), bool(affine)
        self.gamma = make_parameter(
            gamma_init, (self.num_channels,), dtype, "gamma", requires_grad=self.affine
        )
        self.beta = make_parameter(
            beta_init, (self.num_channels,), dtype, "beta", requires_grad=self.affine
        )

    def construct(self, x):
        if x.ndim < 2 or x.shape[1] != self.num_channels:
            raise ValueError(
                f"GroupNorm: input of shape {tuple(x.shape)} is not [N, C={self.num_channels}, *]"
            )
        return ops.group_norm(x, self.num_groups, self.gamma, self.beta, self.eps)

    def extend_repr(self):
        return f"num_groups={self.num_groups}, num_channels={self.num_channels}, eps={self.eps}, affine={self.affine}"


class _BatchNorm(Cell):
    """Batch normalization (Ioffe & Szegedy 2015) over every axis except the channel axis 1.

    In training mode (or with ``use_batch_statistics=True``) the batch mean and biased variance
    normalize ``x``; in training mode the moving statistics are then updated in place with
    MindSpore's convention ``moving = momentum * moving + (1 - momentum) * batch`` (the moving
    variance takes the unbiased batch variance). In evaluation mode (or with
    ``use_batch_statistics=False``) the moving statistics normalize ``x``.

    Args:
        num_features: C.
        eps: added to the variance (1e-5).
        momentum: weight of the old moving statistics (0.9).
        affine: False freezes ``gamma``/``beta``.
        gamma_init, beta_init, moving_mean_init, moving_var_init: initializers.
        use_batch_statistics: None (follow the training mode), True or False.
        dtype: parameter dtype.
    """

    _ranks = ()
    _shape_text = ""

    def __init__(
        self,
        num_features,
        eps=1e-5,
        momentum=0.9,
        affine=True,
        gamma_init="ones",
        beta_init="zeros",
        moving_mean_init="zeros",
        moving_var_init="ones",
        use_batch_statistics=None,
        data_format="NCHW",
        dtype=_dt.float32,
    ):
        super().__init__()
        name = type(self).__name__
        if not 0.0 <= momentum <= 1.0:
            raise ValueError(f"{name}: momentum must be in [0, 1], got {momentum}")
        if use_batch_statistics not in (None, True, False):
            raise ValueError(
                f"{name}: use_batch_statistics must be None, True or False, got {use_batch_statistics!r}"
            )
        if data_format not in ("NCHW", "NCDHW"):
            raise ValueError(
                f"{name}: only channels-first data_format is supported, got {data_format!r}"
            )
        self.num_features = int(num_features)
        self.eps, self.momentum, self.affine = float(eps), float(momentum), bool(affine)
        self.use_batch_statistics = use_batch_statistics
        c = (self.num_features,)
        self.moving_mean = make_parameter(
            moving_mean_init, c, dtype, "moving_mean", requires_grad=False
        )
        self.moving_variance = make_parameter(
            moving_var_init, c, dtype, "moving_variance", requires_grad=False
        )
        self.gamma = make_parameter(gamma_init, c, dtype, "gamma", requires_grad=self.affine)
        self.beta = make_parameter(beta_init, c, dtype, "beta", requires_grad=self.affine)

    def construct(self, x):
        if x.ndim not in self._ranks or x.shape[1] != self.num_features:
            raise ValueError(
                f"{type(self).__name__}: input of shape {tuple(x.shape)} is not "
                f"{self._shape_text} with C={self.num_features}"
            )
        use_batch = (
            self.training if self.use_batch_statistics is None else self.use_batch_statistics
        )
        if not use_batch:
            return ops.batch_norm(
                x,
                self.moving_mean,
                self.moving_variance,
                self.gamma,
                self.beta,
                training=False,
                eps=self.eps,
            )
        if not self.training:  # use_batch_statistics=True in evaluation: no update
            out, _, _ = ops.batch_norm(
                x, None, None, self.gamma, self.beta, training=True, eps=self.eps
            )
            return out
        # ops.batch_norm's momentum weighs the batch (PyTorch's convention): 1 - MindSpore's
        out, new_mean, new_var = ops.batch_norm(
            x,
            self.moving_mean,
            self.moving_variance,
            self.gamma,
            self.beta,
            training=True,
            momentum=1.0 - self.momentum,
            eps=self.eps,
        )
        self.moving_mean.set_data(new_mean)
        self.moving_variance.set_data(new_var)
        return out

    def extend_repr(self):
        return f"num_features={self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}"


class BatchNorm1d(_BatchNorm):
    """Batch normalization of ``[N, C]`` or ``[N, C, L]`` inputs (statistics per channel C)."""

    _ranks = (2, 3)
    _shape_text = "[N, C] or [N, C, L]"


class BatchNorm2d(_BatchNorm):
    """Batch normalization of ``[N, C, H, W]`` inputs (statistics per channel C)."""

    _ranks = (4,)
    _shape_text = "[N, C, H, W]"


class BatchNorm3d(_BatchNorm):
    """Batch normalization of ``[N, C, D, H, W]`` inputs (statistics per channel C)."""

    _ranks = (5,)
    _shape_text = "[N, C, D, H, W]"
