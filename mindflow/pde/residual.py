"""PDE residuals as plain Python functions of the network and its input derivatives.

The alternative to the sympy front-end: a residual is a function of the network and a batch
that asks for the derivatives it needs by name, and returns tensors. Burgers' equation
(Raissi et al. 2019, Sec. 3.1.1), ``u_t + u u_x - nu u_xx = 0``::

    import math
    from diffsci.mindflow.pde.residual import derivatives

    NU = 0.01 / math.pi

    def burgers(net, x):                        # x: [N, 2] with columns (x, t)
        u, u_t, u_x, u_xx = derivatives(net, x, "u", "u_t", "u_x", "u_xx",
                                        in_vars="xt", out_vars="u")
        return u_t + u * u_x - NU * u_xx        # [N, 1]

    loss = lambda: (burgers(net, xb) ** 2).mean()
    grad_fn = core.value_and_grad(loss, None, net.trainable_params())   # also under core.jit

All derivatives asked for in one call share one derivative tower: one forward pass and one
reverse pass per gradient needed (``u_x`` and ``u_t`` come from the same pass, ``u_xx`` from
one more), with lower orders shared (:mod:`mindflow.pde.derivatives`). Any order and any mix
works (``"u_xxxx"``, ``"u_xxt"``). Each derivative is a ``[N, 1]`` column, differentiable
with respect to the network's Parameters.

Keys:

- ``"u_xt"``: output ``u`` differentiated once by ``x`` and once by ``t``, when every input
  name is one character; with longer names separate them by underscores: ``"u_x1_x1"``;
- a tuple of names ``("u", "x", "t")`` (or ``("x", "t")`` for a network with one output);
- a tuple of integers ``(j, i1, i2, ...)``: output column ``j``, input columns ``i1, i2...``
  (no names needed).

Without keys, :func:`derivatives` returns a lazy :class:`Derivatives`: ``d["u_xx"]`` computes
what is pending at first access; :meth:`Derivatives.request` queues keys so that they are
computed together.
"""

from diffsci import core

from .derivatives import DerivativePlan, evaluate, normal_component

__all__ = [
    "Derivatives",
    "derivatives",
    "divergence",
    "grad",
    "gradient",
    "laplacian",
    "normal_derivative",
]


def _names(names, what):
    if names is None:
        return None
    if isinstance(names, str):
        # "xt" -> ("x", "t"); "x1 x2" or "x1,x2" -> ("x1", "x2")
        names = names.replace(",", " ").split() if (" " in names or "," in names) else list(names)
    names = tuple(str(n) for n in names)
    if len(set(names)) != len(names):
        raise ValueError(f"{what} has repeated names: {names}")
    return names


class Derivatives:
    """The derivatives of ``fn`` at the points ``x``, computed on demand and cached.

    Args:
        fn: a Cell or function, inputs ``[N, d]`` -> outputs ``[N, m]`` (or ``[N]``), row by
            row.
        x: the points ``[N, d]``, a float Tensor.
        in_vars: names of the ``d`` input columns (``"xt"``, ``("x", "y", "t")``), or None.
        out_vars: names of the ``m`` output columns (``"uvp"``, ``("u", "v", "p")``), or None.
    """

    def __init__(self, fn, x, in_vars=None, out_vars=None):
        if not isinstance(x, core.Tensor) or x.ndim != 2:
            shape = tuple(x.shape) if hasattr(x, "shape") else type(x).__name__
            raise ValueError(f"x must be a Tensor [N, d], got {shape}")
        self.fn, self.x = fn, x
        self.in_vars = _names(in_vars, "in_vars")
        self.out_vars = _names(out_vars, "out_vars")
        if self.in_vars is not None and len(self.in_vars) != x.shape[1]:
            raise ValueError(
                f"in_vars {self.in_vars} names {len(self.in_vars)} inputs but x has "
                f"{x.shape[1]} columns ({tuple(x.shape)})"
            )
        if self.in_vars and self.out_vars and set(self.in_vars) & set(self.out_vars):
            raise ValueError(
                f"in_vars {self.in_vars} and out_vars {self.out_vars} share names "
                f"{sorted(set(self.in_vars) & set(self.out_vars))}"
            )
        self._n_out = len(self.out_vars) if self.out_vars is not None else None
        self._cache = {}
        self._grads = {}
        self._pending = set()
        self._pending_grads = set()

    # ---- keys -------------------------------------------------------------------------------
    def key(self, key):
        """The canonical ``(j, idx)`` of a key (see the module docstring)."""
        if isinstance(key, str):
            return self._from_string(key)
        if isinstance(key, int):
            return (self._out_index(key), ())
        if not isinstance(key, tuple) or not key:
            raise KeyError(f"a derivative key is a str or a non-empty tuple, got {key!r}")
        if all(isinstance(k, int) for k in key):
            return (self._out_index(key[0]), tuple(sorted(self._in_index(i) for i in key[1:])))
        head, rest = key[0], key[1:]
        if self.out_vars is not None and head in self.out_vars:
            j = self.out_vars.index(head)
        elif self.in_vars is not None and head in self.in_vars:
            j, rest = self._single_output(key), key
        else:
            raise KeyError(self._unknown(head, key))
        return (j, tuple(sorted(self._in_index(n) for n in rest)))

    def _from_string(self, key):
        if self.out_vars is None:
            raise KeyError(
                f"derivative key {key!r} needs names: pass out_vars= and in_vars= (or use an "
                "integer tuple (j, i1, i2, ...))"
            )
        head, _, suffix = key.partition("_")
        if head not in self.out_vars:
            raise KeyError(self._unknown(head, key))
        if not suffix:
            return (self.out_vars.index(head), ())
        if self.in_vars is None:
            raise KeyError(f"derivative key {key!r} needs in_vars= to name the input columns")
        if all(len(n) == 1 for n in self.in_vars):
            parts = list(suffix.replace("_", ""))
        else:
            parts = suffix.split("_")
        return (self.out_vars.index(head), tuple(sorted(self._in_index(p) for p in parts)))

    def _unknown(self, name, key):
        return (
            f"derivative key {key!r}: {name!r} is neither an output ({self.out_vars}) nor an "
            f"input ({self.in_vars})"
        )

    def _single_output(self, key):
        if self._n_out not in (None, 1):
            raise KeyError(
                f"derivative key {key!r} names no output but there are {self._n_out} outputs "
                f"{self.out_vars}"
            )
        return 0

    def _out_index(self, j):
        if isinstance(j, str):
            if self.out_vars is None or j not in self.out_vars:
                raise KeyError(f"unknown output {j!r}; out_vars are {self.out_vars}")
            return self.out_vars.index(j)
        if j < 0 or (self._n_out is not None and j >= self._n_out):
            raise KeyError(f"output index {j} out of range (out_vars {self.out_vars})")
        return int(j)

    def _in_index(self, i):
        d = self.x.shape[1]
        if isinstance(i, str):
            if self.in_vars is None or i not in self.in_vars:
                raise KeyError(
                    f"{i!r} is not an input variable (in_vars {self.in_vars}); derivatives are "
                    "taken with respect to inputs only"
                )
            return self.in_vars.index(i)
        if not 0 <= i < d:
            raise KeyError(f"input index {i} out of range for x with {d} columns")
        return int(i)

    # ---- evaluation -------------------------------------------------------------------------
    def request(self, *keys):
        """Queue ``keys`` so that the next evaluation computes them together; returns self."""
        for k in keys:
            c = self.key(k)
            if c not in self._cache:
                self._pending.add(c)
        return self

    def _flush(self):
        requests = set(self._pending)
        grads = set(self._pending_grads)
        self._pending.clear()
        self._pending_grads.clear()
        out = self._out_probe()
        plan = DerivativePlan(requests, self.x.shape[1], out, gradients=grads)
        _, derivs, gradients = evaluate(self.fn, self.x, plan)
        self._cache.update(derivs)
        for g in grads:
            self._grads[g] = gradients[g]

    def _out_probe(self):
        """The number of output columns (a forward pass at one point if no names say it)."""
        if self._n_out is None:
            out = self.fn(self.x[:1])
            self._n_out = 1 if out.ndim == 1 else out.shape[1]
        return self._n_out

    def __getitem__(self, key):
        c = self.key(key)
        if c not in self._cache:
            self._pending.add(c)
            self._flush()
        return self._cache[c]

    def get(self, *keys):
        """The derivatives ``keys`` as a tuple, computed together."""
        self.request(*keys)
        if self._pending:
            self._flush()
        return tuple(self._cache[self.key(k)] for k in keys)

    def gradient(self, out_index=0, wrt=()):
        """The gradient ``[N, d]`` of ``D^wrt u_j`` (``j`` = ``out_index``, an index or name;
        ``wrt`` a sequence of input names/indices) with respect to all inputs."""
        g = (self._out_index(out_index), tuple(sorted(self._in_index(i) for i in wrt)))
        if g not in self._grads:
            self._pending_grads.add(g)
            self._flush()
        return self._grads[g]


def derivatives(fn, x, *keys, in_vars=None, out_vars=None):
    """Derivatives of the network ``fn`` at the points ``x`` (see the module docstring).

    Args:
        fn: a Cell or function, inputs ``[N, d]`` -> outputs ``[N, m]`` (or ``[N]``).
        x: the points, a float Tensor ``[N, d]``.
        *keys: the derivatives wanted (``"u_xx"``, ``("u", "x", "x")``, ``(0, 0, 0)``), or
            one list of them.
        in_vars, out_vars: names of the input and output columns (a string of one-character
            names such as ``"xt"``, or a sequence).

    Returns:
        One ``[N, 1]`` Tensor for one key, a tuple of them for several or for a list (all from
        one derivative tower), or a lazy :class:`Derivatives` with no keys.
    """
    d = Derivatives(fn, x, in_vars, out_vars)
    if not keys:
        return d
    if len(keys) == 1 and isinstance(keys[0], list):  # derivatives(net, x, [k1, k2, ...])
        return d.get(*keys[0])
    res = d.get(*keys)
    return res[0] if len(keys) == 1 else res


def grad(fn, x, out_index=0, order=(0,)):
    """One derivative ``D^order u_j`` ``[N, 1]``: output column ``out_index`` differentiated
    once by each input column in ``order`` (e.g. ``(0, 0, 1)`` is ``u_xxy``)."""
    return Derivatives(fn, x)[(int(out_index), *(int(i) for i in order))]


def gradient(fn, x, out_index=0):
    """The gradient ``[N, d]`` of output column ``out_index`` with respect to all inputs."""
    return Derivatives(fn, x).gradient(out_index)


def laplacian(fn, x, out_index=0, dims=None):
    """``sum_i d2u_j / dx_i^2`` ``[N, 1]`` over the input columns ``dims`` (all by default; pass
    the spatial ones, e.g. ``dims=(0, 1)``, for a space-time input)."""
    dims = range(x.shape[1]) if dims is None else dims
    terms = Derivatives(fn, x).get(*[(int(out_index), int(i), int(i)) for i in dims])
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    return total


def divergence(fn, x, out_indices=None, dims=None):
    """``sum_k d u_{out_indices[k]} / d x_{dims[k]}`` ``[N, 1]``: the divergence of the vector
    field made of the output columns ``out_indices`` (default ``0..k-1``) over the input columns
    ``dims`` (default ``0..k-1``; ``k`` = the number of outputs if neither is given)."""
    d = Derivatives(fn, x)
    if out_indices is None and dims is None:
        out_indices = range(d._out_probe())
    if out_indices is None:
        out_indices = range(len(dims))
    if dims is None:
        dims = range(len(out_indices))
    out_indices, dims = list(out_indices), list(dims)
    if len(out_indices) != len(dims):
        raise ValueError(
            f"divergence: {len(out_indices)} output columns {out_indices} for {len(dims)} input "
            f"columns {dims}"
        )
    terms = d.get(*[(int(j), int(i)) for j, i in zip(out_indices, dims)])
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    return total


def normal_derivative(fn, x, normals, out_index=0):
    """``grad u_j . n`` ``[N, 1]`` with outward normals ``[N, k]`` (or one ``[k]``); the ``k``
    components pair with the first ``k`` input columns (space before time, as the geometry
    samplers give them)."""
    g = Derivatives(fn, x).gradient(out_index)
    return normal_component(g, normals)
