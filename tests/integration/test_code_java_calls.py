"""Java maps that agree with the compiler: types, supertypes and class-level calls against javac + javap.

Four independently written trees (``fixtures/code/java_calls``: an order depot; ``java_calls2``: a ledger;
``java_calls3``: a pipeline of filters; ``java_calls4``: builders, holders, sinks and functional items, with a
``build`` package) hold the cases static analysis used to miss: calls in field initialisers, anonymous classes
assigned to fields, lambdas, enum-constant bodies, static and instance initialiser blocks; receivers typed by
for-each variables, casts, pattern variables, static fields, inherited and outer fields, ``Outer.this``;
static (single and wildcard) imports; chained calls through return types (generics erased to their bound);
overloads that need subtyping, boxing or widening; ambiguous overloads kept as a class-level edge; an inner
class whose overloads hide the outer class's method (no fall-through); implicit ``super()`` calls; annotation
elements; records; local classes; member types inherited from a supertype's supertype and used by their simple
name.

The oracle is the compiler: ``javac`` compiles each tree and ``javap -c -p -s`` lists the types, their
supertypes and every invoke instruction (``tests/javaoracle.py``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from igg.codemap.link import CodeModel, link
from igg.codemap.walk import walk
from igg.mapping.prepare import parse_all
from tests.codegraph import CODE_FIXTURES
from tests.javaoracle import compile_and_read, f1, igg_truth, javac_missing

TREES = ["java_calls", "java_calls2", "java_calls3", "java_calls4", "java"]

pytestmark = pytest.mark.skipif(
    javac_missing(), reason="javac is missing (scripts/test installs a JDK with apt-get when it can)"
)


def model_of(root: Path) -> CodeModel:
    facts, _ = parse_all(walk([root]).files, jobs=1)
    return link(facts)


@pytest.mark.parametrize("tree", TREES)
def test_types_supertypes_and_class_level_calls_agree_with_javac(tmp_path: Path, tree: str) -> None:
    truth = compile_and_read(CODE_FIXTURES / tree, tmp_path)  # each tree compiled once, by its own test
    ours = igg_truth(model_of(CODE_FIXTURES / tree))
    types = f1(set(truth.types), set(ours.types))
    assert types["recall"] >= 0.99, types
    supers = f1(truth.supertypes, ours.supertypes)
    assert supers["f1"] >= 0.98, supers
    calls = f1(truth.calls, ours.calls)
    assert calls["f1"] >= 0.90, calls
    assert calls["precision"] == 1.0, calls  # a call left out rather than guessed
    assert len(truth.calls) >= 9


def _calls(model: CodeModel) -> set[str]:
    def name(key: str) -> str:
        p = model.symbols[key].properties
        return f"{p['owner'].rpartition('.')[2]}#{p['signature']}" if "owner" in p else p["name"]

    return {
        f"{name(r.source)} -> {name(r.target)}"
        for f in model.files
        for r in f.relations
        if r.label == "CALLS"
    }


def test_the_bodies_and_receivers_that_hold_calls_resolve_to_the_method() -> None:
    calls = _calls(model_of(CODE_FIXTURES / "java_calls"))
    expected = {
        # a field initialiser and an anonymous class assigned to a field (instance initialisation: <init>)
        "OrderController#<init>() -> Strings#join(String, String)",
        "OrderController#<init>() -> Strings2#shout(String)",  # a lambda in a field initialiser
        # static initialiser block and static field initialisers (<clinit>); enum-constant bodies
        "MemoryOrders#<clinit>() -> MemoryOrders#seed()",
        "Status#<clinit>() -> Strings#trim(String)",
        "Order#<init>() -> Clock#system()",
        "Order#<init>() -> Clock#now()",  # a field typed by another field's declaration
        # for-each variable, cast, Outer.this, an outer class's field, an inherited field
        "Order#total() -> Item#getPrice()",
        "OrderController#checkout(long) -> Entity#describe()",
        "Line#owner() -> Order#describe()",
        "Line#age() -> Clock#elapsed(long)",
        "BaseController#log(String) -> Clock#now()",
        # static imports; chained calls through declared return types; generics erased to the bound
        "OrderController#quote(String, long) -> Strings#blank(CharSequence)",
        "OrderController#checkout(long) -> Status#label()",
        "OrderController#checkout(long) -> Repository#require(long)",
        "Line#total() -> Money#times(int)",
        "Line#total() -> Money#plus(Money)",
        "OrderController#quote(String, long) -> Builder#build()",
        "OrderController#quote(String, long) -> Builder#add(Item)",
        "OrderController#quote(String, long) -> Builder#add(String, long)",
        # overloads by subtyping: count(Order) is more specific than count(Entity) and count(Object)
        "OrderController#quote(String, long) -> MemoryOrders#count(Order)",
        # this(...) and super(...), and the implicit super() of a constructor
        "OrderController#OrderController() -> OrderController#OrderController(OrderRepository)",
        "OrderController#OrderController(OrderRepository) -> BaseController#BaseController(String)",
        "Item#Item(String) -> Item#Item(String, Money)",
    }
    assert expected <= calls, sorted(expected - calls)
    # Inner's own fmt overloads hide OrderController.fmt(long): no call may fall through to it
    assert not any(c.endswith("OrderController#fmt(long)") for c in calls)


def test_annotation_elements_are_methods() -> None:
    model = model_of(CODE_FIXTURES / "java_calls")
    elements = sorted(
        s.properties["signature"]
        for s in model.symbols.values()
        if s.label == "Method" and s.properties["owner"] == "org.depot.util.Audit"
    )
    assert elements == ["level()", "value()"]


def test_an_ambiguous_call_within_one_type_is_kept_at_the_class_level() -> None:
    model = model_of(CODE_FIXTURES / "java_calls2")
    class_calls = {
        (model.symbols[r.source].properties["qualified_name"], model.symbols[r.target].properties["name"])
        for f in model.files
        for r in f.relations
        if r.label == "CALLS" and r.source.startswith("type:") and r.target.startswith("type:")
    }
    # p.print(accounts.get("x")): Map.get's type is not in the tree, so print(...) cannot be chosen
    assert ("com.ledger.engine.Journal", "Printer") in class_calls
    calls = _calls(model)
    assert "Journal#report() -> Printer#print(Account)" in calls
    assert "Printer#print(Amount) -> Printer#print(String)" in calls  # a string concatenation
    assert "Journal#report() -> Printer#print(Object)" in calls  # Object any
    assert "Journal#interest(Account) -> SavingsAccount#accrue()" in calls  # a pattern variable


SHADOWING = {
    "app/Streams.java": (
        "package app;\npublic class Streams {\n    public static int of(int x) { return x; }\n}\n"
    ),
    "app/stream/Streams.java": (
        "package app.stream;\npublic class Streams {\n    public static int of(int x) { return x + 1; }\n}\n"
    ),
    "app/Lists.java": (
        "package app;\nimport app.stream.Streams;\npublic class Lists {\n"
        "    int first() { return Streams.of(1); }\n}\n"
    ),
    "app/Sets.java": "package app;\npublic class Sets {\n    int first() { return Streams.of(2); }\n}\n",
    "app/Maps.java": (
        "package app;\nimport app.stream.*;\npublic class Maps {\n"
        "    int first() { return Streams.of(3); }\n}\n"
    ),
}


def test_a_single_type_import_shadows_a_type_of_the_same_package(tmp_path: Path) -> None:
    """JLS 6.4.1: ``import app.stream.Streams`` in package ``app`` hides ``app.Streams``; without the import
    (or with only an on-demand one) the package's own ``Streams`` is meant. Judged by javac."""
    for rel, text in SHADOWING.items():
        (tmp_path / "src" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "src" / rel).write_text(text)
    truth = compile_and_read(tmp_path / "src", tmp_path / "classes")
    ours = igg_truth(model_of(tmp_path / "src"))
    assert truth.calls == {
        ("app.Lists", "app.stream.Streams"),
        ("app.Sets", "app.Streams"),
        ("app.Maps", "app.Streams"),
    }
    assert ours.calls == truth.calls


EXACT_OVERLOAD = {
    "app/Base.java": (
        "package app;\nimport java.lang.reflect.Type;\npublic class Base {\n"
        "    public static int get(Type t) { return 0; }\n}\n"
    ),
    "app/Name.java": (
        "package app;\npublic class Name extends Base {\n"
        "    public static int get(Class<?> c) { return 1; }\n"
        "    public static int get(CharSequence s) { return 2; }\n}\n"
    ),
    "app/User.java": (
        "package app;\npublic class User {\n    int use(Class<?> c) { return Name.get(c); }\n}\n"
    ),
}


def test_an_overload_that_takes_exactly_the_argument_types_wins_over_inherited_ones(tmp_path: Path) -> None:
    """``Name.get(c)`` with ``c`` a ``Class<?>``: the candidates include ``Base.get(Type)`` (static methods
    are inherited) and ``get(CharSequence)``, whose relation to ``Class`` lies outside the tree; the overload
    that takes exactly a ``Class`` is the one javac picks."""
    for rel, text in EXACT_OVERLOAD.items():
        (tmp_path / "src" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "src" / rel).write_text(text)
    truth = compile_and_read(tmp_path / "src", tmp_path / "classes")
    model = model_of(tmp_path / "src")
    assert truth.calls == {("app.User", "app.Name"), ("app.Name", "app.Base")}  # and the implicit super()
    assert igg_truth(model).calls == truth.calls
    assert "User#use(Class<?>) -> Name#get(Class<?>)" in _calls(model)


ENUM_SWITCH = {
    "app/Mode.java": "package app;\npublic enum Mode { FAST, SAFE }\n",
    "app/Code.java": 'package app;\npublic class Code { public static final String A = "a"; }\n',
    "app/Engine.java": (
        "package app;\npublic class Engine {\n"
        "    int speed(Mode mode) {\n        switch (mode) {\n            case FAST: return 2;\n"
        "            default: return 1;\n        }\n    }\n"
        '    int label(String s) {\n        return switch (s) { case "a" -> 1; default -> 0; };\n    }\n}\n'
    ),
    "app/Plan.java": (
        "package app;\npublic class Plan {\n"
        "    int cost(Mode m) { return switch (m) { case FAST -> 3; case SAFE -> 1; }; }\n}\n"
    ),
}


def test_a_switch_over_an_enum_of_the_tree_is_a_call_of_that_enum(tmp_path: Path) -> None:
    """javac compiles a switch over an enum into calls of its ``ordinal()`` (statement and expression forms);
    a switch over a String calls only String's methods (outside the tree)."""
    for rel, text in ENUM_SWITCH.items():
        (tmp_path / "src" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "src" / rel).write_text(text)
    truth = compile_and_read(tmp_path / "src", tmp_path / "classes")
    assert truth.calls == {("app.Engine", "app.Mode"), ("app.Plan", "app.Mode")}
    assert igg_truth(model_of(tmp_path / "src")).calls == truth.calls


def test_member_types_inherited_from_any_supertype_are_known_by_their_simple_name() -> None:
    """JLS 8.5: a class inherits the member types of all its supertypes. ``Filter extends Stage extends
    Component implements Options``: ``Feature`` (declared in ``Options``) and ``Limits`` (in ``Component``)
    are in scope in ``Filter`` by their simple names."""
    calls = _calls(model_of(CODE_FIXTURES / "java_calls3"))
    assert "Filter#strict() -> Feature#getMask()" in calls
    assert "Filter#limit() -> Limits#max()" in calls


def test_an_enums_implicit_values_and_value_of_are_class_level_calls_that_know_their_type() -> None:
    """``values()`` and ``valueOf(String)`` have no declaration in the source; javac calls them on the enum
    (``invokestatic Level.values``), also unqualified from a type nested in the enum. Their results
    (``Level[]``, ``Level``) type the next call of a chain: ``rank()``, a default method of the enum's
    interface."""
    calls = _calls(model_of(CODE_FIXTURES / "java_calls3"))
    assert "Level.Lookup -> Level" in calls
    assert "Ranks#rankOf(String) -> Ranked#rank()" in calls
    assert "Ranks#firstRank() -> Ranked#rank()" in calls


def test_a_self_typed_builder_chain_keeps_the_concrete_builder_type() -> None:
    """``setName`` and ``setSize`` are declared in ``AbstractBuilder<B extends AbstractBuilder<B>>`` and
    return ``B``; on a ``PipeBuilder`` (which binds ``B`` to itself) they return a ``PipeBuilder``, whose
    ``get()`` javac calls, not the erased bound ``AbstractBuilder``."""
    model = model_of(CODE_FIXTURES / "java_calls3")
    calls = _calls(model)
    assert "Pipes#pipe() -> AbstractBuilder#setSize(int)" in calls
    assert "Pipes#pipe() -> PipeBuilder#get()" in calls
    assert "Pipes#pipe() -> Pipe#name()" in calls
    # OddBuilder binds B to PipeBuilder, not itself: b.setName("o") is no OddBuilder (the erased bound is
    # kept)
    assert ("net.flow.app.Odds", "net.flow.forge.OddBuilder") not in igg_truth(model).calls


def test_a_lambda_or_method_reference_argument_takes_only_a_functional_interface_parameter() -> None:
    """A lambda or method reference fits an interface parameter, never a class's: ``Tasks.forAll(f -> { },
    filters)`` is ``Tasks.forAll(Task, List)``, not the inherited ``Naming.forAll(String, List)`` (an overload
    of another type: without that rule no call at all), and ``Tasks.repeat(Filter::limit, 2)`` is
    ``repeat(Task, int)``, not ``repeat(Filter, int)``."""
    calls = _calls(model_of(CODE_FIXTURES / "java_calls3"))
    assert "Runner#runAll() -> Tasks#forAll(Task, List<Filter>)" in calls
    assert "Runner#printAll() -> Tasks#forAll(Task, List<Filter>)" in calls
    assert "Runner#twice() -> Tasks#repeat(Task, int)" in calls
    assert not any(c.startswith("Runner#") and ("Naming#" in c or "repeat(Filter" in c) for c in calls)


def test_a_lambdas_parameters_are_typed_by_the_functional_interface_it_is_given_to() -> None:
    """``f -> f.strict()``: ``f`` is what the called method's functional parameter takes — the single
    abstract method's parameter of an in-tree interface (``Task.run(Filter)``), the type argument of a
    ``java.util.function`` type (``Predicate<Filter>``), or the element of a JDK collection or stream declared
    with one (``List<Filter>.stream().allMatch``, ``removeIf``). A lambda parameter hides a field of its name
    (``Names``: ``f`` is a String, not the field ``Filter f``)."""
    model = model_of(CODE_FIXTURES / "java_calls3")
    calls = _calls(model)
    assert "Loops#visit(List<Filter>) -> Filter#limit()" in calls
    assert "Picks#strictAny() -> Filter#strict()" in calls
    assert "Checks#all(String) -> Filter#accept(String)" in calls
    assert "Checks#dropStrict(List<Filter>) -> Filter#strict()" in calls
    assert ("net.flow.app.Names", "net.flow.core.Filter") not in igg_truth(model).calls


def test_a_method_returning_a_type_parameter_returns_what_the_receivers_supertypes_bind_it_to() -> None:
    """``B setDepth(int)`` of ``AbstractBuilder<T, B extends AbstractSupplier<T, B>>`` (B bounded by another
    type than its owner) on a ``Builder extends AbstractBuilder<Visitor, Builder>`` is a ``Builder``, so
    ``get()`` is Builder's (javac: invokevirtual Visitor$Builder.get), not the erased bound's abstract one; a
    ``T get()`` of ``Holder<T>`` is a ``Store`` on a ``StoreHolder extends Holder<Store>``, from outside and
    from within."""
    model = model_of(CODE_FIXTURES / "java_calls4")
    calls = _calls(model)
    assert "Walks#walk() -> Builder#get()" in calls
    assert "Walks#walk() -> Visitor#depth()" in calls
    assert "Walks#store(StoreHolder) -> Store#open()" in calls
    assert "StoreHolder#name() -> Store#open()" in calls
    assert "Builder#deep() -> AbstractBuilder#setDepth(int)" in calls
    assert ("org.kit.app.Walks", "org.kit.build.AbstractSupplier") not in igg_truth(model).calls


def test_a_lambda_that_is_no_calls_argument_is_typed_by_what_it_is_declared_cast_or_returned_as() -> None:
    """``Predicate<Item> p = i -> ..`` (a local), a ``Comparator<Item>`` field's initialiser, ``return i ->
    ..`` from a method returning ``Predicate<Item>``, ``(Predicate<Item>) i -> ..``; and a lambda given to an
    in-tree functional interface with a type parameter (``Action<Item>``: ``accept(T)`` takes an Item;
    ``ItemAction extends Action<Item>`` binds it through its supertype)."""
    calls = _calls(model_of(CODE_FIXTURES / "java_calls4"))
    assert "Items#<clinit>() -> Item#key()" in calls
    assert "Items#any(String) -> Item#key()" in calls
    assert "Items#okay() -> Item#ok()" in calls
    assert "Items#cast() -> Item#ok()" in calls
    assert "Items#touch() -> Item#key()" in calls
    assert "Items#touch() -> Item#ok()" in calls


def test_overloads_the_arguments_cannot_tell_apart_type_a_chain_when_they_return_one_type() -> None:
    """``setName(Paths.get("a"))`` (an argument of an outside type) is Builder's ``setName(Path)`` or the
    inherited ``B setName(String)``: either returns a Builder, so ``.get()`` is Builder's."""
    calls = _calls(model_of(CODE_FIXTURES / "java_calls4"))
    assert "Walks#named() -> Builder#get()" in calls
    assert "Walks#named() -> Visitor#depth()" in calls


def test_an_array_type_argument_does_not_make_the_declared_type_an_array() -> None:
    """``Action<byte[]> sink``: ``sink.accept(..)`` is a call of Action (javac), ``sink`` no ``Action[]``."""
    calls = _calls(model_of(CODE_FIXTURES / "java_calls4"))
    assert "Items#bytes(Action<byte[]>) -> Action#accept(T)" in calls


def test_an_interfaces_static_methods_are_not_inherited() -> None:
    """``IterSource.of(names.iterator())``: IterSource implements Source, whose static ``of(Iterable)`` and
    ``of(Iterator)`` it does not inherit (JLS 8.4.8), so its own ``of(Iterator)`` is the only candidate."""
    calls = _calls(model_of(CODE_FIXTURES / "java_calls4"))
    assert "Sources#make(List<String>) -> IterSource#of(Iterator<E>)" in calls
    assert not any(c.startswith("Sources#") and "-> Source#of" in c for c in calls)


def test_try_with_resources_calls_close_on_each_resource() -> None:
    """``try (BufferedSink sink = ..)`` and ``try (other)`` call ``close()`` (JLS 14.20.3), Sink's
    (inherited)."""
    model = model_of(CODE_FIXTURES / "java_calls4")
    assert "Walks#sink(Sink) -> Sink#close()" in _calls(model)
    assert ("org.kit.app.Walks", "org.kit.build.Sink") in igg_truth(model).calls


def test_objects_require_non_null_is_its_argument() -> None:
    """``Objects.requireNonNull(item, "item").ok()`` (imported type, static import, full name) is
    ``item.ok()``."""
    calls = _calls(model_of(CODE_FIXTURES / "java_calls4"))
    assert "Checks#imported(Item) -> Item#ok()" in calls
    assert "Checks#statically(Item) -> Item#key()" in calls
    assert "Checks#full(Item) -> Item#ok()" in calls


def test_an_element_of_a_jdk_container_has_the_containers_element_type() -> None:
    """``items.get(0)``, ``items.iterator().next()`` of a ``List<Item>`` field, ``first().get()`` of an
    in-tree method returning ``Optional<Item>``, ``all().forEach(i -> ..)`` of one returning ``List<Item>``:
    Items."""
    calls = _calls(model_of(CODE_FIXTURES / "java_calls4"))
    assert "Shelf#top() -> Item#ok()" in calls
    assert "Shelf#keys() -> Item#key()" in calls
    assert "Shelf#walk() -> Item#key()" in calls
    assert "Shelf#firstOk() -> Item#ok()" in calls


OUTSIDE_OVERLOAD = {
    "app/ReaderException.java": (
        "package app;\npublic abstract class ReaderException extends Exception {\n"
        "    protected static final StackTraceElement[] NO_TRACE = new StackTraceElement[0];\n"
        "    protected static boolean traces;\n"
        "    public static void setStackTrace(boolean enabled) { traces = enabled; }\n}\n"
    ),
    "app/NotFound.java": (
        "package app;\npublic final class NotFound extends ReaderException {\n"
        "    static final NotFound INSTANCE = new NotFound();\n"
        "    static { INSTANCE.setStackTrace(NO_TRACE); }\n}\n"
    ),
    "app/Reader.java": (
        "package app;\npublic class Reader {\n"
        "    void quiet(NotFound e) { e.setStackTrace(new StackTraceElement[0]); }\n"
        "    void loud() { NotFound.setStackTrace(true); }\n}\n"
    ),
}


def test_a_call_the_one_in_tree_overload_cannot_take_is_of_the_jdks_inherited_one(tmp_path: Path) -> None:
    """zxing's ``INSTANCE.setStackTrace(NO_TRACE)``: the tree declares only the static
    ``setStackTrace(boolean)``, so an array argument calls ``Throwable.setStackTrace(StackTraceElement[])``,
    outside the tree; a boolean one calls the tree's."""
    for rel, text in OUTSIDE_OVERLOAD.items():
        (tmp_path / "src" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "src" / rel).write_text(text)
    truth = compile_and_read(tmp_path / "src", tmp_path / "classes")
    model = model_of(tmp_path / "src")
    assert (
        "app.Reader",
        "app.ReaderException",
    ) in truth.calls  # loud() only: javap names the descriptor called
    assert igg_truth(model).calls == truth.calls
    calls = _calls(model)
    assert "Reader#loud() -> ReaderException#setStackTrace(boolean)" in calls
    assert not any(c.startswith(("Reader#quiet", "NotFound#")) and "setStackTrace" in c for c in calls), calls


LOCAL_CLASSES = {
    "app/Tool.java": "package app;\npublic class Tool {\n    public static int use(int n) { return n; }\n}\n",
    "app/Outer.java": (
        "package app;\npublic class Outer {\n    int base() { return 1; }\n    int run(int n) {\n       "
        " class Counter {\n            int count() { return Tool.use(n) + base(); }\n        }\n       "
        " record Pair(int a, int b) { int sum() { return Tool.use(a + b); } }\n        Runnable r = new"
        " Runnable() {\n            public void run() { class Hidden { int go() { return Tool.use(0); } } new"
        " Hidden().go(); }\n        };\n        r.run();\n        Counter c = new Counter();\n        return"
        " c.count() + new Pair(1, 2).sum();\n    }\n}\n"
    ),
}


def test_local_classes_are_types_named_by_their_encloser_as_javac_names_them(tmp_path: Path) -> None:
    """``Outer$1Counter`` (and a local record) are types ``Outer.Counter`` with their own calls; a class local
    to an anonymous class's method (``Outer$1$1Hidden``) belongs, as the anonymous class does, to
    ``Outer``."""
    for rel, text in LOCAL_CLASSES.items():
        (tmp_path / "src" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "src" / rel).write_text(text)
    truth = compile_and_read(tmp_path / "src", tmp_path / "classes")
    model = model_of(tmp_path / "src")
    ours = igg_truth(model)
    assert {"app.Outer.Counter", "app.Outer.Pair"} <= set(
        truth.types
    ) and "app.Outer.Hidden" not in truth.types
    assert set(ours.types) == set(truth.types)
    assert {
        ("app.Outer.Counter", "app.Tool"),
        ("app.Outer.Counter", "app.Outer"),
        ("app.Outer", "app.Outer.Counter"),
        ("app.Outer.Pair", "app.Tool"),
        ("app.Outer", "app.Tool"),
    } <= truth.calls
    assert ours.calls == truth.calls and ours.supertypes == truth.supertypes
    assert {
        "Counter#count() -> Tool#use(int)",
        "Counter#count() -> Outer#base()",
        "Outer#run(int) -> Counter#count()",
    } <= _calls(model)
