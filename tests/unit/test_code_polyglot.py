"""A polyglot tree (``fixtures/code/polyglot``: Java, Python, a TypeScript npm workspace and two Go modules in
a ``go.work`` workspace) maps in one run, and the SQL of every language reaches the one shared
``DatabaseTable`` node of each table."""

from __future__ import annotations

from igg.codemap.link import link
from igg.codemap.walk import walk
from igg.mapping.prepare import files_by_language, parse_all
from tests.conftest import FIXTURES

TREE = FIXTURES / "code" / "polyglot"


def _model():  # type: ignore[no-untyped-def]
    walked = walk([TREE])
    return walked, link(parse_all(walked.files, jobs=1)[0])


def test_every_language_of_the_tree_is_read_in_one_run() -> None:
    walked, _ = _model()
    assert files_by_language(walked.files) == {"python": 2, "java": 2, "typescript": 8, "go": 6}


def test_the_services_of_every_language_meet_at_the_shared_table() -> None:
    _, model = _model()
    touching = sorted(
        (model.symbols[r.source].properties["file"].split("/")[0], r.label)
        for plan in model.files
        for r in plan.relations
        if r.target == "table:invoices"
    )
    assert touching == [
        ("scripts", "READS_FROM"),
        ("scripts", "READS_FROM"),
        ("services", "READS_FROM"),
        ("services", "READS_FROM"),
        ("services", "WRITES_TO"),
        ("services", "WRITES_TO"),
        ("web", "READS_FROM"),
    ]
    assert sum(1 for key in model.symbols if key == "table:invoices") == 1


def test_the_workspace_packages_import_each_other_by_name() -> None:
    _, model = _model()
    imports = {
        (r.source.removeprefix("module:"), r.target.removeprefix("module:"))
        for plan in model.files
        for r in plan.relations
        if r.label == "IMPORTS"
    }
    assert ("web/packages/app/src/main.ts", "web/packages/ui/src/index.ts") in imports
    assert ("web/packages/app/src/api.ts", "web/packages/ui/src/index.ts") in imports
    assert ("web/packages/ui/src/index.ts", "web/packages/ui/src/table.ts") in imports
    calls = {
        (model.symbols[r.source].properties["name"], model.symbols[r.target].properties["name"])
        for plan in model.files
        for r in plan.relations
        if r.label == "CALLS"
    }
    assert {
        ("main", "loadInvoices"),
        ("main", "render"),
        ("main", "constructor"),
        ("settle", "markPaid"),
    } <= calls


def test_the_go_modules_of_the_workspace_import_and_call_each_other() -> None:
    _, model = _model()
    imports = {
        (r.source.removeprefix("module:"), r.target.removeprefix("package:"))
        for plan in model.files
        for r in plan.relations
        if r.label == "IMPORTS" and r.target.startswith("package:")
    }
    main = "services/ledger/cmd/ledger/main.go"
    assert {
        (main, "example.com/acme/ledger/invoices"),
        (main, "example.com/acme/notify/mail"),
        (main, "database/sql"),
    } <= imports
    assert model.symbols["package:example.com/acme/notify/mail"].properties.get("external") is None
    calls = {
        (model.symbols[r.source].properties["name"], model.symbols[r.target].properties["name"])
        for plan in model.files
        for r in plan.relations
        if r.label == "CALLS"
    }
    assert {("main", "New"), ("main", "Settle"), ("main", "Send")} <= calls
