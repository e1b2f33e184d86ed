"""``python -m diffsci.protenix <subcommand> ...``: the ``diffsci-protenix`` command."""

import sys

from .cli.main import main

sys.exit(main())
