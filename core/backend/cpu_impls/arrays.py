"""CPU kernels for the arrays primitives (see core.backend.kernels)."""
