"""Data-driven training of neural-operator surrogates (ours; MindFlow trains in its scripts).

``OperatorTrainer`` trains a model Cell (FNO1D/2D/3D, KNO, UNet2D, DeepONet...) on
:class:`TrajectorySource` data (PDEBench-layout HDF5 read lazily, or arrays; one-step or
autoregressive rollout losses) or :class:`PairSource` data (steady input -> output), with Adam
and a cosine or step schedule, a ``core.jit`` step, checkpoints and bit-for-bit resume, a tqdm
bar, plots, and an :class:`EvaluationReport` of one-step and rollout errors per time step::

    train = TrajectorySource.from_pdebench("ns.h5", indices=range(0, 900))
    test = TrajectorySource.from_pdebench("ns.h5", indices=range(900, 1000))
    model = FNO2D(10, 1, n_modes=[12, 12], resolutions=[64, 64], hidden_channels=20)
    trainer = OperatorTrainer(model, train, test, t_in=10, t_out=10, epochs=500, batch_size=20)
    trainer.fit()
    print(trainer.evaluate())        # relative L2 and nRMSE per frame, one-step and rollout
"""

from .data import PairSource as PairSource
from .data import SpaceTimeSource as SpaceTimeSource
from .data import TrajectorySource as TrajectorySource
from .data import WindowSource as WindowSource
from .normalizer import UnitGaussianNormalizer as UnitGaussianNormalizer
from .plots import plot_history as plot_history
from .plots import plot_sample as plot_sample
from .report import EvaluationReport as EvaluationReport
from .trainer import OperatorTrainer as OperatorTrainer
