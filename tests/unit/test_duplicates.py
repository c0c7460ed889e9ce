"""Identity hygiene and the near-duplicate guard: normalised identities, POSSIBLE_DUPLICATE and its
policies."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from igg.graph.duplicates import NearDuplicateIndex
from igg.graph.identity import fold, normalize_identity_value, tokens
from igg.graph.journal import NodeAdded
from igg.models.verdicts import ErrorCode as C
from tests.conftest import Workspace, edge, node


def cls(name: str, **extra: object) -> dict:
    return node("Class", name=name, package="p", **extra)


def test_identity_values_are_nfc_and_stripped_so_a_trailing_space_is_the_same_node():
    assert normalize_identity_value("  AuthService \t") == "AuthService"
    assert normalize_identity_value("Cafe\u0301") == "Caf\u00e9"
    assert normalize_identity_value("Auth Service") == "Auth Service"  # inner space and case are kept
    assert normalize_identity_value(7) == 7
    ws = Workspace()
    assert ws.one(cls("AuthService ")).message == 'added Class "AuthService" as n1'
    v = ws.one(cls("\u00a0AuthService"))
    assert v.code == C.DUPLICATE_NODE and 'Class "AuthService" already exists (n1)' in v.message
    assert ws.one(cls("Cafe\u0301")).accepted and ws.one(cls("Caf\u00e9")).code == C.DUPLICATE_NODE
    # references are normalised too
    v = ws.one(edge("CALLS", {"name": " AuthService"}, {"name": "Café\n"}))
    assert v.accepted and v.message == "added CALLS edge e1 (n1 -> n2)"
    # an update that sets an identity stores it normalised
    assert ws.one(
        {"type": "UPDATE_NODE", "node": {"name": "Café"}, "properties": {"name": " Cafe2 "}}
    ).accepted
    assert ws.state.node_properties("n2")["name"] == "Cafe2"


def test_folding_splits_camel_and_snake_case_and_separators():
    assert tokens("getHTTPResponse_code") == ["get", "http", "response", "code"]
    assert {
        fold(n) for n in ("AuthService", "auth_service", "authservice", "AUTH-SERVICE", "Auth Service")
    } == {"authservice"}


def test_the_five_spellings_of_the_issue_meet_possible_duplicate_naming_the_candidate_and_both_ways_forward():
    ws = Workspace()
    assert ws.one(cls("AuthService")).accepted
    for name, why in (
        ("auth_service", "same name up to case and separators"),
        ("authservice", "same name up to case and separators"),
        ("AuthenticationService", "one name abbreviates the other"),
        ("AuthServce", "similarity 0.91"),
    ):
        v = ws.one(cls(name))
        assert v.code == C.POSSIBLE_DUPLICATE, name
        assert v.message == (
            f'Class "{name}" is probably the same as Class "AuthService" (n1; {why}). Use the '
            'existing node (refer to it as {"name": "AuthService"}), or, if it is really a '
            'different Class, send this ADD_NODE again with "distinct": true.'
        )
    assert ws.one(cls("AuthService ")).code == C.DUPLICATE_NODE
    assert ws.state.node_count == 1


def test_distinct_true_adds_the_node_and_records_the_override_in_provenance_and_the_journal():
    ws = Workspace()
    ws.one(cls("AuthService"))
    ws.state.take_journal()
    v = ws.one({**cls("auth_service"), "distinct": True})
    assert v.accepted and v.message == (
        'added Class "auth_service" as n2; added as distinct from Class '
        '"AuthService" (n1; same name up to case and separators)'
    )
    assert ws.state.graph.nodes["n2"]["provenance"]["distinct_from"] == ["n1"]
    (mutation,) = ws.state.take_journal()
    assert isinstance(mutation, NodeAdded) and mutation.provenance["distinct_from"] == ["n1"]
    # distinct on a name with no near-duplicate changes nothing
    assert ws.one({**cls("Mailer"), "distinct": True}).message == 'added Class "Mailer" as n3'


def test_warn_policy_adds_the_node_with_a_warning_and_off_does_not_check():
    ws = Workspace(constraints={"duplicates": {"policy": "warn"}})
    ws.one(cls("AuthService"))
    v = ws.one(cls("AUTH_SERVICE"))
    assert v.accepted and v.warning == C.POSSIBLE_DUPLICATE and v.to_dict()["warning"] == "POSSIBLE_DUPLICATE"
    assert 'POSSIBLE_DUPLICATE: probably the same as Class "AuthService" (n1;' in v.message
    ws = Workspace(constraints={"duplicates": {"policy": "off"}})
    ws.one(cls("AuthService"))
    v = ws.one(cls("AUTH_SERVICE"))
    assert v.accepted and v.warning is None and ws.state.near is None  # no index kept when off


def test_user_aliases_numbers_types_and_composite_identities():
    ws = Workspace(constraints={"duplicates": {"aliases": [["AuthService", "LoginManager"]]}})
    ws.one(cls("AuthService"))
    v = ws.one(cls("login_manager"))
    assert v.code == C.POSSIBLE_DUPLICATE and "(n1; aliases)" in v.message
    # numbered names are different things; other types are not compared
    assert ws.one(cls("Handler1")).accepted and ws.one(cls("Handler2")).accepted
    assert ws.one(cls("Table1")).accepted and ws.one(cls("Table10")).accepted
    assert ws.one(node("Interface", name="auth_service")).accepted
    # composite identity: overloads (same name, other signature) are not duplicates; a case variant is
    ws = Workspace(
        schema={
            "node_types": ["Method"],
            "edge_types": [],
            "required_attributes": {},
            "identity_keys": {"Method": ["name", "signature"]},
        }
    )
    assert ws.one(node("Method", name="login", signature="(a)")).accepted
    assert ws.one(node("Method", name="login", signature="(a, b)")).accepted
    assert ws.one(node("Method", name="Login", signature="(a)")).code == C.POSSIBLE_DUPLICATE


def test_a_threshold_can_be_raised_and_short_names_need_more_than_one_edit():
    ws = Workspace(constraints={"duplicates": {"threshold": 0.95}})
    ws.one(cls("AuthService"))
    assert ws.one(cls("AuthServce")).accepted  # 0.91 < 0.95
    ws = Workspace()
    ws.one(cls("User"))
    assert ws.one(cls("Users")).accepted  # 1 edit in 5 characters: 0.8


def test_the_index_follows_renames_deletes_and_undo():
    ws = Workspace()
    ws.one(cls("AuthService"))
    ws.one({"type": "UPDATE_NODE", "node": {"name": "AuthService"}, "properties": {"name": "Mailer"}})
    assert ws.one(cls("auth_service")).accepted  # the old name is gone from the index
    assert ws.one(cls("MAILER")).code == C.POSSIBLE_DUPLICATE
    ws.one({"type": "DELETE_NODE", "node": {"name": "Mailer"}})
    journal = ws.state.take_journal()
    assert ws.one(cls("MAILER")).accepted
    ws.one({"type": "DELETE_NODE", "node": {"name": "MAILER"}})
    for m in reversed(journal):  # undo back to before the first ADD_NODE
        ws.state.revert_mutation(m)
    assert ws.one(cls("mailer")).accepted is True


def test_the_index_answers_without_scanning_at_100k_nodes():
    from igg.models.schema import Schema

    schema = Schema(node_types=["Class"]).compile()
    index = NearDuplicateIndex(schema)
    for i in range(100_000):
        index.add(f"n{i}", "Class", {"name": f"Service{i}Impl"})
    index.add("x", "Class", {"name": "PaymentGatewayClient"})
    assert len(index) == 100_001
    (found,) = index.candidates("Class", {"name": "payment_gateway_client"})
    assert found.node == "x" and found.reason == "folded"
    assert index.candidates("Class", {"name": "PaymentGatewayClint"})[0].reason == "similar"
    assert (
        index.candidates("Class", {"name": "Service5Impl"}) == []
    )  # its own identity is not a near-duplicate
    assert index.candidates("Class", {"name": "Service12Implementation"})[0].value == "Service12Impl"


@settings(max_examples=60, deadline=None)
@given(name=st.text(alphabet="abcdefghij", min_size=2, max_size=30), data=st.data())
def test_every_name_one_edit_away_is_found(name, data):
    """Rule 4's pigeonhole keys never miss a one-edit variant (substitution, insertion, deletion)."""
    from igg.models.schema import Schema

    index = NearDuplicateIndex(Schema(node_types=["Class"]).compile(), threshold=0.5)
    index.add("x", "Class", {"name": name})
    i = data.draw(st.integers(0, len(name) - 1))
    letter = data.draw(st.sampled_from("abcdefghijk"))
    for variant in (
        name[:i] + letter + name[i + 1 :],
        name[:i] + letter + name[i:],
        name[:i] + name[i + 1 :],
    ):
        if variant != name and len(variant) >= 2:
            assert [c.node for c in index.candidates("Class", {"name": variant})] == ["x"], variant


_WORDS = [
    "auth",
    "authentication",
    "user",
    "users",
    "repo",
    "repository",
    "service",
    "serv",
    "mail",
    "mailer",
    "ab",
    "abc",
    "x",
    "login",
    "log",
    "v2",
    "2",
]


def _spell(words: list[str], style: int) -> str:
    if style == 0:
        return "".join(w.title() for w in words)
    if style == 1:
        return "_".join(words)
    return "-".join(w.upper() for w in words)


def _reference(
    nodes: dict[str, str], probe: str, threshold: float
) -> tuple[dict[str, str], dict[str, float], set[str]]:
    """By scanning every node: those the rules say must be found (id -> reason), the similarity of each
    node, and the nodes rule 3 accepts (which may come back as "similar" when rule 4 also holds)."""
    from rapidfuzz.distance import Levenshtein

    from igg.graph.duplicates import _abbreviates

    def parts(name: str) -> tuple[str, str, tuple[str, ...]]:
        words = tokens(name)
        key = "".join(words)
        return key, "".join(c for c in key if c.isdigit()), tuple(w for w in words if not w.isdigit())

    key, digits, words = parts(probe)
    must: dict[str, str] = {}
    scores: dict[str, float] = {}
    abbreviations: set[str] = set()
    for n, name in nodes.items():
        other, other_digits, other_words = parts(name)
        if name == probe or other_digits != digits and other != key:
            continue
        scores[n] = Levenshtein.normalized_similarity(key, other)
        if other == key:
            must[n] = "folded"
        elif len(words) > 1 and _abbreviates(words, other_words):
            abbreviations.add(n)
            must[n] = "abbreviation"
        elif Levenshtein.distance(key, other) == 1 and scores[n] >= threshold:
            must[n] = "similar"  # one edit is always found; two edits usually are
    return must, scores, abbreviations


@settings(max_examples=150, deadline=None)
@given(data=st.data(), threshold=st.sampled_from([0.5, 0.75, 0.9]))
def test_the_index_finds_what_a_scan_of_every_node_finds_after_adds_and_removals(data, threshold):
    """Rules 1 and 3 (and rule 4 at one edit) find exactly what comparing the probe with every node finds,
    whatever was added, renamed or removed before; nothing found is wrong."""
    from igg.models.schema import Schema

    index = NearDuplicateIndex(Schema(node_types=["Class"]).compile(), threshold=threshold)
    words = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=3)
    name = st.builds(_spell, words, st.integers(0, 2))
    edited = st.builds(
        lambda n, i, c: n[: i % (len(n) + 1)] + c + n[i % (len(n) + 1) + 1 :],
        name,
        st.integers(0, 40),
        st.sampled_from(["", "e", "x", "S"]),
    )
    nodes: dict[str, str] = {}
    for step in range(data.draw(st.integers(1, 25))):
        op = data.draw(st.sampled_from(["add", "add", "add", "remove", "rename"]))
        if op == "add" or not nodes:
            n = f"n{step}"
            nodes[n] = data.draw(st.one_of(name, edited))
            index.add(n, "Class", {"name": nodes[n]})
        else:
            n = data.draw(st.sampled_from(sorted(nodes)))
            index.remove(n)
            if op == "rename":
                nodes[n] = data.draw(name)
                index.add(n, "Class", {"name": nodes[n]})
            else:
                del nodes[n]
    for probe in data.draw(st.lists(st.one_of(name, edited), min_size=1, max_size=4)):
        found = {c.node: c for c in index.candidates("Class", {"name": probe}, limit=1000)}
        must, scores, abbreviations = _reference(nodes, probe, threshold)
        for n, reason in must.items():
            assert n in found, (probe, nodes[n], reason)
            assert (
                found[n].reason == reason
                or reason == "abbreviation"
                and found[n].reason == "similar"
                or reason == "similar"
                and found[n].reason == "abbreviation"
            ), (probe, nodes[n], found[n])
        for n, c in found.items():
            assert c.value == nodes[n] and c.value != probe
            if c.reason == "folded":
                assert must.get(n) == "folded"
            elif c.reason == "abbreviation":
                assert n in abbreviations
            else:
                assert c.reason == "similar" and scores[n] >= threshold and c.score == round(scores[n], 3)


def test_an_abbreviation_of_the_first_and_last_words_is_found_by_the_middle_one():
    """Rule 3 holds for any word kept whole, not only the first or the last (the old keys missed this)."""
    ws = Workspace()
    assert ws.one(cls("AuthenticationTokenRepository")).accepted
    v = ws.one(cls("AuthTokenRepo"))
    assert v.code == C.POSSIBLE_DUPLICATE and "(n1; one name abbreviates the other)" in v.message
    # names sharing only a common word are not abbreviations of each other
    assert ws.one(cls("PaymentTokenService")).accepted


def test_a_name_of_digits_only_is_one_edit_from_a_one_letter_name_with_the_same_digits():
    """Found by the scan comparison above: a name without letters has rule-4 keys too."""
    from igg.models.schema import Schema

    index = NearDuplicateIndex(Schema(node_types=["Class"]).compile(), threshold=0.5)
    index.add("x", "Class", {"name": "2"})
    assert [(c.node, c.reason) for c in index.candidates("Class", {"name": "V2"})] == [("x", "similar")]
