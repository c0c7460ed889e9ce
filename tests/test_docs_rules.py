"""docs/rules.md is tested like README.md: its ```bash blocks run in order in one copy of the repository, with
the copy's own ``igg`` (the branch's code), and print what the page shows (tests/test_readme.py's convention)."""

from __future__ import annotations

import re

import pytest
import yaml

from tests.test_readme import ROOT, Block, Sandbox, check_block, make_sandbox, runnable_blocks

DOC = ROOT / "docs" / "rules.md"
BLOCKS = runnable_blocks(DOC)


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Sandbox:
    return make_sandbox(tmp_path_factory.mktemp("docs-rules"), BLOCKS, own_package=True)


@pytest.mark.xdist_group("docs-rules")
@pytest.mark.parametrize("block", BLOCKS, ids=[block.id for block in BLOCKS])
def test_docs_rules_block(block: Block, sandbox: Sandbox) -> None:
    """Each example of docs/rules.md runs as written and prints what the page shows."""
    check_block(block, sandbox, "docs/rules.md")


def test_every_example_shows_its_output_and_the_page_covers_the_feature() -> None:
    assert len(BLOCKS) >= 8 and all(b.expected is not None for b in BLOCKS if b.lang == "bash")
    text = DOC.read_text(encoding="utf-8")
    for needed in ("forbidden", "layers", "independence", "acyclic", "allowed_only", "--new-only", "--sarif",
                   "--format github", "igg cycles", ".pre-commit-hooks.yaml", "upload-sarif"):
        assert needed in text, needed


def test_the_pre_commit_hook_runs_igg_check() -> None:
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert hook["id"] == "igg-check" and hook["entry"] == "igg check" and hook["pass_filenames"] is False
    assert re.search(hook["files"], "src/shop/api.py") and re.search(hook["files"], "igg.toml")
    assert not re.search(hook["files"], "README.md")
