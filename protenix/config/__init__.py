"""Protenix configurations: variants by name (:func:`get_model_config`) as :class:`ConfigDict`."""

from .config import load_config as load_config
from .config import save_config as save_config
from .config_dict import ConfigDict as ConfigDict
from .model_configs import base_configs as base_configs
from .model_configs import get_model_config as get_model_config
from .model_configs import model_configs as model_configs
from .model_configs import model_names as model_names
