"""Training / test data of MindFlow's Kovasznay case: the unit square sampled by
``mindflow.data.Dataset`` into (domain, BC) batches."""

from copy import deepcopy

from diffsci.mindflow.data import Dataset
from diffsci.mindflow.geometry import Rectangle, generate_sampling_config


def create_dataset(config, n_samps=None):
    """Batches ``(domain [B, 2], BC [B, 2])``; ``n_samps``: one batch of that many of each."""
    if n_samps is not None:
        config = deepcopy(config)
        config["data"]["domain"]["size"] = n_samps
        config["data"]["BC"]["size"] = n_samps
        config["batch_size"] = n_samps
    sampling_config = generate_sampling_config(config["data"])
    region = Rectangle(
        "rectangle", **config["geometry"]["rectangle"], sampling_config=sampling_config
    )
    dataset = Dataset({region: ["domain", "BC"]})
    return dataset.create_dataset(
        batch_size=config["batch_size"], shuffle=True, prebatched_data=True, drop_remainder=True
    )
