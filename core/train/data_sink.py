"""MindSpore's ``data_sink``: a training step fed from a dataset, ``sink_size`` steps per call.

MindSpore sinks the dataset onto the device and runs ``sink_size`` steps in one launch; here
the steps run one after another in Python (each is a compiled ``core.jit`` call when ``fn``
is jitted or ``jit_config`` is given), which is what the scripts observe: every call of the
returned function consumes ``sink_size`` batches and returns the last step's result::

    sink_process = core.data_sink(train_step, train_dataset, sink_size=1)
    for epoch in range(epochs):
        for _ in range(train_dataset.get_dataset_size()):
            loss = sink_process()
"""

from ..jit import jit as _jit

__all__ = ["data_sink"]


def data_sink(fn, dataset, sink_size=1, jit_config=None, input_signature=None):
    """A function of no arguments that runs ``fn(*batch)`` on the next ``sink_size`` batches.

    Args:
        fn: the step, called with the columns of one batch as positional arguments.
        dataset: a ``datasets`` pipeline dataset (anything with ``create_tuple_iterator``), or
            any re-iterable of batches (each a tuple/list of columns, or one value).
        sink_size: batches per call, a positive int. Default 1.
        jit_config: None runs ``fn`` as it is; anything else (MindSpore's ``JitConfig`` or a
            dict, whose options tune MindSpore's compiler and are not read here) compiles
            ``fn`` with ``core.jit`` first.
        input_signature: accepted for MindSpore's signature; shapes are taken from the data.

    Returns:
        ``sink_process()``: runs ``sink_size`` steps and returns the last one's result. The
        batches continue across calls; at the end of the dataset the next epoch starts (a
        shuffled dataset reshuffles), as the device queue of a sunk dataset does.

    Raises:
        ValueError: a ``sink_size`` that is not a positive int, or a dataset with no batches.
    """
    del input_signature
    if isinstance(sink_size, bool) or not isinstance(sink_size, int) or sink_size < 1:
        raise ValueError(f"data_sink: sink_size must be a positive int, got {sink_size!r}")
    if not callable(fn):
        raise TypeError(f"data_sink: fn must be callable, got {type(fn).__name__}")
    step = fn if jit_config is None else _jit(fn)
    state = {"it": None}

    def new_epoch():
        if hasattr(dataset, "create_tuple_iterator"):
            # one iterator over every epoch: after each epoch's StopIteration, the next
            # ``next`` starts the next epoch
            if state["it"] is None:
                state["it"] = dataset.create_tuple_iterator(num_epochs=-1)
        else:
            state["it"] = iter(dataset)

    def next_batch():
        if state["it"] is None:
            new_epoch()
        try:
            return next(state["it"])
        except StopIteration:
            new_epoch()
        try:
            return next(state["it"])
        except StopIteration:
            raise ValueError("data_sink: the dataset has no batches") from None

    def sink_process():
        out = None
        for _ in range(sink_size):
            batch = next_batch()
            out = step(*batch) if isinstance(batch, (tuple, list)) else step(batch)
        return out

    return sink_process
