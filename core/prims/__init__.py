"""All primitives of the engine, one module per family."""

from . import conv as conv
from . import decomp as decomp
from . import elementwise as elementwise
from . import fft as fft
from . import kernel_call as kernel_call
from . import indexing as indexing
from . import linalg as linalg
from . import normalize as normalize
from . import reduction as reduction
from . import shape as shape
from . import softmax as softmax
from . import sort as sort
from . import special as special
from ._define import ALL as ALL
