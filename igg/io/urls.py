"""Secrets a URL or a connection string can carry, found and masked without ever failing.

A URL carries a secret in its user information (``postgresql://user:SECRET@host/db``), in a query parameter
(``?password=SECRET``, a documented libpq form; also ``sslpassword``, and any key naming a password, secret,
token or key, its name percent-encoded or not, as libpq decodes it), and a keyword connection string in a
``password=SECRET`` pair (``host=db password='x y'``). ``mask_url`` shows any of them as ``***``;
``url_secrets`` lists them (each as given and decoded) so a driver's message quoting one can be scrubbed. Both
read the text themselves instead of ``urllib.parse``, which raises on a malformed host (``[::1``), so a bad
URL is masked too, never a crash that prints it.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

MASK = "***"

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_SECRET_KEY = re.compile(r"pass|secret|token|key|credential|auth", re.IGNORECASE)
"""A query or keyword name whose value is a secret (``password``, ``sslpassword``, ``api_key``, ...)."""
_KEYWORD = re.compile(r"(?P<key>[A-Za-z_][A-Za-z0-9_]*)\s*=\s*(?P<value>'(?:[^'\\]|\\.)*'?|[^\s']*)")
"""One ``key=value`` pair of a libpq keyword connection string (a value quoted with ``'`` may hold spaces)."""


def _split(url: str) -> tuple[str, str, str, str, str] | None:
    """(scheme://, user information with its ``@``, the rest of the authority and the path, query, fragment)
    of a URL, or None for text that is not one. The user information ends at the URL's last ``@``: libpq ends
    it at the first ``/`` (a password may hold ``?`` or ``#``), a URL parser at the first ``/``, ``?`` or
    ``#``, and a password given unencoded may hold any of them, so all that may be one is taken as one (a URL
    with an ``@`` in its query is masked more than it needs, never less)."""
    m = _SCHEME.match(url)
    if m is None:
        return None
    head, rest = m.group(), url[m.end() :]
    at = rest.rfind("@")
    userinfo, rest = rest[: at + 1], rest[at + 1 :]
    rest, hash_, fragment = rest.partition("#")
    rest, ask, query = rest.partition("?")
    return head, userinfo, rest, ask + query, hash_ + fragment


def _secret(key: str) -> bool:
    return bool(_SECRET_KEY.search(unquote(key)))


def mask_url(url: str) -> str:
    """``url`` with every secret replaced by ``***`` (``postgresql://user:***@host/db?password=***``); a
    keyword connection string's secret values too. Never raises."""
    parts = _split(url)
    if parts is None:
        return _KEYWORD.sub(
            lambda m: f"{m.group('key')}={MASK}" if _secret(m.group("key")) else m.group(), url
        )
    head, userinfo, location, query, fragment = parts
    if ":" in userinfo:
        userinfo = userinfo.split(":", 1)[0] + f":{MASK}@"
    if query:
        pairs = []
        for pair in query[1:].split("&"):
            key, eq, _ = pair.partition("=")
            pairs.append(f"{key}={MASK}" if eq and _secret(key) else pair)
        query = "?" + "&".join(pairs)
    return head + userinfo + location + query + fragment


def url_secrets(url: str) -> list[str]:
    """Every secret value ``url`` carries (user information's password, secret query values, a keyword
    string's secret values), each as given and percent-decoded, longest first; never raises."""
    found: list[str] = []
    parts = _split(url)
    if parts is None:
        found += [m.group("value").strip("'") for m in _KEYWORD.finditer(url) if _secret(m.group("key"))]
    else:
        _, userinfo, _, query, _ = parts
        if ":" in userinfo:
            found.append(userinfo[:-1].split(":", 1)[1])
        for pair in query[1:].split("&") if query else ():
            key, eq, value = pair.partition("=")
            if eq and _secret(key):
                found.append(value)
    forms = {
        form for value in found for form in (value, unquote(value), unquote(value.replace("+", " "))) if form
    }
    return sorted(forms, key=len, reverse=True)


def scrub(text: str, secrets: list[str]) -> str:
    """``text`` with each of ``secrets`` (longest first) replaced by ``***``."""
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text
