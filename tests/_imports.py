"""The imports a source file makes, as the repository's folder names (``diffsci.core.ops`` ->
``core.ops``): what the layering and packaging tests check."""

import ast

NAMESPACE = "diffsci"


def _strip(name):
    """``diffsci.core.ops`` -> ``core.ops``; ``diffsci`` -> ``diffsci``; other names unchanged."""
    return name[len(NAMESPACE) + 1:] if name.startswith(NAMESPACE + ".") else name


def imports(path, package=None):
    """(line, module, names) for every import in the file at ``path``, module-level or in a
    function body. ``module`` is the imported module with the ``diffsci.`` prefix removed;
    ``from diffsci import core`` gives module ``core``. A relative import resolves against
    ``package`` (the dotted folder name of the file's package) and is skipped without one.
    ``names`` are the names of a ``from`` import (empty for ``import x``)."""
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, _strip(alias.name), ()
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if package is None:
                    continue
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
                yield node.lineno, module, tuple(a.name for a in node.names)
            elif node.module == NAMESPACE:
                for alias in node.names:
                    yield node.lineno, alias.name, ()
            else:
                yield node.lineno, _strip(node.module), tuple(a.name for a in node.names)


def bare_imports(path):
    """(line, module) for every absolute import in ``path`` of a bare top-level
    ``core``/``datasets``/``mindflow``/``mindelec``/``protenix`` (not through ``diffsci``)."""
    tree = ast.parse(path.read_text(), str(path))
    folders = ("core", "datasets", "mindflow", "mindelec", "protenix")
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        for name in names:
            if name.split(".")[0] in folders:
                yield node.lineno, name
