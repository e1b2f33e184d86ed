"""The process group: ``init()``, ranks, groups, and the MPI transport underneath.

MindSpore's ``mindspore.communication`` names (``init``, ``release``, ``get_rank``,
``get_group_size``, ``create_group``, ``GlobalComm``, ``HCCL_WORLD_COMM_GROUP``...) over MPI
through mpi4py (the ``distributed`` extra: ``pip install -e '.[distributed]'`` installs mpi4py
and the ``mpich`` wheel). Every backend name (``"hccl"``, ``"nccl"``, ``"mpi"``) selects MPI;
GPU (cupy) arrays are staged through host memory, or handed to MPI directly with
``DIFFSCI_CUDA_AWARE_MPI=1`` (an MPI built with CUDA support); NCCL is not used.

The world is the processes ``mpiexec`` started: a process started by an MPI launcher
(``PMI_SIZE``, ``OMPI_COMM_WORLD_SIZE``, ``SLURM_STEP_NUM_TASKS`` ... in its environment, or
``DIFFSCI_MPI=1``) imports mpi4py; a plain ``python script.py`` is a world of one and never
touches MPI, so every collective is the identity there and mpi4py need not be installed.

No silent hangs: every MPI operation here (but ``init`` and ``create_group``) is non-blocking
and polled against a deadline (``DIFFSCI_COMM_TIMEOUT`` seconds, 300 by default); a collective first exchanges a short
signature (which operation, shape, dtype) so that ranks calling different collectives all raise
the same error naming what each rank called; and in a world > 1 an exception that nobody catches
prints its traceback with the rank and calls ``MPI_Abort``, which ends every rank.
``DIFFSCI_COMM_CHECK=0`` skips the signature exchange (one 96-byte all-gather per collective).
"""

import os
import sys
import time
import traceback
import typing
import zlib

import numpy as np

__all__ = [
    "HCCL_WORLD_COMM_GROUP",
    "MCCL_WORLD_COMM_GROUP",
    "NCCL_WORLD_COMM_GROUP",
    "GlobalComm",
    "barrier",
    "create_group",
    "destroy_group",
    "get_group_rank_from_world_rank",
    "get_group_size",
    "get_local_rank",
    "get_local_rank_size",
    "get_rank",
    "get_world_rank_from_group_rank",
    "init",
    "is_initialized",
    "release",
]

HCCL_WORLD_COMM_GROUP = "hccl_world_group"
NCCL_WORLD_COMM_GROUP = "nccl_world_group"
MCCL_WORLD_COMM_GROUP = "mccl_world_group"
# seconds between printing an uncaught exception and MPI_Abort (see ``_excepthook``)
ABORT_GRACE_S = 0.5
_WORLD_NAMES = (HCCL_WORLD_COMM_GROUP, NCCL_WORLD_COMM_GROUP, MCCL_WORLD_COMM_GROUP, "world")

# environment variables MPI launchers set: (size variable, rank variable)
_LAUNCHER_ENV = (
    ("PMI_SIZE", "PMI_RANK"),  # MPICH / Hydra, Intel MPI
    ("OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"),  # Open MPI
    ("PMIX_SIZE", "PMIX_RANK"),
    ("MPI_LOCALNRANKS", "MPI_LOCALRANKID"),
    ("SLURM_STEP_NUM_TASKS", "SLURM_PROCID"),  # srun (not the batch script around it)
)


class GlobalComm:
    """MindSpore's ``GlobalComm``: the backend and the name of the world group."""

    BACKEND = "mpi"
    WORLD_COMM_GROUP = HCCL_WORLD_COMM_GROUP
    INITED = False


class _State:
    mpi = None  # the mpi4py.MPI module, or None in a world of one without MPI
    world = None  # MPI.COMM_WORLD
    groups: typing.ClassVar[
        dict
    ] = {}  # name -> (communicator or None when this rank is not a member, world ranks)
    hook_installed = False
    local = (0, 1)  # (rank, size) among the processes of this node


def _launcher_world():
    """(size, rank) a launcher announced in the environment, or None."""
    for size_var, rank_var in _LAUNCHER_ENV:
        size = os.environ.get(size_var)
        if size is not None and size.strip().isdigit():
            rank = os.environ.get(rank_var, "0")
            return int(size), int(rank) if rank.strip().isdigit() else 0
    return None


def timeout():
    """Seconds an MPI operation may wait for the other ranks (``DIFFSCI_COMM_TIMEOUT``)."""
    raw = os.environ.get("DIFFSCI_COMM_TIMEOUT", "300")
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"DIFFSCI_COMM_TIMEOUT must be a number of seconds, got {raw!r}") from None
    if value <= 0:
        raise ValueError(f"DIFFSCI_COMM_TIMEOUT must be > 0, got {raw!r}")
    return value


def _excepthook(kind, value, tb):
    """Print an uncaught exception with the rank, then end every rank (MPI_Abort)."""
    rank = _State.world.Get_rank() if _State.world is not None else 0
    text = "".join(traceback.format_exception(kind, value, tb))
    sys.stderr.write(f"[rank {rank}] uncaught exception, aborting every rank:\n{text}")
    sys.stderr.flush()
    sys.stdout.flush()
    if _State.world is not None and _State.world.Get_size() > 1:
        # mpiexec's proxy forwards our output from a pipe; MPI_Abort kills it at once, and on
        # a loaded machine the message above was lost with it (seen in CI): give it a moment
        time.sleep(ABORT_GRACE_S)
        _State.world.Abort(1)


def init(backend_name=None):
    """Join the world of processes ``mpiexec`` started (MindSpore's ``init``).

    Args:
        backend_name: None, ``"mpi"``, ``"hccl"``, ``"nccl"`` or ``"mccl"``: all use MPI (the
            name only picks which ``*_WORLD_COMM_GROUP`` constant ``GlobalComm`` reports).

    Raises:
        RuntimeError: the process was launched in a world of more than one process but
            mpi4py is not installed (the message says how to install it).
        ValueError: an unknown backend name.
    """
    names = {None: HCCL_WORLD_COMM_GROUP, "mpi": HCCL_WORLD_COMM_GROUP}
    names.update(hccl=HCCL_WORLD_COMM_GROUP, nccl=NCCL_WORLD_COMM_GROUP, mccl=MCCL_WORLD_COMM_GROUP)
    if backend_name not in names:
        raise ValueError(
            f"init: backend_name must be one of None, 'mpi', 'hccl', 'nccl', 'mccl', "
            f"got {backend_name!r} (every one runs over MPI)"
        )
    GlobalComm.WORLD_COMM_GROUP = names[backend_name]
    if GlobalComm.INITED:
        return
    launched = _launcher_world()
    want_mpi = os.environ.get("DIFFSCI_MPI", "") == "1" or (
        launched is not None and launched[0] > 1
    )
    if want_mpi:
        try:
            from mpi4py import MPI
        except ImportError as exc:
            size = launched[0] if launched else "?"
            raise RuntimeError(
                f"core.communication.init: this process was launched in a world of {size} "
                f"processes but mpi4py cannot be imported ({exc}); install the distributed extra: "
                "pip install -e '.[distributed]' (mpi4py and the mpich wheel), or run with one "
                "process"
            ) from None
        _State.mpi = MPI
        _State.world = MPI.COMM_WORLD
        if _State.world.Get_size() > 1 and not _State.hook_installed:
            sys.excepthook = _excepthook
            _State.hook_installed = True
    size = _State.world.Get_size() if _State.world is not None else 1
    _State.local = (0, 1)
    if _State.world is not None:  # a collective: every rank is in init, so it is done here
        node = _State.world.Split_type(_State.mpi.COMM_TYPE_SHARED)
        _State.local = (node.Get_rank(), node.Get_size())
        node.Free()
    _State.groups = {name: (_State.world, tuple(range(size))) for name in _WORLD_NAMES}
    GlobalComm.INITED = True


def is_initialized():
    return GlobalComm.INITED


def _ensure():
    if not GlobalComm.INITED:
        init()


def release():
    """Free the groups made by ``create_group`` (MindSpore's ``release``); MPI itself is
    finalized by mpi4py when the process exits."""
    for name, (comm, _) in list(_State.groups.items()):
        if name not in _WORLD_NAMES and comm is not None:
            comm.Free()
    _State.groups = {}
    GlobalComm.INITED = False


def group_entry(group):
    """``(communicator or None, world ranks)`` of ``group``; KeyError-like ValueError naming
    the known groups otherwise."""
    _ensure()
    if group is None:
        group = GlobalComm.WORLD_COMM_GROUP
    entry = _State.groups.get(group)
    if entry is None:
        raise ValueError(
            f"core.communication: no group named {group!r}; known: {sorted(_State.groups)} "
            "(make one with create_group)"
        )
    return entry


def comm_of(group):
    """The MPI communicator of ``group`` (None in a world of one without MPI)."""
    comm, ranks = group_entry(group)
    if comm is None and _State.world is not None and len(ranks) > 0:
        raise ValueError(
            f"core.communication: this process (world rank {get_rank()}) is not a member of "
            f"group {group!r} (world ranks {list(ranks)})"
        )
    return comm


def get_rank(group=None):
    """This process's rank in ``group`` (the world by default)."""
    comm, _ = group_entry(group)
    if comm is None:
        if _State.world is None:
            return 0
        raise ValueError(f"get_rank: this process is not a member of group {group!r}")
    return comm.Get_rank()


def get_group_size(group=None):
    """Number of processes in ``group`` (the world by default); 1 without MPI."""
    return len(group_entry(group)[1])


def get_local_rank(group=None):
    """Rank among the world's processes on this node (found once, at ``init``)."""
    _ensure()
    return _State.local[0]


def get_local_rank_size(group=None):
    """Number of the world's processes on this node (found once, at ``init``)."""
    _ensure()
    return _State.local[1]


def get_world_rank_from_group_rank(group, group_rank_id):
    ranks = group_entry(group)[1]
    if not 0 <= group_rank_id < len(ranks):
        raise ValueError(
            f"get_world_rank_from_group_rank: group {group!r} has {len(ranks)} ranks, "
            f"got group_rank_id={group_rank_id}"
        )
    return ranks[group_rank_id]


def get_group_rank_from_world_rank(world_rank_id, group):
    ranks = group_entry(group)[1]
    if world_rank_id not in ranks:
        raise ValueError(
            f"get_group_rank_from_world_rank: world rank {world_rank_id} is not in group "
            f"{group!r} (world ranks {list(ranks)})"
        )
    return ranks.index(world_rank_id)


def create_group(group, rank_ids):
    """Make group ``group`` of the world ranks ``rank_ids`` (MindSpore's ``create_group``).

    The ranks in ``rank_ids`` call it with the same arguments (``MPI_Comm_create_group``, a
    collective over those ranks only; group rank ``i`` is world rank ``rank_ids[i]``); other
    ranks may call it too and get a group they are not members of, without communicating.

    Raises:
        ValueError: a taken name, repeated or out-of-range ranks.
    """
    _ensure()
    if group in _State.groups:
        raise ValueError(f"create_group: a group named {group!r} exists already")
    size = get_group_size()
    ranks = [int(r) for r in rank_ids]
    if len(set(ranks)) != len(ranks) or not ranks:
        raise ValueError(
            f"create_group {group!r}: rank_ids must be distinct and non-empty, got {ranks}"
        )
    bad = [r for r in ranks if not 0 <= r < size]
    if bad:
        raise ValueError(f"create_group {group!r}: ranks {bad} are outside the world of {size}")
    if _State.world is None:
        _State.groups[group] = (None, tuple(ranks))
        return
    if _State.world.Get_rank() not in ranks:
        _State.groups[group] = (None, tuple(ranks))
        return
    members = _State.world.Get_group().Incl(ranks)
    try:
        tag = zlib.crc32(str(group).encode()) % 32768  # MPI guarantees tags up to 32767
        comm = _State.world.Create_group(members, tag)
    finally:
        members.Free()
    _State.groups[group] = (comm, tuple(ranks))


def destroy_group(group):
    if group in _WORLD_NAMES:
        raise ValueError(f"destroy_group: the world group {group!r} cannot be destroyed")
    comm, _ = group_entry(group)
    if comm is not None:
        comm.Free()
    del _State.groups[group]


_SPIN = 1e-3  # seconds of busy polling, then polls that yield the core (to 50 ms), then sleeps
_YIELD = 0.05
_yield = getattr(os, "sched_yield", lambda: time.sleep(0))


def wait(request, what, comm):
    """Poll a non-blocking MPI request until it completes or the deadline passes.

    Raises:
        TimeoutError: naming this rank and the operation ``what``.
    """
    if request.Test():
        return
    limit = timeout()
    start = time.monotonic()
    deadline = start + limit
    pause = 0.0
    while not request.Test():
        now = time.monotonic()
        if now - start < _SPIN:
            continue  # MPI progresses a non-blocking collective only inside Test: spin first
        if now - start < _YIELD:
            _yield()  # more ranks than cores: let the rank we wait for run
            continue
        if now > deadline:
            raise TimeoutError(
                f"core.communication: rank {comm.Get_rank()} of {comm.Get_size()}: {what} did not "
                f"complete within {limit:g} s (DIFFSCI_COMM_TIMEOUT): another rank never reached "
                "it (it stopped, raised, or runs different code)"
            )
        time.sleep(pause)  # a long wait (another rank still computing) sleeps instead
        pause = min(2 * pause + 1e-5, 1e-3)


_SIG_LEN = 12


def check_same_call(comm, code, text):
    """Every rank of ``comm`` must be calling the same collective: exchange a signature
    (``code``: up to 12 ints) and raise the same RuntimeError on every rank when they differ.

    ``DIFFSCI_COMM_CHECK=0`` skips it (one small all-gather per collective saved)."""
    if os.environ.get("DIFFSCI_COMM_CHECK", "1") == "0":
        return
    sig = np.full(_SIG_LEN, -1, dtype=np.int64)
    sig[: len(code)] = code
    table = np.empty((comm.Get_size(), _SIG_LEN), dtype=np.int64)
    wait(comm.Iallgather(sig, table), f"the signature exchange before {text}", comm)
    if (table == sig).all():
        return
    texts = comm.allgather(text)  # small; every rank is here, the exchange just completed
    lines = "\n".join(f"  rank {r}: {t}" for r, t in enumerate(texts))
    raise RuntimeError(f"core.communication: ranks called different collectives:\n{lines}")


def barrier(group=None):
    """Wait until every rank of ``group`` gets here (with the timeout)."""
    comm = comm_of(group)
    if comm is None or comm.Get_size() == 1:
        return
    check_same_call(comm, [1], "barrier()")
    wait(comm.Ibarrier(), "barrier()", comm)
