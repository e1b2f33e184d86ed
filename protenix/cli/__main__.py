"""``python -m diffsci.protenix.cli <subcommand> ...``."""

import sys

from .main import main

sys.exit(main())
