"""The language seam: every language IGG reads is one module behind ``igg.codemap.language.Language``, and
walk, cache, link, ``--update`` and the agents reach languages only through it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from igg.codemap import language as languages
from igg.codemap.cache import FactsCache
from igg.codemap.language import SourceFile, get, language_of, parse_languages

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", languages.names())
def test_each_language_claims_the_files_the_registry_says(name: str) -> None:
    """The registry's suffix table (read without importing a language) agrees with each language's own."""
    lang = get(name)
    assert lang.name == name
    assert sorted(lang.suffixes) == sorted(s for s, n in languages.SUFFIXES.items() if n == name)
    assert sorted(lang.config_names) == sorted(c for c, n in languages.CONFIG_NAMES.items() if n == name)
    for suffix in lang.suffixes:
        assert language_of(f"a/b/file{suffix}") == name
        assert SourceFile(f"x{suffix.upper()}", "").language == name
    assert lang.cache_version and name in languages.TITLES


@pytest.mark.parametrize("name", languages.names())
def test_each_languages_schema_additions_are_in_the_built_in_code_schema(name: str) -> None:
    schema = json.loads((ROOT / "schemas" / "code-graph.json").read_text())
    additions = get(name).schema
    assert set(additions.node_types) <= set(schema["node_types"])
    assert set(additions.edge_types) <= set(schema["edge_types"])


def test_a_file_no_language_claims_is_none() -> None:
    assert (
        language_of("README.md") is None and language_of("Makefile") is None and language_of("a.b/c") is None
    )


def test_languages_option_names_the_ones_igg_reads() -> None:
    assert parse_languages(None) == languages.names()
    assert parse_languages("java, python") == ("python", "java")  # reporting order, not the order given
    with pytest.raises(ValueError, match=r"^cobol: languages are python, java"):
        parse_languages("python,cobol")


def test_the_cache_key_carries_the_languages_own_version() -> None:
    """A language's new analyzer version reparses its files alone."""
    py, java = FactsCache.key("a.py", "a", "0"), FactsCache.key("A.java", None, "0")
    assert (
        f".python.{get('python').cache_version}\x00" in py
        and f".java.{get('java').cache_version}\x00" in java
    )


def test_no_code_outside_a_language_module_asks_which_language_a_file_is_in() -> None:
    """Walk, cache, link, update and the agents go through the protocol: no ``== "java"``-style test on a
    language name outside the language's own package (and the registry that lists them)."""
    own = {ROOT / "igg" / "codemap" / name for name in languages.names()}
    names = "|".join(languages.names())
    pattern = re.compile(rf"""(==|!=|\bin\b)\s*\(?["']({names})["']""")
    found = []
    for path in [*(ROOT / "igg" / "codemap").rglob("*.py"), *(ROOT / "igg" / "agents").rglob("*.py")]:
        if any(parent in own for parent in path.parents) or path.name == "language.py":
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == []
