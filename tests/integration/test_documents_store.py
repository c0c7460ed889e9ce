"""The answer cache is the store's (issue 42): answers kept in the session store's own tables, SQLite or
PostgreSQL, so another process on the same store (another server sharing a PostgreSQL store) re-reads an
unchanged corpus without an agent call, and nothing is written beside the store."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from igg.documents.build import build_documents
from igg.store import SessionStore
from tests.unit.test_documents import request, write_corpus

ROOT = Path(__file__).resolve().parents[2]

OTHER_PROCESS = """
import json, sys
from pathlib import Path
from igg.documents.build import build_documents
from tests.unit.test_documents import request, write_corpus
docs, store = Path(sys.argv[1]), sys.argv[2]
corpus = json.loads(sys.argv[3])
agent = write_corpus(docs, corpus)
done = build_documents(request("elsewhere"), agent, [docs], store, agent_name="script")
print(json.dumps({"calls": done.agent_calls, "nodes": done.graph["nodes"]}))
"""


def test_another_process_on_the_store_reads_every_answer_from_the_store(
    tmp_path: Path, store_location: str
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    corpus = {f"d{i}.txt": 0 for i in range(5)}
    built = build_documents(
        request(), write_corpus(docs, corpus), [docs], store_location, agent_name="script"
    )
    assert built.agent_calls == 5
    corpus["d1.txt"] = 1  # one document edited before the other process reads the corpus
    out = subprocess.run(
        [sys.executable, "-c", OTHER_PROCESS, str(docs), store_location, json.dumps(corpus)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    other = json.loads(out.stdout.strip().splitlines()[-1])
    assert other["calls"] == 1  # the edited document alone: the four others' answers came from the store
    store = SessionStore(store_location)
    try:
        rows = store.db.read(lambda c: c.execute("SELECT count(*) FROM answers").fetchone()[0])
        assert rows == 6  # five answers, and the edited document's new one
        assert {s.session_id for s in store.sessions()} == {"notes", "elsewhere"}
    finally:
        store.close()
    if not store_location.startswith("postgresql"):
        beside = {p.name for p in tmp_path.iterdir()} - {"s.sqlite-wal", "s.sqlite-shm"}  # SQLite's journal
        assert beside == {"docs", "s.sqlite"}  # no answer file beside the store
