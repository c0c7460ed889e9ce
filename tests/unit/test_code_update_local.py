"""``--update`` after a change inside bodies resolves only the changed files again, and still equals a fresh
map.

When every changed file declares what it declared before (the same types, callables, imports, fields and the
tables it names), no other file's relations can change: the update links the changed files alone, changes
their own nodes' properties (line numbers, the content hash) and the edges going out of their nodes. Each case
below is judged twice: against the same update done the slow way (a full link and a diff of the whole graph:
the same graph down to element ids and provenance) and against a fresh map of the new tree.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import igg.mapping.remap as remap_module
import igg.mapping.samefacts as samefacts_module
from igg.codemap.language import language_of
from igg.mapping.update import update_map
from igg.service import map_code
from igg.store import SessionStore
from igg.store.codec import canonical
from igg.store.location import sidecar_path
from tests.codegraph import CODE_FIXTURES, map_into_store
from tests.support.scripts import script
from tests.unit.test_code_update import graph_of

JAVA = "java/src/main/java/com/acme"


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


# (name, edit of the tree, what is linked again: "changed" the changed files alone, "reach" them and the files
# that mention a changed declaration, "all" every file)
EDITS: list[tuple[str, Callable[[Path], None], str]] = [
    (
        "a Java call added to another file's method, lines shifted",
        lambda t: _replace(
            t / f"{JAVA}/service/AuthService.java",
            "        audit(user);\n",
            "\n\n        audit(user);\n        users.save(user);\n",
        ),
        "changed",
    ),
    (
        "a Java call and an instantiation removed",
        lambda t: _replace(
            t / f"{JAVA}/service/AuthService.java",
            "        AdminUser admin = new AdminUser(current.getName());\n        users.save(admin);\n"
            "        return admin;\n",
            "        return current;\n",
        ),
        "changed",
    ),
    # a Python call, assignment or return is a value flow, which crosses modules without a name changing
    # (what a call passes reaches another module's parameters): every Python file is linked again (the
    # Java files only when they name what changed)
    (
        "a Python call moved to another module's function",
        lambda t: _replace(
            t / "py/shop/service.py",
            "        helper(order)\n",
            "        helper(order)\n        money.format_amount(order)\n",
        ),
        "reach",
    ),
    (
        "a Python call removed",
        lambda t: _replace(t / "py/shop/service.py", "        order.pay()\n", ""),
        "reach",
    ),
    (
        "a Python body changed without changing its flows (a constant)",
        lambda t: _replace(t / "py/shop/service.py", "money.format_amount(10)", "money.format_amount(12)"),
        "changed",
    ),
    (
        "a Python file's calls moved down, their flows the same (the calls kept from the map, moved)",
        lambda t: _replace(
            t / "py/shop/service.py", "    def checkout(", "    # checks out\n\n    def checkout("
        ),
        "changed",
    ),
    (
        "two files changed in bodies",
        lambda t: (
            _replace(t / "py/shop/service.py", "money.format_amount(10)", "money.format_amount(12)"),
            _replace(t / f"{JAVA}/service/AuthService.java", "        Token.count();\n", ""),
        ),
        "changed",
    ),
    (
        "a Java method added that no other file names",
        lambda t: _replace(
            t / f"{JAVA}/service/AuthService.java",
            "    private void audit(User user) {",
            "    public void logout() {\n        audit(null);\n    }\n\n    private void audit(User user) {",
        ),
        "changed",
    ),
    (
        "a Python function added that no other file names",
        lambda t: _replace(
            t / "py/shop/models.py",
            "class Order",
            "def audit_order(order):\n    return order\n\n\nclass Order",
        ),
        "reach",
    ),
    (
        "a Java overload removed that another file calls",
        lambda t: _replace(
            t / f"{JAVA}/service/PasswordHasher.java",
            "    public static String hash(String password) {\n        return hash(password, 10);\n    }\n",
            "",
        ),
        "reach",
    ),
    (
        "a Java method added to a superclass, inherited by the calls of other files",
        lambda t: _replace(
            t / f"{JAVA}/model/BaseEntity.java",
            "    public long getId() {",
            "    public String getName() {\n        return null;\n    }\n\n    public long getId() {",
        ),
        "reach",
    ),
    (
        "a Java constructor added to a superclass (the subclasses' implicit super() calls)",
        lambda t: _replace(
            t / f"{JAVA}/model/BaseEntity.java",
            "    protected long id;\n",
            "    protected long id;\n\n    protected BaseEntity() {\n    }\n",
        ),
        "reach",
    ),
    (
        "a Java field's type changed",
        lambda t: _replace(
            t / f"{JAVA}/service/AuthService.java",
            "    private final UserRepository users;",
            "    private final JdbcUserRepository users;",
        ),
        "reach",
    ),
    (
        "a Python class added",
        lambda t: _replace(
            t / "py/shop/models.py",
            "class Order",
            "class Refund:\n    def pay(self) -> None:\n        pass\n\n\nclass Order",
        ),
        "reach",
    ),
    (
        "a Python method renamed that another module calls",
        lambda t: _replace(t / "py/shop/models.py", "def pay(self)", "def settle(self)"),
        "reach",
    ),
    (
        "a Java class's supertype changed (every subtype's members change)",
        lambda t: _replace(
            t / f"{JAVA}/model/AdminUser.java",
            "public class AdminUser extends User {",
            "public class AdminUser extends BaseEntity {",
        ),
        "all",
    ),
    (
        (
            "a Java interface's abstract method redeclared (a functional method types lambdas in files that"
            " need not name it)"
        ),
        lambda t: _replace(
            t / f"{JAVA}/model/Labeled.java", "    String label();", "    String label(String prefix);"
        ),
        "all",
    ),
    # an import binds a name in its file alone, which other files read where the file passes it on (``from
    # pkg import X`` of a name ``pkg`` imports): the files that mention it are linked again (and Python's
    # calls solved again: an import binds a module's name, which values cross modules by)
    (
        "a Python import added (an outside package no file imported before)",
        lambda t: _replace(t / "py/shop/service.py", "import logging\n", "import logging\nimport json\n"),
        "reach",
    ),
    (
        "a Python import removed (the outside package no other file imports goes with it)",
        lambda t: _replace(t / "py/shop/service.py", "import logging\n", ""),
        "reach",
    ),
    (
        "a Java import added that no declaration is written with",
        lambda t: _replace(
            t / f"{JAVA}/service/AuthService.java",
            "import com.acme.model.User;\n",
            "import com.acme.model.User;\nimport com.acme.model.BaseEntity;\n",
        ),
        "reach",
    ),
    (
        "a Java import removed that a field's type is written with (what the type names changes)",
        lambda t: _replace(
            t / f"{JAVA}/service/AuthService.java", "import com.acme.repo.UserRepository;\n", ""
        ),
        "all",
    ),
]


@pytest.fixture(scope="module")
def mapped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A map-code session of the Python and Java fixtures, in a store with its facts cache."""
    base = tmp_path_factory.mktemp("mapped")
    root = base / "tree"
    shutil.copytree(CODE_FIXTURES / "python", root / "py")
    shutil.copytree(CODE_FIXTURES / "java", root / "java")
    map_into_store(root, base / "s.db")
    return base


def _copy(mapped: Path, to: Path) -> tuple[Path, Path]:
    shutil.copytree(mapped, to)
    return to / "tree", to / "s.db"


@pytest.mark.parametrize(("name", "edit", "linked"), EDITS, ids=[e[0] for e in EDITS])
def test_an_update_links_only_what_changed_and_equals_the_full_update_and_a_fresh_map(
    mapped: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    edit: Callable[[Path], None],
    linked: str,
) -> None:
    monkeypatch.setattr(samefacts_module, "update_same_facts", lambda *a, **k: None)  # lines moved: linked
    tree, store = _copy(mapped, tmp_path / "fast")
    edit(tree)
    result = update_map([tree], store, session_id="m", jobs=1)
    changed, read, relinked = len(result.files["changed"]), result.files["read"], result.files["relinked"]
    assert changed and result.files["reparsed"] == changed
    if linked == "changed":
        assert relinked == changed
    elif linked == "reach":
        assert changed < relinked < read
    else:
        assert relinked == read
    _as_the_slow_way_and_a_fresh_map(mapped, tmp_path, monkeypatch, edit, result)


def _as_the_slow_way_and_a_fresh_map(
    mapped: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit: Callable[[Path], None], result: Any
) -> None:
    """``result``, the update of ``tmp_path / "fast"`` (a copy of ``mapped`` after ``edit``), changed the
    graph and gave what the same update done the slow way gives (a full link and a diff of the whole graph:
    the same graph down to element ids and provenance), and what a fresh map of the new tree gives."""
    assert sum(v for k, v in result.graph.items() if k not in ("nodes", "edges")) > 0  # the edit shows
    tree, store = tmp_path / "fast" / "tree", tmp_path / "fast" / "s.db"
    slow_tree, slow_store = _copy(mapped, tmp_path / "slow")
    edit(slow_tree)
    monkeypatch.setattr(remap_module, "_reach", lambda *a, **k: None)  # the full link and diff
    slow = update_map([slow_tree], slow_store, session_id="m", jobs=1)
    assert slow.files["relinked"] == slow.files["read"]
    assert (result.graph, result.step, result.iteration) == (slow.graph, slow.step, slow.iteration)
    _, fast_state, _ = SessionStore(store).load_state("m")
    _, slow_state, _ = SessionStore(slow_store).load_state("m")
    assert canonical(fast_state) == canonical(slow_state)  # ids and provenance included

    fresh: Any = tmp_path / "fresh.db"
    map_code([tree], agent="code", jobs=1, store=fresh, session_id="f")
    assert graph_of(store, "m") == graph_of(fresh, "f")


def test_a_go_type_is_linked_with_the_files_that_declare_its_methods(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """uuid.go declares UUID, whose methods dce.go, marshal.go, node.go, sql.go and time.go declare: UUID's
    CONTAINS edges to them are stated by those files, so uuid.go is never linked without them (linked alone,
    its edges were planned without theirs, and removed)."""
    base = tmp_path / "mapped"
    shutil.copytree(CODE_FIXTURES / "go" / "uuid", base / "tree" / "uuid")
    map_into_store(base / "tree", base / "s.db")
    monkeypatch.setattr(samefacts_module, "update_same_facts", lambda *a, **k: None)  # lines moved: linked

    def edit(tree: Path) -> None:
        _replace(
            tree / "uuid/uuid.go",
            "func Parse(s string) (UUID, error) {",
            "\nfunc Parse(s string) (UUID, error) {",
        )

    tree, store = _copy(base, tmp_path / "fast")
    edit(tree)
    result = update_map([tree], store, session_id="m", jobs=1)
    assert result.files["changed"] == ["uuid/uuid.go"]
    assert 6 <= result.files["relinked"] < result.files["read"]  # uuid.go and the five files of its methods
    _as_the_slow_way_and_a_fresh_map(base, tmp_path, monkeypatch, edit, result)


def _write(path: Path, text: str) -> None:
    path.write_text(text)


def _move(tree: Path, old: str, new: str) -> None:
    (tree / old).rename(tree / new)


# (name, files added, removed or moved, whether they are linked alone: every file of their language and the
# files that mention what they declare, or every file)
MOVES: list[tuple[str, Callable[[Path], None], bool]] = [
    (
        "a Python module added beside others, calling into them",
        lambda t: _write(
            t / "py/shop/refunds.py",
            "from shop import models\nfrom shop.util.money import format_amount\n\n\n"
            "def refund(order: models.Order) -> str:\n    order.pay()\n    return format_amount(1)\n",
        ),
        True,
    ),
    (
        "a Python module removed that another imports and calls",
        lambda t: (t / "py/shop/util/money.py").unlink(),
        True,
    ),
    (
        "a Python module moved within its package",
        lambda t: _move(t, "py/shop/util/money.py", "py/shop/util/cash.py"),
        True,
    ),
    (
        "a Java class added to a package, extending another",
        lambda t: _write(
            t / f"{JAVA}/model/Guest.java",
            "package com.acme.model;\n\npublic class Guest extends User {\n"
            "    public Guest(String name) {\n        super(name);\n    }\n}\n",
        ),
        True,
    ),
    (
        "a Java class removed that another calls",
        lambda t: (t / f"{JAVA}/service/PasswordHasher.java").unlink(),
        True,
    ),
    (
        "a Python package added (its __init__.py names the modules below it)",
        lambda t: (t / "py/shop/extra").mkdir() or _write(t / "py/shop/extra/__init__.py", "X = 1\n"),
        False,
    ),
    (
        "a Python module removed that alone imported an outside package (its node goes too)",
        lambda t: (t / "py/shop/service.py").unlink(),
        True,
    ),
    (
        "a Python module added that reads a table others name",
        lambda t: _write(
            t / "py/shop/report.py",
            "def count(connection) -> int:\n"
            '    return connection.execute("SELECT count(*) FROM orders").fetchone()[0]\n',
        ),
        True,
    ),
    (
        "a Python module added that reads a table no other names and imports an outside package first",
        lambda t: _write(
            t / "py/shop/report.py",
            "import csv\n\n\ndef count(connection) -> int:\n"
            '    return connection.execute("SELECT count(*) FROM refunds").fetchone()[0]\n',
        ),
        True,
    ),
    (
        "a Python module that alone names a table removed (the table's node goes with it)",
        lambda t: (t / "py/shop/repository.py").unlink(),
        True,
    ),
    (
        "a Java class added in a package of its own",
        lambda t: (
            (t / f"{JAVA}/audit").mkdir()
            or _write(t / f"{JAVA}/audit/Trail.java", "package com.acme.audit;\n\npublic class Trail {\n}\n")
        ),
        False,
    ),
]


@pytest.mark.parametrize(("name", "edit", "alone"), MOVES, ids=[e[0] for e in MOVES])
def test_files_added_or_removed_are_linked_with_their_language_alone_and_equal_a_fresh_map(
    mapped: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    edit: Callable[[Path], None],
    alone: bool,
) -> None:
    """A file added or removed beside others of its language (no package of its own, no HTTP routes) links
    its language's files alone; its own nodes, the edges out of the files linked, its package's CONTAINS and
    the tables and outside packages that come or go with it change as a full update and a fresh map change
    them. Anything else links every file."""
    tree, store = _copy(mapped, tmp_path / "fast")
    edit(tree)
    result = update_map([tree], store, session_id="m", jobs=1)
    assert result.files["added"] or result.files["removed"]
    if alone:
        assert result.files["relinked"] < result.files["read"]
    else:
        assert result.files["relinked"] == result.files["read"]
    _as_the_slow_way_and_a_fresh_map(mapped, tmp_path, monkeypatch, edit, result)


def test_an_update_with_nothing_changed_links_nothing_and_changes_nothing(
    mapped: Path, tmp_path: Path
) -> None:
    tree, store = _copy(mapped, tmp_path / "same")
    result = update_map([tree], store, session_id="m", jobs=1)
    assert (result.files["reparsed"], result.files["relinked"]) == (0, 0)
    assert {k: v for k, v in result.graph.items() if k not in ("nodes", "edges")} == dict.fromkeys(
        ("nodes_added", "nodes_removed", "nodes_changed", "edges_added", "edges_removed", "edges_changed"), 0
    )


def test_facts_of_unchanged_files_missing_from_the_cache_mean_a_full_link(
    mapped: Path, tmp_path: Path
) -> None:
    """A cache cleared (or written by an IGG whose analyzers differ) leaves nothing to trust: every file is
    parsed and linked again."""
    tree, store = _copy(mapped, tmp_path / "nocache")
    sidecar_path(store, ".codefacts").unlink()
    EDITS[0][1](tree)
    result = update_map([tree], store, session_id="m", jobs=1)
    assert result.files["reparsed"] == result.files["read"] == result.files["relinked"]
    fresh = tmp_path / "fresh.db"
    map_code([tree], agent="code", jobs=1, store=fresh, session_id="f")
    assert graph_of(store, "m") == graph_of(fresh, "f")


def _added_copy(tree: Path, rel: str, name: str, names: str, new: str) -> None:
    """A copy of ``rel`` beside it as ``name``, the names matching ``names`` made ``new`` (the declarations of
    one package must not clash)."""
    source = tree / rel
    (source.parent / name).write_text(re.sub(names, new, source.read_text()))


GENERATED_MOVES: dict[str, Callable[[Path], None]] = {
    "python added": lambda t: _added_copy(t, "python/benchpy/p0/m0.py", "m9000.py", r"\bK0\b", "K9000"),
    "python removed": lambda t: (t / "python/benchpy/p0/m0.py").unlink(),
    "java added": lambda t: _added_copy(t, "java/com/bench/p1/C1.java", "C9001.java", r"\bC1\b", "C9001"),
    "java removed": lambda t: (t / "java/com/bench/p1/C1.java").unlink(),
    "typescript added": lambda t: _added_copy(
        t, "ts/src/p1/m1.ts", "m9001.ts", r"\b([IKf])1\b", r"\g<1>9001"
    ),
    "typescript removed": lambda t: (t / "ts/src/p1/m1.ts").unlink(),
    "go added": lambda t: _added_copy(t, "go/p1/f1.go", "f9001.go", r"\b(T|NewT|F)1\b", r"\g<1>9001"),
    "go removed": lambda t: (t / "go/p1/f1.go").unlink(),
    # a name other languages' files mention too (m0, their module): only the Java files that do are linked
    "java method renamed": lambda t: _replace(
        t / "java/com/bench/p1/C1.java", "public String m0(String a) {", "public String start0(String a) {"
    ),
}


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A map-code session of a generated tree of the four languages (``scripts/gen_code_tree.py``: files that
    import and call each other across packages), in a store with its facts cache."""
    base = tmp_path_factory.mktemp("generated")
    script("gen_code_tree").generate(
        base / "tree", files=120, packages=3, languages=("java", "python", "typescript", "go")
    )
    map_into_store(base / "tree", base / "s.db")
    return base


@pytest.mark.parametrize("name", list(GENERATED_MOVES))
def test_a_file_added_removed_or_renamed_in_each_language_links_the_files_naming_it_and_equals_a_fresh_map(
    generated: Path, tmp_path: Path, name: str
) -> None:
    """A file added or removed links the files of its language that name what it declares or import its
    path (``moved.moved_names``): a few of them in TypeScript and Java, but in Python, whose calls are one
    program, every one, and in Go, whose method sets decide what implements what, those that call one of
    its methods' names (here, most); so does a file removed whose types other files name (here, most). A
    method renamed links the files of its language that name it."""
    tree, store = _copy(generated, tmp_path / "tree")
    GENERATED_MOVES[name](tree)
    result = update_map([tree], store, session_id="m", jobs=1)
    files = result.files
    assert files["added"] or files["removed"] or files["changed"]
    language = [p for p in tree.rglob("*") if language_of(p.name) == name.split()[0]]
    if name.split()[0] in ("python", "go") or name.endswith(("renamed", "removed")):
        assert files["read"] // 5 < files["relinked"] <= len(language), files
    else:
        assert 0 < files["relinked"] <= len(language) // 2, files
    assert sum(v for k, v in result.graph.items() if k not in ("nodes", "edges")) > 0
    fresh: Any = tmp_path / "fresh.db"
    map_code([tree], agent="code", jobs=1, store=fresh, session_id="f")
    assert graph_of(store, "m") == graph_of(fresh, "f")
