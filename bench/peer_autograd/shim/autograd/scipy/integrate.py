"""``autograd.scipy.integrate``: not mapped."""


def __getattr__(name):
    raise AttributeError(f"[peer-missing] autograd.scipy.integrate.{name}: not mapped")
