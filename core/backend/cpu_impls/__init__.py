"""The CPU backend's kernels for primitives (see ``core.backend.kernels``).

Each entry specializes one primitive's reference implementation for numpy arrays: native C
loops from ``cpu_kernels`` where a compiler exists, tiled copies from ``cpu_layout``,
scipy where numpy lacks a routine. Every kernel falls back to the reference for other array
types and for inputs too small to pay for a native call. One module per primitive family.
"""

from . import arrays, elementwise, nn  # noqa: F401  (each registers its kernels)
