"""All primitives of the engine, one module per family."""

from . import elementwise as elementwise
from . import indexing as indexing
from . import linalg as linalg
from . import reduction as reduction
from . import shape as shape
from ._define import ALL as ALL
