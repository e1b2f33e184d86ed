"""Upstream import names (``mindspore``, ``mindflow``, ``mindelec``, ``protenix``) as aliases of
diffsci's packages, for scripts that should run unchanged.

``install()`` puts a finder first on ``sys.meta_path`` that answers ``import mindspore.nn`` with
the module object ``diffsci.core.nn`` itself (one copy: ``mindspore.Tensor is
diffsci.core.Tensor``). It refuses, naming the distribution, when the real upstream package
is installed or already imported: an alias must never shadow a package the user has.
``import diffsci.compat`` calls ``install()`` for all four names.
"""

import importlib
import importlib.abc
import importlib.machinery
import importlib.metadata
import importlib.util
import os
import sys

#: upstream top-level name -> diffsci module it stands for
ALIASES = {
    "mindspore": "diffsci.core",
    "mindflow": "diffsci.mindflow",
    "mindelec": "diffsci.mindelec",
    "protenix": "diffsci.protenix",
}
#: upstream submodules whose counterpart is not under the top-level alias
SUBMODULES = {
    "mindspore.dataset": "diffsci.datasets",
}


def target_of(fullname):
    """The diffsci module name for an upstream module name, or None when it is not aliased."""
    for upstream in sorted(SUBMODULES, key=len, reverse=True):
        if fullname == upstream or fullname.startswith(upstream + "."):
            return SUBMODULES[upstream] + fullname[len(upstream):]
    top, dot, rest = fullname.partition(".")
    if top in ALIASES:
        return ALIASES[top] + dot + rest
    return None


class _AliasLoader(importlib.abc.Loader):
    """Loads an alias by importing its diffsci module and putting that very object in
    ``sys.modules`` under the alias (importlib returns what ``sys.modules`` holds after
    ``exec_module``), so nothing is loaded twice and the diffsci module's spec is untouched."""

    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        return None  # a throwaway module, replaced in exec_module

    def exec_module(self, module):
        try:
            real = importlib.import_module(self.target)
        except ModuleNotFoundError as err:
            if err.name == self.target:
                raise ModuleNotFoundError(
                    f"diffsci.compat: {module.__name__!r} is aliased to {self.target!r}, "
                    "which does not exist: diffsci has no counterpart of this upstream module",
                    name=module.__name__,
                ) from err
            raise
        sys.modules[module.__name__] = real


class AliasFinder(importlib.abc.MetaPathFinder):
    """Finds ``mindspore...``, ``mindflow...``, ``mindelec...``, ``protenix...`` for the
    names given to ``install``."""

    def __init__(self, names):
        self.names = frozenset(names)

    def find_spec(self, fullname, path=None, target=None):
        if fullname.partition(".")[0] not in self.names:
            return None
        aliased = target_of(fullname)
        if aliased is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(aliased))


def _our_folder(name):
    """The folder diffsci's own package ``name`` (an ALIASES value) is loaded from, or None."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return os.path.realpath(list(spec.submodule_search_locations)[0])


def real_package(name, distributions=None):
    """A description of the real upstream package ``name`` when one is importable or
    imported, else None. diffsci's own folders (found when a script runs from diffsci's
    repository root) do not count. ``distributions``: ``packages_distributions()``, when the
    caller already has it (it reads every installed distribution's metadata)."""
    ours = _our_folder(ALIASES[name])
    loaded = sys.modules.get(name)
    if loaded is not None:
        if loaded.__name__ != name:  # diffsci's own module, aliased earlier
            return None
        return f"module {name!r} is already imported from {getattr(loaded, '__file__', '?')}"
    if distributions is None:
        distributions = importlib.metadata.packages_distributions()
    dists = [d for d in distributions.get(name, []) if d.lower() != "diffsci"]
    if dists:
        versions = ", ".join(f"{d} {importlib.metadata.version(d)}" for d in sorted(set(dists)))
        return f"the distribution {versions} installs the import name {name!r}"
    spec = importlib.machinery.PathFinder.find_spec(name)
    if spec is None:
        return None
    where = spec.origin or list(spec.submodule_search_locations or ["?"])[0]
    folder = os.path.realpath(os.path.dirname(where) if spec.origin else where)
    if ours is not None and folder == ours:
        return None
    return f"a package {name!r} is importable from {where}"


_installed = None


def install(names=None):
    """Alias the upstream import names ``names`` (default: all of ALIASES) to diffsci.

    Raises ImportError, before anything is aliased, when a real upstream package of one of
    those names is installed or imported, naming its distribution (or file). Installing
    again adds names to the same finder.
    """
    global _installed
    names = list(ALIASES) if names is None else list(names)
    unknown = sorted(set(names) - set(ALIASES))
    if unknown:
        raise ValueError(f"diffsci.compat.install: no alias for {unknown}; known: {list(ALIASES)}")
    new = [n for n in names if _installed is None or n not in _installed.names]
    distributions = importlib.metadata.packages_distributions() if new else {}
    clashes = {n: real_package(n, distributions) for n in new}
    clashes = {n: why for n, why in clashes.items() if why}
    if clashes:
        lines = "\n".join(f"  {n}: {why}" for n, why in clashes.items())
        raise ImportError(
            "diffsci.compat refuses to alias names a real package already has, so that it never "
            f"shadows it:\n{lines}\nUse diffsci's names instead (import diffsci.core as ms; "
            "from diffsci import mindflow), or alias only the others with "
            "diffsci.aliases.install([...])."
        )
    if _installed is not None:
        sys.meta_path.remove(_installed)
        names = sorted(set(names) | _installed.names)
    _installed = AliasFinder(names)
    # first: PathFinder would otherwise load a second copy of diffsci's files under the alias
    sys.meta_path.insert(0, _installed)
    return _installed


def uninstall():
    """Remove the aliases (the finder and every aliased entry of ``sys.modules``)."""
    global _installed
    if _installed is None:
        return
    sys.meta_path.remove(_installed)
    for key in [k for k in sys.modules if k.partition(".")[0] in _installed.names]:
        if target_of(key) is not None and sys.modules[key].__name__ != key:
            del sys.modules[key]
    _installed = None
