"""CPU kernels for the nn primitives (see core.backend.kernels)."""
