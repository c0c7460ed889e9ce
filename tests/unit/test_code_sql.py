"""SQL table reads and writes found in string literals, and how contexts split into source files."""

from __future__ import annotations

import pytest

from igg.agents.code import looks_like_source, split_context
from igg.codemap.sql import tables_in


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        (
            "SELECT id, name FROM users u JOIN roles r ON u.role_id = r.id WHERE u.id = ?",
            [("users", "read"), ("roles", "read")],
        ),
        ("insert into audit_log (event) values (?)", [("audit_log", "write")]),
        ("UPDATE users SET name = ? WHERE id = ?", [("users", "write")]),
        ("UPDATE users u SET a = 1 FROM other o WHERE o.id = u.id", [("users", "write"), ("other", "read")]),
        ("DELETE FROM sessions WHERE token = ?", [("sessions", "write")]),
        ("DELETE FROM t WHERE id IN (SELECT id FROM old)", [("t", "write"), ("old", "read")]),
        (
            "MERGE INTO tokens t USING staging s ON (t.id = s.id) WHEN MATCHED THEN UPDATE SET t.v = s.v",
            [("tokens", "write"), ("staging", "read")],
        ),
        (
            'INSERT INTO archive SELECT * FROM orders, "Items" i',
            [("archive", "write"), ("orders", "read"), ("items", "read")],
        ),
        (
            "WITH recent AS (SELECT * FROM events) SELECT * FROM recent JOIN `auth`.`users` ON 1=1",
            [("events", "read"), ("auth.users", "read")],
        ),
        ("select * from users", [("users", "read")]),
        ("  (SELECT a FROM b)", [("b", "read")]),
        # placeholders of every DB-API style, template holes (f-strings, str.format), several statements
        ("SELECT * FROM users WHERE id = %s AND name = %(name)s", [("users", "read")]),
        ("SELECT * FROM users WHERE id = :id OR id = $1 OR name = @name", [("users", "read")]),
        ("SELECT * FROM {} JOIN orders o ON o.uid = {}", [("orders", "read")]),
        ("SELECT * FROM {schema}.accounts WHERE id = {uid}", [("accounts", "read")]),
        (
            "INSERT INTO audit (a) VALUES (?); DELETE FROM queue WHERE id = ?",
            [("audit", "write"), ("queue", "write")],
        ),
        ("SELECT a FROM t1 UNION SELECT b FROM t2", [("t1", "read"), ("t2", "read")]),
        ("SELECT * FROM [dbo].[Users] WHERE id = ?", [("dbo.users", "read")]),
        (
            "UPDATE accounts SET balance = balance - ? WHERE id IN (SELECT account_id FROM holds)",
            [("accounts", "write"), ("holds", "read")],
        ),
    ],
)
def test_tables_read_and_written(sql, expected):
    assert [(r.table, r.op) for r in tables_in(sql)] == expected


@pytest.mark.parametrize(
    "text",
    [
        "select a user from the list",
        "Please SELECT one",
        "SELECT 1",
        "update the docs",
        "Delete from the menu",
        "MERGE requests are welcome",
        "",
        "users",
        # the docstrings behind the false tables of the issue (rich, networkx), read as plain strings
        (
            "Insert non-printing control codes.\n\n        Args:\n            control_codes (str): Control"
            " codes, such as those that may move the cursor.\n        "
        ),
        (
            "Insert a new key-value pair or modify the value in an existing\n        pair.\n\n       "
            " Parameters\n        ----------\n        key : hashable object\n            The key.\n"
        ),
        (
            "Select a cell to initiate _find_partition\n\n    Parameters\n    ----------\n    G : NetworkX"
            " Graph\n    starting_edge: an edge to build the starting cell from\n\n    Returns\n    -------\n"
        ),
        "Update: the value was set, returns True",
        "INSERT INTO",
        "UPDATE users",
        "DELETE",
        "SELECT * FROM {}",
    ],
)
def test_prose_and_non_table_sql_are_not_tables(text):
    assert tables_in(text) == []


def test_split_context_on_file_markers():
    text = (
        "// File: src/A.java\nclass A {}\n"
        "# File: app/b.py\ndef f(): pass\n"
        "-- file: `db/schema.java`\ninterface S {}\n"
    )
    files = split_context(text)
    assert [f.path for f in files] == ["src/A.java", "app/b.py", "db/schema.java"]
    assert files[0].text == "class A {}\n" and files[1].language == "python"


def test_looks_like_source():
    assert looks_like_source("// File: src/A.java\nclass A {}")
    assert looks_like_source("package a.b;\npublic class A {}\n")
    assert looks_like_source("import os\n\ndef main():\n    pass\n")
    assert not looks_like_source("// File: notes.txt\nhello")
    assert not looks_like_source("The auth module handles logins. Users sign in with a password.")
    assert not looks_like_source("")


def test_python_module_names_start_at_the_top_most_package_wherever_the_root_is():
    from igg.codemap.sources import SourceFile, with_modules

    files = [
        SourceFile(p, "")
        for p in (
            "python/shop/__init__.py",
            "python/shop/models.py",
            "python/shop/util/__init__.py",
            "python/shop/util/money.py",
            "scripts/run.py",
            "src/Main.java",
        )
    ]
    assert [f.module for f in with_modules(files)] == [
        "shop",
        "shop.models",
        "shop.util",
        "shop.util.money",
        "run",
        None,
    ]


def test_a_string_is_a_query_only_where_code_uses_it_as_one():
    from igg.codemap.python.analyze import analyze_python

    source = (
        "def load(cursor, uid, table):\n"
        '    """Select rows from users; returns them."""\n'
        '    "Delete from sessions where id = 1;"\n'
        '    cursor.execute("Select rows from users;")\n'
        '    cursor.execute(f"SELECT * FROM {table} JOIN orders o ON o.uid = {uid}")\n'
        '    return cursor.execute(f"DELETE FROM carts WHERE uid = {uid}")\n'
    )
    (load,) = analyze_python("app/db.py", source).callables
    assert [(s.table, s.op, s.line) for s in load.sql] == [
        ("users", "read", 4),
        ("orders", "read", 5),
        ("carts", "write", 6),
    ]


def test_java_concatenations_and_escapes_are_read_as_one_query():
    from igg.codemap.java.analyze import analyze_java

    source = (
        "class Repo {\n  void find(java.sql.Connection c, String table, int id) throws Exception {\n   "
        ' c.prepareStatement("SELECT \\"name\\" FROM " + table + " t JOIN roles r ON r.id = t.rid WHERE t.id'
        ' = " + id);\n    c.prepareStatement("Update failed: " + id);\n  }\n}\n'
    )
    (find,) = [c for c in analyze_java("Repo.java", source).callables if c.name == "find"]
    assert [(s.table, s.op) for s in find.sql] == [("roles", "read")]


def test_map_code_of_real_rich_and_networkx_modules_finds_no_database_tables(tmp_path):
    """The false tables of the issue came from these very files (rich's Console.control WROTE_TO ``non``,
    networkx's MinHeap.insert to ``a``, _select_starting_cell READ_FROM ``returns``)."""
    import json
    import shutil
    from pathlib import Path

    import networkx
    import rich

    from tests.integration.test_cli_map_code import igg

    tree = tmp_path / "tree"
    for package, part in (
        (rich, "console.py"),
        (networkx, "utils/heaps.py"),
        (networkx, "generators/line.py"),
    ):
        source = Path(package.__file__).parent / part
        target = tree / package.__name__ / part
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, target)
    result = igg("map-code", str(tree), "--json")
    assert result.returncode == 0, result.stderr
    graph = json.loads(result.stdout)["map_code"]["graph"]
    assert graph["nodes_by_type"]["Method"] > 100
    assert graph["nodes_by_type"].get("DatabaseTable", 0) == 0
    assert not {"READS_FROM", "WRITES_TO"} & {t for t, n in graph["edges_by_type"].items() if n}
