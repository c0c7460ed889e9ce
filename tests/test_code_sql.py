"""SQL table reads and writes found in string literals, and how contexts split into source files."""

from __future__ import annotations

import pytest

from igg.agents.code import looks_like_source, split_context
from igg.agents.code.sql import tables_in


@pytest.mark.parametrize(("sql", "expected"), [
    ("SELECT id, name FROM users u JOIN roles r ON u.role_id = r.id WHERE u.id = ?",
     [("users", "read"), ("roles", "read")]),
    ("insert into audit_log (event) values (?)", [("audit_log", "write")]),
    ("UPDATE users SET name = ? WHERE id = ?", [("users", "write")]),
    ("UPDATE users u SET a = 1 FROM other o WHERE o.id = u.id", [("users", "write"), ("other", "read")]),
    ("DELETE FROM sessions WHERE token = ?", [("sessions", "write")]),
    ("DELETE FROM t WHERE id IN (SELECT id FROM old)", [("t", "write"), ("old", "read")]),
    ("MERGE INTO tokens t USING staging s ON (t.id = s.id) WHEN MATCHED THEN UPDATE SET t.v = s.v",
     [("tokens", "write"), ("staging", "read")]),
    ("INSERT INTO archive SELECT * FROM orders, \"Items\" i", [("archive", "write"), ("orders", "read"), ("items", "read")]),
    ("WITH recent AS (SELECT * FROM events) SELECT * FROM recent JOIN `auth`.`users` ON 1=1",
     [("events", "read"), ("auth.users", "read")]),
    ("select * from users", [("users", "read")]),
    ("  (SELECT a FROM b)", [("b", "read")]),
])
def test_tables_read_and_written(sql, expected):
    assert [(r.table, r.op) for r in tables_in(sql)] == expected


@pytest.mark.parametrize("text", [
    "select a user from the list", "Please SELECT one", "SELECT 1", "update the docs", "Delete from the menu",
    "MERGE requests are welcome", "", "users",
])
def test_prose_and_non_table_sql_are_not_tables(text):
    assert tables_in(text) == []


def test_split_context_on_file_markers():
    text = ("// File: src/A.java\nclass A {}\n"
            "# File: app/b.py\ndef f(): pass\n"
            "-- file: `db/schema.java`\ninterface S {}\n")
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
    from igg.agents.code.sources import SourceFile, with_modules

    files = [SourceFile(p, "") for p in ("python/shop/__init__.py", "python/shop/models.py",
                                          "python/shop/util/__init__.py", "python/shop/util/money.py",
                                          "scripts/run.py", "src/Main.java")]
    assert [f.module for f in with_modules(files)] == ["shop", "shop.models", "shop.util", "shop.util.money",
                                                       "run", None]
