"""The ``protenix`` command (``protenix <subcommand> ...``): :func:`protenix.cli.main.main`,
also run by ``python -m diffsci.protenix.cli``."""
