"""Every backend kernel (core.backend.kernels) computes what its primitive's reference does.

A kernel is a fast path; the reference implementation in core/prims is the definition. Each
registered kernel needs a case here (inputs large enough to take the fast path, and small
ones that fall back), so a kernel added without its equivalence check fails
``test_every_kernel_has_a_case``.
"""

import numpy as np
import pytest

from diffsci.core import dtypes as _dt
from diffsci.core.backend import kernels
from diffsci.core.jit.fuse_softmax import softmax_add
from diffsci.core.prims._define import ALL

PRIMS = {p.name: p for p in (*ALL, softmax_add)}  # softmax_add: made by a jit pass, not in ALL
RNG = np.random.default_rng(0)


def _normal(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


# primitive name -> list of (args, params, rtol); float32 kernels may reorder sums (a few ulp)
CASES = {}

# ---- elementwise (core/backend/cpu_impls/elementwise.py) ----------------------------------
# native loops from 256 elements (erf, logistic: 2048; tanh's backward: 2^18); threaded
# arithmetic from 2 * PARALLEL_GRAIN (65536)
_BIG, _HUGE, _SMALL = (300, 257), (512, 513), (3, 5)
CASES.update(
    {
        "erf": [
            ((_normal(*_BIG),), {}, 1e-6),  # native float32
            ((_normal(*_BIG, dtype=np.float64),), {}, 1e-13),  # native float64
            ((_normal(*_SMALL),), {}, 1e-6),  # the float32 rational approximation
            ((_normal(*_BIG, dtype=np.float16),), {}, 1e-3),
            ((_normal(*_SMALL, dtype=np.float64),), {}, 0),  # scipy: the reference itself
        ],
        "logistic": [
            ((_normal(*_BIG) * 30,), {}, 1e-6),
            ((_normal(*_BIG, dtype=np.float64) * 30,), {}, 1e-14),
            ((_normal(*_SMALL),), {}, 0),  # numpy in place: the reference's operations
            ((_normal(*_BIG, dtype=np.float16),), {}, 0),
        ],
        "gelu": [
            ((_normal(*_BIG),), {}, 1e-6),
            ((_normal(*_BIG, dtype=np.float64),), {}, 1e-13),
            ((_normal(*_SMALL),), {}, 0),
        ],
        "gelu_backward": [
            ((_normal(*_BIG), _normal(*_BIG)), {}, 1e-6),
            ((_normal(*_BIG, dtype=np.float64), _normal(*_BIG, dtype=np.float64)), {}, 1e-13),
            ((_normal(_BIG[1]), _normal(*_BIG)), {}, 0),  # broadcasting: numpy's path
            ((_normal(*_SMALL), _normal(*_SMALL)), {}, 0),
        ],
        "gelu_tanh": [
            ((_normal(*_BIG),), {}, 1e-6),
            ((_normal(*_BIG, dtype=np.float64),), {}, 1e-13),
            ((_normal(*_SMALL),), {}, 0),
        ],
        "gelu_tanh_backward": [
            ((_normal(*_BIG), _normal(*_BIG)), {}, 1e-6),
            ((_normal(*_BIG, dtype=np.float64), _normal(*_BIG, dtype=np.float64)), {}, 1e-13),
            ((_normal(_BIG[1]), _normal(*_BIG)), {}, 0),  # broadcasting: numpy's path
            ((_normal(*_SMALL), _normal(*_SMALL)), {}, 0),
        ],
        "tanh_backward": [
            ((_normal(*_HUGE), np.tanh(_normal(*_HUGE))), {}, 0),  # bit-identical by design
            ((_normal(*_HUGE, dtype=np.float64), _normal(*_HUGE, dtype=np.float64)), {}, 0),
            ((_normal(*_BIG), _normal(*_BIG)), {}, 0),  # below the native threshold
            ((_normal(*_SMALL), _normal(*_SMALL)), {}, 0),
        ],
        "tanh_backward_t": [
            ((_normal(*_HUGE), _normal(*_HUGE), _normal(*_HUGE)), {}, 0),
            ((_normal(*_SMALL), _normal(*_SMALL), _normal(*_SMALL)), {}, 0),
        ],
    }
)
for _name in ("add", "sub", "mul"):
    CASES[_name] = [
        ((_normal(*_BIG), _normal(*_BIG)), {}, 0),  # one IEEE operation: the same bits
        ((_normal(*_BIG, dtype=np.float64), _normal(_BIG[1], dtype=np.float64)), {}, 0),
        ((_normal(_BIG[0], 1), _normal(*_BIG)), {}, 0),  # a column broadcast along rows
        ((_normal(*_SMALL), _normal(*_SMALL)), {}, 0),
        ((np.arange(70000), np.arange(70000)), {}, 0),  # integers: numpy
    ]


# ---- arrays (core/backend/cpu_impls/arrays.py) -----------------------------------------------
def _lower(*shape, dtype=np.float64):
    """Well-conditioned lower-triangular matrices [..., n, n] (the upper triangle is noise that
    a triangular solve must not read)."""
    n = shape[-1]
    return _normal(*shape, dtype=dtype) + 2 * n * np.eye(n, dtype=dtype)


# a transposed view whose unit-stride axis is not among its last two: the tiled copy (from
# cpu_layout.MIN_SIZE = 32768 elements); a small one takes numpy's copy
_PERMUTED = _normal(64, 48, 40).transpose(2, 1, 0)  # [40, 48, 64]
_PERMUTED_SMALL = _normal(4, 5, 6).transpose(2, 1, 0)  # [6, 5, 4]
CASES.update(
    {
        "reshape": [
            ((_PERMUTED,), {"shape": (40, 48 * 64)}, 0),  # no view possible: tiled copy
            ((_normal(256, 256)[:, :128],), {"shape": (256, 2, 64)}, 0),  # a strided view
            ((_PERMUTED_SMALL,), {"shape": (30, 4)}, 0),  # small: the reference
        ],
        "matmul": [
            ((_PERMUTED, _normal(64, 16)), {}, 0),  # x copied in tiles before the GEMM
            ((_normal(40, 10, 48), _normal(32, 48, 40).transpose(2, 1, 0)), {}, 0),  # y, batched
            ((_PERMUTED_SMALL, _normal(4, 3)), {}, 0),  # small: numpy's copy
        ],
        "real": [
            # a permuted complex array: tiled copy (the product is contiguous, then transposed)
            (((_normal(64, 48, 40) * (1 + 2j)).astype(np.complex64).transpose(2, 0, 1),), {}, 0),
            (((_normal(4, 5, 6) + 0.5j).transpose(2, 1, 0),), {}, 0),  # small: the reference
        ],
        "imag": [
            (((_normal(64, 48, 40, dtype=np.float64) * (1 - 2j)).transpose(1, 2, 0),), {}, 0),
            ((_normal(64, 48, 40) * 1j,), {}, 0),  # contiguous: the reference
        ],
        "triangular_solve": [
            ((_lower(40, 40), _normal(40, 3, dtype=np.float64)), {"lower": True}, 1e-12),
            ((_lower(3, 5, 5), _normal(3, 5, 2, dtype=np.float64)), {"lower": False}, 1e-12),
            ((_lower(33, 33, dtype=np.float32), _normal(33, 1)), {"lower": True}, 1e-5),
            # many small matrices: the reference's batched LU solve
            ((_lower(8, 4, 4), _normal(8, 4, 2, dtype=np.float64)), {"lower": True}, 0),
        ],
        "fft": [
            (
                ((_normal(64, 48) + 1j * _normal(64, 48)).astype(np.complex64),),
                {"axes": (0, 1), "inverse": False, "norm": "backward"},
                1e-5,
            ),
            (
                ((_normal(5, 6, dtype=np.float64) + 0j),),
                {"axes": (1,), "inverse": True, "norm": "ortho"},
                1e-12,
            ),
        ],
        "rfft": [
            ((_normal(32, 30),), {"axes": (1,), "norm": "forward"}, 1e-5),
            ((_normal(3, 4, 5, dtype=np.float64),), {"axes": (0, 2), "norm": "backward"}, 1e-12),
        ],
        "irfft": [
            (
                ((_normal(8, 16) + 1j * _normal(8, 16)).astype(np.complex64),),
                {"axes": (1,), "n": 30, "norm": "backward"},
                1e-5,
            ),
            (
                ((_normal(3, 4, dtype=np.float64) + 0j),),
                {"axes": (0, 1), "n": 7, "norm": "ortho"},
                1e-12,
            ),
        ],
    }
)


# ---- nn (core/backend/cpu_impls/nn.py) ------------------------------------------------------
# native row passes from 256 elements (float32/float64); otherwise numpy, block by block
_MASKED = _normal(300, 257) * 4
_MASKED[0, :10] = -np.inf  # -inf entries: the max-shifted path of the numpy kernel


def _rows_and_affine(shape, n_axes, dtype):
    trailing = shape[len(shape) - n_axes :]
    return (
        _normal(*shape, dtype=dtype),
        _normal(*trailing, dtype=dtype),
        _normal(*trailing, dtype=dtype),
    )


CASES["softmax"] = [
    ((_normal(300, 257) * 4,), {"axis": 1}, 1e-6),  # native, float32
    ((_normal(300, 257, dtype=np.float64) * 4,), {"axis": 1}, 1e-14),  # native, float64
    ((_normal(300, 257),), {"axis": 0}, 1e-6),  # a leading axis: numpy, unshifted (in range)
    ((_MASKED,), {"axis": 0}, 1e-6),  # numpy, shifted
    ((_normal(3, 5) * 100,), {"axis": 1}, 1e-6),  # small, out of exp's range: numpy, shifted
    ((_normal(300, 257, dtype=np.float16),), {"axis": 1}, 1e-3),  # no native float16: numpy
]
CASES["softmax_add"] = [
    ((_normal(8, 40, 64) * 3, _normal(40, 64)), {"axis": 2}, 1e-6),  # native
    ((_normal(8, 40, 64, dtype=np.float64), _normal(64, dtype=np.float64)), {"axis": 2}, 1e-14),
    ((_normal(8, 40, 64), _normal(8, 1, 64)), {"axis": 2}, 0),  # a layout native skips
]
CASES["normalize"] = [
    ((_normal(300, 257),), {"n_axes": 1, "eps": 1e-5}, 1e-6),  # native
    ((_normal(4, 30, 20, dtype=np.float64),), {"n_axes": 2, "eps": 1e-5}, 1e-14),  # native
    ((_normal(3, 5),), {"n_axes": 1, "eps": 1e-5}, 1e-6),  # small: numpy rows
    ((_normal(300, 257, dtype=np.float16),), {"n_axes": 1, "eps": 1e-5}, 3e-3),  # numpy blocks
    ((_normal(300, 257).astype(_dt.bfloat16),), {"n_axes": 1, "eps": 1e-5}, 2e-2),  # in float32
    ((_normal(3, 5, dtype=np.float64) + 1j * _normal(3, 5),), {"n_axes": 1, "eps": 1e-5}, 1e-14),
]
CASES["layer_norm"] = [
    (_rows_and_affine((300, 257), 1, np.float32), {"n_axes": 1, "eps": 1e-5}, 1e-6),
    (_rows_and_affine((4, 30, 20), 2, np.float64), {"n_axes": 2, "eps": 1e-5}, 1e-14),
    (_rows_and_affine((3, 5), 1, np.float32), {"n_axes": 1, "eps": 1e-5}, 1e-6),
    (_rows_and_affine((300, 257), 1, np.float16), {"n_axes": 1, "eps": 1e-5}, 3e-3),
    (_rows_and_affine((300, 257), 1, _dt.bfloat16), {"n_axes": 1, "eps": 1e-5}, 2e-2),
]


def test_every_kernel_has_a_case():
    missing = [name for name in kernels.registered() if name not in CASES]
    assert not missing, f"kernels without an equivalence case in {__file__}: {missing}"


@pytest.mark.parametrize(
    "name, case",
    [(name, i) for name in sorted(CASES) for i in range(len(CASES[name]))],
)
def test_kernel_matches_reference(name, case):
    args, params, rtol = CASES[name][case]
    prim = PRIMS[name]
    assert prim.impl is not prim.reference, f"{name}: no kernel is registered any more"
    got = prim.impl(np, *args, **params)
    want = prim.reference(np, *args, **params)
    for g, w in zip(got, want) if isinstance(want, tuple) else [(got, want)]:
        assert g.shape == w.shape and g.dtype == w.dtype, (name, g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * float(np.abs(w).max(initial=1)))
