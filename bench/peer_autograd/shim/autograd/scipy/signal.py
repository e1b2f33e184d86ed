"""``autograd.scipy.signal``: not mapped."""


def __getattr__(name):
    raise AttributeError(f"[peer-missing] autograd.scipy.signal.{name}: not mapped")
