"""Gates that cannot pass by mistake: a name selector picks a TypeScript or Go module and everything under it
as it does a Python package; a selector that picks no node is refused (exit 2) with the rule, the field and
the closest names; type-only imports (``if TYPE_CHECKING:``, ``import type``) are marked on their edges, said
in violations, and left out on request by rules and ``igg cycles``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from igg.interfaces.cli import main
from tests.unit.test_rules_check import write

TS_TREE = {
    "package.json": '{"name": "web", "version": "1.0.0"}',
    "lib/core/Axios.ts": (
        "import { merge } from '../helpers/merge';\nexport class Axios { run() { return merge(); } }\n"
    ),
    "lib/helpers/merge.ts": (
        "import { Axios } from '../core/Axios';\nexport function merge() { return new Axios(); }\n"
    ),
    "lib/helpersX/other.ts": "export const other = 1;\n",
    "lib/types/shapes.ts": (
        "import type { Axios } from '../core/Axios';\nimport { type Axios as A2 } from "
        "'../core/Axios';\nexport type Shape = Axios | A2;\n"
    ),
}

GO_TREE = {
    "go.mod": "module github.com/acme/cli/v3\n\ngo 1.21\n",
    "cli.go": 'package cli\n\nimport "github.com/acme/cli/v3/internal/argh"\n\nfunc Run() { argh.Parse() }\n',
    "internal/argh/argh.go": (
        'package argh\n\nimport "github.com/acme/cli/v3/internal/flags"\n\nfunc Parse() { flags.Read() }\n'
    ),
    "internal/flags/flags.go": "package flags\n\nfunc Read() {}\n",
}

PY_TREE = {
    "shop/__init__.py": "",
    "shop/models.py": (
        "from __future__ import annotations\n\nfrom typing import TYPE_CHECKING\n\n"
        "if TYPE_CHECKING:\n    from shop.service import Service\n\n\nclass Order:\n    pass\n"
    ),
    "shop/service.py": "from shop.models import Order\n\n\nclass Service:\n    pass\n",
    "shop/api.py": (
        "import typing\n\nif typing.TYPE_CHECKING:\n    import shop.service\nelse:\n    import shop.models\n"
    ),
}


def check_json(root: Path, rules: str, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, dict]:
    (root / "igg.toml").write_text(rules, encoding="utf-8")
    code = main(["check", str(root), "--rules", str(root / "igg.toml"), "--json", *extra])
    out = capsys.readouterr().out
    return code, json.loads(out) if code in (0, 1) else {}


def test_a_slashed_typescript_module_name_picks_the_modules_under_it(tmp_path: Path, capsys) -> None:
    """``lib/helpers`` picks ``lib/helpers/merge`` (not ``lib/helpersX``): the rule fails as the same rule
    with ``/*`` does, where before it passed with 0 violations."""
    write(tmp_path, TS_TREE)
    rule = '[[rules]]\nname = "helpers-not-core"\nkind = "forbidden"\nfrom = "lib/helpers"\nto = "lib/core"\n'
    code, report = check_json(tmp_path, rule, capsys)
    assert code == 1
    assert [(h["source"], h["target"]) for v in report["violations"] for h in v["path"]] == [
        ("lib/helpers/merge", "lib/core/Axios")
    ]
    glob = rule.replace('"lib/helpers"', '"lib/helpers/*"').replace('"lib/core"', '"lib/core/*"')
    assert [v["path"] for v in check_json(tmp_path, glob, capsys)[1]["violations"]] == [
        v["path"] for v in report["violations"]
    ]


def test_a_go_module_path_picks_its_packages(tmp_path: Path, capsys) -> None:
    write(tmp_path, GO_TREE)
    rule = (
        '[[rules]]\nname = "internal-flat"\nkind = "forbidden"\nfrom ='
        ' "github.com/acme/cli/v3/internal/argh"\nto = "github.com/acme/cli/v3/internal/flags"\n'
    )
    code, report = check_json(tmp_path, rule, capsys)
    assert code == 1 and len(report["violations"]) == 1
    # a package path picks its members too (named PATH.Name): the call from argh.Parse to flags.Read
    calls = rule + 'edges = ["CALLS"]\n'
    code, report = check_json(tmp_path, calls, capsys)
    assert code == 1
    assert [(h["source"], h["target"]) for h in report["violations"][0]["path"]] == [
        ("github.com/acme/cli/v3/internal/argh.Parse", "github.com/acme/cli/v3/internal/flags.Read")
    ]


def test_a_selector_that_picks_nothing_is_refused_with_the_closest_names(tmp_path: Path, capsys) -> None:
    write(tmp_path, PY_TREE)
    rule = '[[rules]]\nname = "typo"\nkind = "forbidden"\nfrom = "shop.modles"\nto = "shop.service"\n'
    (tmp_path / "igg.toml").write_text(rule, encoding="utf-8")
    assert main(["check", str(tmp_path), "--rules", str(tmp_path / "igg.toml")]) == 2
    err = capsys.readouterr().err
    assert "rule 'typo'" in err and "from = shop.modles matches no node" in err
    assert "shop.models" in err  # the closest name
    # an allowed_only target or a forbidden rule's exception picking nothing makes the rule stricter: no error
    stricter = (
        '[[rules]]\nname = "only"\nkind = "allowed_only"\nfrom = "shop.models"\nto = "nothing.here"\n'
        "exclude_type_checking_imports = true\n"
    )
    assert check_json(tmp_path, stricter, capsys)[0] == 1  # judged (typing is no allowed target), not refused


def test_type_checking_imports_are_marked_said_and_can_be_left_out(tmp_path: Path, capsys) -> None:
    write(tmp_path, PY_TREE)
    rule = '[[rules]]\nname = "models-low"\nkind = "forbidden"\nfrom = "shop.models"\nto = "shop.service"\n'
    code, report = check_json(tmp_path, rule, capsys)
    assert code == 1
    (violation,) = report["violations"]
    assert violation["path"][0]["type_checking"] is True
    assert "type-only import" in violation["message"]
    excluded = rule + "exclude_type_checking_imports = true\n"
    assert check_json(tmp_path, excluded, capsys)[0] == 0
    # shop.api imports shop.service for type checkers only and shop.models at run time
    api = (
        '[[rules]]\nname = "api"\nkind = "forbidden"\nfrom = "shop.api"\nto = ["shop.service",'
        ' "shop.models"]\n'
    )
    hops = [v["path"][0] for v in check_json(tmp_path, api, capsys)[1]["violations"]]
    assert {(h["target"], h["type_checking"]) for h in hops} == {
        ("shop.service", True),
        ("shop.models", False),
    }
    # the cycle models <-> service is made by a type-only import: igg cycles can leave it out
    assert main(["cycles", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "1 cycle at module level" in text and "type-only" in text
    assert main(["cycles", str(tmp_path), "--exclude-type-checking"]) == 0
    assert "0 cycles at module level" in capsys.readouterr().out


def test_typescript_import_type_is_type_only(tmp_path: Path, capsys) -> None:
    write(tmp_path, TS_TREE)
    rule = '[[rules]]\nname = "types-free"\nkind = "forbidden"\nfrom = "lib/types"\nto = "lib/core"\n'
    code, report = check_json(tmp_path, rule, capsys)
    assert code == 1 and report["violations"][0]["path"][0]["type_checking"] is True
    assert check_json(tmp_path, rule + "exclude_type_checking_imports = true\n", capsys)[0] == 0
    # a runtime import of the same module keeps the edge a dependency
    (tmp_path / "lib/types/shapes.ts").write_text(
        "import type { Axios } from '../core/Axios';\n"
        "import { Axios as Run } from '../core/Axios';\n"
        "export const make = () => new Run();\nexport type T = Axios;\n"
    )
    code, report = check_json(tmp_path, rule + "exclude_type_checking_imports = true\n", capsys)
    assert code == 1 and report["violations"][0]["path"][0]["type_checking"] is False


def test_a_hostile_selector_that_picks_nothing_cannot_forge_a_ci_line(tmp_path: Path, capsys) -> None:
    write(tmp_path, PY_TREE)
    rule = (
        '[[rules]]\nname = "x"\nkind = "forbidden"\nfrom = "shop.x\\n::error file=a.py::forged"\nto ='
        ' "shop.models"\n'
    )
    (tmp_path / "igg.toml").write_text(rule, encoding="utf-8")
    assert main(["check", str(tmp_path), "--rules", str(tmp_path / "igg.toml")]) == 2
    err = capsys.readouterr().err
    assert "matches no node" in err and not any(line.startswith("::") for line in err.splitlines())
