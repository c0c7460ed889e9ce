"""A polyglot tree (``fixtures/code/polyglot``: Java, Python and a TypeScript npm workspace) maps in one run, and
the SQL of every language reaches the one shared ``DatabaseTable`` node of each table."""

from __future__ import annotations

from igg.codemap.link import link
from igg.codemap.prepare import files_by_language, parse_all
from igg.codemap.walk import walk
from tests.conftest import FIXTURES

TREE = FIXTURES / "code" / "polyglot"


def _model():  # type: ignore[no-untyped-def]
    walked = walk([TREE])
    return walked, link(parse_all(walked.files, jobs=1)[0])


def test_every_language_of_the_tree_is_read_in_one_run() -> None:
    walked, _ = _model()
    assert files_by_language(walked.files) == {"python": 2, "java": 2, "typescript": 8}


def test_the_services_of_every_language_meet_at_the_shared_table() -> None:
    _, model = _model()
    touching = sorted((model.symbols[r.source].properties["file"].split("/")[0], r.label)
                      for plan in model.files for r in plan.relations if r.target == "table:invoices")
    assert touching == [("scripts", "READS_FROM"), ("scripts", "READS_FROM"), ("services", "READS_FROM"),
                        ("services", "WRITES_TO"), ("web", "READS_FROM")]
    assert sum(1 for key in model.symbols if key == "table:invoices") == 1


def test_the_workspace_packages_import_each_other_by_name() -> None:
    _, model = _model()
    imports = {(r.source.removeprefix("module:"), r.target.removeprefix("module:")) for plan in model.files
               for r in plan.relations if r.label == "IMPORTS"}
    assert ("web/packages/app/src/main.ts", "web/packages/ui/src/index.ts") in imports
    assert ("web/packages/app/src/api.ts", "web/packages/ui/src/index.ts") in imports
    assert ("web/packages/ui/src/index.ts", "web/packages/ui/src/table.ts") in imports
    calls = {(model.symbols[r.source].properties["name"], model.symbols[r.target].properties["name"])
             for plan in model.files for r in plan.relations if r.label == "CALLS"}
    assert {("main", "loadInvoices"), ("main", "render"), ("main", "constructor"), ("settle", "markPaid")} <= calls
