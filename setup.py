"""Maps the repository's top-level package folders into the ``diffsci`` namespace.

``core/`` installs as ``diffsci.core``, ``datasets/`` as ``diffsci.datasets``, and so on; nothing
installs as a top-level ``core``, ``datasets``, ``mindflow``, ``mindelec`` or ``protenix``.
Everything else (metadata, dependencies, the console script) is in ``pyproject.toml``.
"""

from setuptools import find_packages, setup

FOLDERS = ("core", "datasets", "mindflow", "mindelec", "protenix")

found = find_packages(include=[pattern for f in FOLDERS for pattern in (f, f"{f}.*")])
setup(
    packages=["diffsci", *(f"diffsci.{name}" for name in found)],
    package_dir={"diffsci": "diffsci", **{f"diffsci.{f}": f for f in FOLDERS}},
)
