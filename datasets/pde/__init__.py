"""PDE data on disk: PDEBench's HDF5 layouts (lazy readers, atomic writers), metadata cards.

The four layouts (``single``, ``darcy``, ``cfd``, ``seed_groups``) and their dataset names
and shapes are described in :mod:`datasets.pde.layouts`.
"""

from .card import CARD_ATTR as CARD_ATTR
from .card import make_card as make_card
from .card import read_card as read_card
from .layouts import LAYOUTS as LAYOUTS
from .layouts import PDEBenchFormatError as PDEBenchFormatError
from .layouts import detect_layout as detect_layout
from .pdebench_files import PDEBENCH_FILES as PDEBENCH_FILES
from .pdebench_files import PDEBENCH_PDE_SIZES as PDEBENCH_PDE_SIZES
from .pdebench_files import PDEBenchFileInfo as PDEBenchFileInfo
from .pdebench_files import download_pdebench as download_pdebench
from .reader import PDEBenchFile as PDEBenchFile
from .reader import PDEBenchSource as PDEBenchSource
from .reader import open_pdebench as open_pdebench
from .writer import PDEBenchWriter as PDEBenchWriter
from .writer import write_pdebench as write_pdebench
