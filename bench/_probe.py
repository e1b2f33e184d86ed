"""RSS probe, run by the harness in a fresh interpreter per (case, implementation):
``python -m bench._probe KEY CFG_JSON LABEL`` prints ``{"rss_mib": ...}`` as its last line."""

import json
import sys

from . import get_workload
from .harness import rss_peak_in_this_process_mib


def main(argv):
    key, cfg, label = argv[0], json.loads(argv[1]), argv[2]
    wl = get_workload(key)
    impl = next(i for i in wl.impls() if i.label == label)
    step = impl.make(cfg, wl.data(cfg))
    print(json.dumps({"rss_mib": rss_peak_in_this_process_mib(step)}))


if __name__ == "__main__":
    main(sys.argv[1:])
