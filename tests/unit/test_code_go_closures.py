"""Go's named closures (``igg.codemap.go.closures``): ``x := func...`` in a callable is a Function named by
it, with calls of its own; an anonymous literal's calls stay with the named callable around it. The
integration tests judge the same against go/types (``tests/gooracle``)."""

from __future__ import annotations

from pathlib import Path

from igg.mapping.update import update_map
from igg.service import map_code
from igg.store import SessionStore
from tests.unit.test_code_update import graph_of

SOURCE = """package svc

import "database/sql"

func load(id int) string { return "x" }

func save(s string) {}

type Server struct{ db *sql.DB }

func (s *Server) Start(ids []int) {
	fetch := func(id int) string {
		retry := func() string { return load(id) }
		return retry()
	}
	var store = func(v string) { save(v) }
	for _, id := range ids {
		go func() { store(fetch(id)) }()
	}
	_ = func() { s.db.Query("SELECT name FROM users") }
}
"""


def _calls(store: Path, session_id: str) -> set[tuple[str, str]]:
    _, state, _ = SessionStore(store).load_state(session_id)
    name = {n: state.node_properties(n)["name"] for n in state.graph.nodes}
    return {(name[u], name[v]) for _, u, v, d in state.edges() if d["type"] == "CALLS"}


def test_named_closures_are_functions_with_their_own_calls(tmp_path: Path) -> None:
    root = tmp_path / "svc"
    root.mkdir()
    (root / "go.mod").write_text("module example.com/svc\n\ngo 1.21\n")
    (root / "svc.go").write_text(SOURCE)
    store = tmp_path / "s.sqlite"
    result, _ = map_code([root], store=store, session_id="m")
    assert not result.summary()["actions"]["rejected"]
    assert _calls(store, "m") == {
        ("Start", "Server.Start.fetch"),  # from the anonymous goroutine body: Start's own
        ("Start", "Server.Start.store"),
        ("Server.Start.fetch", "Server.Start.fetch.retry"),
        ("Server.Start.fetch.retry", "load"),
        ("Server.Start.store", "save"),
    }
    _, state, _ = SessionStore(store).load_state("m")
    reads = {
        (state.node_properties(u)["name"], state.node_properties(v)["name"])
        for _, u, v, d in state.edges()
        if d["type"] == "READS_FROM"
    }
    assert reads == {("Start", "users")}  # SQL of an anonymous literal: the named callable around it

    # a closure renamed: --update equals a fresh map
    (root / "svc.go").write_text(SOURCE.replace("retry", "again"))
    update_map([root], store, session_id="m", jobs=1)
    map_code([root], store=tmp_path / "fresh.sqlite", session_id="f")
    assert graph_of(store, "m") == graph_of(tmp_path / "fresh.sqlite", "f")
    assert ("Server.Start.fetch", "Server.Start.fetch.again") in _calls(store, "m")
