"""bfloat16 trunk: Protenix's mixed-precision choices on core.

Protenix 2.0.0 selects the precision with the top-level config key ``dtype`` ("fp32", "bf16",
"fp16"; ``runner/inference.py`` wraps the model in ``torch.autocast(dtype=...)``) and keeps
regions in float32 with ``skip_amp`` (``protenix/utils/torch_utils.py``
``autocasting_disable_decorator``: autocast off, floating arguments cast to float32). At
inference ``update_inference_configs`` sets ``skip_amp`` by length: the diffusion sampler stays
float32 up to 3840 tokens, the confidence head up to 2560 (not for protenix-v2).

Here the trunk modules follow their inputs' dtype: casting ``s``, ``z``, ``s_inputs`` (and the
template features) to bfloat16 with :func:`cast_floats` runs the Pairformer stack, the MSA
module and the template embedder in bfloat16. Parameters stay float32 and are cast to the
input's dtype per use (``protenix.model.triangular.layers.Linear``, as Protenix's Linear under
bf16); LayerNorm statistics and the attention logits/softmax are computed in float32 and cast
back (``LayerNorm``, ``core.evoformer_attention``), like autocast's float32 ops. No pair-sized
float32 tensor is kept (tests/protenix/test_bf16.py). :func:`autocast_disabled` is the
``skip_amp`` wrapper for the float32 regions (diffusion, confidence).
"""

import functools

from diffsci import core
from diffsci.core import dtypes as _dt

__all__ = ["autocast_disabled", "cast_floats", "compute_dtype", "skip_amp_for_inference"]

_NAMES = {"fp32": _dt.float32, "bf16": _dt.bfloat16, "fp16": _dt.float16}


def compute_dtype(name):
    """Protenix's ``configs.dtype`` name ("fp32", "bf16", "fp16") as a core dtype; a dtype is
    returned as is."""
    if isinstance(name, str):
        if name not in _NAMES:
            raise ValueError(f"dtype {name!r}: expected one of {sorted(_NAMES)}")
        return _NAMES[name]
    return _dt.canonical(name)


def cast_floats(tree, dtype):
    """Cast every floating Tensor in ``tree`` (nested tuples/lists/dicts; other leaves as they
    are) to ``dtype``; integer and boolean tensors are kept."""
    dtype = compute_dtype(dtype)

    def cast(x):
        if isinstance(x, core.Tensor):
            if _dt.is_floating(x.dtype) and x.dtype != dtype:
                return x.astype(dtype)
            return x
        if isinstance(x, dict):
            return {k: cast(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return type(x)(cast(v) for v in x)
        return x

    return cast(tree)


def skip_amp_for_inference(n_token, model_name):
    """Protenix 2.0.0's ``update_inference_configs``: which regions run in float32 under a
    low-precision ``dtype`` for a job of ``n_token`` tokens.

    Returns:
        ``{"sample_diffusion": bool, "confidence_head": bool}`` (True: float32).
    """
    n_token = int(n_token)
    if n_token > 2560 and model_name == "protenix-v2":
        raise ValueError(
            f"protenix-v2 does not support n_token > 2560 (got {n_token}): Protenix refuses it "
            "(out of memory)"
        )
    if n_token > 3840:
        return {"sample_diffusion": False, "confidence_head": False}
    if n_token > 2560:
        return {"sample_diffusion": True, "confidence_head": False}
    return {"sample_diffusion": True, "confidence_head": model_name != "protenix-v2"}


def autocast_disabled(disable):
    """Protenix's ``autocasting_disable_decorator``: with ``disable`` the wrapped function gets
    its floating Tensor arguments (positional and keyword, nested containers too) cast to
    float32; without, it is called unchanged."""

    def wrap(fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            if disable:
                args = cast_floats(args, _dt.float32)
                kwargs = cast_floats(kwargs, _dt.float32)
            return fn(*args, **kwargs)

        return run

    return wrap
