"""Kernels a backend registers for the primitives it runs faster than their reference code.

A primitive's implementation (``core/prims``) is written once, against the array namespace
``xp`` it is handed (numpy, cupy): that is its *reference* implementation, and it never asks
which backend runs it. A backend with a faster kernel for a primitive (a native C loop, a
cache-blocked variant, a library call the array API lacks) registers it here under the
primitive's name, as JAX registers a lowering per platform:

    @kernels.register("softmax")
    def _softmax(reference):
        def impl(xp, x, axis):
            if xp is np and axis == x.ndim - 1 and x.size >= NATIVE_MIN:
                out = native.softmax_last_axis(x)
                if out is not None:
                    return out
            return reference(xp, x, axis)  # other backends, small inputs, no compiler
        return impl

``register`` takes a factory: it receives the implementation it specializes and returns the
one primitives call, so the common case costs no extra call. ``specialize`` is called once
per primitive when it is declared (``core/prims/_define.py``); the registrations live in
``core/backend`` (``cpu_impls.py`` for the CPU), which is imported before any primitive.
Every registered kernel is checked against its reference in ``tests/core/test_kernels.py``.
"""

_FACTORIES = {}  # primitive name -> factories, applied in registration order


def register(name):
    """Decorator: register ``factory(reference) -> impl`` for the primitive called ``name``."""

    def deco(factory):
        _FACTORIES.setdefault(name, []).append(factory)
        return factory

    return deco


def specialize(name, reference):
    """The implementation the primitive ``name`` runs: ``reference`` wrapped by every kernel
    a backend registered for it (``reference`` itself when none did)."""
    impl = reference
    for factory in _FACTORIES.get(name, ()):
        impl = factory(impl)
    return impl


def registered():
    """Names of the primitives some backend has a kernel for (for the equivalence tests)."""
    return sorted(_FACTORIES)
