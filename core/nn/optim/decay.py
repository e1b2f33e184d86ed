"""MindSpore's rule for which parameters an optimizer's ``weight_decay`` applies to."""

from ...tensor import Parameter

__all__ = ["mindspore_decay_flags", "normalize_params"]


def normalize_params(params):
    """``(list_of_items, grouped)``: the optimizer's ``params`` argument as a list (a generator
    such as ``net.get_parameters()`` is consumed once) and whether it holds group dicts."""
    if isinstance(params, (Parameter, dict)):
        params = [params]
    try:
        items = list(params)
    except TypeError:
        raise TypeError(
            f"optimizer: parameters must be a list of Parameters or of group dicts, got "
            f"{type(params).__name__}"
        ) from None
    return items, any(isinstance(p, dict) for p in items)


def mindspore_decay_flags(parameters, grouped):
    """One bool per parameter: does ``weight_decay`` apply to it?

    MindSpore: without parameter groups the decay skips parameters whose name contains
    ``"beta"`` or ``"gamma"`` (the shift and scale of normalization layers); with groups,
    each group's ``weight_decay`` applies to all of its parameters.
    """
    if grouped:
        return tuple(True for _ in parameters)
    return tuple(not ("beta" in (p.name or "") or "gamma" in (p.name or "")) for p in parameters)
