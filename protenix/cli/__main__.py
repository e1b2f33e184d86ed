"""``python -m protenix.cli <subcommand> ...``."""

import sys

from .main import main

sys.exit(main())
