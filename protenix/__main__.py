"""``python -m protenix <subcommand> ...``: the ``protenix`` command."""

import sys

from .cli.main import main

sys.exit(main())
