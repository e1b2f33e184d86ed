"""MindElec's ``NetWithLoss`` and ``NetWithEval``: the loss of a network over every sub-dataset.

For each sub-dataset ``D`` (columns ``c_1..c_k`` of a merged batch), the network is evaluated
on its input column(s), ``Constraints`` gives the residual ``r_D = f_D(u, **columns)``
(``[N, k_D]``) and the loss term is ``L_D = loss_fn(r_D, 0)``. The total is ``sum_D L_D``, or
``MTLWeightedLossCell((L_D)_D)``, plus ``latent_reg * mean(z^2)`` with a latent vector.
"""

from diffsci import core
from diffsci.core import Parameter, Tensor, nn, ops

from .constraints import Constraints
from .losses import get_loss_metric

__all__ = ["NetWithEval", "NetWithLoss"]


def _as_tuple(x):
    return (x,) if isinstance(x, Tensor) else tuple(x)


def _check_type(value, name, types, where, allow_none=True):
    if value is None and allow_none:
        return
    if not isinstance(value, types):
        raise TypeError(f"{where}: {name} has the wrong type {type(value).__name__}")


def _loss_fns(loss, names):
    if isinstance(loss, dict):
        return {
            n: get_loss_metric(loss[n])
            if isinstance(loss.get(n), str)
            else loss.get(n) or get_loss_metric("l2")
            for n in names
        }
    fn = get_loss_metric(loss) if isinstance(loss, str) else loss
    return dict.fromkeys(names, fn)


def _input_map(dataset_input_map, constraints, where):
    if dataset_input_map is None:  # the first column of each sub-dataset is the network input
        return {n: [cols[0]] for n, cols in constraints.dataset_columns_map.items()}
    missing = sorted(set(constraints.dataset_columns_map) - set(dataset_input_map))
    if missing:
        raise ValueError(f"{where}: dataset_input_map has no entry for the sub-datasets {missing}")
    sizes = {len(v) for v in dataset_input_map.values()}
    if len(sizes) != 1:
        raise ValueError(f"{where}: every sub-dataset needs the same number of inputs, got {sizes}")
    return dataset_input_map


def check_field_count(out, problem, dataset_name, where):
    """Raise ValueError when the network's output fields (last axis of ``out``) do not match
    the fields the problem's equations are written for (``problem.output_names``)."""
    names = getattr(problem, "output_names", None)
    if names is None:
        return
    if out.ndim < 1 or out.shape[-1] != len(names):
        raise ValueError(
            f"{where}: the network gives {out.shape[-1] if out.ndim else 0} output fields "
            f"(shape {tuple(out.shape)}) but the equations of {type(problem).__name__} on the "
            f"sub-dataset {dataset_name!r} are written for {len(names)}: {list(names)}"
        )


class NetWithLoss(nn.Cell):
    """The training loss of a network under ``Constraints`` (MindElec's ``NetWithLoss``).

    Args:
        net_without_loss: the network, ``[N, d] -> [N, m]``.
        constraints: a :class:`Constraints`.
        loss: a name for ``get_loss_metric``, a loss Cell, or ``{sub-dataset: name or Cell}``.
            Default ``"l2"`` (mean squared residual).
        dataset_input_map: ``{sub-dataset: [input columns]}``; None: each sub-dataset's first
            column.
        mtl_weighted_cell: a ``MTLWeightedLossCell`` over the sub-datasets' terms, or None.
        latent_vector: a Parameter regularised by ``latent_reg * mean(z^2)``, or None.
        latent_reg: the regularisation weight. Default 0.01.

    Inputs: the merged batch's columns, in ``column_index_map`` order.
    Outputs: the scalar loss. ``self.last_losses`` holds ``{sub-dataset: term}`` of the last
    call (Tensors).
    """

    def __init__(
        self,
        net_without_loss,
        constraints,
        loss="l2",
        dataset_input_map=None,
        mtl_weighted_cell=None,
        latent_vector=None,
        latent_reg=0.01,
    ):
        super().__init__()
        where = "NetWithLoss"
        _check_type(net_without_loss, "net_without_loss", nn.Cell, where, allow_none=False)
        _check_type(constraints, "constraints", Constraints, where, allow_none=False)
        _check_type(loss, "loss", (str, dict, nn.Cell), where, allow_none=False)
        _check_type(dataset_input_map, "dataset_input_map", dict, where)
        _check_type(mtl_weighted_cell, "mtl_weighted_cell", nn.Cell, where)
        _check_type(latent_vector, "latent_vector", Parameter, where)
        _check_type(latent_reg, "latent_reg", float, where)
        self.net_without_loss = net_without_loss
        self.constraints = constraints
        self.dataset_input_map = _input_map(dataset_input_map, constraints, where)
        self.loss_fn_dict = _loss_fns(loss, list(constraints.dataset_columns_map))
        n_terms = len(constraints.dataset_columns_map)
        if (
            mtl_weighted_cell is not None
            and getattr(mtl_weighted_cell, "num_losses", n_terms) != n_terms
        ):
            raise ValueError(
                f"{where}: mtl_weighted_cell weights {mtl_weighted_cell.num_losses} losses but "
                f"there are {n_terms} sub-datasets {list(constraints.dataset_columns_map)}"
            )
        self.mtl_cell = mtl_weighted_cell
        self.latent_vector = latent_vector
        self.latent_reg = latent_reg
        self.last_losses = {}

    def terms(self, *inputs):
        """``{sub-dataset: scalar loss term}`` for a merged batch."""
        data = _as_tuple(inputs)
        c = self.constraints
        if len(data) != len(c.column_index_map):
            raise ValueError(
                f"NetWithLoss: expected {len(c.column_index_map)} input columns "
                f"{list(c.column_index_map)}, got {len(data)}"
            )
        losses = {}
        for name, columns in c.dataset_columns_map.items():
            columns_data = {col: data[c.column_index_map[col]] for col in columns}
            net_input = tuple(data[c.column_index_map[col]] for col in self.dataset_input_map[name])
            out = _as_tuple(self.net_without_loss(*net_input))
            fn = c.fn_cell_list[c.dataset_cell_index_map[name]]
            check_field_count(out[0], fn.problem, name, "NetWithLoss")
            residual = fn(*out, **columns_data)
            losses[name] = ops.mean(self.loss_fn_dict[name](residual, ops.zeros_like(residual)))
        return losses

    def construct(self, *inputs):
        losses = self.terms(*inputs)
        self.last_losses = losses
        if self.mtl_cell is not None:
            total = self.mtl_cell(list(losses.values()))
        else:
            total = 0.0
            for value in losses.values():
                total = total + value
        if self.latent_vector is not None:
            total = total + self.latent_reg * ops.mean(self.latent_vector * self.latent_vector)
        return total


class NetWithEval(nn.Cell):
    """Evaluation of a network on labelled sub-datasets (MindElec's ``NetWithEval``).

    Args: as :class:`NetWithLoss` (without the weighting); one column's name must contain
    ``label``.

    Outputs: ``(loss, prediction, label)``: the summed loss terms, and the network's output and
    the label of the labelled sub-dataset.
    """

    def __init__(self, net_without_loss, constraints, loss="l2", dataset_input_map=None):
        super().__init__()
        where = "NetWithEval"
        _check_type(net_without_loss, "net_without_loss", nn.Cell, where, allow_none=False)
        _check_type(constraints, "constraints", Constraints, where, allow_none=False)
        self.label_key = next((k for k in constraints.column_index_map if "label" in k), None)
        if self.label_key is None:
            raise NameError(
                f"{where}: no column name contains 'label'; columns: "
                f"{list(constraints.column_index_map)}"
            )
        self.net_without_loss = net_without_loss
        self.constraints = constraints
        self.dataset_input_map = _input_map(dataset_input_map, constraints, where)
        self.loss_fn_dict = _loss_fns(loss, list(constraints.dataset_columns_map))

    def construct(self, *inputs):
        data = _as_tuple(inputs)
        c = self.constraints
        total = core.tensor(0.0)
        prediction = None
        for name, columns in c.dataset_columns_map.items():
            columns_data = {col: data[c.column_index_map[col]] for col in columns}
            net_input = tuple(data[c.column_index_map[col]] for col in self.dataset_input_map[name])
            out = _as_tuple(self.net_without_loss(*net_input))
            if self.label_key in columns:
                prediction = out[0]
            fn = c.fn_cell_list[c.dataset_cell_index_map[name]]
            residual = fn(*out, **columns_data)
            total = total + ops.mean(self.loss_fn_dict[name](residual, ops.zeros_like(residual)))
        return total, prediction, data[c.column_index_map[self.label_key]]
