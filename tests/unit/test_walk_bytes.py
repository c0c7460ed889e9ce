"""``read_bytes_as_walked`` (a file's bytes judged without the disk: a file of a commit, or one a kept graph's
check reads again) reads what a walk reads of the same file, or skips it for the same reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from igg.codemap.sources import SourceFile
from igg.codemap.walk import Skip, read_bytes_as_walked, walk

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "code"


@pytest.mark.parametrize("tree", sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()))
def test_the_bytes_of_each_walked_file_read_as_the_walk_read_them(tree: str) -> None:
    walked = walk([FIXTURES / tree])
    assert walked.files
    for f in walked.files:
        made = read_bytes_as_walked(f.path, (FIXTURES / tree / f.path).read_bytes())
        assert isinstance(made, SourceFile) and made.text == f.text, f.path
    for skip in walked.skipped:
        path = FIXTURES / tree / skip.path
        if (
            path.is_file()
            and not path.is_symlink()
            and not skip.reason.startswith(("gitignored", "vendored"))
        ):
            made = read_bytes_as_walked(skip.path, path.read_bytes())
            assert isinstance(made, Skip) and made.reason == skip.reason, skip.path


def test_skips_and_what_no_language_reads(tmp_path: Path) -> None:
    assert read_bytes_as_walked("notes.txt", b"text") is None
    assert read_bytes_as_walked("a.py", b"x = 1\0") == Skip("a.py", "binary (NUL bytes)")
    big = read_bytes_as_walked("a.py", b"x = 1\n" * 10, max_bytes=20)
    assert isinstance(big, Skip) and big.reason.startswith("too large")
    made = read_bytes_as_walked("a.py", "\ufeffimport os\n".encode())
    assert isinstance(made, SourceFile) and made.text == "import os\n" and made.module is None
    generated = read_bytes_as_walked("a_pb2.py", b"import os\n")
    assert isinstance(generated, SourceFile)  # Python keeps generated modules (their imports count)
