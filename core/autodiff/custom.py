"""``core.custom_vjp`` and ``core.custom_jvp``: functions with a derivative rule of your own.

The contracts are JAX's::

    f = core.custom_vjp(fun)                  # or @core.custom_vjp, or
    f.defvjp(fwd, bwd)                        # @functools.partial(core.custom_vjp, nondiff_argnums=(0,))
    fwd(*args) -> (out, residuals)
    bwd(*nondiff_args, residuals, g) -> tuple, one cotangent per other argument (None: zero)

    f = core.custom_jvp(fun)
    @f.defjvp
    def f_jvp(*nondiff_args, primals, tangents) -> (primal_out, tangent_out)

Arguments and outputs are pytrees (tuples, lists, dicts, NamedTuples, registered dataclasses);
residuals any pytree. The tensor leaves of the arguments are the call's inputs; other leaves
(Python numbers, strings) are passed through as they are and get no cotangent (bwd returns None
or anything for them). ``nondiff_argnums`` arguments are passed first to bwd / jvp; they may be
any Python value but not a traced tensor (pass those as ordinary arguments). Gradients flow
only to arguments: a tensor or Parameter that ``fun`` closes over gets none.

A call is bound like a primitive (``core.autodiff.custom_call``): reverse mode runs fwd and bwd
(custom_jvp: the jvp, transposed), forward mode runs the jvp (custom_vjp: differentiates
``fun``, as for any composite), vmap vmaps the rule, and ``core.jit`` traces whichever of them
runs, so ``jit(grad(f))`` compiles the custom backward. Rules written with core ops compose to
any order.
"""

import inspect

from .. import dtypes as _dt
from .. import tree as _tree
from ..primitive import Tracer, param_log, read_param
from ..tensor import Parameter, Tensor, resolve
from .custom_call import bind_custom, custom_jvp_rules, custom_vjp_rules

__all__ = ["custom_jvp", "custom_vjp"]


class _Custom:
    """What custom_vjp and custom_jvp share: the function, nondiff_argnums, the call."""

    kind = ""

    def __init__(self, fun, nondiff_argnums=()):
        self.fun = fun
        self.nondiff_argnums = tuple(int(i) for i in nondiff_argnums)
        self.__name__ = getattr(fun, "__name__", self.kind)
        self.__qualname__ = getattr(fun, "__qualname__", self.__name__)
        self.__doc__ = getattr(fun, "__doc__", None)
        self.__wrapped__ = fun

    def _rule(self, args):
        raise NotImplementedError

    def __call__(self, *args, **kwargs):
        if kwargs:  # keyword arguments become positional: the rules see one argument list
            args = inspect.signature(self.fun).bind(*args, **kwargs).args
        rule = self._rule(args)
        outs = bind_custom(rule, rule.xs)
        if rule.out_tree is _tree.LEAF:
            return outs[0]
        return _tree.unflatten(rule.out_tree, outs)

    def __repr__(self):
        return f"{self.kind}({self.__name__})"


class custom_vjp(_Custom):
    """A function whose reverse-mode derivative is ``bwd`` (see the module docstring).

    Forward mode (``jvp``, ``jacfwd``) of a custom_vjp function differentiates ``fun`` itself,
    as for any composite (JAX raises there instead): a VJP cannot give a JVP without
    transposing it. ``hessian`` (forward over reverse) runs bwd and differentiates it.

    Example:
        >>> @core.custom_vjp
        ... def clip_gradient(x):
        ...     return x
        >>> clip_gradient.defvjp(lambda x: (x, None), lambda res, g: (ops.clip(g, -1.0, 1.0),))
    """

    kind = "custom_vjp"

    def __init__(self, fun, nondiff_argnums=()):
        super().__init__(fun, nondiff_argnums)
        self.fwd = None
        self.bwd = None

    def defvjp(self, fwd, bwd):
        """Set ``fwd(*args) -> (out, residuals)`` and ``bwd(*nondiff, residuals, g) -> tuple``;
        returns this function."""
        self.fwd, self.bwd = fwd, bwd
        return self

    def _rule(self, args):
        if self.fwd is None:
            raise TypeError(f"custom_vjp {self.__name__}: call defvjp(fwd, bwd) before using it")
        return _VJPRule(self, args)


class custom_jvp(_Custom):
    """A function whose forward-mode derivative is ``jvp`` (see the module docstring).

    ``jvp(*nondiff, primals, tangents) -> (primal_out, tangent_out)`` must be linear in
    ``tangents`` (the contract of a JVP). Reverse mode uses it too: it runs the jvp once with
    its tangents as the leaves of a small reverse-mode tape and pulls back through that tape,
    which transposes the (linear) tangent map; ``fun`` is never differentiated.

    Example:
        >>> @core.custom_jvp
        ... def log1pexp(x):
        ...     return ops.log1p(ops.exp(x))
        >>> @log1pexp.defjvp
        ... def _(primals, tangents):
        ...     (x,), (t,) = primals, tangents
        ...     return log1pexp(x), t * ops.sigmoid(x)   # finite at x = 100
    """

    kind = "custom_jvp"

    def __init__(self, fun, nondiff_argnums=()):
        super().__init__(fun, nondiff_argnums)
        self.jvp = None

    def defjvp(self, jvp):
        """Set the jvp rule; returns ``jvp`` (so it can decorate it, as in JAX)."""
        self.jvp = jvp
        return jvp

    def _rule(self, args):
        if self.jvp is None:
            raise TypeError(f"custom_jvp {self.__name__}: call defjvp(jvp) before using it")
        return _JVPRule(self, args)


def _read(leaf):
    """A Parameter's current value (a tracer inside transformations); other leaves resolved."""
    if isinstance(leaf, Parameter):
        if param_log[0] is not None:  # core.recompute learns which Parameters a block reads
            param_log[0].append(leaf)
        return read_param(leaf)
    return resolve(leaf) if isinstance(leaf, Tensor) else leaf


class _Rule:
    """One call of a custom function, seen with flat inputs and outputs (``custom_call``).

    ``xs`` are the tensor leaves of the differentiable arguments, in order; the other leaves
    stay in ``leaves``. ``out_tree`` is set when fun, fwd or jvp has run (a staged loop body
    binds one rule once per step: the structure is the same each time).
    """

    table = None

    def __init__(self, owner, args):
        self.owner = owner
        self.kind = owner.kind
        self.name = owner.__name__
        nondiff = owner.nondiff_argnums
        for i in nondiff:
            if not 0 <= i < len(args):
                raise ValueError(
                    f"{self.kind} {self.name}: nondiff_argnums {nondiff} out of range for "
                    f"{len(args)} arguments"
                )
            for leaf in _tree.flatten(args[i])[0]:
                if isinstance(leaf, Tracer):
                    raise TypeError(
                        f"{self.kind} {self.name}: argument {i} is in nondiff_argnums but holds "
                        f"a traced tensor of shape {tuple(leaf.shape)}; pass it as an ordinary "
                        "argument (bwd may return None for it)"
                    )
        self.n_args = len(args)
        self.out_tree = None
        # the common call, tensors only, skips the pytree walks (a custom rule in a training step)
        self.plain = not nondiff and all(isinstance(a, Tensor) for a in args)
        if self.plain:
            self.nondiff = ()
            self.positions = list(range(len(args)))
            self.arg_trees = [_tree.LEAF] * len(args)
            self.leaves = self.xs = [_read(a) for a in args]
            self.dyn = self.positions
            return
        self.nondiff = tuple(args[i] for i in nondiff)
        self.positions = [i for i in range(len(args)) if i not in nondiff]
        self.arg_trees = []
        self.leaves = []
        for i in self.positions:
            leaves, tree = _tree.flatten(args[i])
            self.arg_trees.append(tree)
            self.leaves.extend(_read(x) for x in leaves)
        self.dyn = [k for k, x in enumerate(self.leaves) if isinstance(x, Tensor)]
        self.xs = [self.leaves[k] for k in self.dyn]

    def _diff_args(self, leaves):
        """The differentiable arguments rebuilt around ``leaves`` (one per leaf)."""
        res, start = [], 0
        for tree in self.arg_trees:
            res.append(_tree.unflatten(tree, leaves[start : start + tree.num_leaves]))
            start += tree.num_leaves
        return res

    def _with(self, xs, base=None):
        """``base`` (default: the argument leaves) with the tensor leaves replaced by ``xs``."""
        leaves = list(self.leaves if base is None else base)
        for k, x in zip(self.dyn, xs):
            leaves[k] = x
        return leaves

    def _args(self, xs):
        if self.plain:
            return xs
        full = [None] * self.n_args
        for i, v in zip(self.owner.nondiff_argnums, self.nondiff):
            full[i] = v
        for i, v in zip(self.positions, self._diff_args(self._with(xs))):
            full[i] = v
        return full

    def _outputs(self, out, who):
        if isinstance(out, Tensor):
            self.out_tree = _tree.LEAF
            return [resolve(out)]
        leaves, tree = _tree.flatten(out)
        outs = []
        for i, leaf in enumerate(leaves):
            leaf = resolve(leaf) if isinstance(leaf, Tensor) else leaf
            if not isinstance(leaf, Tensor):
                raise TypeError(
                    f"{self.kind} {self.name}: {who} returned a {type(leaf).__name__} as output "
                    f"leaf {i} of {tree}; outputs must be tensors"
                )
            outs.append(leaf)
        self.out_tree = tree
        return outs

    def call(self, xs):
        return self._outputs(self.owner.fun(*self._args(xs)), "fun")

    def _where(self, j, k):
        """'argument 2', or 'argument 2 at ['w']' for leaf k of a pytree argument j."""
        where = f"argument {self.positions[j]}"
        tree = self.arg_trees[j]
        if tree.num_leaves == 1 and tree == _tree.LEAF:
            return where
        dummy = _tree.unflatten(tree, [0] * tree.num_leaves)
        paths = [p for p, _ in _tree.tree_flatten_with_path(dummy)[0]]
        return where + " at " + "".join(f"[{p!r}]" for p in paths[k])


class _VJPRule(_Rule):
    table = custom_vjp_rules

    def fwd(self, xs):
        got = self.owner.fwd(*self._args(xs))
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            raise TypeError(
                f"custom_vjp {self.name}: fwd must return a pair (output, residuals), got "
                f"{_describe(got)}"
            )
        return self._outputs(got[0], "fwd"), got[1]

    def bwd(self, res, cts):
        g = cts[0] if self.out_tree is _tree.LEAF else _tree.unflatten(self.out_tree, cts)
        got = self.owner.bwd(*self.nondiff, res, g)
        return self._cotangents(got)

    def _cotangents(self, got):
        """bwd's result checked against the arguments: one cotangent per tensor input."""
        n = len(self.positions)
        note = f" (nondiff_argnums {self.owner.nondiff_argnums} get none)" if self.nondiff else ""
        if not isinstance(got, (tuple, list)):
            raise TypeError(
                f"custom_vjp {self.name}: bwd must return a tuple with one cotangent per "
                f"differentiable argument ({n}{note}), got {_describe(got)}"
            )
        if len(got) != n:
            raise ValueError(
                f"custom_vjp {self.name}: bwd returned {len(got)} cotangents for {n} "
                f"differentiable arguments{note}"
            )
        flat, start = [], 0
        for j, (ct, tree) in enumerate(zip(got, self.arg_trees)):
            xs = self.leaves[start : start + tree.num_leaves]
            start += tree.num_leaves
            if ct is None:
                flat.extend([None] * len(xs))
                continue
            leaves, ct_tree = ([ct], _tree.LEAF) if isinstance(ct, Tensor) else _tree.flatten(ct)
            if ct_tree != tree:
                raise ValueError(
                    f"custom_vjp {self.name}: bwd's cotangent for argument {self.positions[j]} "
                    f"has structure {ct_tree}, the argument has {tree}"
                )
            for k, (c, x) in enumerate(zip(leaves, xs)):
                if c is None or not isinstance(x, Tensor) or not _dt.is_inexact(x.dtype):
                    flat.append(None)  # Python values and integer tensors have no cotangent
                    continue
                c = resolve(c) if isinstance(c, Tensor) else c
                if not isinstance(c, Tensor):
                    raise TypeError(
                        f"custom_vjp {self.name}: bwd's cotangent for {self._where(j, k)} is a "
                        f"{type(c).__name__}, expected a Tensor of shape {tuple(x.shape)}"
                    )
                if tuple(c.shape) != tuple(x.shape):
                    raise ValueError(
                        f"custom_vjp {self.name}: bwd's cotangent for {self._where(j, k)} has "
                        f"shape {tuple(c.shape)}, the argument has shape {tuple(x.shape)}"
                    )
                flat.append(c)
        return [flat[k] for k in self.dyn]


class _JVPRule(_Rule):
    table = custom_jvp_rules

    def jvp(self, xs, ts):
        primals = tuple(self._diff_args(self._with(xs)))
        tangents = tuple(self._diff_args(self._with(ts, [None] * len(self.leaves))))
        got = self.owner.jvp(*self.nondiff, primals, tangents)
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            raise TypeError(
                f"custom_jvp {self.name}: jvp must return a pair (primal_out, tangent_out), got "
                f"{_describe(got)}"
            )
        outs = self._outputs(got[0], "jvp")
        touts, t_tree = _tree.flatten(got[1])
        if t_tree != self.out_tree:
            raise ValueError(
                f"custom_jvp {self.name}: jvp's tangent_out has structure {t_tree}, its "
                f"primal_out has {self.out_tree}"
            )
        checked = []
        for i, (t, o) in enumerate(zip(touts, outs)):
            t = resolve(t) if isinstance(t, Tensor) else t
            if not isinstance(t, Tensor):
                raise TypeError(
                    f"custom_jvp {self.name}: jvp's tangent output {i} is a {type(t).__name__}, "
                    f"expected a Tensor of shape {tuple(o.shape)}"
                )
            if tuple(t.shape) != tuple(o.shape):
                raise ValueError(
                    f"custom_jvp {self.name}: jvp's tangent output {i} has shape "
                    f"{tuple(t.shape)}, the primal output has shape {tuple(o.shape)}"
                )
            checked.append(t)
        return outs, checked


def _describe(v):
    if isinstance(v, (tuple, list)):
        return f"a {type(v).__name__} of {len(v)}"
    return f"a {type(v).__name__}"
