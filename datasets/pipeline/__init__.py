"""The data pipeline, with ``mindspore.dataset``'s names: sources (``GeneratorDataset``,
``NumpySlicesDataset``), the chainable operations of :class:`Dataset`, samplers, and
``config`` (seed, prefetch depth, default worker count).

Modules: ``dataset.py`` the chain and its iterators; ``sources.py`` the sources; ``sampler.py``
index orders and sharding; ``prefetch.py`` the background thread, worker pools and
:class:`PipelineError`; ``config.py`` the settings.
"""

from . import config as config
from .dataset import BatchDataset as BatchDataset
from .dataset import BatchInfo as BatchInfo
from .dataset import Dataset as Dataset
from .dataset import DictIterator as DictIterator
from .dataset import MapDataset as MapDataset
from .dataset import ProjectDataset as ProjectDataset
from .dataset import RenameDataset as RenameDataset
from .dataset import RepeatDataset as RepeatDataset
from .dataset import ShuffleDataset as ShuffleDataset
from .dataset import SkipDataset as SkipDataset
from .dataset import TakeDataset as TakeDataset
from .dataset import TupleIterator as TupleIterator
from .prefetch import PipelineError as PipelineError
from .sampler import DistributedSampler as DistributedSampler
from .sampler import RandomSampler as RandomSampler
from .sampler import Sampler as Sampler
from .sampler import SequentialSampler as SequentialSampler
from .sampler import SubsetRandomSampler as SubsetRandomSampler
from .sampler import SubsetSampler as SubsetSampler
from .sources import GeneratorDataset as GeneratorDataset
from .sources import NumpySlicesDataset as NumpySlicesDataset
