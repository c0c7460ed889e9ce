"""``SchemaFit(..., only=keys)`` places those symbols alone, as the placement of every symbol places them: the
same node type, properties and identity, and the same reason for one left out. An update of bodies' calls
(``igg.mapping.bodies``) places the symbols of the files it links again and the ends of their relations this
way, not the whole tree's. Judged on every code fixture tree, under the code schema (whose names rarely
collide) and the specification's (whose method names collide: every symbol is then placed)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from igg.agents.code.mapping import SchemaFit
from igg.codemap.link import link
from igg.codemap.sources import analyze, with_modules
from igg.codemap.walk import walk
from igg.models.schema import Schema
from tests.codegraph import CODE_FIXTURES, code_request

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
TREES = ["java", "python", "polyglot", "typescript/ky", "go/chi", "java_calls"]


def _schemas() -> dict[str, object]:
    seed = json.loads((FIXTURES / "seed_request.json").read_text(encoding="utf-8"))["config"]["schema"]
    return {
        "code": code_request().config.schema_.compile(),
        "specification": Schema.model_validate(seed).compile(),
    }


@pytest.mark.parametrize("schema_name", ["code", "specification"])
@pytest.mark.parametrize("tree", TREES)
def test_the_symbols_placed_alone_are_placed_as_among_all(tree: str, schema_name: str) -> None:
    model = link([analyze(s) for s in with_modules(walk([CODE_FIXTURES / tree]).files)])
    schema = _schemas()[schema_name]
    whole = SchemaFit(model, schema)  # type: ignore[arg-type]
    keys = list(model.symbols)
    assert len(whole.placed) > 10
    rng = random.Random(tree)
    for size in (1, 5, len(keys) // 3, len(keys)):
        only = set(rng.sample(keys, min(size, len(keys))))
        alone = SchemaFit(model, schema, only=only)  # type: ignore[arg-type]
        assert only <= alone.placed.keys() | alone.left_out.keys()
        for key in only:
            if key in whole.placed:
                got, want = alone.placed[key], whole.placed[key]
                assert (got.label, got.properties) == (want.label, want.properties)
                assert got.identity == want.identity
            else:
                assert alone.left_out[key] == whole.left_out[key]
        if schema_name == "code":  # names that do not collide: the others are not placed
            assert len(alone.placed) <= len(only)
