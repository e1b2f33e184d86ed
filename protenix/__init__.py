"""protenix: ByteDance's Protenix (an open AlphaFold 3 reproduction) on the core engine.

The module tree, class names, constructor/forward arguments and parameter names mirror the
PyTorch Protenix 2.0.0 (``protenix.model.protenix.Protenix``,
``protenix.model.modules.pairformer.PairformerBlock``, ``tri_mul_out.linear_a_p.weight``...),
so its official checkpoints load by name. Memory options use core's tools: ``core.recompute``
for training (``blocks_per_ckpt``) and row-chunked evaluation (``chunk_size``,
``core.evoformer_attention``) for long sequences at inference.
"""

from .config import get_model_config as get_model_config
from .model.protenix import Protenix as Protenix
from .model.weights import load_weights as load_weights
