"""PDEBench's error metrics (Takamoto et al., "PDEBench: An Extensive Benchmark for Scientific
Machine Learning", NeurIPS 2022 Datasets and Benchmarks, section 4 and appendix; the
definitions of ``metric_func`` in PDEBench's ``pdebench/models/metrics.py``), written from those
definitions in numpy, in float64.

Layout. ``pred`` and ``target`` are numpy arrays or ``core.Tensor`` of one shape, by default
PDEBench's ``[batch, *spatial, time, channels]`` (``layout="b...tc"``: 1, 2 or 3 spatial axes).
Other layouts are spelled with the letters ``b`` (batch), ``t`` (time), ``c`` (channels) and
``x``, ``y``, ``z`` or ``...`` (the spatial axes, in order): ``"bcxy"`` is a channel-first
field without a time axis, ``"btcxy"`` a channel-first trajectory. A missing ``t`` or ``c``
counts as an axis of length 1. Spatial grids are uniform, periodic for the Fourier metrics.

Each metric is first computed per sample ``b``, channel ``c`` and time ``t`` over the spatial
axes, then reduced as PDEBench does over the batch (a mean, except the max error's maximum and
cRMSE's root mean square), giving an array ``[channels, time]``. ``reduce`` then picks the output:

- ``"mean"`` (default): a float, the mean over channels and times (PDEBench's ``if_mean=True``);
- ``"none"``: the array ``[channels, time]`` (PDEBench's ``if_mean=False``);
- ``"channel"``: ``[channels]``, the mean over times; ``"time"``: ``[time]``, the mean over
  channels.

With ``e = pred - target``, ``mean_x`` the mean over the N spatial points and ``mean_b`` over the
batch:

- RMSE = mean_b sqrt(mean_x e^2)
- nRMSE = mean_b [ sqrt(mean_x e^2) / sqrt(mean_x target^2) ] (PDEBench's main metric)
- max error = max_b max_x |e| (the ``"mean"`` scalar averages this over channels and times, as
  PDEBench does; ``np.max`` of ``reduce="none"`` is the overall maximum)
- cRMSE = sqrt(mean_b (mean_x e)^2): the error of the conserved quantity, the spatial mean
- bRMSE = mean_b sqrt(mean over boundary points of e^2); the boundary points are the two faces
  of every spatial axis (the end points in 1D, the four edges in 2D, the six faces in 3D), a
  point on several faces counted once per face, as PDEBench counts them. (PDEBench's own 3D
  branch mixes the channels into the spatial sum; here every dimension treats channels alike.)
- fRMSE (low, mid, high): the error's discrete Fourier transform ``E_k``; in 1D
  ``F_k = sqrt(mean_b |E_k|^2) / N * L`` for the ``rfft`` modes k = 0..N//2; in 2D and 3D the
  squared amplitudes of the modes with every index in [0, n_a // 2) are summed in shells
  ``floor(|k|)`` < min(n_a // 2), and ``F_s = sqrt(mean_b sum_shell |E_k|^2) / N * prod(L)``.
  The bands average F over k (or s) in [0, i_low), [i_low, i_high), [i_high, end) with PDEBench's
  i_low = 4, i_high = 12 (an empty band is NaN). L: ``domain_lengths``.

relative L2 is not RMSE: it is the ratio of norms ``||e|| / ||target||`` taken per sample over
all spatial points, times and channels (the relative L2 loss of the FNO paper, Li et al. 2021),
then averaged over the batch; ``reduce="channel"``/``"time"`` keep the channel/time axis out of
the norms, ``reduce="none"`` keeps both (and then equals nRMSE's ``"none"``).

A zero target makes nRMSE and relative L2 infinite (NaN where the error is zero too); no warning.
"""

import math

import numpy as np

__all__ = [
    "PDEBENCH_I_HIGH",
    "PDEBENCH_I_LOW",
    "brmse",
    "crmse",
    "frmse",
    "max_error",
    "nrmse",
    "pde_metrics",
    "relative_l2",
    "rmse",
]

PDEBENCH_I_LOW = 4  # first mode of the mid band (PDEBench's iLow)
PDEBENCH_I_HIGH = 12  # first mode of the high band (PDEBench's iHigh)
_REDUCE = ("mean", "none", "channel", "time")
_SPATIAL = "xyz"


# ---- input handling -------------------------------------------------------------------------


def _as_float64(x, name):
    if hasattr(x, "asnumpy"):  # core.Tensor
        x = x.asnumpy()
    arr = np.asarray(x)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name}: expected a real array, got dtype {arr.dtype}")
    return arr.astype(np.float64, copy=False)


def _parse_layout(layout, ndim):
    """Axis order that turns an array of ``layout`` into ``[b, c, *spatial, t]``, and the
    number of spatial axes."""
    if not isinstance(layout, str):
        raise TypeError(f"layout must be a str such as 'b...tc', got {layout!r}")
    letters = layout.replace("...", "*")
    if "*" in letters:
        if letters.count("*") > 1 or any(ch in letters for ch in _SPATIAL):
            raise ValueError(f"layout {layout!r}: use either '...' or x/y/z for the spatial axes")
        n_spatial = ndim - (len(letters) - 1)
    else:
        n_spatial = sum(ch in _SPATIAL for ch in letters)
    if not 1 <= n_spatial <= 3:
        raise ValueError(
            f"layout {layout!r} with an array of {ndim} dimensions gives {n_spatial} spatial "
            "axes; expected 1, 2 or 3"
        )
    expanded = letters.replace("*", "s" * n_spatial)
    for ch in _SPATIAL:
        expanded = expanded.replace(ch, "s")
    if len(expanded) != ndim:
        raise ValueError(
            f"layout {layout!r} describes {len(expanded)} axes, but the arrays have {ndim}"
        )
    bad = set(expanded) - set("btcs")
    if bad or "b" not in expanded or any(expanded.count(ch) > 1 for ch in "btc"):
        raise ValueError(
            f"layout {layout!r}: expected one 'b', at most one 't' and one 'c', and spatial "
            "axes as x/y/z or '...'"
        )
    return expanded, n_spatial


def _canonical(pred, target, layout, initial_step):
    """``pred`` and ``target`` as float64 arrays ``[b, c, *spatial, t]``."""
    p = _as_float64(pred, "pred")
    t = _as_float64(target, "target")
    if p.shape != t.shape:
        raise ValueError(f"pred has shape {p.shape} but target has shape {t.shape}")
    expanded, _ = _parse_layout(layout, p.ndim)
    for ch in "tc":  # missing time / channel axes become axes of length 1 at the end
        if ch not in expanded:
            p, t, expanded = p[..., None], t[..., None], expanded + ch
    spatial = [i for i, ch in enumerate(expanded) if ch == "s"]
    order = [expanded.index("b"), expanded.index("c"), *spatial, expanded.index("t")]
    p, t = p.transpose(order), t.transpose(order)
    if initial_step:
        if not isinstance(initial_step, int) or initial_step < 0 or initial_step >= p.shape[-1]:
            raise ValueError(
                f"initial_step must be an int in [0, {p.shape[-1]}) (the time steps), "
                f"got {initial_step!r}"
            )
        p, t = p[..., initial_step:], t[..., initial_step:]
    if p.shape[0] == 0 or any(n == 0 for n in p.shape[2:-1]):
        raise ValueError(f"empty batch or grid: canonical shape [b, c, *spatial, t] = {p.shape}")
    return p, t


def _reduce(per_ct, reduce):
    """``[c, t]`` -> the output asked for by ``reduce``."""
    if reduce == "none":
        return per_ct
    if reduce == "channel":
        return per_ct.mean(axis=1)
    if reduce == "time":
        return per_ct.mean(axis=0)
    if reduce == "mean":
        return float(per_ct.mean())
    raise ValueError(f"reduce must be one of {_REDUCE}, got {reduce!r}")


def _spatial_axes(a):
    return tuple(range(2, a.ndim - 1))


# ---- the metrics ----------------------------------------------------------------------------


def rmse(pred, target, *, layout="b...tc", initial_step=0, reduce="mean"):
    """Root mean square error over space, averaged over the batch.

    Args:
        pred, target: arrays (numpy or core.Tensor) of one shape in ``layout`` (module
            docstring; default PDEBench's ``[batch, *spatial, time, channels]``).
        layout: axis letters, e.g. ``"b...tc"``, ``"bxytc"``, ``"bcxy"``.
        initial_step: time steps to drop from the front (PDEBench's ``initial_step``: the
            context a model was given).
        reduce: "mean" (float), "none" ([channels, time]), "channel" ([channels]) or "time"
            ([time]).

    Returns:
        The RMSE in the units of the field, float64.
    """
    p, t = _canonical(pred, target, layout, initial_step)
    per = np.sqrt(np.mean((p - t) ** 2, axis=_spatial_axes(p)))  # [b, c, t]
    return _reduce(per.mean(axis=0), reduce)


def nrmse(pred, target, *, layout="b...tc", initial_step=0, reduce="mean"):
    """Normalised RMSE: per sample, channel and time, RMSE / RMS(target) over space; averaged
    over the batch (PDEBench's main metric; dimensionless). Arguments as :func:`rmse`."""
    p, t = _canonical(pred, target, layout, initial_step)
    axes = _spatial_axes(p)
    with np.errstate(divide="ignore", invalid="ignore"):
        per = np.sqrt(np.mean((p - t) ** 2, axis=axes)) / np.sqrt(np.mean(t**2, axis=axes))
    return _reduce(per.mean(axis=0), reduce)


def relative_l2(pred, target, *, layout="b...tc", initial_step=0, reduce="mean"):
    """Relative L2 error ``||pred - target||_2 / ||target||_2`` per sample, averaged over the
    batch (dimensionless; FNO's relative L2 loss). The norms run over space and over the axes
    ``reduce`` does not keep: "mean" -> over space, time and channels (a float); "channel" ->
    over space and time ([channels]); "time" -> over space and channels ([time]); "none" -> over
    space ([channels, time], equal to nRMSE's). Other arguments as :func:`rmse`."""
    p, t = _canonical(pred, target, layout, initial_step)
    axes = _spatial_axes(p)
    e2 = np.sum((p - t) ** 2, axis=axes)  # [b, c, t]
    t2 = np.sum(t**2, axis=axes)
    if reduce == "mean":
        e2, t2 = e2.sum(axis=(1, 2)), t2.sum(axis=(1, 2))
    elif reduce == "channel":
        e2, t2 = e2.sum(axis=2), t2.sum(axis=2)
    elif reduce == "time":
        e2, t2 = e2.sum(axis=1), t2.sum(axis=1)
    elif reduce != "none":
        raise ValueError(f"reduce must be one of {_REDUCE}, got {reduce!r}")
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.sqrt(e2) / np.sqrt(t2)
    out = ratio.mean(axis=0)
    return float(out) if reduce == "mean" else out


def max_error(pred, target, *, layout="b...tc", initial_step=0, reduce="mean"):
    """Largest absolute error over space and batch, per channel and time; the "mean" scalar
    is PDEBench's mean of those maxima over channels and times. Arguments as :func:`rmse`."""
    p, t = _canonical(pred, target, layout, initial_step)
    per = np.max(np.abs(p - t), axis=(0, *_spatial_axes(p)))  # [c, t]
    return _reduce(per, reduce)


def crmse(pred, target, *, layout="b...tc", initial_step=0, reduce="mean"):
    """Conserved-quantity RMSE: the root mean square over the batch of the error of the spatial
    mean, ``sqrt(mean_b (mean_x pred - mean_x target)^2)`` (PDEBench's ``err_CSV``). Arguments as
    :func:`rmse`."""
    p, t = _canonical(pred, target, layout, initial_step)
    d = np.mean(p - t, axis=_spatial_axes(p))  # [b, c, t]
    return _reduce(np.sqrt(np.mean(d**2, axis=0)), reduce)


def brmse(pred, target, *, layout="b...tc", initial_step=0, reduce="mean"):
    """Boundary RMSE: per sample, channel and time, the RMS error over the two faces of every
    spatial axis (module docstring), averaged over the batch. Arguments as :func:`rmse`."""
    p, t = _canonical(pred, target, layout, initial_step)
    e2 = (p - t) ** 2
    axes = _spatial_axes(e2)
    total = 0.0
    count = 0
    for a in axes:
        others = tuple(b for b in axes if b != a)
        for end in (0, -1):
            face = np.take(e2, [end], axis=a)
            total = total + np.sum(face, axis=axes)
        count += 2 * math.prod(e2.shape[b] for b in others)
    return _reduce(np.sqrt(total / count).mean(axis=0), reduce)


def _fourier_spectrum(p, t, domain_lengths):
    """PDEBench's error spectrum ``[c, n_bins, t]`` (module docstring)."""
    axes = _spatial_axes(p)
    n = [p.shape[a] for a in axes]
    lengths = np.broadcast_to(np.asarray(domain_lengths, dtype=np.float64), (len(axes),))
    e = p - t
    if len(axes) == 1:
        power = np.abs(np.fft.rfft(e, axis=2)) ** 2  # [b, c, n//2 + 1, t]
        return np.sqrt(power.mean(axis=0)) / n[0] * lengths[0]
    power = np.abs(np.fft.fftn(e, axes=axes)) ** 2
    half = [m // 2 for m in n]
    power = power[(slice(None), slice(None), *(slice(0, h) for h in half))]  # first quadrant
    grids = np.meshgrid(*(np.arange(h) for h in half), indexing="ij")
    shell = np.floor(np.sqrt(sum(g.astype(np.float64) ** 2 for g in grids))).astype(np.int64)
    n_bins = min(half)
    binned = np.zeros((p.shape[0], p.shape[1], n_bins, p.shape[-1]))
    flat_shell = shell.ravel()
    flat_power = power.reshape(p.shape[0], p.shape[1], -1, p.shape[-1])
    keep = flat_shell < n_bins
    for s in range(n_bins):  # a handful of shells: one masked sum each
        binned[:, :, s] = flat_power[:, :, keep & (flat_shell == s)].sum(axis=2)
    return np.sqrt(binned.mean(axis=0)) / math.prod(n) * math.prod(lengths.tolist())


def frmse(
    pred,
    target,
    *,
    band=None,
    layout="b...tc",
    initial_step=0,
    reduce="mean",
    i_low=PDEBENCH_I_LOW,
    i_high=PDEBENCH_I_HIGH,
    domain_lengths=1.0,
):
    """Fourier-space RMSE in the low, mid and high bands (module docstring).

    Args:
        band: "low", "mid" or "high" for one band; None for a dict of all three.
        i_low, i_high: band limits in modes (PDEBench: 4 and 12).
        domain_lengths: the domain's length along each spatial axis (a number for all),
            PDEBench's ``Lx, Ly, Lz``.
        Others as :func:`rmse`.

    Returns:
        One band's value (shaped by ``reduce``), or ``{"low": ..., "mid": ..., "high": ...}``.
    """
    if not 0 <= i_low <= i_high:
        raise ValueError(f"frmse: need 0 <= i_low <= i_high, got i_low={i_low}, i_high={i_high}")
    p, t = _canonical(pred, target, layout, initial_step)
    spectrum = _fourier_spectrum(p, t, domain_lengths)  # [c, bins, t]
    bounds = {"low": (0, i_low), "mid": (i_low, i_high), "high": (i_high, spectrum.shape[1])}
    if band is not None and band not in bounds:
        raise ValueError(f"frmse: band must be 'low', 'mid', 'high' or None, got {band!r}")
    out = {}
    for name, (lo, hi) in bounds.items():
        part = spectrum[:, lo:hi]
        per = part.mean(axis=1) if part.shape[1] else np.full((p.shape[1], p.shape[-1]), np.nan)
        out[name] = _reduce(per, reduce)
    return out if band is None else out[band]


def pde_metrics(
    pred,
    target,
    *,
    layout="b...tc",
    initial_step=0,
    reduce="mean",
    i_low=PDEBENCH_I_LOW,
    i_high=PDEBENCH_I_HIGH,
    domain_lengths=1.0,
):
    """Every metric at once, named: ``{"RMSE", "nRMSE", "relative_L2", "max_error", "cRMSE",
    "bRMSE", "fRMSE_low", "fRMSE_mid", "fRMSE_high"}`` (PDEBench's ``metric_func`` plus relative
    L2). Arguments as :func:`rmse` and :func:`frmse`."""
    kw = {"layout": layout, "initial_step": initial_step, "reduce": reduce}
    bands = frmse(pred, target, i_low=i_low, i_high=i_high, domain_lengths=domain_lengths, **kw)
    return {
        "RMSE": rmse(pred, target, **kw),
        "nRMSE": nrmse(pred, target, **kw),
        "relative_L2": relative_l2(pred, target, **kw),
        "max_error": max_error(pred, target, **kw),
        "cRMSE": crmse(pred, target, **kw),
        "bRMSE": brmse(pred, target, **kw),
        "fRMSE_low": bands["low"],
        "fRMSE_mid": bands["mid"],
        "fRMSE_high": bands["high"],
    }
