"""``ConfigDict``: a dict with attribute access, as Protenix's ``ml_collections.ConfigDict``."""

import copy

__all__ = ["ConfigDict"]


class ConfigDict(dict):
    """A nested dict whose keys read and write as attributes (``cfg.model.pairformer.c_z``).

    Nested plain dicts are converted on the way in; :meth:`to_dict` gives plain dicts back.
    A missing key raises ``AttributeError`` (attribute access) or ``KeyError`` (indexing),
    naming the key and the keys that exist.
    """

    def __init__(self, data=None, **kwargs):
        super().__init__()
        for key, value in {**(data or {}), **kwargs}.items():
            self[key] = value

    def __setitem__(self, key, value):
        if isinstance(value, dict) and not isinstance(value, ConfigDict):
            value = ConfigDict(value)
        super().__setitem__(key, value)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"ConfigDict has no key {name!r}; keys: {sorted(self)}") from None

    def __setattr__(self, name, value):
        self[name] = value

    def __delattr__(self, name):
        try:
            del self[name]
        except KeyError:
            raise AttributeError(f"ConfigDict has no key {name!r}") from None

    def update(self, other=(), **kwargs):
        for key, value in dict(other, **kwargs).items():
            self[key] = value

    def copy(self):
        return ConfigDict(copy.deepcopy(self.to_dict()))

    def __deepcopy__(self, memo):
        return ConfigDict(copy.deepcopy(self.to_dict(), memo))

    def to_dict(self):
        """Plain nested dicts (lists copied)."""
        return {
            k: v.to_dict() if isinstance(v, ConfigDict) else copy.deepcopy(v)
            for k, v in self.items()
        }

    def __dir__(self):
        return [*super().__dir__(), *(k for k in self if isinstance(k, str))]
