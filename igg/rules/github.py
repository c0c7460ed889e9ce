"""A check report as GitHub Actions workflow commands: one ``::error``/``::warning`` annotation per violation,
at the file and line of its first edge, which GitHub shows on the pull request's diff.

Values are escaped as the runner expects (``%``, CR and LF in messages; also ``:`` and ``,`` in properties),
so a module name cannot end the command early or forge another one. ``plain`` escapes a value for a plain
line of a CI log instead (``igg check``'s text, ``igg cycles``, the ``--since`` listing), where the runner
reads any line that starts with ``::`` (after its leading spaces) as a command.
"""

from __future__ import annotations

import re

from igg.rules.report import TRUNCATED, CheckReport, PathOf, repository_path

_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")
"""Characters that break a line, move text or hide it: shown as escapes in a plain log line."""


def plain(text: str) -> str:
    """``text`` for a plain line of a CI log: line breaks, other controls and invisible or reordering
    characters as visible escapes (``\\n``, ``\\u202e``), and a leading ``:`` as ``\\x3a``, so a file, rule
    or module name can neither start a line of its own nor begin a workflow command (``::error ...``)."""
    text = _UNSAFE.sub(_escape, text)
    return "\\x3a" + text[1:] if text.startswith(":") else text


def _escape(m: re.Match[str]) -> str:
    char = m.group()
    named = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(char)
    return named if named is not None else f"\\u{ord(char):04x}"


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def to_github(report: CheckReport, prefix: str | PathOf = "") -> list[str]:
    """One workflow command per violation (known ones of a ratchet as notices), file paths under ``prefix``
    (or as ``prefix`` maps them, when several trees were checked)."""
    lines = []
    for v in report.violations:
        command = "notice" if v.status == "known" and report.new_only else v.severity
        first = next((h for h in v.path if h.file), None)
        props = []
        if first is not None:
            props.append(f"file={_prop(repository_path(prefix, first.file or ''))}")
            if first.line:
                props.append(f"line={first.line}")
        known = " (known)" if v.status == "known" and report.since else ""
        props.append(f"title={_prop(f'igg {v.kind} rule {v.rule}{known}')}")
        path = "\n".join(h.describe() for h in v.path)
        lines.append(f"::{command} {','.join(props)}::{_data(v.message + chr(10) + path)}")
    if report.truncated:
        lines.append(f"::warning title=igg check::{_data(TRUNCATED)}")
    return lines
