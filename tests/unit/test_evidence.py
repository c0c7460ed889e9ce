"""Evidence-grounded facts (issue 30): quotes located in the context, exact verdicts and stored spans under
each grounding policy, and evidence carried into history, queries, the report and the exports."""

from __future__ import annotations

import json
import unicodedata
from typing import Any

import pytest
from conftest import make_request

from igg.act.evidence import FUZZY_MIN_SCORE, normalize
from igg.agents.prompt import response_schema
from igg.errors import RequestInvalid
from igg.graph.grounding import grounding_counts
from igg.models.actions import MAX_QUOTE_CHARS
from igg.observe.query import QUERY_ADAPTER, run_query
from igg.session.session import Session

# two files, the second long enough to be cut into several chunks at chunk_tokens=120
AUTH = (
    "// File: src/auth.py\n"
    "class AuthService:\n"
    '    """Checks passwords against the UserStore and issues tokens."""\n'
    "    def login(self, name, password):\n"
    "        user = self.store.find(name)\n"
    "        return TokenIssuer.issue(user)\n"
)
BILLING = "// File: docs/billing.md\n" + "".join(
    f"Paragraph {i}: the InvoiceService sends invoice number {i} to the PaymentGateway every night.\n\n"
    for i in range(1, 30)
)
CONTEXT = AUTH + BILLING


def session(policy: str = "required_edges", context: str = CONTEXT, chunk_tokens: int = 120) -> Session:
    return Session.open(
        make_request(context_data=context, grounding=policy, context={"chunk_tokens": chunk_tokens})
    )


def cls(name: str, *evidence: Any) -> dict[str, Any]:
    action: dict[str, Any] = {
        "type": "ADD_NODE",
        "label": "Class",
        "properties": {"name": name, "package": "p"},
    }
    if evidence:
        action["evidence"] = list(evidence)
    return action


def calls(a: str, b: str, *evidence: Any) -> dict[str, Any]:
    action: dict[str, Any] = {"type": "ADD_EDGE", "label": "CALLS", "from": {"name": a}, "to": {"name": b}}
    if evidence:
        action["evidence"] = list(evidence)
    return action


def apply(s: Session, *actions: dict[str, Any], cursor: int = 0) -> list[dict[str, Any]]:
    record = s.step(_parsed(actions), chunk_cursor=cursor)
    return [v.to_dict() for v in record.verdicts]


def _parsed(actions: Any) -> Any:
    from igg.models.actions import read_response

    return read_response({"reasoning": "", "actions": list(actions)})


def evidence_of(s: Session, element: str) -> list[dict[str, Any]]:
    state = s.state
    data = state.nodes[element] if element in state.nodes else state.edge_ends(element)[2]
    return data["provenance"]["evidence"]


def located(s: Session, item: dict[str, Any]) -> str:
    """The context text a stored span covers (read from the chunks, not from IGG's stored quote)."""
    chunks = s.actor.grounder.chunks
    start, _ = chunks.bounds(item["chunk"] - 1)
    return CONTEXT[start + item["start"] : start + item["end"]]


def two_classes(s: Session) -> None:
    verdicts = apply(s, cls("AuthService"), cls("TokenIssuer"), cls("InvoiceService"), cls("PaymentGateway"))
    assert all(v["accepted"] for v in verdicts), verdicts


def test_an_exact_quote_is_stored_with_its_chunk_offsets_file_line_and_column():
    s = session()
    two_classes(s)
    quote = "return TokenIssuer.issue(user)"
    (v,) = apply(s, calls("AuthService", "TokenIssuer", quote))
    assert v["accepted"] and "warning" not in v
    (item,) = evidence_of(s, v["element"])
    assert item == {
        "quote": quote,
        "chunk": 1,
        "start": AUTH.index(quote),
        "end": AUTH.index(quote) + len(quote),
        "file": "src/auth.py",
        "line": 5,
        "column": 9,
        "match": "exact",
    }
    assert located(s, item) == quote
    assert AUTH.splitlines()[item["line"]].index(quote) + 1 == item["column"]  # line 1 follows the marker


def test_a_quote_with_other_whitespace_and_line_breaks_matches_normalized_and_spans_the_original_text():
    s = session()
    two_classes(s)
    quote = "def login(self, name, password):  user =\tself.store.find(name)"
    (v,) = apply(s, calls("AuthService", "TokenIssuer", quote))
    assert v["accepted"]
    (item,) = evidence_of(s, v["element"])
    assert item["match"] == "normalized" and (item["file"], item["line"], item["column"]) == (
        "src/auth.py",
        3,
        5,
    )
    assert located(s, item) == "def login(self, name, password):\n        user = self.store.find(name)"
    assert normalize(located(s, item)) == normalize(quote)


def test_a_quote_from_another_chunk_is_found_there_after_the_current_one():
    s = session()
    two_classes(s)
    assert len(s.actor.grounder.chunks) >= 4
    quote = "the InvoiceService sends invoice number 17 to the PaymentGateway"
    (v,) = apply(s, calls("InvoiceService", "PaymentGateway", quote), cursor=0)
    (item,) = evidence_of(s, v["element"])
    assert item["chunk"] > 1 and item["match"] == "exact" and located(s, item) == quote
    assert item["file"] == "docs/billing.md" and item["line"] == 2 * 17 - 1 and item["column"] == 15


def test_a_quote_spanning_a_chunk_boundary_is_found_in_the_chunk_where_it_starts():
    s = session()
    two_classes(s)
    chunks = s.actor.grounder.chunks
    start, end = chunks.bounds(2)
    quote = CONTEXT[end - 30 : end + 30].strip()
    assert "\n" in quote or len(quote) > 40
    (v,) = apply(s, calls("InvoiceService", "PaymentGateway", quote))
    assert v["accepted"], v
    (item,) = evidence_of(s, v["element"])
    assert item["chunk"] == 3 and item["end"] > end - start  # it runs past its chunk's end
    assert normalize(located(s, item)) == normalize(quote)


def test_an_invented_quote_is_refused_with_where_igg_looked_and_the_closest_passage():
    s = session()
    two_classes(s)
    (v,) = apply(
        s, calls("AuthService", "TokenIssuer", "AuthService asks the TokenIssuer for a session cookie")
    )
    assert not v["accepted"] and v["code"] == "UNGROUNDED_EVIDENCE"
    message = v["message"]
    assert "'AuthService asks the TokenIssuer for a session cookie' is not in the context" in message
    assert "looked in chunk 1 (the current one) and the other" in message
    assert "closest passage, in chunk 1" in message and "% similar" in message
    assert s.state.edge_count == 0


def test_under_warn_an_invented_quote_applies_with_a_warning_and_is_kept_as_not_found():
    s = session("warn")
    two_classes(s)
    (v,) = apply(s, calls("AuthService", "TokenIssuer", "an invented sentence about tokens"))
    assert v["accepted"] and v["warning"] == "UNGROUNDED_EVIDENCE" and "is not in the context" in v["message"]
    assert evidence_of(s, v["element"]) == [{"quote": "an invented sentence about tokens", "match": "none"}]
    assert grounding_counts(s.state) == {"grounded": 0, "ungrounded": 1, "unverified": 4}


def test_under_off_evidence_is_located_and_kept_and_nothing_is_refused_or_warned():
    s = session("off")
    two_classes(s)
    v1, v2, v3 = apply(
        s,
        calls("AuthService", "TokenIssuer", "TokenIssuer.issue(user)"),
        calls("TokenIssuer", "AuthService", "not in the text at all"),
        calls("InvoiceService", "PaymentGateway"),
    )
    assert all(v["accepted"] and "warning" not in v for v in (v1, v2, v3))
    assert evidence_of(s, v1["element"])[0]["match"] == "exact"
    assert evidence_of(s, v2["element"])[0]["match"] == "none"
    assert "evidence" not in s.state.edge_ends(v3["element"])[2]["provenance"]


def test_missing_evidence_follows_the_policy():
    s = session("required_edges")
    v_node, v_edge = apply(s, cls("AuthService"), calls("AuthService", "AuthService"))
    assert v_node["accepted"]  # nodes need none under required_edges
    assert v_edge["code"] == "SELF_LOOP_FORBIDDEN"  # the action's own rules come first
    apply(s, cls("TokenIssuer"))
    (v,) = apply(s, calls("AuthService", "TokenIssuer"))
    assert v["code"] == "MISSING_EVIDENCE" and '"evidence"' in v["message"]
    strict = session("required")
    (v,) = apply(strict, cls("AuthService"))
    assert v["code"] == "MISSING_EVIDENCE"
    (v,) = apply(strict, cls("AuthService", "class AuthService:"))
    assert v["accepted"] and evidence_of(strict, v["element"])[0]["line"] == 1
    (v,) = apply(strict, {"type": "UPDATE_NODE", "node": {"name": "AuthService"}, "properties": {"doc": "x"}})
    assert v["code"] == "MISSING_EVIDENCE"


def test_an_update_adds_its_evidence_to_the_element():
    s = session("required")
    apply(s, cls("AuthService", "class AuthService:"))
    quote = "Checks passwords against the UserStore and issues tokens."
    (v,) = apply(
        s,
        {
            "type": "UPDATE_NODE",
            "node": {"name": "AuthService"},
            "properties": {"doc": "checks"},
            "evidence": quote,
        },
    )
    assert v["accepted"]
    assert [e["quote"] for e in evidence_of(s, v["element"])] == ["class AuthService:", quote]


def test_explicit_spans_are_checked_against_the_chunk_they_name():
    s = session()
    two_classes(s)
    at = AUTH.index("TokenIssuer.issue")
    (v,) = apply(s, calls("AuthService", "TokenIssuer", {"chunk": 1, "start": at, "end": at + 17}))
    (item,) = evidence_of(s, v["element"])
    assert item["quote"] == "TokenIssuer.issue" and item["match"] == "span" and item["line"] == 5
    total = len(s.actor.grounder.chunks)
    (v,) = apply(s, calls("TokenIssuer", "AuthService", {"chunk": total + 1, "start": 0, "end": 5}))
    assert v["code"] == "UNGROUNDED_EVIDENCE" and f"the context has {total} chunk(s)" in v["message"]
    (v,) = apply(s, calls("TokenIssuer", "AuthService", {"chunk": 1, "start": 0, "end": 99_999}))
    assert v["code"] == "INVALID_PROPERTY"  # longer than a quote may be
    (v,) = apply(s, calls("TokenIssuer", "AuthService", {"chunk": 1, "start": 9, "end": 3}))
    assert v["code"] == "INVALID_PROPERTY" and "end (3) must be greater than start (9)" in v["message"]


def test_a_small_difference_matches_approximately_and_says_so():
    s = session()
    two_classes(s)
    (v,) = apply(
        s, calls("AuthService", "TokenIssuer", "Checks passwords against the UserStore and issue tokens")
    )
    (item,) = evidence_of(s, v["element"])
    assert item["match"] == "fuzzy" and FUZZY_MIN_SCORE <= item["score"] < 100
    assert "UserStore" in located(s, item)


def test_matching_is_nfc_and_case_sensitive():
    decomposed = "// File: notes.txt\nThe cafe\u0301 service calls the Bank.\n"
    s = session(context=decomposed)
    apply(s, cls("Cafe"), cls("Bank"))
    (v,) = apply(s, calls("Cafe", "Bank", unicodedata.normalize("NFC", "The café service calls the Bank.")))
    assert v["accepted"] and evidence_of(s, v["element"])[0]["match"] == "normalized"
    (v,) = apply(s, calls("Bank", "Cafe", "THE CAFÉ SERVICE"))
    assert v["code"] == "UNGROUNDED_EVIDENCE"


def test_huge_quotes_and_lone_surrogates_are_invalid_properties_and_the_rest_goes_on():
    s = session()
    two_classes(s)
    huge, surrogate, fine = apply(
        s,
        calls("AuthService", "TokenIssuer", "x" * (MAX_QUOTE_CHARS + 1)),
        calls("TokenIssuer", "AuthService", "bad \ud800 text"),
        calls("InvoiceService", "PaymentGateway", "every night"),
    )
    assert huge["code"] == "INVALID_PROPERTY" and f"at most {MAX_QUOTE_CHARS} characters" in huge["message"]
    assert surrogate["code"] == "INVALID_PROPERTY" and "surrogate" in surrogate["message"]
    assert fine["accepted"]


def test_required_grounding_needs_a_context_to_quote():
    with pytest.raises(RequestInvalid, match="needs context_data"):
        Session.open(make_request(context_data="", grounding="required"))


def test_find_filters_on_grounded_ungrounded_and_unverified():
    s = session("warn")
    apply(
        s,
        cls("AuthService", "class AuthService:"),
        cls("TokenIssuer", "no such words"),
        cls("InvoiceService"),
    )
    for grounded, name in (
        ("grounded", "AuthService"),
        ("ungrounded", "TokenIssuer"),
        ("unverified", "InvoiceService"),
    ):
        answer = run_query(s.state, QUERY_ADAPTER.validate_python({"query": "find", "grounded": grounded}))
        assert answer.matched_nodes == 1 and name in "\n".join(answer.lines), (grounded, answer.lines)


def test_the_response_schema_offers_bounded_evidence_and_requires_it_per_policy():
    from tests.integration.test_llm_llamacpp import unbounded

    for policy, required_on in (
        ("off", set()),
        ("warn", set()),
        ("required_edges", {"ADD_EDGE"}),
        ("required", {"ADD_NODE", "ADD_EDGE"}),
    ):
        schema = response_schema(make_request(context_data="text", grounding=policy))
        assert unbounded(schema) == [], policy
        for action in schema["properties"]["actions"]["items"]["anyOf"]:
            kind = action["properties"]["type"]["enum"][0]
            if kind in ("ADD_NODE", "ADD_EDGE", "UPDATE_NODE", "UPDATE_EDGE"):
                assert action["properties"]["evidence"]["maxItems"] >= 1
            assert ("evidence" in action["required"]) == (kind in required_on), (policy, kind)


def test_the_observation_tells_the_model_the_policy_and_the_format():
    from igg.observe.render import render_observation

    for policy in ("off", "required"):
        s = session(policy)
        text, _ = render_observation(
            request=s.request,
            state=s.state,
            iteration=1,
            last_verdicts=[],
            last_error=None,
            chunk=s.actor.grounder.chunks.at(0),
            todos=[],
        )
        assert ('Evidence (required): give every ADD_NODE, ADD_EDGE and update "evidence"' in text) == (
            policy == "required"
        )


def test_a_run_keeps_evidence_through_the_store_explain_show_and_exports(tmp_path, capsys):
    """The whole path on a transcript: `igg run --store`, `igg explain`, `igg show --grounding`, GraphML and
    JSON."""
    from tests.integration.test_cli_run import cli

    request = tmp_path / "request.json"
    payload = json.loads(make_request(context_data=CONTEXT, grounding="warn").model_dump_json(by_alias=True))
    payload["session_id"] = "ev"
    request.write_text(json.dumps(payload))
    transcript = tmp_path / "transcript.jsonl"
    turns = [
        {"reasoning": "classes", "actions": [cls("AuthService", "class AuthService:"), cls("TokenIssuer")]},
        {
            "reasoning": "calls",
            "actions": [
                calls("AuthService", "TokenIssuer", "TokenIssuer.issue(user)"),
                calls("TokenIssuer", "AuthService", "TokenIssuer calls back"),
            ],
            "finished": True,
        },
    ]
    transcript.write_text("".join(json.dumps(t) + "\n" for t in turns))
    store = str(tmp_path / "s.sqlite")
    code, out, err = cli(
        capsys, "run", str(request), "--agent", f"script:{transcript}", "--store", store, "--json"
    )
    assert code == 0, err
    assert json.loads(out)["grounding"] == {"grounded": 2, "ungrounded": 1, "unverified": 1}
    code, out, err = cli(capsys, "explain", "ev", "AuthService", "--store", store)
    assert code == 0, err
    assert "evidence: 'class AuthService:' (chunk 1, src/auth.py:1:1; exact)" in out
    assert "evidence: 'TokenIssuer.issue(user)' (chunk 1, src/auth.py:5:16; exact)" in out
    code, out, err = cli(capsys, "show", "ev", "--grounding", "--store", store)
    assert code == 0, err
    assert out.startswith("session ev: 2 grounded, 1 ungrounded, 1 unverified facts")
    assert "evidence: 'TokenIssuer calls back' (not found in the context)" in out
    graphml = tmp_path / "g.graphml"
    code, _, err = cli(
        capsys,
        "export",
        "ev",
        "--format",
        "graphml",
        "--provenance",
        "--store",
        store,
        "--output",
        str(graphml),
    )
    assert code == 0, err
    import networkx as nx

    g = nx.read_graphml(graphml)
    kept = [json.loads(d["igg_evidence"]) for _, _, d in g.edges(data=True) if "igg_evidence" in d]
    assert sorted(e[0]["match"] for e in kept) == ["exact", "none"]


@pytest.mark.parametrize(
    "span",
    [
        {"chunk": True, "start": False, "end": "3"},
        {"chunk": 1, "start": 0, "end": "3"},
        {"chunk": 1, "start": 0, "end": 3.0},
        {"chunk": True, "start": 0, "end": 3},
    ],
)
def test_span_offsets_are_strict_integers_not_booleans_or_numeric_strings(span):
    """Issue 47: ``{"chunk": true, "start": false, "end": "3"}`` was read as chunk 1, 0..3."""
    s = session()
    two_classes(s)
    (v,) = apply(s, calls("AuthService", "TokenIssuer", span))
    assert v["code"] == "INVALID_PROPERTY" and "evidence" in v["message"], v


def test_near_miss_quotes_share_one_fuzzy_budget_per_response_and_the_next_response_has_its_own():
    """Issue 47: a response of near-miss quotes made the fuzzy matcher read the chunk again for every one (a
    1 MB body: minutes, the session locked). One response's fuzzy work is bounded (``FUZZY_RESPONSE_WORK``):
    past it a quote is matched exactly or normalized only, and its verdict says the budget is spent."""
    from igg.act.evidence import FUZZY_RESPONSE_WORK

    context = "// File: big.txt\n" + "the quick brown fox jumps over the lazy dog. " * 200
    s = session("required_edges", context=context, chunk_tokens=50_000)
    two_classes(s)
    near = "the quick brown cow jumps over a lazy pig. " * 11  # 473 characters, 85% similar: a near miss
    chunk = len(s.actor.grounder.chunks[0].text)
    per_quote = chunk * len(near.strip())
    actions = [calls("AuthService", "TokenIssuer", near + str(i)) for i in range(40)]
    verdicts = apply(s, *actions)
    assert all(v["code"] == "UNGROUNDED_EVIDENCE" for v in verdicts)
    spent = [v for v in verdicts if "budget for approximate matching is spent" in v["message"]]
    paid = len(verdicts) - len(spent)
    assert 1 <= paid <= FUZZY_RESPONSE_WORK // per_quote + 1 and spent, (paid, len(spent))
    assert "the closest passage" in verdicts[0]["message"]
    (again,) = apply(s, calls("AuthService", "TokenIssuer", near))
    assert "the closest passage" in again["message"]  # a new response, a new budget


def test_searches_beyond_the_chunk_on_show_share_one_budget_per_response(monkeypatch):
    """Issue 47, the same class: 2,000 short quotes that are nowhere made every chunk of an 8 MB context be
    searched for each (13 s). The searches beyond the chunk on show share ``SEARCH_RESPONSE_CHARS`` per
    response; past it a quote is looked for in the chunk on show only, and its miss says so."""
    import igg.act.evidence as evidence

    s = session("warn")
    two_classes(s)
    per_chunk = max(
        end - start
        for start, end in (s.actor.grounder.chunks.bounds(i) for i in range(len(s.actor.grounder.chunks)))
    )
    others = len(s.actor.grounder.chunks) - 1
    monkeypatch.setattr(evidence, "SEARCH_RESPONSE_CHARS", 2 * (per_chunk + MAX_QUOTE_CHARS) * others * 2 + 1)
    verdicts = apply(s, *[cls(f"X{i}", f"absent {i}") for i in range(10)])
    assert all(v["accepted"] and v["warning"] == "UNGROUNDED_EVIDENCE" for v in verdicts)
    cut = ["search budget" in v["message"] for v in verdicts]
    assert cut[:2] == [False, False] and all(cut[3:]), (
        cut
    )  # two whole searches fit, then the chunk on show only
    (found,) = apply(s, calls("AuthService", "TokenIssuer", "InvoiceService sends invoice number 20"))
    assert found["accepted"] and "warning" not in found  # a new response searches everywhere again
