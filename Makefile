# Two commands for a fresh machine: `make lab` (open the notebooks) and `make test` (run every test).
# Both create .venv and install the project into it on first use; they need only Python >= 3.10.
# Windows without make: see README.md ("Windows").

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
HOST   ?= 127.0.0.1
PORT   ?= 8888
PRESENT_PORT ?= 8866
LOWEST := .venv-lowest
# make hub: the students' environment (.venv-hub, made from a Python every account can run) and JupyterHub's
# proxy (npm, into hub/node_modules); both ignored by git. docs/hub.md is the teacher's guide.
HUB_VENV  := .venv-hub
HUB_STAMP := $(HUB_VENV)/.installed
PROXY     := hub/node_modules/.bin/configurable-http-proxy
LESSON    ?= 02
# Notebook 7 lets the notebook's arrow-key shortcuts take the keys before a slider sees them
# (jupyter/notebook#7716); these shortcut settings leave keys pressed inside an output to the output.
export JUPYTER_CONFIG_PATH := $(CURDIR)/jupyter-config
# Voilà finds its template `classroom` (jupyter-config/voila/templates/) on JUPYTER_PATH: `make present`, and
# the Voilà of `make lab`/`make notebook` ("Render with Voilà"), which jupyter-config/voila.py points at it.
export JUPYTER_PATH := $(CURDIR)/jupyter-config
# JupyterLab refuses to run as root unless told; pass the flag only when we are root.
ROOT_FLAG := $(shell [ "$$(id -u)" = 0 ] && echo --allow-root)
NBVAL  := --nbval --nbval-current-env --nbval-sanitize-with tests/sanitize.cfg
# pytest-xdist: one worker per core; a notebook's cells run in order in one worker (--dist loadfile).
PARALLEL := -n auto --dist loadfile
# The tests' kernels use one BLAS thread each: xdist already runs one worker per core, and OpenBLAS threads on top
# of them wait on each other (on 2 cores, four notebooks took 73 s with OpenBLAS's default threads and 41 s with
# one). The browser tests' kernels share the cores with Chromium the same way. Not for `make lab`.
ONE_THREAD := OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1

.PHONY: help setup lab notebook present html unit test test-ui test-hub test-lowest bench bench-hub images screenshots notebooks student hub hub-link hub-release hub-archive hub-clean corpus model clean axe

help:
	@echo "make lab          open the notebooks in JupyterLab on http://$(HOST):$(PORT)/lab"
	@echo "make notebook     the same in Jupyter Notebook 7 on http://$(HOST):$(PORT)/tree"
	@echo "make hub          a JupyterHub for a class on http://127.0.0.1:8000 (as root; asks for the class password once; docs/hub.md)"
	@echo "make hub-link     the teacher's link that hands out a lesson (and your last commit): make hub-link LESSON=02"
	@echo "make hub-release  give every student of the hub a lesson's worked solutions: make hub-release LESSON=02"
	@echo "make hub-archive  every home of the hub's accounts in one .tar.gz, root only (ARCHIVE=path; before hub-clean)"
	@echo "make hub-clean    the end of term: remove the hub's accounts, homes, group, /run/attn-hub and state (asks; CONFIRM=yes)"
	@echo "make present      the classroom view (Voila: prose, figures, live explorers, no code) on http://127.0.0.1:$(PRESENT_PORT)"
	@echo "make html         the lessons as HTML pages in html/ that work offline (formulas included), answers closed"
	@echo "make unit         ruff and the unit tests alone (no notebooks, no browser, no hub): under a minute"
	@echo "make test         helpers, worked examples, every notebook under strict nbval, ruff, then make test-simd"
	@echo "make test-simd    every notebook under strict nbval again on narrower SIMD kernels (AVX2; test-lowest: SSE)"
	@echo "make test-ui      browser tests in headless Chromium, axe-core's accessibility checks included (needs chromium and npm; see README)"
	@echo "make test-hub     a real JupyterHub: logins, copies, a slider in 02, restarts, the link, no password in sight, released solutions, a clean end (as root)"
	@echo "make test-lowest  make test's tests with the lowest versions pyproject.toml allows (in $(LOWEST))"
	@echo "make torch        the optional extra for notebook 16: PyTorch (its CPU build) and transformers, into $(VENV)"
	@echo "make test-torch   make torch, then the bridge's tests and notebook 16 with its solutions under strict nbval"
	@echo "make bench        per-update latency of the explorers, the language model's speed, and make bench-hub (printed, not asserted)"
	@echo "make images       regenerate the figures in images/ (make screenshots for the browser ones)"
	@echo "make notebooks    re-execute every notebook in place, top to bottom in a fresh kernel"
	@echo "make student      a copy of the lessons with every output cleared, in student/ (for a class)"
	@echo "make corpus       freeze the course's own prose into helpers/data/corpus.txt (the language model's text)"
	@echo "make model        train the language model of notebook 12 on it (fixed seed): helpers/data/model.npz"

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "Python >= 3.10 is needed, found " + sys.version.split()[0] + ": run make PYTHON=python3.12 (or another)")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

setup: $(STAMP)

# Every student's server runs as the student's own system user: their Python must be one every account can
# run (a pyenv Python under /root is not; hub/launch.py python picks one). The course package is installed,
# not linked, so a student's kernel imports the helpers as they were at install time.
$(HUB_STAMP): pyproject.toml $(wildcard helpers/*.py helpers/*/*.py helpers/*/*.js helpers/*/*.css)
	@$(PYTHON) hub/launch.py python >/dev/null
	"$$($(PYTHON) hub/launch.py python)" -m venv $(HUB_VENV)
	$(HUB_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(HUB_VENV)/bin/python -m pip install --quiet '.[hub]'
	touch $(HUB_STAMP)

$(PROXY): hub/package.json hub/package-lock.json
	@command -v npm >/dev/null 2>&1 || { echo "make hub: npm is missing (JupyterHub's proxy is a Node.js program): install Node.js and npm, e.g. apt-get install nodejs npm, then run make hub again" >&2; exit 1; }
	cd hub && npm ci --no-audit --no-fund --loglevel=error
	touch $(PROXY)

# A JupyterHub for a class, on 127.0.0.1:8000 unless HUB_IP/HUB_PORT say otherwise; its settings are in
# hub/launch.py and docs/hub.md. Stop it with Ctrl+C: the students' servers stop, their files stay.
# Passwords come from a prompt, a root-only file (CLASS_PASSWORD_FILE=) or the environment, never from make's
# command line, which every account of the machine sees in `ps` (and which stays in the shell's history).
ifneq ($(filter hub%,$(MAKECMDGOALS)),)
ifneq ($(filter line,$(origin CLASS_PASSWORD) $(origin TEACHER_PASSWORD)),)
$(error a password on make's command line can be read by every account of this machine (ps) and stays in your shell's history, so it was not used: choose a new one, run `sudo make hub` and type it when asked (docs/hub.md))
endif
endif

hub: $(HUB_STAMP) $(PROXY)
	$(HUB_VENV)/bin/python hub/launch.py serve

hub-link: $(HUB_STAMP)
	@$(HUB_VENV)/bin/python hub/launch.py link $(LESSON)

# Only with LESSON given: a release cannot be taken back (the students keep their copies).
hub-release: $(HUB_STAMP)
	@[ "$(origin LESSON)" != file ] || { echo "make hub-release: which lesson? make hub-release LESSON=02" >&2; exit 1; }
	@$(HUB_VENV)/bin/python hub/launch.py release $(LESSON)

# The end of a term (docs/hub.md, "At the end of the term"); the Python of the system, so they work without installs.
hub-archive:
	@$(PYTHON) hub/launch.py archive

hub-clean:
	@$(PYTHON) hub/launch.py clean $(if $(filter yes,$(CONFIRM)),--yes)

lab: $(STAMP)
	$(BIN)/jupyter lab --no-browser --ServerApp.ip=$(HOST) --ServerApp.port=$(PORT) \
		--ServerApp.root_dir=notebooks $(ROOT_FLAG)

notebook: $(STAMP)
	$(BIN)/jupyter notebook --no-browser --ServerApp.ip=$(HOST) --ServerApp.port=$(PORT) \
		--ServerApp.root_dir=notebooks $(ROOT_FLAG)

# Voila runs each notebook in a fresh kernel when its page opens (02 takes about 10 s); kernels of closed
# tabs are culled after 10 idle minutes (Voila cannot shut them down itself: voila-dashboards/voila#1458).
# Open the URL it prints (it carries a token: without one, any web page could start kernels here).
# The template `classroom` (jupyter-config/voila/templates/, found through JUPYTER_PATH) loads nothing from
# outside this machine and keeps a prediction's answer closed; jupyter-config/voila.py keeps solutions/ out
# (not listed; its file list and pages answer 404), in JupyterLab's "Render with Voilà" too.
present: $(STAMP)
	ATTN_PRESENTATION=1 JUPYTER_PATH=$(CURDIR)/jupyter-config $(BIN)/voila --no-browser --Voila.ip=127.0.0.1 --port=$(PRESENT_PORT) --token \
		--template=classroom --VoilaConfiguration.strip_sources=True --VoilaConfiguration.classic_tree=True \
		--MappingKernelManager.cull_idle_timeout=600 --MappingKernelManager.cull_interval=60 notebooks

# Static pages of the lessons in html/ (ignored by git), one self-contained file each: they work offline
# opened from disk (MathJax written into the page, no CDN) and keep a prediction's answer in a closed box.
html: $(STAMP)
	$(BIN)/jupyter nbconvert --log-level=WARN --config jupyter-config/export_html.py --to html \
		--output-dir html notebooks/[0-9][0-9]-*.ipynb
	@echo "html/: $$(ls html | wc -l) pages; open one in a browser, no network needed"

# Feedback in a minute: ruff, then every test under tests/ but the browser's (-m ui), the hub's (-m hub) and the
# notebooks' (nbval), one worker per core.
unit: $(STAMP)
	$(BIN)/ruff check helpers tests notebooks hub
	env -u MPLBACKEND $(ONE_THREAD) $(BIN)/python -m pytest -q -m "not ui and not hub" -n auto -p no:nbval tests

# The notebooks are stored with inline-backend figures; a user's MPLBACKEND would change them.
test: $(STAMP)
	$(BIN)/ruff check helpers tests notebooks hub
	env -u MPLBACKEND $(ONE_THREAD) $(BIN)/python -m pytest -m "not ui" $(PARALLEL) $(NBVAL) tests notebooks
	@$(MAKE) --no-print-directory test-simd

# NumPy and OpenBLAS pick their kernels by CPU, so last digits can differ between machines. Run every
# notebook again with this CPU's widest kernels switched off (AVX-512, then AVX2), as an older CPU would.
test-simd: $(STAMP)
	env -u MPLBACKEND $(ONE_THREAD) $(BIN)/python tests/tools/simd.py --pass first -- $(BIN)/python -m pytest -q -m "not ui" $(PARALLEL) $(NBVAL) notebooks

# The versions we claim are the versions we test: uv installs the lowest versions pyproject.toml allows. Its tests run
# on the narrowest SIMD kernels (test-simd runs the next tier), so that make test + test-lowest cover every tier.
test-lowest:
	$(PYTHON) -m venv $(LOWEST)
	$(LOWEST)/bin/python -m pip install --quiet uv
	$(LOWEST)/bin/uv pip install --quiet --python $(LOWEST)/bin/python --resolution lowest-direct -e '.[test]'
	env -u MPLBACKEND $(ONE_THREAD) $(LOWEST)/bin/python tests/tools/simd.py --pass last -- \
		$(LOWEST)/bin/python -m pytest -m "not ui" $(PARALLEL) $(NBVAL) tests notebooks

# make torch: notebook 16's optional extra (pyproject.toml's `torch`) in $(VENV). PyTorch first, as a CPU build:
# kept if $(VENV) already has a torch (one you chose, a CUDA build say); else the wheel TORCH_WHEEL if pip's
# find-links hold it (this course's CI machines keep a CPU wheel of torch 2.13.0 on disk; --no-index: nothing is
# downloaded); else PyTorch's CPU index TORCH_INDEX (PyPI's own torch for Linux is a CUDA build of several GB).
# Then transformers and what both need, from PyPI. make setup, make lab and make test never install any of it.
TORCH_STAMP := $(VENV)/.torch-installed
TORCH_WHEEL ?= torch==2.13.0
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
HF_OFFLINE  := HF_HUB_OFFLINE=1 HF_HUB_DISABLE_TELEMETRY=1

$(TORCH_STAMP): $(STAMP) pyproject.toml
	@$(BIN)/python -c 'import torch' 2>/dev/null \
		|| $(BIN)/python -m pip install --quiet --no-index --no-deps '$(TORCH_WHEEL)' 2>/dev/null \
		|| $(BIN)/python -m pip install --quiet --index-url $(TORCH_INDEX) 'torch>=2.6'
	$(BIN)/python -m pip install --quiet -e '.[test,torch]'
	@$(BIN)/python -c 'import torch, transformers; print(f"make torch: torch {torch.__version__}, transformers {transformers.__version__} in $(VENV)")'
	touch $(TORCH_STAMP)

torch: $(TORCH_STAMP)
.PHONY: torch test-torch

# Notebook 16 and its solutions run on this CPU's widest kernels, then on the narrowest of NumPy's and PyTorch's
# (ATEN_CPU_CAPABILITY=default: no AVX2/AVX-512), as an older CPU would. No model hub is reached (HF_HUB_OFFLINE).
test-torch: $(TORCH_STAMP)
	env -u MPLBACKEND $(ONE_THREAD) $(HF_OFFLINE) $(BIN)/python -m pytest $(PARALLEL) $(NBVAL) tests/test_bridge.py \
		tests/test_checks_nb16.py notebooks/16-*.ipynb notebooks/solutions/16-*.ipynb
	env -u MPLBACKEND $(ONE_THREAD) $(HF_OFFLINE) ATEN_CPU_CAPABILITY=default $(BIN)/python tests/tools/simd.py --pass last -- \
		$(BIN)/python -m pytest -q $(PARALLEL) $(NBVAL) notebooks/16-*.ipynb notebooks/solutions/16-*.ipynb

# axe-core (npm) for the browser tests' accessibility checks, in .axe/ (ignored by git), never globally.
AXE := .axe/node_modules/axe-core/axe.min.js

$(AXE):
	@command -v npm >/dev/null || { echo "make test-ui needs npm for axe-core (Debian: apt-get install -y npm)"; exit 1; }
	mkdir -p .axe
	npm install --prefix .axe --no-audit --no-fund --silent axe-core@^4.10

axe: $(AXE)

test-ui: $(STAMP) $(AXE)
	$(ONE_THREAD) $(BIN)/python -m pytest -m ui tests/ui

# A real JupyterHub on loopback ports, as root (students are system users the tests make and remove).
test-hub: $(STAMP) $(HUB_STAMP) $(PROXY)
	$(BIN)/python -m pytest -m hub tests/hub

bench: $(STAMP)
	MPLBACKEND=Agg $(BIN)/python tests/benchmarks/bench_kernel.py
	MPLBACKEND=Agg $(BIN)/python tests/benchmarks/bench_cost.py
	MPLBACKEND=Agg $(BIN)/python tests/benchmarks/bench_generation.py
	MPLBACKEND=Agg $(BIN)/python tests/benchmarks/bench_longcontext.py
	MPLBACKEND=Agg $(BIN)/python tests/benchmarks/bench_language_model.py
	$(BIN)/python tests/benchmarks/bench_notebooks.py
	$(BIN)/python tests/benchmarks/bench_browser.py
	@$(MAKE) --no-print-directory bench-hub

# N students on a real JupyterHub (loopback only, bounded): STUDENTS_N=60 for a large class.
STUDENTS_N ?= 10
bench-hub: $(STAMP) $(HUB_STAMP) $(PROXY)
	$(BIN)/python tests/benchmarks/bench_hub.py --students $(STUDENTS_N)

images: $(STAMP)
	MPLBACKEND=Agg $(BIN)/python -m helpers.images

screenshots: $(STAMP)
	$(BIN)/python tests/ui/screenshots.py
	$(BIN)/python tests/ui/screenshots.py --present notebooks/02-query-key-value.ipynb notebooks/04-multi-head-attention.ipynb

# Notebooks are committed executed. After editing one (or a helper it calls), re-run it here:
# a fresh kernel per notebook, no widget state (keeps files small), no timing metadata and no stored
# widget views and no split print outputs (no noise in diffs).
notebooks: $(STAMP)
	cd notebooks && env -u MPLBACKEND ../$(BIN)/jupyter nbconvert --to notebook --execute --inplace \
		--ExecutePreprocessor.store_widget_state=False --ExecutePreprocessor.record_timing=False \
		--ExecutePreprocessor.timeout=600 *.ipynb solutions/*.ipynb
	$(BIN)/python tests/tools/tidy_notebooks.py notebooks/*.ipynb notebooks/solutions/*.ipynb

# A handout: the lessons with every output cleared (answers are not stored), and the images they show.
# student/ is ignored by git; worked solutions stay out (copy notebooks/solutions/ yourself if you want them).
# Not `nbconvert --clear-output`: that one rewrites the notebooks in place, whatever --output-dir says.
student: $(STAMP)
	rm -rf student && mkdir -p student/notebooks
	cp -r images student/images
	$(BIN)/jupyter nbconvert --log-level=WARN --to notebook --ClearOutputPreprocessor.enabled=True \
		--output-dir student/notebooks notebooks/[0-9][0-9]-*.ipynb
	@echo "student/notebooks: $$(ls student/notebooks | wc -l) notebooks with outputs cleared"

# The language model's text: README, TEACHING.md, the helpers' docstrings and the lessons' markdown, in a fixed
# order, as one file (its last 10 % is the validation text). Committed: re-run only to change the corpus on purpose,
# then `make model` (a test ties the committed model to the committed corpus by its SHA-256).
corpus: $(STAMP)
	$(BIN)/python -m helpers.corpus

# Trains notebook 12's model from helpers/data/corpus.txt with a fixed seed and writes helpers/data/model.npz (config,
# parameters, vocabulary, probe attention) and helpers/data/model_log.json. One BLAS thread: the same numbers on every
# run of a machine, and no threads waiting on each other when other work shares the cores (two threads were many times
# slower on a busy 2-core machine). 13 minutes on a 2-core machine shared with other work (load 2 to 9); longer when busier.
model: $(STAMP)
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $(BIN)/python -m helpers.lm_train

clean:
	rm -rf $(VENV) $(LOWEST) $(HUB_VENV) hub/node_modules .pytest_cache .hypothesis .ruff_cache *.egg-info student html .axe
	find . -name __pycache__ -prune -exec rm -rf {} +
	find . -name .ipynb_checkpoints -prune -exec rm -rf {} +
