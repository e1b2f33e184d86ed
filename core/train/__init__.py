"""``core.train``: ``Model`` (a training loop with callbacks and resume) and the callbacks."""

from ..nn.learning_rate_schedule import ReduceLROnPlateau as ReduceLROnPlateau
from .callbacks import Callback as Callback
from .callbacks import CallbackParams as CallbackParams
from .callbacks import CheckpointCallback as CheckpointCallback
from .callbacks import EarlyStopping as EarlyStopping
from .callbacks import LossMonitor as LossMonitor
from .callbacks import ProgressBar as ProgressBar
from .callbacks import RunContext as RunContext
from .callbacks import TimeMonitor as TimeMonitor
from .data_sink import data_sink as data_sink
from .model import Model as Model
from .model import restore_checkpoint as restore_checkpoint
