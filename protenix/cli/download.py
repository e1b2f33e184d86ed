"""Download an official Protenix checkpoint into the user cache (or ``--dir``).

    diffsci-protenix download protenix_mini_default_v0.5.0 [--dir DIR] [--url BASE] [--sha256 HEX]

The file ``<model>.pt`` comes from ``BASE/<model>.pt`` (``--url``, else
``$PROTENIX_CHECKPOINT_URL``, else Protenix's own server) through ``datasets.download``:
streamed, resumed after an interruption (``.part`` file), verified when ``--sha256`` is given,
and renamed into place only when complete. ``diffsci-protenix predict`` finds it there.
"""

import os
import sys

from diffsci.datasets.download import DownloadError, download

from ..config import model_names
from . import runner


def add_arguments(p):
    p.add_argument("model", help=f"model name: {', '.join(model_names())}")
    p.add_argument("--dir", default=None,
                   help=f"folder to write into (default: the user cache, {runner.cache_dir()})")
    p.add_argument("--url", default=None,
                   help="base URL holding <model>.pt (default: $PROTENIX_CHECKPOINT_URL or "
                        f"{runner.CHECKPOINT_URL})")
    p.add_argument("--sha256", default=None, help="expected SHA-256 of the file")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args):
    if args.model not in model_names():
        print(f"diffsci-protenix download: unknown model {args.model!r}; known: "
              f"{', '.join(model_names())}", file=sys.stderr)
        return 2
    base = (args.url or os.environ.get("PROTENIX_CHECKPOINT_URL")
            or runner.CHECKPOINT_URL).rstrip("/")
    url = f"{base}/{args.model}.pt"
    path = os.path.join(args.dir or runner.cache_dir(), f"{args.model}.pt")
    try:
        download(url, path, sha256=args.sha256, progress=not args.no_progress)
    except DownloadError as err:
        print(f"diffsci-protenix download: {url}: {err}", file=sys.stderr)
        return 1
    print(f"diffsci-protenix download: {args.model} -> {path}")
    return 0
