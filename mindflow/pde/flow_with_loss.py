"""Data-driven flow problems (MindFlow's ``mindflow/pde/flow_with_loss.py``).

A problem pairs a model with a loss: :class:`SteadyFlowWithLoss` maps inputs to labels in one
call (Darcy: coefficient -> pressure); :class:`UnsteadyFlowWithLoss` rolls a model that maps
the last ``t_in`` frames to the next one forward ``t_out`` times (the FNO-2D recurrent
Navier-Stokes setting, Li et al., ICLR 2021, Section 5.3), feeding each prediction back in.

Both ``get_loss`` methods are plain functions of core tensors, so they can be differentiated
and compiled (``core.value_and_grad``, ``core.jit``) inside a training step, as MindFlow's
``@jit_class`` versions are.
"""

from diffsci.core import nn, ops

from ..core import get_loss_metric
from ..utils.check_func import check_param_type

__all__ = ["FlowWithLoss", "SteadyFlowWithLoss", "UnsteadyFlowWithLoss"]

_DATA_FORMATS = ("NTCHW", "NHWTC")


class FlowWithLoss:
    """Base class of data-driven flow problems.

    Args:
        model: the ``core.nn.Cell`` to train or test.
        loss_fn: a loss Cell ``loss(prediction, labels) -> scalar``, or a name for
            :func:`mindflow.core.get_loss_metric` (``"mse"``, ``"l1"``, ``"rmse"``...).
            Default ``"mse"``.

    Raises:
        TypeError: ``model`` or the loss is not a Cell.
        NotImplementedError: :meth:`get_loss` is not overridden.
    """

    def __init__(self, model, loss_fn="mse"):
        self.model = model
        self.loss_fn = get_loss_metric(loss_fn) if isinstance(loss_fn, str) else loss_fn
        check_param_type(model, "model", data_type=nn.Cell, exclude_type=bool)
        check_param_type(self.loss_fn, "loss_fn", data_type=nn.Cell, exclude_type=bool)

    def get_loss(self, inputs, labels):
        """The loss of the model on ``inputs`` against ``labels`` (a 0-d Tensor)."""
        raise NotImplementedError(f"{type(self).__name__}.get_loss is not implemented")


class SteadyFlowWithLoss(FlowWithLoss):
    """A steady problem: ``loss_fn(model(inputs), labels)``.

    Args:
        model: the ``core.nn.Cell``.
        loss_fn: a loss Cell or a name (default ``"mse"``).
    """

    def get_loss(self, inputs, labels):
        """Args:
            inputs: the model's input batch, e.g. ``[N, H, W, C_in]``.
            labels: the targets, the shape of ``model(inputs)``.

        Returns:
            the loss, a 0-d Tensor.
        """
        return self.loss_fn(self.model(inputs), labels)


class UnsteadyFlowWithLoss(FlowWithLoss):
    """An unsteady problem: the model maps ``t_in`` frames to the next frame, rolled forward
    ``t_out`` times.

    Data formats (MindFlow's): ``"NTCHW"`` (``[N, T, C, x1, x2, ...]``, the model takes
    ``[N, T*C, x1, ...]`` and returns ``[N, C, x1, ...]``) and ``"NHWTC"``
    (``[N, x1, x2, ..., T, C]``, the model takes ``[N, x1, ..., T*C]`` and returns
    ``[N, x1, ..., C]``). Frames are flattened into channels time-major: channel
    ``t * C + c`` is frame t's channel c.

    Args:
        model: the ``core.nn.Cell`` of one step.
        t_in: frames the model sees. Default 1.
        t_out: steps rolled forward. Default 1.
        loss_fn: a loss Cell or a name (default ``"mse"``).
        data_format: ``"NTCHW"`` (default) or ``"NHWTC"``.

    Raises:
        TypeError: ``t_in``/``t_out`` not ints.
        ValueError: ``t_in``/``t_out`` < 1 or an unknown ``data_format``.
    """

    def __init__(self, model, t_in=1, t_out=1, loss_fn="mse", data_format="NTCHW"):
        super().__init__(model, loss_fn)
        check_param_type(t_in, "t_in", data_type=int, exclude_type=bool)
        check_param_type(t_out, "t_out", data_type=int, exclude_type=bool)
        if t_in < 1 or t_out < 1:
            raise ValueError(
                f"UnsteadyFlowWithLoss: t_in and t_out must be >= 1, got {t_in}, {t_out}"
            )
        if data_format not in _DATA_FORMATS:
            raise ValueError(
                f"UnsteadyFlowWithLoss: data_format must be one of {_DATA_FORMATS}, "
                f"got {data_format!r}"
            )
        self.t_in = t_in
        self.t_out = t_out
        self.data_format = data_format

    def _time_axis(self, ndim):
        return 1 if self.data_format == "NTCHW" else ndim - 2

    def _check(self, inputs):
        if inputs.ndim < 3:
            raise ValueError(
                f"UnsteadyFlowWithLoss: inputs must be [N, T, C, x1, ...] (NTCHW) or "
                f"[N, x1, ..., T, C] (NHWTC), got shape {tuple(inputs.shape)}"
            )
        t = inputs.shape[self._time_axis(inputs.ndim)]
        if t != self.t_in:
            raise ValueError(
                f"UnsteadyFlowWithLoss({self.data_format}): inputs of shape "
                f"{tuple(inputs.shape)} have {t} frames on the time axis, but t_in={self.t_in}"
            )

    def step(self, inputs):
        """Roll the model forward ``t_out`` steps.

        Args:
            inputs: ``[N, t_in, C, x1, ...]`` (NTCHW) or ``[N, x1, ..., t_in, C]`` (NHWTC).

        Returns:
            the predictions ``[N, t_out, C, x1, ...]`` or ``[N, x1, ..., t_out, C]``.
        """
        self._check(inputs)
        axis = self._time_axis(inputs.ndim)
        preds = []
        for _ in range(self.t_out):
            pred = self.model(self._flatten(inputs))  # [N, C, x...] or [N, x..., C]
            pred = pred.expand_dims(axis)  # one frame: [N, 1, C, x...] or [N, x..., 1, C]
            preds.append(pred)
            if self.t_in > 1:  # drop the oldest frame, append the prediction
                rest = inputs[:, 1:] if axis == 1 else inputs[..., 1:, :]
                inputs = ops.concat([rest, pred], axis=axis)
            else:
                inputs = pred
        return preds[0] if len(preds) == 1 else ops.concat(preds, axis=axis)

    def get_loss(self, inputs, labels):
        """The loss on the last rolled-out frame (MindFlow's choice; ``mindflow.train`` has
        losses over every frame).

        Args:
            inputs: ``[N, t_in, C, x1, ...]`` or ``[N, x1, ..., t_in, C]``.
            labels: ``[N, t_out, C, x1, ...]`` or ``[N, x1, ..., t_out, C]``.

        Returns:
            ``loss_fn(last predicted frame, last label frame)``.
        """
        pred = self.step(inputs)
        if tuple(pred.shape) != tuple(labels.shape):
            raise ValueError(
                f"UnsteadyFlowWithLoss: the rollout has shape {tuple(pred.shape)} but labels "
                f"have shape {tuple(labels.shape)} (t_out={self.t_out}, "
                f"data_format={self.data_format!r})"
            )
        if self.data_format == "NTCHW":
            return self.loss_fn(pred[:, -1], labels[:, -1])
        return self.loss_fn(pred[..., -1, :], labels[..., -1, :])

    def _flatten(self, inputs):
        """``[N, T, C, x...] -> [N, T*C, x...]`` or ``[N, x..., T, C] -> [N, x..., T*C]``."""
        n_space = inputs.ndim - 3
        if self.data_format == "NHWTC":
            return ops.reshape(inputs, (*inputs.shape[:-2], -1))  # [N, x..., T*C]
        return ops.reshape(inputs, (inputs.shape[0], -1, *inputs.shape[3 : 3 + n_space]))
