"""``protenix <subcommand>``: one argparse parser per subcommand, registered in ``SUBCOMMANDS``.

A subcommand module provides ``add_arguments(parser)`` and ``run(args) -> int``; adding one
(``pred`` next) is one entry below. Flag names follow Protenix's runner where it has them.
"""

import argparse
import importlib
import sys

# name -> (module under protenix.cli, one-line help)
SUBCOMMANDS = {
    "convert": ("convert", "convert a Protenix .pt checkpoint to our HDF5 checkpoint"),
}


def build_parser():
    parser = argparse.ArgumentParser(
        prog="protenix", description="Protenix (AlphaFold3-class model) on the diffsci core."
    )
    sub = parser.add_subparsers(dest="command", metavar="<command>")
    sub.required = True
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        module = importlib.import_module(f"protenix.cli.{module_name}")
        p = sub.add_parser(name, help=help_text, description=module.__doc__)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def main(argv=None):
    """Entry point of the ``protenix`` console script; returns the exit status."""
    args = build_parser().parse_args(argv)
    return args._run(args)


if __name__ == "__main__":
    sys.exit(main())
