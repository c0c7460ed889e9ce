"""IGG's rules judged against an independent oracle: import-linter (with grimp) on the same contracts.

The same contracts are written once for import-linter (an ini file) and once as IGG rules (``transitive``,
import-linter's default), on a tree the test builds and on a real package installed in the venv (httpx). The
set of broken contracts must be equal, and every chain import-linter reports (its layer and independence
routes widened to each head and tail) must be one of IGG's violation paths. Cycles are judged against
networkx's strongly connected components of grimp's import graph.
"""

from __future__ import annotations

import importlib
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grimp
import httpx
import networkx as nx
import pytest
from importlinter.application.use_cases import create_report, read_user_options
from importlinter.configuration import configure
from importlinter.contracts.forbidden import ForbiddenContract
from importlinter.contracts.independence import IndependenceContract
from importlinter.contracts.layers import LayersContract
from importlinter.domain.contract import registry

from igg.codemap.cache import FactsCache
from igg.mapping.since import tree_state
from igg.rules.check import check
from igg.rules.cycles import find_cycles, level_graph
from igg.rules.load import parse_rules
from tests.unit.test_rules_check import write

SHOP = {
    "shop/__init__.py": "",
    "shop/api/__init__.py": "",
    "shop/api/v1/__init__.py": "",
    "shop/api/v1/views.py": "from shop.service import orders\nfrom shop.api.v2 import views\n",
    "shop/api/v2/__init__.py": "",
    "shop/api/v2/views.py": "import shop.helpers.fmt\n",
    "shop/helpers/__init__.py": "",
    "shop/helpers/fmt.py": "from shop.api.v1 import views as v1\n",
    "shop/helpers/bridge.py": "import shop.api.v1.views\n",
    "shop/service/__init__.py": "",
    "shop/service/orders.py": "from shop.db import models\nfrom shop.helpers import bridge\n",
    "shop/service/billing.py": "from shop.service import orders\n",
    "shop/db/__init__.py": "",
    "shop/db/models.py": "import os\nimport sqlite3\n\nx = 1\n",
    "shop/util.py": "from shop.db.models import x\n",
    "shop/util2.py": "import shop.service.billing\n",
    "shop/pure.py": "import json\n",
}
"""api.v1 -> service (down: fine); service.orders -> helpers.bridge -> api.v1 (up, indirectly); api.v1 <->
api.v2 directly and through helpers.fmt; util -> db directly, util2 -> service -> db indirectly; db ->
sqlite3."""

SHOP_CONTRACTS = {
    "layered": (
        "type = layers\nlayers =\n    shop.api\n    shop.service\n    shop.db",
        {"kind": "layers", "layers": ["shop.api", "shop.service", "shop.db"]},
    ),
    "contained": (
        "type = layers\ncontainers = shop\nlayers =\n    api\n    service\n    db",
        {"kind": "layers", "containers": ["shop"], "layers": ["api", "service", "db"]},
    ),
    "down-only": (
        "type = layers\nlayers =\n    shop.util2\n    shop.service\n    shop.db",
        {"kind": "layers", "layers": ["shop.util2", "shop.service", "shop.db"]},
    ),
    "util-not-db": (
        "type = forbidden\nsource_modules =\n    shop.util\n    shop.util2\nforbidden_modules = shop.db",
        {"kind": "forbidden", "from": ["shop.util", "shop.util2"], "to": "shop.db"},
    ),
    "db-not-service": (
        "type = forbidden\nsource_modules = shop.db\nforbidden_modules = shop.service",
        {"kind": "forbidden", "from": "shop.db", "to": "shop.service"},
    ),
    "no-sqlite-in-service": (
        "type = forbidden\nsource_modules = shop.service\nforbidden_modules = sqlite3",
        {"kind": "forbidden", "from": "shop.service", "to": {"name": "sqlite3", "external": True}},
    ),
    "pure-no-os": (
        "type = forbidden\nsource_modules = shop.pure\nforbidden_modules = os",
        {"kind": "forbidden", "from": "shop.pure", "to": {"name": "os", "external": True}},
    ),
    "api-versions": (
        "type = independence\nmodules =\n    shop.api.v1\n    shop.api.v2",
        {"kind": "independence", "modules": ["shop.api.v1", "shop.api.v2"]},
    ),
    "db-util-independent": (
        "type = independence\nmodules =\n    shop.db\n    shop.pure",
        {"kind": "independence", "modules": ["shop.db", "shop.pure"]},
    ),
}

HTTPX_CONTRACTS = {
    "transports-lowest": (
        "type = layers\nlayers =\n    httpx._api\n    httpx._client\n    httpx._transports",
        {"kind": "layers", "layers": ["httpx._api", "httpx._client", "httpx._transports"]},
    ),
    "main-client-auth": (
        "type = layers\nlayers =\n    httpx._main\n    httpx._client\n    httpx._auth",
        {"kind": "layers", "layers": ["httpx._main", "httpx._client", "httpx._auth"]},
    ),
    "models-not-auth": (
        "type = forbidden\nsource_modules = httpx._models\nforbidden_modules = httpx._auth",
        {"kind": "forbidden", "from": "httpx._models", "to": "httpx._auth"},
    ),
    "urlparse-alone": (
        "type = forbidden\nsource_modules = httpx._urlparse\nforbidden_modules = httpx._models",
        {"kind": "forbidden", "from": "httpx._urlparse", "to": "httpx._models"},
    ),
    "client-no-httpcore": (
        "type = forbidden\nsource_modules = httpx._client\nforbidden_modules = httpcore",
        {"kind": "forbidden", "from": "httpx._client", "to": {"name": "httpcore", "external": True}},
    ),
    "client-over-decoders": (
        "type = layers\nlayers =\n    httpx._client\n    httpx._decoders",
        {"kind": "layers", "layers": ["httpx._client", "httpx._decoders"]},
    ),
    "status-codes-alone": (
        "type = forbidden\nsource_modules = httpx._status_codes\nforbidden_modules = httpx._models",
        {"kind": "forbidden", "from": "httpx._status_codes", "to": "httpx._models"},
    ),
    "wsgi-asgi": (
        "type = independence\nmodules =\n    httpx._transports.wsgi\n    httpx._transports.asgi",
        {"kind": "independence", "modules": ["httpx._transports.wsgi", "httpx._transports.asgi"]},
    ),
    "urls-types": (
        "type = independence\nmodules =\n    httpx._urls\n    httpx._types",
        {"kind": "independence", "modules": ["httpx._urls", "httpx._types"]},
    ),
}


@pytest.fixture
def on_path(tmp_path: Path) -> Iterator[Path]:
    """``tmp_path`` importable for grimp, and nothing of it left in ``sys.modules`` afterwards."""
    sys.path.insert(0, str(tmp_path))
    importlib.invalidate_caches()
    try:
        yield tmp_path
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m.split(".")[0] in ("shop", "httpx_copy")]:
            del sys.modules[name]


def linter_verdicts(
    root_package: str, contracts: dict[str, tuple[str, dict[str, Any]]], where: Path
) -> dict[str, set[tuple[str, ...]]]:
    """Contract name -> the chains import-linter reports (empty: kept)."""
    config = ["[importlinter]", f"root_package = {root_package}", "include_external_packages = True", ""]
    for name, (body, _) in contracts.items():
        config += [f"[importlinter:contract:{name}]", f"name = {name}", body, ""]
    path = where / ".importlinter"
    path.write_text("\n".join(config), encoding="utf-8")
    configure()  # import-linter's adapters and contract types (what its CLI sets up first)
    for contract_type, kind in (
        (LayersContract, "layers"),
        (ForbiddenContract, "forbidden"),
        (IndependenceContract, "independence"),
    ):
        registry.register(contract_type, kind)
    report = create_report(read_user_options(str(path)), cache_dir=None)
    out: dict[str, set[tuple[str, ...]]] = {}
    for contract, result in report.get_contracts_and_checks():
        out[contract.name] = set() if result.kept else set(_linter_chains(result.metadata))
        assert not result.kept or not out[contract.name]
        if not result.kept:
            assert out[contract.name], f"{contract.name}: broken without a chain"
    return out


def _linter_chains(metadata: dict[str, Any]) -> Iterator[tuple[str, ...]]:
    for group in metadata.get(
        "invalid_chains", []
    ):  # forbidden: lists of links; independence: detailed chains
        for chain in group["chains"]:
            yield from _expand(chain)
    for group in metadata.get("invalid_dependencies", []):  # layers
        for route in group["routes"]:
            yield from _expand(route)


def _expand(chain: Any) -> Iterator[tuple[str, ...]]:
    """A detailed chain (links, extra firsts and lasts) as every head-to-tail chain it stands for."""
    if isinstance(chain, list):
        yield tuple([chain[0]["importer"], *(link["imported"] for link in chain)])
        return
    links = chain["chain"]
    modules = [links[0]["importer"], *(link["imported"] for link in links)]
    heads = [modules[0], *(e["importer"] for e in chain["extra_firsts"])]
    tails = [modules[-1], *(e["imported"] for e in chain["extra_lasts"])]
    for head in heads:
        for tail in tails:
            yield (head, *modules[1:-1], tail)


def igg_verdicts(
    root: Path, contracts: dict[str, tuple[str, dict[str, Any]]]
) -> dict[str, set[tuple[str, ...]]]:
    rules = parse_rules(
        {"rules": [{"name": name, "transitive": True, **rule} for name, (_, rule) in contracts.items()]}
    )
    graph = tree_state([root], FactsCache(None)).graph
    out: dict[str, set[tuple[str, ...]]] = {name: set() for name in contracts}
    for v in check(graph, rules):
        out[v.rule].add(tuple([v.path[0].source, *(h.target for h in v.path)]))
    return out


def assert_agree(theirs: dict[str, set[tuple[str, ...]]], ours: dict[str, set[tuple[str, ...]]]) -> None:
    assert {n for n, c in ours.items() if c} == {n for n, c in theirs.items() if c}
    for name, chains in theirs.items():
        assert chains <= ours[name], (
            f"{name}: import-linter's chains {sorted(chains - ours[name])} not in IGG's"
        )


def test_broken_contracts_and_chains_agree_with_import_linter_on_a_built_tree(on_path: Path) -> None:
    write(on_path, SHOP)
    theirs = linter_verdicts("shop", SHOP_CONTRACTS, on_path)
    ours = igg_verdicts(on_path / "shop", SHOP_CONTRACTS)
    assert_agree(theirs, ours)
    broken = {n for n, c in theirs.items() if c}
    assert broken == {"layered", "contained", "util-not-db", "no-sqlite-in-service", "api-versions"}
    assert ("shop.service.orders", "shop.helpers.bridge", "shop.api.v1.views") in ours["layered"]
    assert ("shop.util2", "shop.service.billing", "shop.service.orders", "shop.db.models") in ours[
        "util-not-db"
    ]


def test_broken_contracts_and_chains_agree_with_import_linter_on_httpx(on_path: Path) -> None:
    """A real package with a clear layering: some contracts hold, some break, through chains of modules."""
    source = Path(httpx.__file__).parent
    root = on_path / "httpx"
    shutil.copytree(source, root, ignore=shutil.ignore_patterns("__pycache__"))
    theirs = linter_verdicts("httpx", HTTPX_CONTRACTS, on_path)
    ours = igg_verdicts(root, HTTPX_CONTRACTS)
    assert_agree(theirs, ours)
    broken = {n for n, c in theirs.items() if c}
    assert broken == {
        "transports-lowest",
        "main-client-auth",
        "models-not-auth",
        "urlparse-alone",
        "client-no-httpcore",
        "urls-types",
    }  # client-over-decoders, status-codes-alone, wsgi-asgi hold


def test_cycles_are_grimps_strongly_connected_components(on_path: Path) -> None:
    for name in ("shop", "httpx"):
        if name == "httpx":
            shutil.copytree(
                Path(httpx.__file__).parent, on_path / "httpx", ignore=shutil.ignore_patterns("__pycache__")
            )
        else:
            write(on_path, SHOP)
        g = grimp.build_graph(name, cache_dir=None)
        oracle: nx.DiGraph[str] = nx.DiGraph(
            (m, t) for m in g.modules for t in g.find_modules_directly_imported_by(m)
        )
        theirs = {frozenset(c) for c in nx.strongly_connected_components(oracle) if len(c) > 1}
        graph = tree_state([on_path / name], FactsCache(None)).graph
        level = level_graph(graph, "module")
        found = find_cycles(level)
        ours = {frozenset(level.names[m] for m in c.members) for c in found}
        assert ours == theirs and theirs
        for c in found:  # removing the breaking edges leaves the component acyclic
            sub = level.digraph(set(c.members))
            sub.remove_edges_from(c.breaking)
            assert nx.is_directed_acyclic_graph(sub)


def test_type_only_imports_are_the_ones_grimp_leaves_out(on_path: Path) -> None:
    """Issue 46: the module imports IGG marks ``type_checking`` are exactly those grimp drops with
    ``exclude_type_checking_imports`` (httpx has ``if typing.TYPE_CHECKING:`` blocks), and an ``acyclic`` rule
    with ``exclude_type_checking_imports = true`` sees grimp's reduced graph."""
    shutil.copytree(
        Path(httpx.__file__).parent, on_path / "httpx", ignore=shutil.ignore_patterns("__pycache__")
    )

    def oracle(exclude: bool) -> set[tuple[str, str]]:
        g = grimp.build_graph("httpx", cache_dir=None, exclude_type_checking_imports=exclude)
        return {
            (m, t) for m in g.modules for t in g.find_modules_directly_imported_by(m) if t.startswith("httpx")
        }

    graph = tree_state([on_path / "httpx"], FactsCache(None)).graph
    modules = {i for i, n in graph.nodes.items() if n.type == "Module"}
    ours = {
        (graph.name(e.source), graph.name(e.target)): e.type_checking
        for e in graph.of_types(["IMPORTS"])
        if e.source in modules and e.target in modules
    }
    everything, runtime = oracle(False), oracle(True)
    assert everything - runtime, "httpx has type-only imports: the comparison would prove nothing"
    assert set(ours) == everything
    assert {pair for pair, typed in ours.items() if not typed} == runtime
    rule = parse_rules(
        {
            "rules": [
                {"name": "a", "kind": "acyclic", "select": "httpx*", "exclude_type_checking_imports": True}
            ]
        }
    )
    cycles = {frozenset(h.source for h in v.path) for v in check(graph, rule)}
    reduced: nx.DiGraph[str] = nx.DiGraph(list(runtime))
    assert cycles == {frozenset(c) for c in nx.strongly_connected_components(reduced) if len(c) > 1}
