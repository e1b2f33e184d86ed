"""Point generators on the unit cube ``[0, 1)^d``: pseudo-random and quasi-random (low discrepancy).

MindFlow's sampler names (``mindflow/geometry/geom_utils.py``):

- ``"uniform"``: independent uniform draws (``numpy.random.Generator.random``);
- ``"lhs"``: Latin hypercube sampling (McKay, Beckman & Conover 1979), ``scipy.stats.qmc.LatinHypercube``:
  each of the ``n`` equal slices of every axis holds exactly one point of a draw of ``n``;
- ``"halton"``: scrambled Halton sequence (Halton 1960; Owen-type permutations),
  ``scipy.stats.qmc.Halton``;
- ``"sobol"``: scrambled Sobol' sequence (Sobol' 1967; Owen scrambling, Joe & Kuo direction
  numbers), ``scipy.stats.qmc.Sobol``.

A geometry maps these unit-cube points onto its interior or boundary (``base.Geometry``). All
randomness of one call goes through one ``UnitStream`` built from one ``numpy.random.Generator``,
so a call is deterministic per seed. ``seed=None`` takes a fresh seed from core's generator, so
``core.set_seed(s)`` makes a whole program's sampling repeatable.
"""

import math

import numpy as np

SAMPLER_TYPES = ("uniform", "lhs", "halton", "sobol")


def check_sampler(sampler, where="sampler"):
    """Return the sampler's name in lower case; ValueError naming ``where`` if it is unknown."""
    if not isinstance(sampler, str) or sampler.lower() not in SAMPLER_TYPES:
        raise ValueError(
            f"{where}: unknown sampler {sampler!r}; expected one of {', '.join(SAMPLER_TYPES)}"
        )
    return sampler.lower()


def make_rng(seed=None):
    """A ``numpy.random.Generator`` for ``seed``.

    Args:
        seed: None (a fresh seed drawn from core's generator of the current device, so that
            ``core.set_seed`` makes the draws repeatable), an int >= 0, a
            ``numpy.random.SeedSequence`` or a ``numpy.random.Generator`` (used as is).
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        from diffsci.core.random_state import eager_draw

        words = eager_draw("randint", (2,), np.int64, low=0, high=2**62)
        return np.random.default_rng([int(words[0]), int(words[1])])
    if isinstance(seed, (bool, np.bool_)) or not isinstance(
        seed, (int, np.integer, np.random.SeedSequence)
    ):
        raise TypeError(f"seed: expected None, an int or a numpy Generator, got {seed!r}")
    if not isinstance(seed, np.random.SeedSequence) and seed < 0:
        raise ValueError(f"seed: expected an int >= 0, got {seed}")
    return np.random.default_rng(seed)


class UnitStream:
    """A stream of points in ``[0, 1)^d`` from one sampler; successive draws continue it.

    The dimension ``d`` is fixed by the first ``draw`` (a Sobol' or Halton engine is built for
    it); later draws must ask for the same ``d``. Continuing draws matter for rejection
    sampling: the accepted points of a Sobol' stream are the first ones of one sequence, not a
    patchwork of restarted sequences. For ``"lhs"`` each draw is its own Latin hypercube of the
    size asked for.

    Args:
        sampler: one of ``SAMPLER_TYPES`` (case-insensitive).
        rng: a ``numpy.random.Generator``; also available to geometries as ``stream.rng`` for
            the few choices that are not unit-cube coordinates.
    """

    def __init__(self, sampler, rng):
        self.sampler = check_sampler(sampler)
        self.rng = rng
        self.dim = None
        self._engine = None
        self._buffer = None  # Sobol' points drawn ahead to keep the first draw a power of 2

    def spawn(self, count):
        """``count`` independent streams with the same sampler, seeded from this one's rng."""
        return [UnitStream(self.sampler, rng) for rng in self.rng.spawn(count)]

    def draw(self, n, dim):
        """The next ``n`` points of the stream.

        Args:
            n: number of points (int >= 0).
            dim: dimension of the points (int >= 1); the same on every call of one stream.

        Returns:
            float64 array of shape ``(n, dim)`` with entries in ``[0, 1)``.
        """
        n, dim = int(n), int(dim)
        if self.dim is None:
            self.dim = dim
            self._engine = self._build(dim)
        elif dim != self.dim:
            raise ValueError(
                f"UnitStream: this {self.sampler} stream draws {self.dim}-d points, asked for {dim}-d"
            )
        if n == 0:
            return np.empty((0, dim))
        if self.sampler == "uniform":
            return self.rng.random((n, dim))
        if self.sampler == "lhs":
            return self._engine.random(n)
        if self.sampler == "halton":
            return self._engine.random(n)
        return self._sobol(n)

    def _build(self, dim):
        if self.sampler == "lhs":
            return _qmc().LatinHypercube(d=dim, rng=self.rng)
        if self.sampler == "halton":
            return _qmc().Halton(d=dim, rng=self.rng)
        if self.sampler == "sobol":
            return _qmc().Sobol(d=dim, rng=self.rng)
        return None

    def _sobol(self, n):
        # Sobol' points are balanced in blocks of 2^m from the start of the sequence; scipy warns
        # when the first draw is not such a block. The first n points of the sequence are the
        # same whichever way they are drawn, so the first draw is rounded up to 2^m and the
        # surplus is kept for the next draws.
        if self._engine.num_generated == 0:
            self._buffer = self._engine.random_base2(max(0, math.ceil(math.log2(n))))
        out = []
        if self._buffer is not None and len(self._buffer):
            take = self._buffer[:n]
            self._buffer = self._buffer[n:]
            out.append(take)
            n -= len(take)
        if n > 0:
            out.append(self._engine.random(n))
        return out[0] if len(out) == 1 else np.concatenate(out, axis=0)


def sample(size, dimension, sampler="uniform", seed=None):
    """``size`` points in ``[0, 1)^dimension`` (MindFlow's ``geom_utils.sample``, seeded).

    Returns:
        float64 array of shape ``(size, dimension)``.
    """
    return UnitStream(sampler, make_rng(seed)).draw(size, dimension)


def rejection_sample(n, stream, box_min, box_max, accept, what="shape"):
    """``n`` points uniform in ``{x in box : accept(x)}`` by rejection from an axis-aligned box.

    Candidates ``box_min + u * (box_max - box_min)`` are drawn from ``stream`` (continued across
    rounds, so quasi-random samplers keep their order) and kept in stream order; each round draws
    what the acceptance rate seen so far says is still missing, plus a margin.

    Args:
        n: number of points wanted.
        stream: a ``UnitStream``.
        box_min, box_max: float64 arrays of shape ``(d,)``, the box's corners.
        accept: function from a ``(m, d)`` float64 array to a ``(m,)`` bool array.
        what: the shape's name, for the error when nothing is accepted.

    Returns:
        float64 array of shape ``(n, d)``.

    Raises:
        ValueError: if a million candidates (or 1000 n) give no accepted point: the region is
            empty or thinner than the sampling resolves.
    """
    box_min = np.asarray(box_min, dtype=np.float64)
    box_max = np.asarray(box_max, dtype=np.float64)
    dim = box_min.shape[0]
    width = box_max - box_min

    def draw(batch):
        x = box_min + stream.draw(batch, dim) * width
        return (x[np.asarray(accept(x), dtype=bool)],)

    (points,) = draw_rounds(
        n,
        draw,
        lambda drawn: (
            f"{what}: no point of {drawn} candidates in its bounding box "
            f"{box_min.tolist()}..{box_max.tolist()} is inside; the region looks empty"
        ),
    )
    return points


def draw_rounds(n, draw, nothing_kept):
    """The first ``n`` rows kept from rounds of candidates, in order.

    ``draw(batch)`` draws ``batch`` candidates and returns the kept ones as a tuple of arrays
    with one row per kept candidate. The first round draws ``n``; each later one what the kept
    fraction so far says is still missing, plus 10% and 16, or, while nothing has been kept, 4
    times the last round (at most 10^6).

    Args:
        n: rows wanted (``>= 0``; 0 gives empty arrays of the right trailing shape).
        draw: ``batch -> tuple of arrays [m, ...]``, ``m <= batch``.
        nothing_kept: ``drawn -> str``, the error's message once 10^6 (or ``1000 n``)
            candidates gave no row.

    Returns:
        a tuple of arrays ``[n, ...]``, one per array ``draw`` returns.

    Raises:
        ValueError: ``nothing_kept(drawn)``.
    """
    if n == 0:  # one small round gives the arrays' trailing shapes and dtypes
        return tuple(column[:0] for column in draw(1))
    kept, have, drawn = [], 0, 0
    batch = n
    while have < n:
        parts = draw(batch)
        kept.append(parts)
        have += len(parts[0])
        drawn += batch
        if have >= n:
            break
        if have == 0:
            if drawn >= max(10**6, 1000 * n):
                raise ValueError(nothing_kept(drawn))
            batch = min(4 * batch, 10**6)
            continue
        batch = math.ceil((n - have) / (have / drawn) * 1.1) + 16
    return tuple(np.concatenate(column, axis=0)[:n] for column in zip(*kept))


def _qmc():
    # scipy.stats takes ~1 s to import: loaded on the first quasi-random draw, not with datasets
    from scipy.stats import qmc

    return qmc
