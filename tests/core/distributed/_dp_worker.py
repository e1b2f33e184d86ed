"""Run under ``mpiexec -n 2``: the data-parallel example eagerly (with a checkpoint) and
compiled; rank 0 writes ``eager.json`` and ``graph.json`` to the directory argv[1]."""

import importlib.util
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[3]


def load_example():
    path = ROOT / "examples" / "distributed" / "data_parallel.py"
    spec = importlib.util.spec_from_file_location("example_data_parallel", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


if __name__ == "__main__":
    out, steps = sys.argv[1], int(sys.argv[2])
    example = load_example()
    example.main(steps=steps, out=f"{out}/eager.json", ckpt=f"{out}/dp.ckpt.h5")
    example.main(steps=steps, graph=True, out=f"{out}/graph.json")
