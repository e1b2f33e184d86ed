"""``protenix <subcommand>``: one argparse parser per subcommand, registered in ``SUBCOMMANDS``.

A subcommand module provides ``add_arguments(parser)`` and ``run(args) -> int``; adding one
is one entry below (``ALIASES`` adds other names). Flag names follow Protenix's runner where it
has them (``diffsci-protenix pred -i IN -o OUT -s 101 -n MODEL -c 4 -p 5 -e 5``).
"""

import argparse
import importlib
import sys

# name -> (module under protenix.cli, one-line help)
SUBCOMMANDS = {
    "predict": ("predict", "predict structures: FASTA/a3m/JSON in, ranked mmCIF + confidences"),
    "info": ("info", "models, weights found, devices"),
    "download": ("download", "download an official Protenix checkpoint (checksum, resume)"),
    "convert": ("convert", "convert a Protenix .pt checkpoint to our HDF5 checkpoint"),
}
# name -> other names (Protenix's ``diffsci-protenix pred``)
ALIASES = {"predict": ["pred"]}


def build_parser():
    parser = argparse.ArgumentParser(
        prog="diffsci-protenix", description="Protenix (AlphaFold3-class model) on the diffsci core."
    )
    sub = parser.add_subparsers(dest="command", metavar="<command>")
    sub.required = True
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        module = importlib.import_module(f"diffsci.protenix.cli.{module_name}")
        p = sub.add_parser(name, help=help_text, description=module.__doc__,
                           aliases=ALIASES.get(name, []),
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def main(argv=None):
    """Entry point of the ``diffsci-protenix`` console script; returns the exit status."""
    args = build_parser().parse_args(argv)
    return args._run(args)


if __name__ == "__main__":
    sys.exit(main())
