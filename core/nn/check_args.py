"""Argument checks shared by cells and schedules (MindFlow's ``check_func``, used by
``core.nn``'s PINN blocks, ``get_poly_lr``, ``mindflow`` and ``mindelec``): each raises an error
naming the argument, what it should be, and what it got."""

__all__ = ["check_lr_param", "check_param_type", "check_param_value"]


def _as_tuple(types):
    if types is None:
        return ()
    return tuple(types) if isinstance(types, (list, tuple)) else (types,)


def _type_names(types):
    return " or ".join("None" if t is type(None) else t.__name__ for t in types)


def check_param_type(param, param_name, data_type=None, exclude_type=None):
    """Raise TypeError unless ``param`` is an instance of ``data_type`` (a type or a tuple of
    types) and its exact type is not in ``exclude_type`` (``bool`` for ints, as in MindFlow)."""
    data_type, exclude_type = _as_tuple(data_type), _as_tuple(exclude_type)
    if (data_type and not isinstance(param, data_type)) or type(param) in exclude_type:
        raise TypeError(
            f"{param_name} must be {_type_names(data_type) or 'a value'}"
            + (f" (not {_type_names(exclude_type)})" if exclude_type else "")
            + f", got {param!r} of type {type(param).__name__}"
        )


def check_param_value(param, param_name, valid_value):
    """Raise ValueError unless ``param`` is one of ``valid_value``."""
    valid = _as_tuple(valid_value)
    if param not in valid:
        raise ValueError(f"{param_name} must be one of {list(valid)}, got {param!r}")


def check_lr_param(value, name, data_type, lower, strict, where):
    """A learning-rate schedule argument: of ``data_type`` (a bool is no int), and ``> lower``
    (``strict``) or ``>= lower``. Raises TypeError / ValueError naming ``where`` and ``name``.
    An int is accepted where a float is asked for (YAML writes ``1`` for ``1.0``)."""
    types = (int, float) if data_type is float else (data_type,)
    if isinstance(value, bool) or not isinstance(value, types):
        raise TypeError(
            f"{where}: {name} must be {data_type.__name__}, got {value!r} of type "
            f"{type(value).__name__}"
        )
    if value < lower or (strict and value == lower):
        relation = ">" if strict else ">="
        raise ValueError(f"{where}: {name} must be {relation} {lower}, got {value!r}")
