"""The command line of diffsci's example scripts: one spelling per flag, kebab-case (argparse's
convention: ``--out-dir``, ``--batch-size``, ``--time-budget``), with the spellings MindFlow and
MindElec scripts use (``--config_file_path``, ``--batch_size``) and our own older ones
(``--out``) accepted as hidden aliases, so their command lines keep working.

    parser = ArgumentParser(description="...")
    parser.add_argument("--batch-size", type=int, default=64)     # also takes --batch_size
    parser.add_argument("--out-dir", aliases=["--out"], default=default_out_dir("burgers"))

``--help`` shows only the kebab-case spelling.
"""

import argparse
import os

__all__ = ["ArgumentParser", "default_out_dir", "enter_out_dir"]


def default_out_dir(case):
    """``<case>_out`` in the current working directory: an example never writes into the
    package tree unless told to."""
    return os.path.join(os.getcwd(), f"{case}_out")


def enter_out_dir(args, script):
    """For a ported MindFlow script whose config holds relative paths: resolve
    ``args.config_file_path`` (the working directory first, then the folder of ``script``, the
    caller's ``__file__``) to an absolute path, then make ``args.out_dir`` the working
    directory, so that every relative path of the config and of the script (data, summary,
    checkpoints, logs, images) lands in it."""
    path = args.config_file_path
    if not os.path.isabs(path) and not os.path.exists(path):
        path = os.path.join(os.path.dirname(os.path.abspath(script)), path)
    args.config_file_path = os.path.abspath(path)
    os.makedirs(args.out_dir, exist_ok=True)
    os.chdir(args.out_dir)


class _PrimaryOnlyFormatter(argparse.HelpFormatter):
    """Help that leaves out an option's hidden aliases (they stay accepted)."""

    def _format_action_invocation(self, action):
        hidden = getattr(action, "hidden_aliases", ())
        if not action.option_strings or not hidden:
            return super()._format_action_invocation(action)
        shown = ", ".join(s for s in action.option_strings if s not in hidden)
        if action.nargs == 0:
            return shown
        return f"{shown} {self._format_args(action, self._get_default_metavar_for_optional(action))}"


class _Formatter(_PrimaryOnlyFormatter, argparse.ArgumentDefaultsHelpFormatter):
    pass


class ArgumentParser(argparse.ArgumentParser):
    """argparse.ArgumentParser whose long options are kebab-case; each also answers to its
    snake_case spelling and to the ``aliases`` given, none of which ``--help`` shows."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def add_argument(self, *names, aliases=(), **kwargs):
        longs = [n for n in names if n.startswith("--")]
        for name in longs:
            if "_" in name:
                raise ValueError(f"add_argument({name!r}): spell it kebab-case "
                                 f"({name.replace('_', '-')!r}); the snake_case form is added")
        if longs and "dest" not in kwargs:
            kwargs["dest"] = longs[0][2:].replace("-", "_")
        extra = ["--" + n[2:].replace("-", "_") for n in longs if "-" in n[2:]]
        extra += [a for a in aliases if a not in extra]
        action = super().add_argument(*names, *extra, **kwargs)
        action.hidden_aliases = frozenset(extra)
        return action
