"""Convert a PyTorch Protenix checkpoint (``.pt``) to our HDF5 checkpoint, once.

    diffsci-protenix convert protenix_base_default_v1.0.0.pt base.h5 [--dtype fp32]

The ``.pt`` file is read without torch and without running pickle code
(:func:`protenix.model.weights.read_torch_checkpoint`); the state dict under ``"model"`` is
written with its Protenix names (``module.`` stripped) by ``core.save_checkpoint``, which
``protenix.load_weights`` (and ``core.load_checkpoint``) read back.
"""

import sys

import numpy as np

from diffsci.core import dtypes as _dt
from diffsci.core.serialization import save_checkpoint

from ..model.weights import UnsafeCheckpointError, WeightsError, read_state_dict

# Protenix's runner spells dtypes this way (``--dtype bf16``)
_DTYPES = {"fp32": np.dtype(np.float32), "bf16": _dt.bfloat16, "fp16": np.dtype(np.float16)}


def add_arguments(parser):
    parser.add_argument("input", help="checkpoint to read: torch .pt, .npz or our HDF5")
    parser.add_argument("output", help="HDF5 checkpoint to write (replaced atomically)")
    parser.add_argument(
        "--dtype",
        choices=["keep", *_DTYPES],
        default="keep",
        help="cast floating tensors (default: keep each tensor's dtype)",
    )
    parser.add_argument(
        "--prefix", default=None, help="write only the entries under this name prefix (stripped)"
    )


def convert(input_path, output_path, dtype="keep", prefix=None):
    """Read ``input_path``'s state dict and write it to ``output_name(output_path)``; returns
    the state dict."""
    output_path = output_name(output_path)
    state = read_state_dict(input_path, prefix=prefix)
    if not state:
        raise WeightsError(f"diffsci-protenix convert: {input_path!r} has no entries to write")
    if dtype != "keep":
        target = _DTYPES[dtype]
        state = {k: (v.astype(target) if _dt.is_floating(v.dtype) else v) for k, v in state.items()}
    save_checkpoint(dict(state), output_path)
    return state


def output_name(path):
    """The file name written: ``path``, with ``.h5`` added when it has no checkpoint suffix
    (``core.save_checkpoint`` would otherwise add MindSpore's ``.ckpt``)."""
    path = str(path)
    return path if path.endswith((".h5", ".hdf5", ".ckpt")) else path + ".h5"


def run(args):
    try:
        state = convert(args.input, args.output, dtype=args.dtype, prefix=args.prefix)
    except (UnsafeCheckpointError, WeightsError, FileNotFoundError) as err:
        print(f"diffsci-protenix convert: {err}", file=sys.stderr)
        return 1
    n = sum(int(np.prod(v.shape)) for v in state.values())
    out = output_name(args.output)
    print(f"diffsci-protenix convert: wrote {len(state)} tensors ({n} values) to {out}")
    return 0
