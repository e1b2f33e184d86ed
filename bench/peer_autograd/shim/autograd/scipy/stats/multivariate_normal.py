"""``autograd.scipy.stats``: not mapped (diffsci has no distributions module)."""


def __getattr__(name):
    raise AttributeError(
        f"[peer-missing] autograd.scipy.stats.multivariate_normal.{name}: not mapped"
    )
