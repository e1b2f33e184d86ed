"""MindFlow's ``mindflow.utils``: configuration files, logging, timing.

``load_yaml_config(path)`` reads a YAML experiment file (keys ending in ``_path`` become
absolute); ``log_config(log_dir, model_name)`` sends the log to ``log_dir/model_name.log``;
``print_log(*msg)`` prints and logs; ``@log_timer`` prints a function's end-to-end time.
"""

from .check_func import check_param_type as check_param_type
from .check_func import check_param_value as check_param_value
from .load_config import load_yaml_config as load_yaml_config
from .log_utils import log_config as log_config
from .log_utils import print_log as print_log
from .time_utils import log_timer as log_timer
