"""``core.communication``: MindSpore's ``mindspore.communication`` over MPI (mpi4py).

    from diffsci import core
    from diffsci.core.communication import init, get_rank, get_group_size
    init()
    x = core.communication.all_reduce(core.tensor([float(get_rank())]))

Launch with ``python -m diffsci.core.launch -n 4 script.py`` or ``mpiexec -n 4 python script.py``;
a plain ``python script.py`` is a world of one (no MPI needed, collectives are the identity).
"""

from .comm_func import AllGather as AllGather
from .comm_func import AllReduce as AllReduce
from .comm_func import AlltoAll as AlltoAll
from .comm_func import Broadcast as Broadcast
from .comm_func import Receive as Receive
from .comm_func import ReduceOp as ReduceOp
from .comm_func import ReduceScatter as ReduceScatter
from .comm_func import Send as Send
from .comm_func import all_gather as all_gather
from .comm_func import all_gather_into_tensor as all_gather_into_tensor
from .comm_func import all_reduce as all_reduce
from .comm_func import all_to_all as all_to_all
from .comm_func import broadcast as broadcast
from .comm_func import halo_exchange as halo_exchange
from .comm_func import recv as recv
from .comm_func import reduce as reduce
from .comm_func import reduce_scatter as reduce_scatter
from .comm_func import reduce_scatter_tensor as reduce_scatter_tensor
from .comm_func import send as send
from .comm_func import sendrecv as sendrecv
from .decomposition import slab_bounds as slab_bounds
from .management import HCCL_WORLD_COMM_GROUP as HCCL_WORLD_COMM_GROUP
from .management import MCCL_WORLD_COMM_GROUP as MCCL_WORLD_COMM_GROUP
from .management import NCCL_WORLD_COMM_GROUP as NCCL_WORLD_COMM_GROUP
from .management import GlobalComm as GlobalComm
from .management import barrier as barrier
from .management import create_group as create_group
from .management import destroy_group as destroy_group
from .management import get_group_rank_from_world_rank as get_group_rank_from_world_rank
from .management import get_group_size as get_group_size
from .management import get_local_rank as get_local_rank
from .management import get_local_rank_size as get_local_rank_size
from .management import get_rank as get_rank
from .management import get_world_rank_from_group_rank as get_world_rank_from_group_rank
from .management import init as init
from .management import is_initialized as is_initialized
from .management import release as release
