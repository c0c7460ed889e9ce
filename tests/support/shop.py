"""A small layered Python shop with a TypeScript and a Go corner, and edits of it: the tree the tests of
``--since`` (``igg.mapping.since``) and of kept graphs (``igg.mapping.kept``) change at random."""

from __future__ import annotations

import subprocess
from pathlib import Path

RULES = """
[[rules]]
name = "layered"
kind = "layers"
layers = ["shop.api", "shop.service", "shop.db"]
[[rules]]
name = "util-not-db"
kind = "forbidden"
from = "shop.util"
to = "shop.db"
"""

TREE = {
    "shop/__init__.py": "",
    "shop/api/__init__.py": "",
    "shop/api/views.py": "from shop.service import orders\n\n\ndef view(x):\n    return orders.total(x)\n",
    "shop/service/__init__.py": "",
    "shop/service/orders.py": "from shop.db import models\n\n\ndef total(x):\n    return x + 1\n",
    "shop/db/__init__.py": "",
    "shop/db/models.py": "import sqlite3\n\nfrom shop.api import views\n\n\ndef row():\n    return 1\n",
    "shop/util.py": "from shop.db import models\n\n\ndef helper():\n    return 2\n",
    "shop/web/app.ts": "import { f } from './lib';\n\nexport function g(): number {\n  return f();\n}\n",
    "shop/web/lib.ts": (
        "export function f(): number {\n  return 1;\n}\n\nexport function h(): number {\n  return 3;\n}\n"
    ),
    "shop/README.md": "the shop\n",
    "shop/data.py": "\0 a binary the walk skips\n",
    "shop/tool/go.mod": "module example.com/tool\n\ngo 1.21\n",
    "shop/tool/main.go": 'package main\n\nimport "example.com/tool/lib"\n\nfunc main() {\n\tlib.Run(1)\n}\n',
    "shop/tool/lib/lib.go": "package lib\n\nfunc Run(n int) int {\n\treturn n\n}\n",
}

BODIES = {  # edits that leave every import and declaration of a graph of imports where it was
    "body": ("shop/service/orders.py", "from shop.db import models\n\n\ndef total(x):\n    return x + 2\n"),
    "ts body": (
        "shop/web/lib.ts",
        "export function f(): number {\n  return 2;\n}\n\nexport function h(): number {\n  return 3;\n}\n",
    ),
    "ts lines": (  # h moves down a line: its declaration's line is no import
        "shop/web/lib.ts",
        "export function f(): number {\n  const x = 2;\n  return x;\n}\n\nexport function h(): number {\n"
        "  return 3;\n}\n",
    ),
    "readme": ("shop/README.md", "the shop, changed\n"),
    "asset": ("shop/logo.png", "\x89PNG not code\n"),
    "go body": ("shop/tool/lib/lib.go", "package lib\n\nfunc Run(n int) int {\n\treturn n + 1\n}\n"),
    "binary edited": ("shop/data.py", "\0 a binary the walk skips, edited\n"),
    "function renamed": (  # a graph of imports has no functions (one of tables has)
        "shop/db/models.py",
        "import sqlite3\n\nfrom shop.api import views\n\n\ndef rows():\n    return 1\n",
    ),
}
IMPORTS = {  # edits of a file's imports alone
    "import added": (
        "shop/util.py",
        "from shop.db import models\nfrom shop.api import views\n\n\ndef helper():\n    return 2\n",
    ),
    "import moved": ("shop/util.py", "\nfrom shop.db import models\n\n\ndef helper():\n    return 2\n"),
    "import gone": ("shop/db/models.py", "import sqlite3\n\n\ndef row():\n    return 1\n"),
    "ts import": ("shop/web/app.ts", "import { f } from './lib';\nimport { h } from './other';\n"),
    "go import": (
        "shop/tool/main.go",
        'package main\n\nimport (\n\t"os"\n\n\t"example.com/tool/lib"\n)\n\n'
        "func main() {\n\tlib.Run(len(os.Args))\n}\n",
    ),
}
FILES = {  # edits of which files there are, or of what a walk reads
    "package removed": ("shop/db/__init__.py", None),  # its modules are named otherwise then
    "last go file removed": ("shop/tool/lib/lib.go", None),  # the folder goes with it
    "gitignore": ("shop/.gitignore", "web/lib.ts\n"),
    "to binary": ("shop/service/orders.py", "from shop.db import models\0\n"),
    "new package": ("shop/extra/__init__.py", "from shop.db import models\n"),
    "new folder": ("shop/fresh/mod.py", "from shop.db import models\n"),
}
ADDED = {  # files added beside others of their language: the commit's state is the work tree's without them
    "new module": ("shop/db/extra.py", "from shop.api import views\n"),  # a new violation of the layers
    "new ts module": ("shop/web/other.ts", "import { f } from './lib';\n\nexport const o = f();\n"),
    "new go file": ("shop/tool/lib/extra.go", "package lib\n\nfunc Extra() int {\n\treturn 2\n}\n"),
}
REMOVED = {  # files removed beside others of their language: the commit's state is the work tree's with them
    "deleted": ("shop/api/views.py", None),
    "ts module removed": ("shop/web/lib.ts", None),
}
EDITS = {**BODIES, **IMPORTS, **FILES, **ADDED, **REMOVED}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def write(root: Path, rel: str, text: str | None) -> None:
    """Write ``text`` at ``rel`` under ``root`` (None: remove the file, when it is there)."""
    path = root / rel
    if text is None:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def make(root: Path) -> None:
    """The shop's files under ``root``."""
    for rel, text in TREE.items():
        write(root, rel, text)
