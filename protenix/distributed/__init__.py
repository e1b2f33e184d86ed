"""Distributed Protenix: pair-axis sharding (dynamic axial parallelism) of the Pairformer on
``core.communication`` (MPI). See ``pair_sharding``."""

from .pair_sharding import ShardedPairformerStack as ShardedPairformerStack
from .pair_sharding import gather_rows as gather_rows
from .pair_sharding import shard_rows as shard_rows
from .pair_sharding import sharded_pairformer_block as sharded_pairformer_block
from .pair_sharding import sharded_pairformer_stack as sharded_pairformer_stack
from .pair_sharding import transpose_shard as transpose_shard
