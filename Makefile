# make demo   - create .venv, install diffsci, run the tour: examples/quickstart.py, a Burgers data set, a shock tube,
#               a Burgers PINN (a short budget: rel-L2 ~5e-2 in about a minute), an FDTD cavity's resonances, a
#               protein fold (diffsci-protenix predict; random weights, labelled meaningless, when no weights are found)
# make test   - create .venv, install diffsci with test extras, run the whole suite (the torch
#               parity tests among it skip when torch is absent)
# make test-parity - install torch==2.13.0 and PyTorch Protenix 2.0.0 (off the venv, in .ref/, so it never
#               shadows our protenix package) and run the parity tests (pytest -m parity)
# make bench  - install the bench extras (PyTorch CPU, JAX) and print the ratio tables
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml setup.py | cksum | cut -d' ' -f1)
JOBS ?= 2

.PHONY: demo test test-parity bench clean

$(STAMP): pyproject.toml setup.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,distributed]'
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python examples/quickstart.py
	$(BIN)/python examples/datasets/burgers_dataset.py
	$(BIN)/python examples/mindflow/cfd/sod/sod.py
	$(BIN)/python examples/mindflow/pinn/burgers/burgers_pinn.py --adam-steps 200 --lbfgs-steps 2300 \
		--n-domain 1000 --n-shock 300 --layers 4 --neurons 20
	$(BIN)/python examples/mindelec/fdtd/cavity_modes/cavity_modes.py
	$(BIN)/python examples/protenix/fold.py --out-dir fold_out

test: $(STAMP)
	$(BIN)/python -m pytest -n $(JOBS) -q

test-parity: $(STAMP)
	$(BIN)/python -m pip install --quiet torch==2.13.0 rdkit ml-collections optree biotite
	test -d .ref/protenix-2.0.0 || $(BIN)/python -m pip install --quiet --no-deps \
		--target .ref/protenix-2.0.0 protenix==2.0.0
	$(BIN)/python -m pytest -n $(JOBS) -q -m parity

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet torch==2.13.0 jax jaxlib
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
