"""diffsci core: tensors, primitives, autodiff of any order, vmap, backends.

from diffsci import core
x = core.tensor([[1.0, 2.0]])
core.grad(lambda x: (x ** 2).sum())(x)
"""

from . import ops as ops
from . import primitive as _primitive_module
from . import tensor as _tensor_module

# tensor.py sits below every layer it needs (its methods call ops): bound here, from above
_tensor_module._ops = ops
_tensor_module._trace_stack = _primitive_module._trace_stack

from . import amp as amp  # noqa: E402  (mindspore.amp)
from . import communication as communication  # noqa: E402  (mindspore.communication)
from . import context as context  # noqa: E402
from . import dtypes as dtype  # noqa: E402, F401  (MindSpore: from mindspore import dtype as mstype)
from . import nn as nn  # noqa: E402
from . import numpy as numpy  # noqa: E402  (mindspore.numpy)
from . import prims as _prims  # noqa: E402, F401  (registers every primitive)
from . import random as random  # noqa: E402
from . import rules as _rules  # noqa: E402, F401  (registers every derivative, batching and lowering rule)
from . import testing as testing  # noqa: E402
from . import train as train  # noqa: E402
from . import tree as tree  # noqa: E402  (pytrees: register_dataclass, tree_map, ...)
from .autodiff.api import custom_jvp as custom_jvp  # noqa: E402
from .autodiff.api import custom_vjp as custom_vjp  # noqa: E402
from .autodiff.api import grad as grad  # noqa: E402
from .autodiff.api import hessian as hessian  # noqa: E402
from .autodiff.api import jacfwd as jacfwd  # noqa: E402
from .autodiff.api import jacrev as jacrev  # noqa: E402
from .autodiff.api import jvp as jvp  # noqa: E402
from .autodiff.api import no_grad as no_grad  # noqa: E402
from .autodiff.api import value_and_grad as value_and_grad  # noqa: E402
from .autodiff.api import vjp as vjp  # noqa: E402
from .autodiff.batched import batched_hessian as batched_hessian  # noqa: E402
from .autodiff.batched import batched_jacobian as batched_jacobian  # noqa: E402
from .backend import available_devices as available_devices  # noqa: E402
from .backend import get_device as get_device  # noqa: E402
from .backend import set_device as set_device  # noqa: E402
from .backend.threads import get_num_threads as get_num_threads  # noqa: E402
from .backend.threads import set_num_threads as set_num_threads  # noqa: E402
from .chunk import chunk_map as chunk_map  # noqa: E402
from .context import GRAPH_MODE as GRAPH_MODE  # noqa: E402
from .context import PYNATIVE_MODE as PYNATIVE_MODE  # noqa: E402
from .context import get_context as get_context  # noqa: E402
from .context import jit_class as jit_class  # noqa: E402
from .context import set_context as set_context  # noqa: E402
from .dtypes import bfloat16 as bfloat16  # noqa: E402
from .dtypes import bool_ as bool_  # noqa: E402
from .dtypes import complex64 as complex64  # noqa: E402
from .dtypes import complex128 as complex128  # noqa: E402
from .dtypes import float16 as float16  # noqa: E402
from .dtypes import float32 as float32  # noqa: E402
from .dtypes import float64 as float64  # noqa: E402
from .dtypes import int8 as int8  # noqa: E402
from .dtypes import int16 as int16  # noqa: E402
from .dtypes import int32 as int32  # noqa: E402
from .dtypes import int64 as int64  # noqa: E402
from .dtypes import uint8 as uint8  # noqa: E402
from .jit import jit as jit  # noqa: E402
from .ops import arange as arange  # noqa: E402
from .ops import eye as eye  # noqa: E402
from .ops import full as full  # noqa: E402
from .ops import full_like as full_like  # noqa: E402
from .ops import linspace as linspace  # noqa: E402
from .ops import ones as ones  # noqa: E402
from .ops import ones_like as ones_like  # noqa: E402
from .ops import stop_gradient as stop_gradient  # noqa: E402
from .ops import tensor as tensor  # noqa: E402
from .ops import zeros as zeros  # noqa: E402
from .ops import zeros_like as zeros_like  # noqa: E402
from .parallel import ParallelMode as ParallelMode  # noqa: E402
from .parallel import get_auto_parallel_context as get_auto_parallel_context  # noqa: E402
from .parallel import reset_auto_parallel_context as reset_auto_parallel_context  # noqa: E402
from .parallel import set_auto_parallel_context as set_auto_parallel_context  # noqa: E402
from .primitive import set_debug_nans as set_debug_nans  # noqa: E402
from .random import get_seed as get_seed  # noqa: E402
from .random import set_seed as set_seed  # noqa: E402
from .recompute import recompute as recompute  # noqa: E402
from .serialization import load_checkpoint as load_checkpoint  # noqa: E402
from .serialization import load_param_into_net as load_param_into_net  # noqa: E402
from .serialization import save_checkpoint as save_checkpoint  # noqa: E402
from .tensor import Parameter as Parameter  # noqa: E402
from .tensor import Tensor as Tensor  # noqa: E402
from .train.data_sink import data_sink as data_sink  # noqa: E402  (mindspore.data_sink)
from .vmap import vmap as vmap  # noqa: E402

_tensor_module._initializer = nn.init.initializer  # Tensor(shape=, dtype=, init=)
bool = bool_

# Last, once every BLAS that importing core loads is in the process (scipy has its own).
from .backend.threads import apply_environment_setting as _apply_thread_env  # noqa: E402

_apply_thread_env()
del _apply_thread_env
