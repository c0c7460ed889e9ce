"""A check report as GitHub Actions workflow commands: one ``::error``/``::warning`` annotation per violation,
at the file and line of its first edge, which GitHub shows on the pull request's diff.

Values are escaped as the runner expects (``%``, CR and LF in messages; also ``:`` and ``,`` in properties),
so a module name cannot end the command early or forge another one.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from igg.rules.report import CheckReport


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def to_github(report: CheckReport, prefix: str = "") -> list[str]:
    """One workflow command per violation (known ones of a ratchet as notices), file paths under ``prefix``."""
    lines = []
    for v in report.violations:
        command = "notice" if v.status == "known" and report.new_only else v.severity
        first = next((h for h in v.path if h.file), None)
        props = []
        if first is not None:
            props.append(f"file={_prop(str(PurePosixPath(prefix) / (first.file or '')))}")
            if first.line:
                props.append(f"line={first.line}")
        props.append(f"title={_prop(f'igg {v.kind} rule {v.rule}' + (' (known)' if v.status == 'known' and report.since else ''))}")
        path = "\n".join(h.describe() for h in v.path)
        lines.append(f"::{command} {','.join(props)}::{_data(v.message + chr(10) + path)}")
    return lines
