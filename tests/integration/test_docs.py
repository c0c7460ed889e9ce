"""The README and every page of the docs site are tested: every ```bash and ```python block runs as written,
and shown output is checked.

The convention (also in docs/development.md):

- Each page (README.md, docs/*.md) runs in a temporary copy of the repository of its own (the files git
  tracks, nothing a local run left behind); pages run in parallel, the blocks of one page on one worker, in
  order.
- ```bash blocks run in order, in ONE temporary copy of the repository (fixtures/, schemas/ present), with
  the test environment's ``igg`` on PATH, no API keys or database settings, and HOME, XDG dirs and IGG_HOME
  inside the copy. Each must exit 0, or N after a line ``<!-- readme: exit=N -->``.
- ```python blocks are complete scripts, run in the same copy (as working directory), in document order.
- A ```text block right after a bash or python block is its output: it must equal the block's stdout, its
  stderr, or both (stdout first), after normalising what changes between runs (timestamps, durations,
  rates, ports, the copy's path, generated session ids). A line ``...`` stands for any lines, and ``...``
  inside a line for any text.
- ``<!-- readme: skip (reason) -->`` before a block skips it; the reason is required.
- A block that is no command (a config file, a JSON snippet, a picture) is run some other way or says why not:
  ``<!-- readme: json=KIND -->`` validates a ```json block (``response``, ``action``, ``transcript``: each
  line a transcript turn, ``mcp-config``: a client's server entry whose command line ``igg`` parses), ``<!--
  readme: checked (tests/FILE.py ...) -->`` names the test that runs it (a recipe: pre-commit, GitHub
  Actions), and ``skip (reason)`` says why nothing runs it. ``test_every_snippet_is_run_or_says_why`` lists
  the ones that do neither and fails on them; pages generated from the code (``GENERATED``) are checked by
  ``scripts/gen_schemas.py --check``.
- ``<!-- readme: postgres -->`` before a block runs it against a PostgreSQL server of the docs' own (a fresh
  database per page): the URL the pages show, ``postgresql://igg@127.0.0.1:5432/igg`` (``DOCS_PG_URL``), is
  that server's in the block, and shown as the pages show it in its output.
- ``<!-- readme: bolt -->`` before a block runs it with ``NEO4J_URI``, ``NEO4J_USERNAME`` and
  ``NEO4J_PASSWORD`` of a Bolt server of the page's own: an ArcadeDB started for the page when its first such
  block runs (another page's or the other tests' exports leave constraints behind that would change what the
  examples print), or the Neo4j at ``NEO4J_URI`` when set.

One test per block, named by its line, so a failure says which example broke. A block's test first runs
every earlier runnable block it has not run yet (in the same copy), so order holds whatever the scheduler.
"""

from __future__ import annotations

import compileall
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("**/*.md"))]
"""Every page whose examples run: the README and the docs site's pages."""
RUNNABLE = ("bash", "python")
BLOCK_TIMEOUT = 180
_FENCE = re.compile(r"^(\s*)```([\w-]*)\s*$")
_MARKER = re.compile(r"^<!--\s*readme:\s*(.*?)\s*-->\s*$")


@dataclass
class Block:
    """One fenced block of the README."""

    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    marker: str | None = None  # the text of a preceding `<!-- readme: ... -->` line
    expected: str | None = None  # a ```text block right after it
    expected_line: int | None = None
    page: str = "README.md"  # the page, relative to the repository

    @property
    def skip_reason(self) -> str | None:
        """Why this page's runner does not run the block: ``skip (reason)``, or ``checked (test)`` (another
        test runs it, e.g. as a user other than root)."""
        if self.marker is None or not self.marker.startswith(("skip", "checked")):
            return None
        reason = self.marker.split(" ", 1)[1] if " " in self.marker else ""
        if self.marker.startswith("checked"):
            return f"another test runs it: {reason.strip('()').strip()}"
        return reason.strip("()").strip() or ""

    @property
    def needs_bolt(self) -> bool:
        return self.marker == "bolt"

    @property
    def needs_postgres(self) -> bool:
        return self.marker == "postgres"

    @property
    def exit_code(self) -> int:
        if self.marker and self.marker.startswith("exit="):
            return int(self.marker.split("=", 1)[1])
        return 0

    @property
    def id(self) -> str:
        return f"{self.page}:line{self.line}-{self.lang}"


def parse_blocks(text: str, page: str = "README.md") -> list[Block]:
    """A page's fenced blocks, with their markers and the ```text block that follows each."""
    lines = text.split("\n")
    blocks: list[Block] = []
    index = 0
    while index < len(lines):
        match = _FENCE.match(lines[index])
        if not match:
            index += 1
            continue
        indent, lang = match.group(1), match.group(2)
        start = index
        index += 1
        body: list[str] = []
        while index < len(lines) and not re.match(rf"^{indent}```\s*$", lines[index]):
            body.append(lines[index][len(indent) :] if lines[index].startswith(indent) else lines[index])
            index += 1
        index += 1
        marker = None
        before = start - 1
        if before >= 0:
            found = _MARKER.match(lines[before].strip())
            if found:
                marker = found.group(1)
        blocks.append(Block(line=start + 1, lang=lang, code="\n".join(body) + "\n", marker=marker, page=page))
    # attach each ```text block to the runnable block right before it (only blank lines between)
    for previous, block in zip(blocks, blocks[1:], strict=False):
        if block.lang != "text" or previous.lang not in RUNNABLE:
            continue
        closing = previous.line + previous.code.count("\n")  # 0-based index of the closing fence
        between = lines[closing + 1 : block.line - 1]
        if all(not line.strip() for line in between):
            previous.expected = block.code
            previous.expected_line = block.line
    return blocks


def _relative(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


BLOCKS = {_relative(page): parse_blocks(page.read_text(encoding="utf-8"), _relative(page)) for page in PAGES}
RUN_BLOCKS = [block for blocks in BLOCKS.values() for block in blocks if block.lang in RUNNABLE]


# ---------------------------------------------------------------------------------------------- comparing
_NORMALISERS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?Z?( UTC)?"), "<TIME>"),
    (re.compile(r"(127\.0\.0\.1|localhost|\[::1\]):\d+"), r"\1:<PORT>"),
    (re.compile(r"\bigg-[0-9a-f]{12}\b"), "igg-<ID>"),
    (re.compile(r"\b(map-[\w.-]+?)-[0-9a-f]{8}\b"), r"\1-<ID>"),
    (re.compile(r"\d[\d,]*(\.\d+)? (files|nodes\+edges|sessions|elements)/s"), r"<RATE> \2/s"),
    (re.compile(r"\b\d+(\.\d+)? ?(ms|s)\b"), r"<DUR> \2"),
    (re.compile(r"""(['"](?:elapsed_ms|seconds|ms|total|walk|parse|link|run)['"]: )\d+(\.\d+)?"""), r"\1<N>"),
    (re.compile(r"\b\d[\d,]* bytes\b"), "<N> bytes"),  # sizes move with versions and embedded timestamps
    (re.compile(r"""(['"]bytes['"]: )\d+"""), r"\1<N>"),
    (re.compile(r"\d+\.\d+ (files|nodes\+edges)/s"), r"<RATE> \1/s"),
    (re.compile(r"[─━═-]{3,}"), "──"),  # table rules whose width follows the content
    (re.compile(r"[ \t]+"), " "),
]


def normalise(text: str, root: Path) -> str:
    """What stays the same between runs of an example: run-specific values replaced, spacing collapsed."""
    text = text.replace(str(root), "<ROOT>").replace(os.path.realpath(root), "<ROOT>")
    for pattern, replacement in _NORMALISERS:
        text = pattern.sub(replacement, text)
    lines = [line.rstrip(" │|").rstrip() for line in text.strip("\n").split("\n")]
    return "\n".join(lines).strip()


def _pattern(expected: str) -> re.Pattern[str]:
    """The shown output as a regex: a line `...` is any lines, `...` inside a line any text."""
    parts: list[str] = []
    for line in expected.split("\n"):
        if line.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
            continue
        pieces = [re.escape(piece) for piece in line.split("...")]
        parts.append("[^\n]*?".join(pieces) + "\n")
    return re.compile("".join(parts), re.DOTALL)


def output_matches(expected: str, candidates: list[str], root: Path) -> bool:
    """The shown output equals one of the candidate streams (after normalising both)."""
    want = normalise(expected, root)
    regex = _pattern(want)
    for candidate in candidates:
        got = normalise(candidate, root)
        if got == want or regex.fullmatch(got + "\n"):
            return True
    return False


# ------------------------------------------------------------------------------------------------ running
@dataclass
class Outcome:
    returncode: int
    stdout: str
    stderr: str


@dataclass
class Sandbox:
    """The temporary copy of the repository every block runs in, and what has run there so far."""

    root: Path
    scripts: Path
    env: dict[str, str]
    outcomes: dict[int, Outcome] = field(default_factory=dict)
    bolt: Callable[[], dict[str, str]] | None = None
    """The NEO4J_* settings of the suite's Bolt server (started when a ``bolt`` block first needs it)."""
    postgres: Callable[[], str] | None = None
    """The URL of this page's PostgreSQL database (made when a ``postgres`` block first needs it)."""

    def run(self, block: Block) -> Outcome:
        if block.line in self.outcomes:
            return self.outcomes[block.line]
        for earlier in RUN_BLOCKS:  # a page's examples build on each other: run every earlier one first, once
            if earlier.page != block.page:
                continue
            if earlier.line >= block.line:
                break
            if earlier.line not in self.outcomes and earlier.skip_reason is None:
                self.outcomes[earlier.line] = self._execute(earlier)
        outcome = self._execute(block)
        self.outcomes[block.line] = outcome
        return outcome

    def _execute(self, block: Block) -> Outcome:
        code, url = block.code, None
        if block.needs_postgres:
            assert self.postgres is not None, "a postgres block runs inside test_docs_block"
            url = self.postgres()
            code = code.replace(DOCS_PG_URL, url)
        outcome = self._spawn(block, code)
        if url is not None:
            outcome = Outcome(
                outcome.returncode,
                outcome.stdout.replace(url, DOCS_PG_URL),
                outcome.stderr.replace(url, DOCS_PG_URL),
            )
        return outcome

    def _spawn(self, block: Block, code: str) -> Outcome:
        if block.lang == "bash":
            script = self.scripts / f"block_{block.line}.sh"
            script.write_text(code, encoding="utf-8")
            command = (
                ["bash", "-e", "-o", "pipefail", str(script)]
                if block.exit_code == 0
                else ["bash", str(script)]
            )
        else:
            script = self.scripts / f"block_{block.line}.py"
            script.write_text(code, encoding="utf-8")
            command = [sys.executable, str(script)]
        env = self.env
        if block.needs_bolt:
            assert self.bolt is not None, "a bolt block runs inside test_readme_block"
            env = {**env, **self.bolt()}
        # its own process group, so a block that times out is stopped with everything it started
        process = subprocess.Popen(
            command,
            cwd=self.root,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        try:
            stdout, stderr = process.communicate(timeout=BLOCK_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            stdout, stderr = process.communicate()
            return Outcome(-1, stdout, stderr + f"\n(timed out after {BLOCK_TIMEOUT} s)")
        return Outcome(process.returncode, stdout, stderr)


_COPY_IGNORE = shutil.ignore_patterns(
    ".git",
    ".venv",
    "__pycache__",
    "*.egg-info",
    "test-artifacts",
    ".igg",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    "out",
    "build",
    "dist",
)


def tracked_files(root: Path) -> list[str] | None:
    """The files git tracks in ``root`` (None when it is no git work tree): all a docs sandbox gets, so what a
    run of the README's examples leaves in the checkout (``agent.sqlite``, ``runs.sqlite``, ``out/``) never
    reaches the tests."""
    try:
        listed = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z"], capture_output=True, check=True, timeout=60
        ).stdout
    except (OSError, subprocess.CalledProcessError, subprocess.TimeoutExpired):
        return None
    return [name for name in listed.decode("utf-8", "surrogateescape").split("\0") if name]


def copy_tracked(source: Path, target: Path) -> None:
    """A copy of the repository with only its tracked files (outside a git work tree: every file but
    caches)."""
    names = tracked_files(source)
    if names is None:
        shutil.copytree(source, target, ignore=_COPY_IGNORE, symlinks=True)
        return
    for name in names:
        origin = source / name
        if not origin.exists() and not origin.is_symlink():
            continue  # deleted in the work tree, not yet in the index
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(origin, destination, follow_symlinks=False)


def _environment(root: Path) -> dict[str, str]:
    """No keys, no database settings, no user config: what a newcomer's clean shell has, plus `igg`.

    The blocks import the checkout's own ``igg`` (``PYTHONPATH``: whichever checkout the venv was installed
    from), compiled once (``sandboxes``), not the copy's: no process writes bytecode (the copy stays as git
    has it), so a copy's ``igg`` would be compiled again by every command a page runs (a third of what an
    ``igg map-code`` of a fixture costs)."""
    bindir = str(Path(sys.executable).parent)
    env = {
        "PATH": os.pathsep.join([bindir, "/usr/local/bin", "/usr/bin", "/bin"]),
        "HOME": str(root / ".home"),
        "XDG_CONFIG_HOME": str(root / ".home" / ".config"),
        "XDG_CACHE_HOME": str(root / ".home" / ".cache"),
        "XDG_DATA_HOME": str(root / ".home" / ".local" / "share"),
        "IGG_HOME": str(root / ".home" / ".igg"),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "TMPDIR": str(root / ".tmp"),
        "VIRTUAL_ENV": str(Path(sys.executable).parent.parent),
        "PYTHONPATH": str(ROOT),
    }
    for name in ("IGG_CHROMIUM",):  # where the test machine keeps a browser, if a block needs one
        if name in os.environ:
            env[name] = os.environ[name]
    return env


@pytest.fixture(scope="session")
def sandboxes(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Sandbox]:
    """The sandbox of a page: a copy of the repository of its own, made when the page's first block runs."""
    made: dict[str, Sandbox] = {}
    compileall.compile_dir(ROOT / "igg", quiet=1)  # the bytecode every block's igg reads (_environment)

    def sandbox(page: str) -> Sandbox:
        if page not in made:
            base = tmp_path_factory.mktemp("docs")
            root = base / "repo"
            copy_tracked(ROOT, root)
            for sub in (".home", ".tmp"):
                (root / sub).mkdir()
            scripts = base / "blocks"
            scripts.mkdir()
            made[page] = Sandbox(root=root, scripts=scripts, env=_environment(root))
        return made[page]

    return sandbox


DOCS_PG_URL = "postgresql://igg@127.0.0.1:5432/igg"
"""The PostgreSQL URL the pages show; ``postgres`` blocks run with a test server's in its place."""
_DOCS_DATABASES: dict[str, str] = {}


def docs_database(server: Any, page: str) -> str:
    """A fresh database of ``server`` for one page's ``postgres`` blocks (the same for all of them)."""
    if page not in _DOCS_DATABASES:
        name = "docs_" + re.sub(r"[^a-z0-9]+", "_", page.lower()).strip("_")
        server.sql(f"DROP DATABASE IF EXISTS {name}")
        server.sql(f"CREATE DATABASE {name}")
        _DOCS_DATABASES[page] = server.url(name)
    return _DOCS_DATABASES[page]


@pytest.fixture(scope="session")
def docs_bolt(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], Any]]:
    """The Bolt server of each page with ``bolt`` blocks, started when the page's first one runs: a fresh
    ArcadeDB per page (a page's examples show what a first export to an empty database prints, and another
    page's, or the other tests', exports leave constraints behind), or NEO4J_URI's for all."""
    from tests.support.arcadedb import start_arcadedb, stop
    from tests.support.bolt import BoltServer

    if os.environ.get("NEO4J_URI"):
        env = {k: v for k, v in os.environ.items() if k.startswith("NEO4J_")}
        external = BoltServer(uri=env["NEO4J_URI"], external=True, env=env)
        yield lambda page: external
        return
    started: dict[str, Any] = {}

    def server(page: str) -> Any:
        if page not in started:
            started[page] = start_arcadedb(tmp_path_factory.mktemp("docs-arcadedb"))
        return started[page]

    try:
        yield server
    finally:
        for each in started.values():
            stop(each)


def bolt_settings(server: Any) -> dict[str, str]:
    """NEO4J_URI, NEO4J_USERNAME, NEO4J_PASSWORD (and NEO4J_DATABASE) of a
    ``tests.support.bolt.BoltServer``."""
    return {"NEO4J_URI": server.uri, **server.env}


def _describe(block: Block, outcome: Outcome) -> str:
    return (
        f"{block.page} line {block.line} ({block.lang}) exited {outcome.returncode}"
        f"\n--- code ---\n{block.code}--- stdout ---\n{outcome.stdout[-4000:]}"
        f"\n--- stderr ---\n{outcome.stderr[-4000:]}"
    )


@pytest.mark.parametrize(
    "block",
    [pytest.param(block, marks=pytest.mark.xdist_group(block.page)) for block in RUN_BLOCKS],
    ids=[block.id for block in RUN_BLOCKS],
)
def test_docs_block(
    block: Block, sandboxes: Callable[[str], Sandbox], request: pytest.FixtureRequest
) -> None:
    """Each example of the README and the docs runs as written and prints what the page shows."""
    if block.skip_reason is not None:
        assert block.skip_reason, (
            f"{block.page} line {block.line}: a skipped block must say why: skip (reason)"
        )
        pytest.skip(f"{block.page} says: {block.skip_reason}")
    sandbox = sandboxes(block.page)
    sandbox.bolt = lambda: bolt_settings(request.getfixturevalue("docs_bolt")(block.page))
    sandbox.postgres = lambda: docs_database(request.getfixturevalue("postgres_server"), block.page)
    outcome = sandbox.run(block)
    assert outcome.returncode == block.exit_code, _describe(block, outcome)
    if block.expected is not None:
        candidates = [outcome.stdout, outcome.stderr, outcome.stdout + outcome.stderr]
        assert output_matches(block.expected, candidates, sandbox.root), (
            f"{block.page} line {block.line}: the output differs from the text block at line "
            f"{block.expected_line}\n--- shown (normalised) ---\n{normalise(block.expected, sandbox.root)}"
            f"\n--- got stdout (normalised) ---\n{normalise(outcome.stdout, sandbox.root)}"
            f"\n--- got stderr (normalised) ---\n{normalise(outcome.stderr, sandbox.root)[-3000:]}"
        )


@pytest.mark.parametrize("page", PAGES, ids=_relative)
def test_docs_markers_are_well_formed(page: Path) -> None:
    """Every `<!-- readme: ... -->` line is a skip with a reason, an exit=N or bolt, and sits right above a
    block."""
    lines = page.read_text(encoding="utf-8").split("\n")
    starts = {block.line for block in BLOCKS[_relative(page)]}
    for number, line in enumerate(lines, start=1):
        found = _MARKER.match(line.strip())
        if not found:
            continue
        text = found.group(1)
        assert re.fullmatch(r"skip \(.+\)|checked \(.+\)|json=(\w|-)+|exit=\d+|bolt|postgres", text), (
            f"{page.name} line {number}: bad marker {text!r}"
        )
        assert number + 1 in starts, f"{page.name} line {number}: a marker must be right above a ``` block"


def test_docs_runner_compares_for_real(tmp_path: Path) -> None:
    """The comparison is not a rubber stamp: a changed number or a missing line fails it."""
    shown = "igg run uuid-1234\n│ graph │ nodes 27/50, edges 29/100 │\n...\nlast line"
    assert output_matches(
        shown, ["igg run uuid-1234\n│ graph   │ nodes 27/50, edges 29/100   │\nx\ny\nlast line"], tmp_path
    )
    assert not output_matches(
        shown, ["igg run uuid-1234\n│ graph │ nodes 28/50, edges 29/100 │\nlast line"], tmp_path
    )
    assert not output_matches("a\nb", ["a"], tmp_path)
    assert output_matches(
        "took 0.52 s at 2026-11-23 15:55:29 UTC", ["took 12.0 s at 2027-01-01 00:00:00 UTC"], tmp_path
    )


GENERATED = {
    "docs/cli.md": "scripts/gen_schemas.py --check compares it with every command's help",
    "docs/models.md": "scripts/gen_schemas.py --check compares it with the models",
}
"""Pages written from the code: their blocks are checked by the drift check, not run."""


def _outputs(blocks: list[Block]) -> set[int]:
    return {b.expected_line for b in blocks if b.expected_line is not None}


def unrun_blocks(page: str) -> list[Block]:
    """The blocks of ``page`` that no test runs and no marker accounts for (a block's shown output is checked
    with its block)."""
    if page in GENERATED:
        return []
    blocks = BLOCKS[page]
    outputs = _outputs(blocks)
    out = []
    for block in blocks:
        if block.line in outputs or block.lang in RUNNABLE and block.skip_reason is None:
            continue
        marker = block.marker or ""
        if marker.startswith("checked"):
            found = re.fullmatch(r"checked \((tests/[\w/]+\.py)\b.*\)", marker)
            if not (found and (ROOT / found.group(1)).is_file()):
                out.append(block)  # it names no test that exists
            continue
        if block.skip_reason or marker.startswith("json=") and block.lang == "json":
            continue
        out.append(block)
    return out


@pytest.mark.parametrize("page", PAGES, ids=_relative)
def test_every_snippet_is_run_or_says_why(page: Path) -> None:
    """No recipe, example or snippet of the README or the docs goes unrun without a reason (issue 46)."""
    unrun = unrun_blocks(_relative(page))
    assert not unrun, (
        "blocks no test runs, without a marker saying how they are checked or why not:\n"
        + "\n".join(
            f"  {b.page} line {b.line} ({b.lang or 'no language'}):"
            f" {b.code.splitlines()[0][:60] if b.code.strip() else ''}"
            for b in unrun
        )
    )


JSON_BLOCKS = [
    b
    for blocks in BLOCKS.values()
    for b in blocks
    if b.lang == "json" and (b.marker or "").startswith("json=")
]


def _check_json(kind: str, code: str) -> None:
    import json as json_module

    import jsonschema

    from igg.agents.scripted import turn_problem
    from igg.interfaces.cli import build_parser

    response_schema = json_module.loads(
        (ROOT / "schemas" / "response.schema.json").read_text(encoding="utf-8")
    )
    if kind == "transcript":
        for line in code.strip().splitlines():
            turn = json_module.loads(line)
            assert turn_problem(turn) is None, turn_problem(turn)
            if "raw" not in turn:
                jsonschema.validate(turn, response_schema)
        return
    value = json_module.loads(code)
    if kind == "response":
        jsonschema.validate(value, response_schema)
    elif kind == "action":
        jsonschema.validate({"actions": [value]}, response_schema)
    elif kind == "mcp-config":
        for server in value["mcpServers"].values():
            assert server["command"] == "igg"
            build_parser().parse_args(server["args"])  # SystemExit on a command line igg does not take
    else:
        raise AssertionError(f"unknown json kind {kind!r}")


@pytest.mark.parametrize("block", JSON_BLOCKS, ids=[b.id for b in JSON_BLOCKS])
def test_json_snippets_are_what_they_say(block: Block) -> None:
    """A ```json example of the docs parses and is valid as what it shows (a response, an action, a
    transcript, an MCP client's entry)."""
    _check_json((block.marker or "").split("=", 1)[1], block.code)


def test_the_snippet_checks_can_fail(tmp_path: Path) -> None:
    """An unmarked config block is listed; a wrong action or command line fails its check; untracked files
    stay out of a sandbox."""
    blocks = parse_blocks(
        "```yaml\nrepos: []\n```\n\n<!-- readme: checked (tests/nowhere.py) -->\n```yaml\nx: 1\n```\n",
        "docs/x.md",
    )
    BLOCKS["docs/x.md"] = blocks
    try:
        assert [b.line for b in unrun_blocks("docs/x.md")] == [1, 6]
    finally:
        del BLOCKS["docs/x.md"]
    with pytest.raises(jsonschema.ValidationError):
        _check_json("action", '{"type": "ADD_NODE", "labels": "Class"}')
    with pytest.raises(SystemExit):
        _check_json(
            "mcp-config", '{"mcpServers": {"igg": {"command": "igg", "args": ["mcp", "--stoer", "x"]}}}'
        )
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "kept.md").write_text("x")
    (repo / "agent.sqlite").write_bytes(b"stray")
    subprocess.run(["git", "-C", str(repo), "add", "kept.md"], check=True)
    copy_tracked(repo, tmp_path / "copy")
    assert sorted(p.name for p in (tmp_path / "copy").iterdir()) == ["kept.md"]
