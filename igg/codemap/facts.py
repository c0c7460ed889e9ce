"""What the analyzers find in one source file, before any cross-file resolution.

A language's analyzer (``igg.codemap.language``: ``python/analyze.py``, ``java/analyze.py``, ...) turns one
file into ``FileFacts``: the module, its imports, the types and callables it declares, and for each callable
the calls, instantiations and SQL statements in its body, with receivers and type names still *as written*.
``link.py`` resolves those names across files into ``Symbol``s and ``Relation``s, which the code agent
proposes as graph actions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from itertools import chain
from operator import attrgetter
from typing import Any, Literal

Language = str
"""A language's name (a key of ``igg.codemap.language.MODULES``): ``python``, ``java``, ..."""
TypeKind = Literal["class", "interface", "enum"]


@dataclass(kw_only=True, slots=True)
class ImportRef:
    """One imported name: ``target`` is a dotted name (module, type, function, constant or package).

    Python: every name of every import statement is one ``ImportRef``, wherever the statement stands
    (in functions, under ``TYPE_CHECKING``, in ``try``/``except ImportError``), so a name bound twice keeps
    both bindings. Relative imports are already absolute here."""

    target: str
    alias: str | None = None
    """The local name it binds (Python ``as``; the last segment otherwise)."""
    wildcard: bool = False
    """``import com.app.*;`` / ``from x import *``."""
    module_only: bool = False
    """Python ``import a.b``: binds the module, not a member of it."""
    source: str | None = None
    """Python ``from M import n``: the absolute module ``M`` (``target`` is ``M.n``)."""
    member: str | None = None
    """Java ``import static a.B.m;``: ``m`` (``target`` is the type ``a.B``); ``*`` for ``a.B.*``."""
    line: int = 0
    column: int = 0
    """1-based column where the import statement starts (0: not known), with ``line`` its site."""
    type_only: bool = False
    """Only type checkers read it: Python under ``if TYPE_CHECKING:``, TypeScript ``import type`` (or every
    name of the statement marked ``type``), ``export type ... from``. An edge stated only by such imports
    carries ``type_checking: true``."""


Expr = tuple[Any, ...]
"""A Java receiver or argument expression, kept as written for the linker to type: ``("var", T)`` a local or
parameter of declared type T (``("var", T, E)`` when T has one type argument, erased to E: ``List<Filter>`` ->
``("var", "List", "Filter")``), ``("name", id)`` an identifier that is no local (a field of this, an outer or
a super type, a statically imported field, or a type), ``("this",)``, ``("super",)``, ``("outer", O)`` for
``O.this``, ``("field", expr, name)``, ``("call", CallRef)`` (its return type), ``("new", T)``, ``("cast",
T)``, ``("lit", T)`` (T ``null`` for null), ``("fn", n)`` a lambda of ``n`` parameters or (``n`` None) a
method reference: an argument only a functional interface can take, ``("lambda", C, i, j)`` the ``j``-th
parameter of a lambda without declared parameter types that is the ``i``-th argument of call ``C`` (typed by
what the called method takes there), ``("typed", T, args, j)`` the same of a lambda declared, cast or returned
as functional interface ``T`` with (erased) type arguments ``args``."""


SWITCH = "<switch>"
"""``CallRef.name`` of a Java ``switch`` over the expression ``expr`` (a call of the enum's ``ordinal()``
when it is an enum)."""


@dataclass(kw_only=True, slots=True)
class CallRef:
    """One call in a callable's body, with what the source says about its receiver."""

    name: str
    """The called method or function name (``<init>`` for a constructor call via ``this(...)``/``super(...)``,
    ``SWITCH`` for a Java ``switch`` over ``expr``)."""
    receiver: Literal["none", "this", "super", "type", "var", "module", "unknown", "expr"] = "none"
    """none: a bare call ``f()``; this/super; type: ``T.f()`` (static); var: a field/local/parameter whose
    declared type is ``receiver_type``; module: a Python module alias; unknown: not knowable statically;
    expr: (Java) the receiver expression ``expr``, typed by the linker."""
    receiver_type: str | None = None
    """The type (or module) name as written, for receiver in (type, var, module)."""
    arg_types: tuple[str | None, ...] = ()
    """Static types of the arguments where the source makes them knowable (Java overload choice)."""
    expr: Expr | None = None
    args: tuple[Expr | None, ...] | None = None
    """Java: the argument expressions (typed by the linker to choose between overloads)."""
    line: int = 0
    column: int = 0
    """1-based column of the call's site (0: not known): where the called name stands (Java, TypeScript, Go:
    where their compilers put the call), where the call expression starts (Python, as ``ast`` has it)."""


@dataclass(kw_only=True, slots=True)
class SqlRef:
    """A table read or written by a SQL statement found in a string literal."""

    table: str
    op: Literal["read", "write"]
    statement: str
    """SELECT, INSERT, UPDATE, DELETE or MERGE."""
    line: int = 0
    column: int = 0
    """1-based column where the string literal (or the constant's name using it) starts (0: not known)."""


@dataclass(kw_only=True, slots=True)
class CallableDecl:
    """A method, constructor or (Python) top-level function."""

    kind: Literal["method", "constructor", "function"]
    name: str
    signature: str
    """``login(String, String)`` (Java: parameter types) or ``login(self, user: str)`` (Python:
    parameters)."""
    owner: str | None
    """Qualified name of the declaring type; None for a function."""
    line: int
    column: int = 0
    """1-based column where the declaration starts (0: not known)."""
    params: tuple[str | None, ...] = ()
    """Declared parameter types (None where not declared)."""
    static: bool = False
    returns: str | None = None
    """Java: the declared return type (generics erased to their bound)."""
    returns_self: bool = False
    """Java: the return type is a type parameter of the owner bounded by the owner itself (``B`` of
    ``AbstractBuilder<B extends AbstractBuilder<B>>``): a call returns what the subtype binds ``B`` to, which
    is the receiver's own type in a self-typed builder (see ``TypeDecl.self_args``), not the erased
    ``returns``."""
    returns_element: str | None = None
    """Java: the erased type argument of a return type that has exactly one (``List<Diff<?>>``: ``Diff``)."""
    returns_param: str | None = None
    """Java: the return type is this type parameter of the owner (``T get()`` of ``Supplier<T>``): a call
    returns what the receiver's type binds it to through its supertypes' type arguments
    (``TypeDecl.super_args``)."""
    abstract: bool = False
    """Java: declared without a body (an interface's abstract method: a functional interface has one)."""
    explicit_init: bool = False
    """Java constructor: it starts with ``this(...)``/``super(...)`` (else ``super()`` is implicit)."""
    body_site: tuple[int, int] = (0, 0)
    """Java constructor: (line, column) where its body opens (``{``), the site javac gives an implicit
    ``super()`` call ((0, 0): no body)."""
    calls: list[CallRef] = field(default_factory=list)
    instantiates: list[tuple[str, int, int]] = field(default_factory=list)
    """(type name as written, line, column) for ``new T(...)`` / ``T(...)``: where the expression starts."""
    sql: list[SqlRef] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class TypeDecl:
    """A class, interface or enum (nested ones named ``Outer.Inner``)."""

    kind: TypeKind
    name: str
    """Name inside its package/module, dotted for nested types."""
    package: str
    line: int
    column: int = 0
    """1-based column where the declaration starts (0: not known): the site of its EXTENDS/IMPLEMENTS."""
    extends: list[str] = field(default_factory=list)
    """Supertypes as written (Java ``extends``; Python bases)."""
    implements: list[str] = field(default_factory=list)
    outer: str | None = None
    """Qualified name of the enclosing type of a nested type."""
    self_args: dict[str, str] = field(default_factory=dict)
    """Java: supertype (as written) -> ``self`` when given this type as a type argument (``PipeBuilder extends
    AbstractBuilder<PipeBuilder>``), ``param`` when given a type parameter of this type bounded by this type
    (``Mid<B extends Mid<B>> extends AbstractBuilder<B>``): who binds a self-typed method's return type."""
    type_params: dict[str, str] = field(default_factory=dict)
    """Java: the type's own type parameters, in order -> their erasure (``B extends Builder<B>``:
    ``Builder``)."""
    super_args: dict[str, list[str]] = field(default_factory=dict)
    """Java: supertype (as written) -> its type arguments, each a type parameter of this type or a type name
    as written, erased (``''`` for a wildcard): ``Builder extends AbstractBuilder<Visitor, Builder>``."""
    fields: dict[str, str] = field(default_factory=dict)
    """Field name -> declared type as written (Java fields; Python: none, its attributes are value flows)."""
    field_elements: dict[str, str] = field(default_factory=dict)
    """Java: field name -> the erased type argument of a field whose type has exactly one (``List<Filter>``:
    ``Filter``), the element a lambda over that collection or stream takes."""

    @property
    def qualified(self) -> str:
        return f"{self.package}.{self.name}" if self.package else self.name


@dataclass(kw_only=True, slots=True)
class RouteDecl:
    """An HTTP route a server registers (``igg.codemap.routes``): ``path`` is relative to its router."""

    method: str
    """GET, POST, ... or ``*`` (any method)."""
    path: str
    """The path as registered on its router, normalized (``routes.normalize``: every parameter ``{}``)."""
    router: str = ""
    """The local name of the router (``APIRouter``, ``Blueprint``, Express ``Router()``, ...) it is registered
    on, or ``""``: the application itself (its path is absolute)."""
    scope: tuple[str, int, int] | None = None
    """The handler: (name, first line, last line) of the function or method declared in this file that handles
    it, or None: the module (an inline handler at module level)."""
    handler: str | None = None
    """A handler another module declares: ``module:MOD#NAME`` (Django's ``views.detail``: a function, or a
    class-based view, each of whose methods named for an HTTP method handles the route of that method),
    ``func:PKG#NAME`` or ``method:PKG#NAME`` (Go: the one function or method of that name in the package),
    ``path:PATH#NAME`` (TypeScript: the function a file exports as NAME; ``path:PATH#.NAME``: the one function
    or method NAME of that file)."""
    line: int = 0
    column: int = 0
    """Where the registration stands (the decorator, the ``app.get(...)`` call, the annotation)."""


@dataclass(kw_only=True, slots=True)
class MountDecl:
    """A router mounted under a prefix: ``include_router(r, prefix=)``, ``app.use('/p', r)``, ``include()``,
    ``Mount``."""

    prefix: str
    """The normalized prefix."""
    base: str | None = None
    """A constant of another file the prefix starts with (as ``RequestDecl.base``), ``?`` when the code does
    not decide the prefix (the mounted routes are then left out), None: ``prefix`` is whole."""
    router: str = ""
    """The router it is mounted on (``""``: the application)."""
    child: str = ""
    """What is mounted: ``local:NAME`` (a router of this file), ``module:MOD#NAME`` (a router named NAME in
    the module MOD; ``#`` alone: the module's application), ``path:PATH#NAME`` (the file at PATH, any of the
    language's suffixes), ``func:PKG#NAME`` (the router the function NAME of the package PKG builds, Go)."""
    line: int = 0


@dataclass(kw_only=True, slots=True)
class RequestDecl:
    """An HTTP request a client makes (``fetch``, axios, requests, ``http.Get``, ``RestTemplate``, ...)."""

    method: str
    """GET, POST, ..."""
    url: str
    """The URL as far as the code decides it, normalized: a path (``/users/{}``) or ``scheme://host/path``."""
    base: str | None = None
    """A base joined in front of ``url`` that another file declares: ``module:MOD#NAME``, ``path:PATH#NAME``
    or ``pkg:PKG#NAME`` (a constant of ``HttpFacts.constants`` there; Go: of any file of the package); None:
    ``url`` is whole."""
    scope: tuple[str, int, int] | None = None
    """The calling function or method: (name, first line, last line); None: the module."""
    line: int = 0
    column: int = 0
    """Where the call stands (the called name, as for CALLS)."""


@dataclass(kw_only=True, slots=True)
class HttpFacts:
    """The HTTP routes, routers, mounts and requests of one file, and its constants other files' requests
    join."""

    routes: list[RouteDecl] = field(default_factory=list)
    routers: dict[str, str] = field(default_factory=dict)
    """Local router name -> its own prefix (``APIRouter(prefix="/users")``; ``""`` when it has none)."""
    mounted_only: list[str] = field(default_factory=list)
    """Routers that serve nothing until mounted (``APIRouter``, ``Blueprint``, Express ``Router()``): when no
    mount of the tree is known, their routes are left out (their prefix is not known), where an application's
    routes stand at the root."""
    mounts: list[MountDecl] = field(default_factory=list)
    requests: list[RequestDecl] = field(default_factory=list)
    constants: dict[str, str] = field(default_factory=dict)
    """Module-level names bound to a URL or path string (normalized), for other files' requests to join."""

    def __bool__(self) -> bool:
        return bool(self.routes or self.mounts or self.requests or self.constants or self.routers)


@dataclass(kw_only=True, slots=True)
class FileFacts:
    """Everything one analyzer found in one file."""

    path: str
    """Path relative to the mapped root, with '/' separators."""
    language: Language
    module: str
    """Dotted module name (Python) or ``package.FileStem`` (Java)."""
    package: str
    """Python: the module's dotted path; Java: the declared package ('' for the default package)."""
    imports: list[ImportRef] = field(default_factory=list)
    types: list[TypeDecl] = field(default_factory=list)
    callables: list[CallableDecl] = field(default_factory=list)
    lines: int = 0
    sha: str | None = None
    """The content hash of the file (``cache.content_hash``), kept on its Module node."""
    error: str | None = None
    """Set when the file could not be parsed (its facts are then empty or partial)."""
    error_line: int | None = None
    """The line of the (first) syntax error, when ``error`` is set and the parser knows it."""
    exports: dict[str, str] = field(default_factory=dict)
    """Languages whose modules export names (TypeScript/JavaScript): exported name -> the local binding it
    exports (``export default class A``: ``default`` -> ``A``; ``export {a as b}``: ``b`` -> ``a``)."""
    config: dict[str, Any] | None = None
    """Set on a configuration file its language's linking reads (``tsconfig.json``, ``package.json``,
    ``go.mod``): what it says, as that language's analyzer reads it. Such a file is no module of its own."""
    http: HttpFacts | None = None
    """The file's HTTP routes and requests (None: it has none), joined across files by
    ``igg.codemap.routes``."""
    flow: list[Any] | None = None
    """Python: the file's scopes and their value flows (``igg.codemap.python.flow.Scope``), which its linker
    resolves calls with across files (``igg.codemap.python.calls``); kept by ``without_bodies``."""
    names: str | None = None
    """Every identifier the facts mention, one per line between newlines (``mentioned_names``): set on facts
    kept in the cache, so that ``--update`` can tell which files a changed declaration may concern."""


def without_bodies(f: FileFacts) -> FileFacts:
    """``f`` without what its callables' bodies call and instantiate (their SQL tables stay): what linking
    another file reads of it; ``f`` itself when its bodies call and instantiate nothing."""
    if not any(c.calls or c.instantiates for c in f.callables):
        return f
    return replace(f, callables=[replace(c, calls=[], instantiates=[]) for c in f.callables])


_NOT_NAMES = frozenset(
    {"line", "column", "body_site", "lines", "sha", "error", "error_line", "names", "statement", "path"}
)


def mentioned_names(f: FileFacts) -> str:
    """Each identifier (dotted names split at their dots) in any name, type, target, receiver or expression
    of ``f``, sorted, as ``"\na\nb\n"``: a name is mentioned when ``"\n" + name + "\n"`` is in it. Linking a
    file looks up other files' declarations only by names the file itself writes (or through the types those
    reach), which is what lets ``--update`` link again only the files that mention a changed declaration.

    The facts are walked a level at a time: the items of every list, tuple and dict of a level are gathered
    in one C-level pass (``chain.from_iterable``), and a slotted object's fields by one getter per class:
    about half the CPU of the plain walk, which cost a fifth to a third of a file's analysis
    (``tests/unit/test_facts_names.py`` pins the two together on every fixture tree)."""
    strings: list[str] = []
    level: list[Any] = [f]
    getters = _FIELD_GETTERS
    while level:
        sequences: list[Any] = []
        fields: list[Any] = []
        for x in level:
            cls = x.__class__
            if cls is str:
                strings.append(x)
            elif cls is list or cls is tuple:
                sequences.append(x)
            elif cls is dict:
                sequences.append(x)
                sequences.append(x.values())
            elif x is None or cls is int or cls is bool or cls is float:
                continue
            else:
                get = getters.get(cls)
                if get is None:
                    if not hasattr(cls, "__slots__"):
                        continue
                    get = getters[cls] = _fields_of(cls)
                fields.extend(get(x))
        level = fields
        level.extend(chain.from_iterable(sequences))
    found = {s for s in strings if "." not in s}
    for dotted in {s for s in strings if "." in s}:
        found.update(dotted.split("."))
    found.discard("")
    return "\n" + "\n".join(sorted(found)) + "\n"


_FIELD_GETTERS: dict[type, Callable[[Any], tuple[Any, ...]]] = {}
"""Per slotted class: its fields that may hold names, as a tuple (``mentioned_names``)."""


def _fields_of(cls: type) -> Callable[[Any], tuple[Any, ...]]:
    """A getter of the fields of ``cls`` (its own ``__slots__``) that may hold names, as a tuple."""
    slots = [s for s in getattr(cls, "__slots__", ()) if s not in _NOT_NAMES]
    if len(slots) > 1:
        return attrgetter(*slots)
    if slots:
        one = attrgetter(slots[0])
        return lambda x: (one(x),)
    return lambda x: ()
