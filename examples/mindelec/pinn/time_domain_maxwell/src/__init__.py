"""The time-domain Maxwell case's modules (MindElec's ``src`` package)."""

from .dataset import (
    LateWeightedTimeDomain,
    check_source_sampling,
    create_random_dataset,
    get_test_data,
    late_time_domain,
    src_sampling_radius,
)
from .lr_scheduler import MultiStepLR
from .maxwell import Maxwell2DMur, check_source
from .reference import load_or_make_reference, maxwell_reference, self_convergence

__all__ = [
    "LateWeightedTimeDomain",
    "Maxwell2DMur",
    "MultiStepLR",
    "check_source",
    "check_source_sampling",
    "create_random_dataset",
    "get_test_data",
    "late_time_domain",
    "load_or_make_reference",
    "maxwell_reference",
    "self_convergence",
    "src_sampling_radius",
]
