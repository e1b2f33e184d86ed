"""Run under ``mpiexec -n 2`` with one argument: what goes wrong.

raise:    rank 1 raises before a collective that rank 0 waits in.
timeout:  rank 1 sleeps outside any collective while rank 0 waits in a barrier.
"""

import sys
import time

import numpy as np

from diffsci import core
from diffsci.core import communication as comm


def main(case):
    comm.init()
    rank = comm.get_rank()
    x = core.Tensor(np.arange(4.0))
    if case == "raise":
        if rank == 1:
            raise ValueError("boom on rank 1")
        comm.all_reduce(x)
    elif case == "timeout":
        if rank == 1:
            time.sleep(30)
        comm.barrier()
    else:
        raise ValueError(f"unknown case {case!r}")


if __name__ == "__main__":
    main(sys.argv[1])
