"""One file never fails a map: the per-file guard every analysis of one source file runs under.

``guarded(analyze, source)`` runs an analyzer on one file and always returns facts:

- a syntax tree too deep for the default recursion limit (``x = 1+1+...`` with 3,000 terms, ``a.b.b.b...``)
  is analysed again on a thread with a large stack and a raised recursion limit (``DEEP_LIMIT``), and the file
  maps whole;
- anything else the analyzer raises, a tree deeper still, or a file that takes longer than ``FILE_SECONDS``
  makes the file *partial*: for Python, the top-level statements that cannot be parsed or analysed on their
  own are left out and the rest of the file is analysed (its other definitions and imports are kept); for
  Java, its package and imports are read from their lines. ``FileFacts.error`` says which and why, and the
  map goes on.

The time limit is a ``SIGALRM`` timer, so it holds where analysis runs on a process's main thread (the parse
processes of ``igg map-code``, the CLI itself); elsewhere (a server's worker threads) only the other guards
do.
"""

from __future__ import annotations

import io
import signal
import sys
import threading
import tokenize
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from igg.codemap.facts import FileFacts

FILE_SECONDS = 30.0
"""How long one file's analysis may take before the file is left partial."""
DEEP_LIMIT = 20_000
"""The recursion limit of the second attempt at a deep file (run on a ``DEEP_STACK``-byte stack). The parser
allows its C code three levels per unit of the limit: 60,000 levels, which the stack holds with room to
spare (measured: a 150,000-level expression crashed a 1 GiB stack at a limit of 50,000; at 20,000 every shape
tried up to 150,000 levels, Python and Java, comes back whole or partial)."""
DEEP_STACK = 1 << 30
"""The stack of the thread that makes the second attempt: ample for ``DEEP_LIMIT`` frames of the parser."""


class _FileTimeout(BaseException):
    """One file's analysis ran past its time limit (a ``BaseException``: no ``except Exception`` inside an
    analyzer or a library swallows it)."""


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise ``_FileTimeout`` in the block after ``seconds`` (on the main thread of a Unix process; elsewhere
    the block runs unbounded)."""
    if (
        not seconds
        or not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
    ):
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise _FileTimeout

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def deep_call(function: Callable[[], FileFacts]) -> FileFacts:
    """``function()`` on a thread with a ``DEEP_STACK`` stack and the recursion limit raised to ``DEEP_LIMIT``
    (restored after); what it raises is raised here."""
    out: list[FileFacts] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            out.append(function())
        except BaseException as exc:  # handed to the caller, which decides
            failed.append(exc)

    old_limit, old_stack = sys.getrecursionlimit(), threading.stack_size()
    try:
        threading.stack_size(DEEP_STACK)
        thread = threading.Thread(target=run, name="igg-deep-file", daemon=True)
    finally:
        threading.stack_size(old_stack)
    sys.setrecursionlimit(max(old_limit, DEEP_LIMIT))
    try:
        thread.start()
        thread.join()
    finally:
        sys.setrecursionlimit(old_limit)
    if failed:
        raise failed[0]
    return out[0]


def guarded(
    analyze: Callable[[str, str, str | None], FileFacts],
    path: str,
    text: str,
    module: str | None,
    language: str,
    *,
    seconds: float | None = None,
) -> FileFacts:
    """The facts of one file by ``analyze(path, text, module)``, never an exception (see the module doc);
    ``seconds``: its time limit (default ``FILE_SECONDS``; 0 for none)."""
    seconds = FILE_SECONDS if seconds is None else seconds
    try:
        with time_limit(seconds):
            try:
                return analyze(path, text, module)
            except RecursionError:
                return deep_call(lambda: analyze(path, text, module))
    except _FileTimeout:
        return partial(
            analyze, path, text, module, language, f"took longer than {seconds:g} s to analyse", retry=False
        )
    except (Exception, RecursionError) as exc:  # noqa: BLE001 - one file's failure is that file's verdict
        return partial(analyze, path, text, module, language, _reason(exc))


def _reason(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply to analyse whole"
    if isinstance(
        exc, MemoryError
    ):  # what Python's parser raises for an expression too complex for its stack
        return "too complex for the parser"
    text = str(exc).splitlines()[0][:200] if str(exc) else ""
    return f"the analyzer failed ({type(exc).__name__}{': ' + text if text else ''})"


def partial(
    analyze: Callable[[str, str, str | None], FileFacts],
    path: str,
    text: str,
    module: str | None,
    language: str,
    reason: str,
    *,
    retry: bool = True,
) -> FileFacts:
    """What can be read of a file whose analysis failed, with ``error`` saying so (see the module doc)."""
    facts: FileFacts | None = None
    left_out: list[int] = []
    if retry:
        from igg.codemap.language import get

        facts, left_out = get(language).salvage(analyze, path, text, module)
    if facts is None:
        facts = header_facts(path, text, module, language)
        what = "only its module and imports were read"
    else:
        lines = ", ".join(map(str, left_out[:5])) + (", ..." if len(left_out) > 5 else "")
        what = (
            f"the top-level statement{'s' * (len(left_out) > 1)} at line{'s' * (len(left_out) > 1)} {lines} "
            "left out"
        )
    facts.error = f"partial: {reason}; {what}"
    facts.error_line = left_out[0] if left_out else None
    facts.lines = text.count("\n") + 1
    return facts


_CONTINUED = frozenset({"else", "elif", "except", "finally"})
"""Keywords that go on the compound statement before them."""


def top_level_statements(text: str) -> list[tuple[int, int]]:
    """(first line, last line) of each top-level statement of Python ``text`` (a decorated definition with its
    decorators), by the tokenizer alone: no syntax tree, no recursion. Raises what ``tokenize`` raises."""
    spans: list[tuple[int, int]] = []
    depth, start, end, boundary, decorated = 0, 0, 0, True, False
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        kind = tok.type
        if kind in (tokenize.NL, tokenize.COMMENT, tokenize.ENDMARKER):
            continue
        if kind == tokenize.INDENT:
            depth, boundary = depth + 1, False  # the body of the compound statement just begun
            continue
        if kind == tokenize.DEDENT:
            depth -= 1
            boundary = depth == 0
            continue
        if kind == tokenize.NEWLINE:
            boundary = boundary or depth == 0
            continue
        if depth == 0 and boundary and tok.string not in _CONTINUED:
            if start and not decorated:
                spans.append((start, end))
            if not start or not decorated:
                start = tok.start[0]
            decorated = tok.string == "@"
        boundary = False
        end = tok.end[0]
    if start:
        spans.append((start, end))
    return spans


def without_failing_statements(
    analyze: Callable[[str, str, str | None], FileFacts], path: str, text: str, module: str | None
) -> tuple[FileFacts | None, list[int]]:
    """Python's ``salvage``: the file analysed with each top-level statement that fails on its own blanked
    (line numbers kept), and the first lines of those statements; (None, []) when that does not help
    either."""
    try:
        spans = top_level_statements(text)
    except (Exception, RecursionError):  # noqa: BLE001 - the tokenizer's failure: no statements to keep
        return None, []
    lines = text.split("\n")
    failing: list[tuple[int, int]] = []
    for first, last in spans:
        chunk = "\n" * (first - 1) + "\n".join(lines[first - 1 : last])
        try:
            analyze(path, chunk, module)
        except (Exception, RecursionError):  # noqa: BLE001 - this statement is the one left out
            failing.append((first, last))
    if not failing:
        return None, []
    for first, last in failing:
        lines[first - 1 : last] = [""] * (last - first + 1)
    try:
        return analyze(path, "\n".join(lines), module), [first for first, _ in failing]
    except (Exception, RecursionError):  # noqa: BLE001 - the rest fails together: the header is all there is
        return None, []


def header_facts(path: str, text: str, module: str | None, language: str) -> FileFacts:
    """A file's module and its absolute imports, read from their lines (what a file that cannot be analysed
    still says about the dependency map): its language's ``header``."""
    from igg.codemap.language import get

    return get(language).header(path, text, module)


__all__ = [
    "DEEP_LIMIT",
    "FILE_SECONDS",
    "deep_call",
    "guarded",
    "header_facts",
    "partial",
    "time_limit",
    "top_level_statements",
    "without_failing_statements",
]
