"""docs/rules.md covers the feature (its examples run in tests/integration/test_docs.py, as every page's do),
and the pre-commit hook it documents runs ``igg check``."""

from __future__ import annotations

import re

import yaml

from tests.integration.test_docs import BLOCKS as PAGES
from tests.integration.test_docs import ROOT

DOC = ROOT / "docs" / "rules.md"
BLOCKS = [block for block in PAGES["docs/rules.md"] if block.lang in ("bash", "python")]


def test_every_example_shows_its_output_and_the_page_covers_the_feature() -> None:
    assert len(BLOCKS) >= 8 and all(b.expected is not None for b in BLOCKS if b.lang == "bash")
    text = DOC.read_text(encoding="utf-8")
    for needed in (
        "forbidden",
        "layers",
        "independence",
        "acyclic",
        "allowed_only",
        "--new-only",
        "--sarif",
        "--format github",
        "igg cycles",
        ".pre-commit-hooks.yaml",
        "upload-sarif",
    ):
        assert needed in text, needed


def test_the_pre_commit_hook_runs_igg_check() -> None:
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert hook["id"] == "igg-check" and hook["entry"] == "igg check" and hook["pass_filenames"] is False
    assert re.search(hook["files"], "src/shop/api.py") and re.search(hook["files"], "igg.toml")
    assert not re.search(hook["files"], "README.md")
