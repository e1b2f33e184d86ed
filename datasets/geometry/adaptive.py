"""Residual-based adaptive refinement of collocation points (RAR and RAD).

MindFlow has no adaptive sampling; DeepXDE users rely on two families, both written here from
their definitions in Wu, Zhu, Tan, Kartha & Lu, "A comprehensive study of non-adaptive and
residual-based adaptive sampling for physics-informed neural networks", CMAME 403 (2023) 115671:

- RAR (residual-based adaptive refinement, Lu et al. 2021, "DeepXDE", SIAM Review 63(1), and
  RAR-G in Wu et al.): evaluate the PDE residual on a dense set of random candidates and add the
  ``n_add`` candidates where ``|r|`` is largest (:func:`rar`).
- RAD (residual-based adaptive distribution, Wu et al. eq. (2)): draw points from the density

      p(x)  proportional to  |r(x)|^k / E[|r|^k] + c,

  approximated on the candidates (:func:`rad`). ``k`` sharpens the density around large
  residuals, ``c`` mixes in the uniform density (``c -> inf`` is uniform sampling; ``k = 1,
  c = 1`` spends half the expected points on each). RAR-D of the same paper adds :func:`rad`'s
  points to the existing set instead of replacing it.

Both are deterministic per ``seed`` (None: drawn from core's generator, so ``core.set_seed``
makes them repeatable): RAR's candidates are ``geom.sample_interior(n_candidates, sampler,
seed)``; RAD spawns two generators from the seed, one for its candidates, one for its draw.
"""

import numpy as np

from diffsci import core

from .samplers import make_rng

__all__ = ["evaluate_residual", "rad", "rar"]


def evaluate_residual(residual_fn, points, batch_size=None, tensor_input=False):
    """``|residual_fn(points)|`` as a float64 array of shape [n].

    Args:
        residual_fn: callable taking points [m, dim] (a float numpy array, or a ``core.Tensor``
            when ``tensor_input``) and returning the residual as [m], [m, 1] or [m, q] (numpy,
            ``core.Tensor`` or anything ``np.asarray`` reads). For a system of ``q`` equations
            the magnitudes of the ``q`` components are summed, as DeepXDE does for RAR/RAD.
        points: [n, dim] array.
        batch_size: evaluate at most this many points per call (bounds the memory a network's
            residual needs); None evaluates all at once.
        tensor_input: pass ``core.Tensor`` batches instead of numpy arrays.

    Returns:
        [n] float64 array of non-negative residual magnitudes.

    Raises:
        ValueError: a returned residual whose leading dimension is not the batch size, or that
            holds NaN/inf (the point is named).
    """
    points = np.asarray(points)
    n = len(points)
    step = n if not batch_size else int(batch_size)
    if step <= 0 and n:
        raise ValueError(f"evaluate_residual: batch_size must be positive, got {batch_size!r}")
    out = np.empty(n, dtype=np.float64)
    for start in range(0, n, max(step, 1)):
        chunk = points[start : start + step]
        arg = core.tensor(chunk) if tensor_input else chunk
        value = residual_fn(arg)
        if isinstance(value, core.Tensor):
            value = value.numpy()
        value = np.abs(np.asarray(value, dtype=np.float64))
        if value.ndim == 0 or value.shape[0] != len(chunk):
            raise ValueError(
                f"evaluate_residual: residual_fn returned shape {value.shape} for {len(chunk)} "
                f"points; expected [{len(chunk)}], [{len(chunk)}, 1] or [{len(chunk)}, q]"
            )
        value = value.reshape(len(chunk), -1).sum(axis=1)
        bad = ~np.isfinite(value)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"evaluate_residual: residual_fn returned {value[i]} at point {start + i} "
                f"({chunk[i].tolist()}); expected finite values"
            )
        out[start : start + len(chunk)] = value
    return out


def _candidates(geom, n_candidates, sampler, seed):
    n_candidates = int(n_candidates)
    if n_candidates <= 0:
        raise ValueError(f"n_candidates must be a positive integer, got {n_candidates!r}")
    return np.asarray(geom.sample_interior(n_candidates, sampler=sampler, seed=seed))


def rar(
    geom,
    residual_fn,
    n_candidates,
    n_add,
    sampler="uniform",
    seed=None,
    batch_size=None,
    tensor_input=False,
    return_residual=False,
):
    """Residual-based adaptive refinement (RAR-G): the candidates of largest residual.

    Draws ``n_candidates`` interior points of ``geom``, evaluates ``|residual_fn|`` on them and
    returns the ``n_add`` points where it is largest, in decreasing order of the residual (ties
    keep the candidates' order). Add them to the training set (``np.concatenate``).

    Args:
        geom: a ``datasets.geometry`` geometry (``GeometryWithTime`` gives space-time points).
        residual_fn: see :func:`evaluate_residual`.
        n_candidates: number of candidate points (>= ``n_add``).
        n_add: number of points returned.
        sampler: the candidates' sampler ("uniform", "lhs", "sobol", "halton").
        seed: int or None (None: the global seed of ``core.set_seed``).
        batch_size, tensor_input: see :func:`evaluate_residual`.
        return_residual: also return the residual magnitudes of the returned points.

    Returns:
        points [n_add, dim] in ``geom``'s dtype, and with ``return_residual`` their residuals
        [n_add] (float64).
    """
    n_add = int(n_add)
    if n_add < 0 or n_add > int(n_candidates):
        raise ValueError(f"rar: n_add must lie in [0, n_candidates={n_candidates}], got {n_add}")
    candidates = _candidates(geom, n_candidates, sampler, seed)
    residual = evaluate_residual(residual_fn, candidates, batch_size, tensor_input)
    order = _top(residual, n_add)
    points = candidates[order]
    return (points, residual[order]) if return_residual else points


def _top(values, k):
    """Indices of the ``k`` largest ``values`` in decreasing order, ties in index order (what
    a stable ``argsort(-values)[:k]`` gives), by a partition: O(n + k log k), not O(n log n)."""
    if k == 0:
        return np.empty(0, dtype=np.int64)
    kth = np.partition(values, len(values) - k)[len(values) - k]  # the k-th largest value
    above = np.flatnonzero(values > kth)
    ties = np.flatnonzero(values == kth)[: k - len(above)]
    chosen = np.concatenate([above, ties])
    return chosen[np.argsort(-values[chosen], kind="stable")]


def rad_probabilities(residual, k=1.0, c=1.0):
    """RAD's sampling probabilities on candidates (Wu et al. 2023, eq. (2)).

    ``p_i = (|r_i|^k / mean(|r|^k) + c) / sum_j (...)``. Where every residual is zero the
    density is uniform.

    Args:
        residual: [n] residual magnitudes.
        k: exponent, >= 0.
        c: uniform share, >= 0.

    Returns:
        [n] float64 probabilities summing to 1.
    """
    if k < 0 or c < 0:
        raise ValueError(f"rad: k and c must be >= 0, got k={k}, c={c}")
    power = np.abs(np.asarray(residual, dtype=np.float64)) ** k
    mean = power.mean()
    weight = power / mean + c if mean > 0 else np.ones_like(power)
    total = weight.sum()
    if not np.isfinite(total) or total <= 0:
        raise ValueError(f"rad: the density |r|^{k}/mean + {c} cannot be normalised")
    return weight / total


def rad(
    geom,
    residual_fn,
    n,
    k=1.0,
    c=1.0,
    n_candidates=None,
    sampler="uniform",
    seed=None,
    replace=False,
    batch_size=None,
    tensor_input=False,
):
    """Residual-based adaptive distribution (RAD): ``n`` points drawn with density
    ``|r|^k / E[|r|^k] + c`` (Wu et al. 2023, eq. (2)).

    The density is represented on ``n_candidates`` interior points (DeepXDE's recipe) and ``n``
    of them are drawn with probabilities :func:`rad_probabilities`, without replacement by
    default (so no point repeats). Use the result as the new collocation set (RAD) or append it
    to the old one (RAR-D).

    Args:
        geom: a ``datasets.geometry`` geometry.
        residual_fn: see :func:`evaluate_residual`.
        n: number of points returned.
        k, c: the density's exponent and uniform share (Wu et al. recommend k=1, c=1).
        n_candidates: candidates representing the density; default ``max(10 n, 1000)``.
        sampler: the candidates' sampler.
        seed: int or None (None: the global seed of ``core.set_seed``).
        replace: draw with replacement (exactly the density; points may repeat).
        batch_size, tensor_input: see :func:`evaluate_residual`.

    Returns:
        points [n, dim] in ``geom``'s dtype.
    """
    n = int(n)
    if n < 0:
        raise ValueError(f"rad: n must be >= 0, got {n}")
    if n_candidates is None:
        n_candidates = max(10 * n, 1000)
    if not replace and n > int(n_candidates):
        raise ValueError(
            f"rad: cannot draw n={n} points without replacement from n_candidates="
            f"{n_candidates} candidates; raise n_candidates or pass replace=True"
        )
    candidate_rng, choice_rng = make_rng(seed).spawn(2)
    candidates = _candidates(geom, n_candidates, sampler, candidate_rng)
    residual = evaluate_residual(residual_fn, candidates, batch_size, tensor_input)
    probs = rad_probabilities(residual, k, c)
    if not replace and np.count_nonzero(probs) < n:
        raise ValueError(
            f"rad: only {np.count_nonzero(probs)} candidates have a non-zero probability "
            f"(c={c}), fewer than n={n}; use c > 0, more candidates or replace=True"
        )
    index = choice_rng.choice(len(candidates), size=n, replace=replace, p=probs)
    return candidates[index]
