"""The ``protenix`` command (``protenix <subcommand> ...``); see :mod:`protenix.cli.main`."""

from .main import main as main
