"""MindElec's ``Constraints``: map each sub-dataset of a ``Dataset`` to the ``Problem`` method
that gives its residual, by the sub-dataset's constraint type:

======================  ==========================
constraint type         ``Problem`` method
======================  ==========================
``Equation``            ``governing_equation``
``BC``                  ``boundary_condition``
``IC``                  ``initial_condition``
``Label``, ``Function`` ``constraint_function``
======================  ==========================

A sub-dataset named ``D`` is matched with the problem of ``pde_dict`` whose key is ``D`` or
``D`` less a ``_BC``/``_IC``/``_domain`` suffix (MindElec's rule).
"""

from diffsci.datasets.geometry.dataset import Dataset

__all__ = ["Constraints"]

_METHODS = {
    "equation": "governing_equation",
    "bc": "boundary_condition",
    "ic": "initial_condition",
    "label": "constraint_function",
    "function": "constraint_function",
}


class _Instance:
    """The residual function of one sub-dataset: ``fn(*output, **columns) -> [N, k]``."""

    def __init__(self, problem, constraint_type):
        key = str(constraint_type).lower()
        if key not in _METHODS:
            raise ValueError(
                f"Constraints: unknown constraint type {constraint_type!r}; supported: "
                "Equation, BC, IC, Label, Function"
            )
        self.type = constraint_type
        self.problem = problem
        self.fn = getattr(problem, _METHODS[key])

    def __call__(self, *output, **kwargs):
        return self.fn(*output, **kwargs)


class Constraints:
    """The residual function of every sub-dataset (MindElec's ``Constraints``).

    Args:
        dataset: a ``mindelec.data.Dataset`` on which ``create_dataset`` was called.
        pde_dict: ``{name: Problem}``; see the module docstring for how names match.

    Attributes:
        dataset_columns_map, column_index_map, dataset_constraint_map: the dataset's maps.
        fn_cell_list: the residual functions; ``dataset_cell_index_map[sub-dataset]`` indexes it.

    Raises:
        TypeError: ``dataset`` not a Dataset, ``pde_dict`` not a dict.
        ValueError: ``create_dataset`` not called yet; a sub-dataset with no problem (the
            message lists the sub-datasets and the problem names).
    """

    def __init__(self, dataset, pde_dict):
        if not isinstance(dataset, Dataset):
            raise TypeError(
                f"Constraints: dataset must be a mindelec.data.Dataset, got {type(dataset).__name__}"
            )
        if not isinstance(pde_dict, dict):
            raise TypeError(f"Constraints: pde_dict must be a dict, got {type(pde_dict).__name__}")
        self.dataset_columns_map = dataset.dataset_columns_map
        self.column_index_map = dataset.column_index_map
        self.dataset_constraint_map = dataset.dataset_constraint_map
        if not self.dataset_columns_map or not self.column_index_map:
            raise ValueError(
                "Constraints: the dataset has no columns yet; call create_dataset() first"
            )
        self.pde_dict = pde_dict
        self.dataset_cell_index_map = {}
        self.fn_cell_list = []
        for dataset_name in self.dataset_columns_map:
            for name, problem in pde_dict.items():
                if name is None:
                    raise ValueError("Constraints: pde_dict has a None key")
                if dataset_name in (name, name + "_BC", name + "_IC", name + "_domain"):
                    self.dataset_cell_index_map[dataset_name] = len(self.fn_cell_list)
                    constraint = self.dataset_constraint_map[dataset_name]
                    self.fn_cell_list.append(_Instance(problem, constraint))
                    break
            else:
                raise ValueError(
                    f"Constraints: no problem in pde_dict for the sub-dataset {dataset_name!r}; "
                    f"pde_dict keys: {sorted(pde_dict)}; sub-datasets: "
                    f"{list(self.dataset_columns_map)}"
                )
