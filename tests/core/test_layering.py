"""core's modules import one way: down the layers below, never up, and never in a circle.

The layers (README, "Layout"), lowest first:

    0  dtypes, tree, backend, random state      what every layer may use
    1  tensor
    2  primitive                                 Primitive, bind, the trace stack
    3  prims                                     each primitive: implementation + shape rule
    4  ops (modules)                             what users call, written with prims
    5  engines                                   autodiff/reverse, autodiff/forward, vmap, jit
    6  rules                                     VJP, JVP, batching and lowering per family
    7  transformations API                       autodiff API, custom rules, recompute,
                                                 chunk_map, control flow
    8  user layer                                nn, train, serialization, MindSpore names,
                                                 and the public namespaces (core, core.ops)

Every import counts, module-level or inside a function body (a function-local import is how
the old circle hid). A package's ``__init__`` that re-exports names for users (``core``,
``core.ops``) sits on the top layer; code below imports the submodules, never the package.
"""

import pathlib

import pytest

from tests._imports import imports

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORE = ROOT / "core"

# module-name prefix -> layer; the longest matching prefix wins
LAYERS = {
    "core.dtypes": 0,
    "core.tree": 0,
    "core.backend": 0,
    "core.random_state": 0,
    "core.atomic": 0,
    "core.tensor": 1,
    "core.primitive": 2,
    "core.prims": 3,
    "core.ops": 4,
    "core.autodiff.reverse": 5,
    "core.autodiff.forward": 5,
    "core.vmap": 5,
    "core.jit": 5,
    "core.rules": 6,
    "core.autodiff": 7,
    "core.recompute": 7,
    "core.chunk": 7,
    "core.evoformer": 7,
    "core.control": 7,
    "core.random": 7,
    "core.nn": 8,
    "core.common": 8,
    "core.train": 8,
    "core.serialization": 8,
    "core.ckpt_mindspore": 8,
    "core.amp": 8,
    "core.context": 8,
    "core.numpy": 8,
    "core.native": 8,
    "core.testing": 8,
    "core.communication": 8,
    "core.parallel": 8,
    "core.launch": 8,
    # user-facing namespaces: they re-export from every layer
    "core": 8,
    "core.ops.__init__": 8,
    "core.ops.composite": 8,
    "core.ops.primitive_classes": 8,
    "core.ops.operations": 8,
}


def _module_name(path):
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _is_package(name):
    return (ROOT / name.replace(".", "/") / "__init__.py").exists()


def _exists(name):
    base = ROOT / name.replace(".", "/")
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


def layer_of(name, path=None):
    if path is not None and path.name == "__init__.py" and f"{name}.__init__" in LAYERS:
        return LAYERS[f"{name}.__init__"]
    best = None
    for prefix, layer in LAYERS.items():
        if prefix.endswith(".__init__"):
            continue
        if name == prefix or name.startswith(prefix + "."):
            if best is None or len(prefix) > len(best[0]):
                best = (prefix, layer)
    if best is None:
        raise AssertionError(f"{name}: no layer assigned; add it to LAYERS in {__file__}")
    return best[1]


def imports_of(path):
    """(imported module, line) for every import in ``path``, resolved to core's modules."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = []
    for line, module, names in imports(path, package):
        if module.split(".")[0] != "core":
            continue
        if not names:
            found.append((module, line))
        for alias in names:
            sub = f"{module}.{alias}"
            # `from diffsci.core.ops import elementwise` imports the submodule, not the package
            found.append((sub if _exists(sub) else module, line))
    return found


def _edges():
    edges = []
    for path in sorted(CORE.rglob("*.py")):
        src = _module_name(path)
        for dst, line in imports_of(path):
            if dst == src:
                continue
            edges.append((src, path, dst, line))
    return edges


def _upward():
    out = {}
    for src, path, dst, line in _edges():
        dst_path = ROOT / (dst.replace(".", "/") + "/__init__.py")
        dst_layer = layer_of(dst, dst_path if _is_package(dst) else None)
        if dst_layer > layer_of(src, path):
            out.setdefault(f"{src} -> {dst}", f"{path.relative_to(ROOT)}:{line}")
    return out


def test_every_module_has_a_layer():
    for path in CORE.rglob("*.py"):
        layer_of(_module_name(path), path)


def test_no_upward_import():
    upward = _upward()
    assert not upward, "upward imports (a lower layer importing a higher one):\n" + "\n".join(
        f"  {where}: {edge}" for edge, where in sorted(upward.items(), key=lambda kv: kv[1])
    )


def test_no_import_circle():
    graph = {}
    for src, _path, dst, _line in _edges():
        graph.setdefault(src, set()).add(dst)
    # the public namespaces import everything by design; circles through them don't count
    facades = {"core", "core.ops"}
    sccs = _strongly_connected({k: v - facades for k, v in graph.items() if k not in facades})
    circles = [sorted(c) for c in sccs if len(c) > 1]
    assert not circles, f"{len(circles)} import circle(s): {circles}"


def _strongly_connected(graph):
    """Tarjan's algorithm (iterative), over the nodes of ``graph``."""
    index, low, stack, on_stack, result = {}, {}, [], set(), []
    counter = [0]
    for root in list(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == node:
                            break
                    result.append(comp)
    return result


@pytest.mark.parametrize(
    "src, dst, upward",
    [
        ("core.prims.elementwise", "core.ops.elementwise", True),
        ("core.jit.api", "core.prims", False),
    ],
)
def test_layer_order_itself(src, dst, upward):
    # the checker's own arithmetic: prims sit below ops, jit above prims
    assert (layer_of(dst) > layer_of(src)) is upward
