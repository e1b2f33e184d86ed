"""Every backend kernel (core.backend.kernels) computes what its primitive's reference does.

A kernel is a fast path; the reference implementation in core/prims is the definition. Each
registered kernel needs a case here (inputs large enough to take the fast path, and small
ones that fall back), so a kernel added without its equivalence check fails
``test_every_kernel_has_a_case``.
"""

import numpy as np
import pytest

from core.backend import kernels
from core.prims._define import ALL

PRIMS = {p.name: p for p in ALL}
RNG = np.random.default_rng(0)


def _normal(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


# primitive name -> list of (args, params, rtol); float32 kernels may reorder sums (a few ulp)
CASES = {}


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
