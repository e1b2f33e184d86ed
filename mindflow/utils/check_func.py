"""MindFlow's ``mindflow.utils.check_func``: the checks live in ``core.nn.check_args`` (shared
with core's PINN blocks and mindelec)."""

from diffsci.core.nn.check_args import check_lr_param as check_lr_param
from diffsci.core.nn.check_args import check_param_type as check_param_type
from diffsci.core.nn.check_args import check_param_value as check_param_value

__all__ = ["check_lr_param", "check_param_type", "check_param_value"]
