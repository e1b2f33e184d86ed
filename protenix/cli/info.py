"""Models, the weights found for each (and where they were looked for), and the devices.

    diffsci-protenix info [--weights PATH]
"""

import os
import sys

from ..config import get_model_config, model_names
from ..model.weights import WeightsError
from . import runner


def add_arguments(p):
    p.add_argument("--weights", default=None, help="also look here (file or folder)")


def _devices():
    out = ["CPU"]
    try:
        from diffsci.core.backend import get_backend

        get_backend("GPU")
        out.append("GPU")
    except Exception as err:  # no cupy / no CUDA device
        out.append(f"GPU unavailable ({type(err).__name__}: {str(err).splitlines()[0][:80]})")
    return out


def run(args):
    print("protenix (diffsci): models")
    for name in model_names():
        cfg = get_model_config(name)
        try:
            found = runner.find_weights(name, args.weights)
        except WeightsError:
            found = "-"
        print(f"  {name:<32s} N_cycle {cfg['model']['N_cycle']:>2}  "
              f"N_step {cfg['sample_diffusion']['N_step']:>3}  weights: {found}")
    env = os.environ.get("PROTENIX_WEIGHTS_DIR")
    print(f"weights lookup: --weights, $PROTENIX_WEIGHTS_DIR ({env or 'not set'}), "
          f"user cache ({runner.cache_dir()})")
    print(f"checkpoint URL: {os.environ.get('PROTENIX_CHECKPOINT_URL', runner.CHECKPOINT_URL)}")
    net = runner.network_available()
    print("network: " + ("protenix.model.protenix.Protenix" if net else
                         "not in this build yet (diffsci-protenix predict runs with --random-weights)"))
    print("devices: " + ", ".join(_devices()))
    print(f"python: {sys.version.split()[0]}")
    return 0
