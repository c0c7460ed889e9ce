"""Where the session store is: an SQLite file, or a PostgreSQL database named by a URL.

Which store, when none is given, is decided in ONE place, ``resolve_store_path``: ``--store LOCATION``, else
``$IGG_STORE``, else ``./.igg/sessions.sqlite`` when that file exists (a project's own store), else the user's
**default store** ``$IGG_HOME/sessions.sqlite`` (else ``$XDG_DATA_HOME/igg/``, else ``~/.local/share/igg/``).
A location is a file path, or a ``postgresql://`` (``postgres://``) URL, kept as a ``PostgresURL``: its text
(``str()``) hides the password (``postgresql://user:***@host/db``; ``?password=`` too: ``igg.io.urls``), so it
may appear in any message or log; the password is only in ``.url``, which goes to the driver and nowhere else.
Any other URL is refused: it is never taken as a file path (``Path`` would collapse its ``//`` and a folder
named ``postgresql:`` would appear).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from igg.errors import SessionRefused
from igg.io.urls import mask_url as mask_url  # re-exported: the masking helper of store locations
from igg.io.urls import url_secrets

STORE_ENV = "IGG_STORE"
"""Environment variable naming the store (a file path or a ``postgresql://`` URL) when ``--store`` is not
given."""

HOME_ENV = "IGG_HOME"
"""Environment variable naming the directory of the default store (``sessions.sqlite``)."""

PROJECT_STORE = Path(".igg") / "sessions.sqlite"
"""A project's own store, relative to the working directory: used (without ``--store``/``$IGG_STORE``) when it
exists."""

DEFAULT_STORE = PROJECT_STORE
"""Deprecated name of ``PROJECT_STORE`` (the store used without ``--store`` is ``resolve_store_path()``)."""

POSTGRES_SCHEMES = ("postgresql", "postgres")
"""The URL schemes of a PostgreSQL store."""

_KEYWORDS = re.compile(
    r"^\s*(?:host|hostaddr|port|dbname|user|password|passfile|sslpassword|sslmode|sslkey|sslcert|"
    r"sslrootcert|service|options|application_name|connect_timeout|target_session_attrs)\s*=",
    re.IGNORECASE,
)
"""A store argument that is a libpq keyword connection string (``host=db password=...``): never a file path
(which would show its password in every message naming the store)."""
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:/")
"""A store argument that names a server (``scheme:/...``): never a file path."""


@dataclass(frozen=True)
class PostgresURL:
    """A PostgreSQL store's URL. ``str()`` and ``repr()`` show it with the password masked; ``url`` is the
    whole URL, for the driver only."""

    url: str = field(repr=False)
    """The URL as given, password included (never print it)."""

    def __str__(self) -> str:
        return mask_url(self.url)

    def __repr__(self) -> str:
        return f"PostgresURL({mask_url(self.url)!r})"

    @property
    def password(self) -> str | None:
        """The URL's password, if it carries one (the longest of ``secrets``)."""
        found = self.secrets
        return found[0] if found else None

    @property
    def secrets(self) -> list[str]:
        """Every secret the URL carries, as given and decoded (to scrub them from a driver's messages)."""
        return url_secrets(self.url)


StoreLocation = Path | PostgresURL
"""A resolved store: an SQLite file or a PostgreSQL URL."""

StoreArg = str | os.PathLike[str] | PostgresURL
"""What names a store: a path or URL as text, a path, or a resolved URL."""


def home_store() -> Path:
    """The user's default store: ``$IGG_HOME/sessions.sqlite``, else ``$XDG_DATA_HOME/igg/sessions.sqlite``,
    else ``~/.local/share/igg/sessions.sqlite``."""
    home = os.environ.get(HOME_ENV)
    if home:
        return Path(home).expanduser() / "sessions.sqlite"
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data).expanduser() / "igg" / "sessions.sqlite"


def resolve_store_path(path: StoreArg | None = None) -> StoreLocation:
    """The store, the one rule every command and server follows: ``path`` if given, else ``$IGG_STORE``, else
    ``./.igg/sessions.sqlite`` if that file exists, else the default store (``home_store()``). A
    ``postgresql://`` URL is a ``PostgresURL``; any other URL is refused (``SessionRefused``)."""
    if isinstance(path, PostgresURL):
        return path
    given = os.fspath(path) if path is not None and os.fspath(path) else os.environ.get(STORE_ENV) or ""
    if _URL.match(given):
        scheme = given.split(":", 1)[0]
        if scheme.lower() in POSTGRES_SCHEMES:
            return PostgresURL(given)
        raise SessionRefused(
            f"the store {scheme}://... is a URL IGG cannot keep sessions in: give an SQLite file "
            f"path (--store PATH or {STORE_ENV}), e.g. .igg/sessions.sqlite, or a PostgreSQL URL "
            "postgresql://USER@HOST/DATABASE"
        )
    if _KEYWORDS.match(given):
        raise SessionRefused(
            f"the store {mask_url(given)!r} is a libpq keyword connection string: give a PostgreSQL "
            "URL instead, postgresql://USER@HOST:PORT/DATABASE (with ?sslmode=... and the other "
            "settings as query parameters)"
        )
    if given:
        return Path(given)
    return PROJECT_STORE if PROJECT_STORE.is_file() else home_store()


def store_file(location: StoreLocation) -> Path | None:
    """The SQLite file of a store (None for a PostgreSQL store)."""
    return location if isinstance(location, Path) else None


def store_exists(location: StoreLocation) -> bool:
    """Whether the store is there to read: its file exists (a PostgreSQL store is created when first opened,
    so it counts as there; a server that does not answer is reported when the store is opened)."""
    return location.exists() if isinstance(location, Path) else True


def store_text(location: StoreLocation) -> str:
    """The location as text that resolves back to it: for a PostgreSQL store the URL WITH its password, to
    hand to another function or process, never to print (print ``str(location)``)."""
    return str(location) if isinstance(location, Path) else location.url


def sidecar_path(location: StoreLocation, suffix: str) -> Path:
    """A local file that belongs with the store (a cache): beside an SQLite file (``sessions.sqlite`` +
    ``suffix``), or for a PostgreSQL store in the default store's folder, named for its host and database."""
    if isinstance(location, Path):
        return location.with_name(location.name + suffix)
    shown = mask_url(location.url)
    try:
        parts = urlsplit(shown)
        database = parts.path.strip("/") or "default"
        name = f"postgresql-{parts.hostname or 'local'}-{parts.port or 5432}-{database}"
    except ValueError:  # a malformed host or port: the server will say so; the cache still needs a name
        name = "postgresql-" + shown.split("://", 1)[-1].rpartition("@")[2]
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)
    return home_store().parent / (name + suffix)
