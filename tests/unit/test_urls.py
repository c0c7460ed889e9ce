"""Secrets in store URLs (issue 47): masked in every form a URL carries them (user information, query
parameters such as libpq's ``?password=``, keyword connection strings), never a crash on a malformed URL (a
bad IPv6 host), for any URL hypothesis makes."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from igg.errors import SessionRefused
from igg.io.urls import mask_url, url_secrets
from igg.store.location import PostgresURL, resolve_store_path, sidecar_path

SECRET = "Zq7Secret"
"""Part of every generated password: it must not survive masking, as given or encoded."""

_word = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_.", min_size=1, max_size=8)
_password = st.tuples(
    st.text(alphabet="ab:/@?#&= %+!'", max_size=4), st.text(alphabet="xy:/@%", max_size=4)
).map(lambda t: t[0] + SECRET + t[1])
_host = st.one_of(
    _word,
    st.just("[::1]"),
    st.just("[::1"),
    st.just("[fe80::1%25eth0]"),
    st.just("::1]"),
    _word.map(lambda w: f"{w}:5432"),
    _word.map(lambda w: f"{w}:99999"),
)
_key = st.sampled_from(["password", "PASSWORD", "sslpassword", "pass%77ord", "Password"])


@st.composite
def urls(draw: st.DrawFn) -> str:
    """A postgresql:// URL carrying a password in its user information, its query, or both."""
    scheme = draw(st.sampled_from(["postgresql", "postgres"]))
    password = draw(_password)
    encoded = draw(st.booleans())
    shown = quote(password, safe="") if encoded else password
    where = draw(st.sampled_from(["userinfo", "query", "both"]))
    user = draw(_word)
    auth = f"{user}:{shown}@" if where in ("userinfo", "both") else draw(st.sampled_from(["", f"{user}@"]))
    query = draw(
        st.lists(
            st.sampled_from(["sslmode=require", "application_name=igg", "connect_timeout=5"]), max_size=2
        )
    )
    if where in ("query", "both"):
        query.insert(draw(st.integers(0, len(query))), f"{draw(_key)}={quote(password, safe='')}")
    tail = ("?" + "&".join(query)) if query else ""
    return f"{scheme}://{auth}{draw(_host)}/{draw(_word)}{tail}"


def leaked(text: str) -> bool:
    return SECRET in text or quote(SECRET) in text


@settings(max_examples=200, deadline=None)
@given(url=urls())
def test_no_generated_url_shows_its_password_or_makes_masking_fail(url: str) -> None:
    masked = mask_url(url)
    assert not leaked(masked), (url, masked)
    location = resolve_store_path(url)
    assert isinstance(location, PostgresURL)
    assert not leaked(str(location)) and not leaked(repr(location))
    assert not leaked(sidecar_path(location, ".codefacts").name)
    assert any(SECRET in s for s in url_secrets(url))  # what a driver's message is scrubbed of


@settings(max_examples=150, deadline=None)
@given(text=st.text())
def test_masking_never_raises_on_any_text(text: str) -> None:
    mask_url(text)
    mask_url("postgresql://" + text)
    url_secrets("postgresql://" + text)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://igg@h/db?password=hunter22", "postgresql://igg@h/db?password=***"),
        (
            "postgresql://igg@h/db?sslmode=require&PassWord=hunter22",
            "postgresql://igg@h/db?sslmode=require&PassWord=***",
        ),
        ("postgresql://igg:hunter22@[::1/db", "postgresql://igg:***@[::1/db"),
        ("postgresql://igg:pa/ss@w0rd@h/db", "postgresql://igg:***@h/db"),
        ("host=h password='hunter 22' dbname=x", "host=h password=*** dbname=x"),
    ],
)
def test_each_form_of_a_secret_is_masked(url: str, shown: str) -> None:
    """Issue 47: ``?password=`` was printed in errors, logs and listings; a malformed IPv6 host crashed the
    masking code."""
    assert mask_url(url) == shown


def test_a_keyword_connection_string_is_refused_as_a_store_without_showing_its_password() -> None:
    with pytest.raises(SessionRefused) as refused:
        resolve_store_path("host=db.example password=hunter22 dbname=igg")
    assert "hunter22" not in str(refused.value) and "keyword connection string" in str(refused.value)


@pytest.mark.parametrize(
    "uri", ["bolt://u:hunter22@[::1:7687?password=hunter22", "neo4jx://u:hunter22@h?password=hunter22"]
)
def test_a_bad_neo4j_uri_is_an_export_error_that_masks_its_secrets(uri: str) -> None:
    """The same masking for a Bolt URI: a malformed host is an ExportError (it was a ValueError traceback),
    and neither the user information's password nor the query's is shown."""
    from igg.errors import ExportError
    from igg.export.neo4j.bolt import check_uri

    with pytest.raises(ExportError) as refused:
        check_uri(uri)
    assert "hunter22" not in str(refused.value) and "bad Neo4j URI" in str(refused.value)


@st.composite
def keyword_strings(draw: st.DrawFn) -> str:
    """A libpq keyword connection string carrying a password, quoted or not, among other settings."""
    password = draw(st.text(alphabet="ab:/@?#&=%+!", max_size=4)).replace("'", "") + SECRET
    value = f"'{password} x'" if draw(st.booleans()) else password.replace(" ", "")
    pairs = [
        f"{draw(st.sampled_from(['password', 'PASSWORD', 'sslpassword']))}={value}",
        *draw(
            st.lists(
                st.sampled_from(["host=db", "port=5432", "dbname=igg", "user=igg", "sslmode=require"]),
                max_size=3,
            )
        ),
    ]
    order = draw(st.permutations(pairs))
    return draw(st.sampled_from([" ", "  "])).join(order)


@settings(max_examples=100, deadline=None)
@given(text=keyword_strings())
def test_no_generated_keyword_string_shows_its_password(text: str) -> None:
    assert not leaked(mask_url(text)), (text, mask_url(text))
    assert any(SECRET in s for s in url_secrets(text))
    with pytest.raises(
        SessionRefused
    ) as refused:  # never taken as a file path, whose name every message shows
        resolve_store_path(text)
    assert not leaked(str(refused.value))
