"""Protenix's building blocks: primitives, Pairformer, transformers, embedders, heads."""
