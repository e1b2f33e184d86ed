"""CPU kernels for the elementwise primitives (see core.backend.kernels)."""
