"""Automatic differentiation: reverse mode (``reverse``), forward mode (``forward``), the
derivative-rule tables, and the user-facing transforms (``api``)."""
