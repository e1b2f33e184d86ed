"""The one lookup every scheme registry (``define_*``) goes through."""


def lookup(table, key, what):
    """The entry of registry ``table`` under ``key``.

    Args:
        table (dict): registry, name -> class.
        key: the name asked for (usually ``config['type']`` or a config value).
        what (str): where the name comes from, e.g. ``"space_solver.reconstructor"``.

    Raises:
        ValueError: for an unknown (or unhashable) key, naming it and the accepted values.
    """
    try:
        return table[key]
    except (KeyError, TypeError):
        raise ValueError(
            f"{what}: unknown value {key!r}; accepted values: {', '.join(table)}"
        ) from None
