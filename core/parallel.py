"""MindSpore's auto-parallel context: ``core.set_auto_parallel_context(parallel_mode=...)``.

Only data parallelism is implemented: ``parallel_mode="data_parallel"`` (or
``"hybrid_parallel"``, which MindSpore treats the same way for gradients) makes
``nn.TrainOneStepCell`` all-reduce its gradients with an ``nn.DistributedGradReducer`` and makes
``core.save_checkpoint`` write on rank 0 alone (the parameters are replicated), atomically,
while the other ranks wait for the file. The same script then runs on 1 process and on N
(``python -m diffsci.core.launch -n N script.py``); shard the data with the pipeline's
``num_shards=get_group_size(), shard_id=get_rank()``.

    core.communication.init()
    core.set_auto_parallel_context(parallel_mode=core.ParallelMode.DATA_PARALLEL,
                                   gradients_mean=True)
"""

from .communication import management as _m
from .communication.comm_func import broadcast as _broadcast

__all__ = [
    "ParallelMode",
    "broadcast_parameters",
    "get_auto_parallel_context",
    "reset_auto_parallel_context",
    "set_auto_parallel_context",
]


class ParallelMode:
    """MindSpore's ``ParallelMode`` names."""

    STAND_ALONE = "stand_alone"
    DATA_PARALLEL = "data_parallel"
    HYBRID_PARALLEL = "hybrid_parallel"
    SEMI_AUTO_PARALLEL = "semi_auto_parallel"
    AUTO_PARALLEL = "auto_parallel"


_MODES = (ParallelMode.STAND_ALONE, ParallelMode.DATA_PARALLEL, ParallelMode.HYBRID_PARALLEL)
_DEFAULTS = {
    "parallel_mode": ParallelMode.STAND_ALONE,
    "gradients_mean": False,  # MindSpore's default: the all-reduced gradient is the sum
    "device_num": None,  # None: the size of the world
    "global_rank": None,
    "parameter_broadcast": False,
    "comm_fusion": None,  # {"allreduce": {"mode": "size", "config": MB}}: the bucket size
}
# keys MindSpore accepts for its graph-level (semi-)auto parallelism: stored, no effect here
_STORED_ONLY = frozenset(
    {
        "loss_repeated_mean",
        "full_batch",
        "dataset_strategy",
        "enable_parallel_optimizer",
        "parallel_optimizer_config",
        "search_mode",
        "auto_parallel_search_mode",
        "strategy_ckpt_load_file",
        "strategy_ckpt_save_file",
        "strategy_ckpt_config",
        "pipeline_stages",
        "pipeline_config",
        "grad_accumulation_step",
        "all_reduce_fusion_config",
        "enable_alltoall",
    }
)
_state = dict(_DEFAULTS)
_writing = [False]


def set_auto_parallel_context(**kwargs):
    """Set parallel options (MindSpore's names).

    Args:
        parallel_mode: ``"stand_alone"`` (default), ``"data_parallel"`` or
            ``"hybrid_parallel"``; the (semi-)auto modes raise NotImplementedError.
        gradients_mean: divide the all-reduced gradients by the number of ranks.
        device_num: must equal the world size when given.
        global_rank: must equal this process's rank when given.
        parameter_broadcast: ``TrainOneStepCell`` broadcasts the weights from rank 0 first.
        comm_fusion: ``{"allreduce": {"mode": "size", "config": MB}}`` sets the gradient
            bucket size in MB (25 by default).

    Raises:
        ValueError: an unknown key or mode, or a device_num/global_rank that contradicts the
            world that ``mpiexec`` started.
    """
    for key, value in kwargs.items():
        if key == "parallel_mode":
            value = str(value)
            if value in (ParallelMode.SEMI_AUTO_PARALLEL, ParallelMode.AUTO_PARALLEL):
                raise NotImplementedError(
                    f"set_auto_parallel_context: parallel_mode={value!r} is not implemented; "
                    "use 'data_parallel' (or shard by hand with core.communication)"
                )
            if value not in _MODES:
                raise ValueError(
                    f"set_auto_parallel_context: parallel_mode must be one of {_MODES}, got {value!r}"
                )
        elif key == "device_num" and value is not None:
            world = _m.get_group_size()
            if int(value) != world:
                raise ValueError(
                    f"set_auto_parallel_context: device_num={value} but the world has {world} "
                    "processes (launch with python -m diffsci.core.launch -n N)"
                )
        elif key == "global_rank" and value is not None:
            if int(value) != _m.get_rank():
                raise ValueError(
                    f"set_auto_parallel_context: global_rank={value} but this process is rank "
                    f"{_m.get_rank()}"
                )
        elif key == "comm_fusion" and value is not None:
            _bucket_mb(value)
        elif key not in _DEFAULTS and key not in _STORED_ONLY:
            raise ValueError(f"set_auto_parallel_context: unknown key {key!r}")
        _state[key] = value


def get_auto_parallel_context(key):
    if key not in _state and key not in _STORED_ONLY:
        raise ValueError(f"get_auto_parallel_context: unknown key {key!r}")
    if key == "device_num" and _state.get(key) is None:
        return _m.get_group_size()
    if key == "global_rank" and _state.get(key) is None:
        return _m.get_rank()
    return _state.get(key)


def reset_auto_parallel_context():
    _state.clear()
    _state.update(_DEFAULTS)


def _bucket_mb(comm_fusion):
    try:
        cfg = comm_fusion["allreduce"]
        if cfg.get("mode", "size") != "size":
            raise ValueError(f"only mode 'size' is supported, got {cfg.get('mode')!r}")
        mb = float(cfg["config"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(
            "set_auto_parallel_context: comm_fusion must be "
            f"{{'allreduce': {{'mode': 'size', 'config': MB}}}}, got {comm_fusion!r} ({exc})"
        ) from None
    if mb <= 0:
        raise ValueError(f"set_auto_parallel_context: comm_fusion size must be > 0 MB, got {mb}")
    return mb


def data_parallel():
    """True when gradients are to be all-reduced across the world."""
    return _state["parallel_mode"] in (ParallelMode.DATA_PARALLEL, ParallelMode.HYBRID_PARALLEL)


def bucket_mb():
    fusion = _state.get("comm_fusion")
    return 25.0 if fusion is None else _bucket_mb(fusion)


def broadcast_parameters(parameters, root=0, group=None):
    """Overwrite every Parameter with rank ``root``'s value (replicas start identical)."""
    if _m.get_group_size(group) == 1:
        return
    for p in parameters:
        p.set_data(_broadcast(p + 0, root, group))


def checkpoint_writer():
    """None, or ``run(save, *args)`` that calls ``save`` on rank 0 alone and then waits on
    every rank until the file is written: what ``core.save_checkpoint`` does in data parallel
    mode with more than one process."""
    if _writing[0] or not data_parallel() or _m.get_group_size() == 1:
        return None

    def run(save, *args):
        if _m.get_rank() == 0:
            _writing[0] = True
            try:
                save(*args)
            finally:
                _writing[0] = False
        _m.barrier()

    return run
