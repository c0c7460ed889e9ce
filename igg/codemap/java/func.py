"""What the JDK says about lambdas, for typing a lambda's parameters without its sources.

A lambda without declared parameter types takes them from the functional interface it is given to. When
that is a ``java.util.function`` type (or ``Comparator``) written with type arguments of the tree
(``Predicate<Filter>``), the parameters are those arguments. When the lambda goes to a method of a JDK
collection, stream or ``Optional`` (``filters.stream().allMatch(f -> ..)``), its parameter is the element
type the receiver was declared with (``List<Filter> filters``). Only the methods listed here are known;
any other leaves the parameter unknown, so that no call is guessed.
"""

from __future__ import annotations

FUNCTION_PARAMS: dict[str, tuple[int, ...]] = {
    "Consumer": (0,),
    "Predicate": (0,),
    "Function": (0,),
    "UnaryOperator": (0,),
    "ToIntFunction": (0,),
    "ToLongFunction": (0,),
    "ToDoubleFunction": (0,),
    "ObjIntConsumer": (0,),
    "ObjLongConsumer": (0,),
    "ObjDoubleConsumer": (0,),
    "BiConsumer": (0, 1),
    "BiFunction": (0, 1),
    "BiPredicate": (0, 1),
    "ToIntBiFunction": (0, 1),
    "ToLongBiFunction": (0, 1),
    "ToDoubleBiFunction": (0, 1),
    "BinaryOperator": (0, 0),
    "Comparator": (0, 0),
}
"""Functional interface -> for each lambda parameter, the index of the type argument that is its type."""

CONTAINERS = frozenset(
    {
        "Iterable",
        "Collection",
        "List",
        "Set",
        "SortedSet",
        "NavigableSet",
        "Queue",
        "Deque",
        "ArrayList",
        "LinkedList",
        "HashSet",
        "LinkedHashSet",
        "TreeSet",
        "ArrayDeque",
        "PriorityQueue",
        "Vector",
        "CopyOnWriteArrayList",
        "Stream",
        "Optional",
        "Iterator",
        "ListIterator",
    }
)
"""JDK types of one element type whose methods below pass that element to a lambda."""

ELEMENT_LAMBDAS = frozenset(
    {
        "forEach",
        "forEachOrdered",
        "removeIf",
        "allMatch",
        "anyMatch",
        "noneMatch",
        "filter",
        "map",
        "flatMap",
        "peek",
        "mapToInt",
        "mapToLong",
        "mapToDouble",
        "takeWhile",
        "dropWhile",
        "ifPresent",
    }
)
"""Methods of a container whose first argument is a lambda of one parameter, the element."""

COMPARING = frozenset({"sorted", "min", "max"})
"""Methods of a stream whose first argument is a Comparator: both its parameters are elements."""

SAME_ELEMENTS = frozenset(
    {
        "stream",
        "parallelStream",
        "filter",
        "sorted",
        "distinct",
        "limit",
        "skip",
        "peek",
        "takeWhile",
        "dropWhile",
        "iterator",
        "listIterator",
        "descendingIterator",
        "subList",
        "findFirst",
        "findAny",
        "min",
        "max",
        "toList",
    }
)
"""Methods of a container that return a container (stream, iterator, list, Optional) of the same elements."""

ELEMENT_RETURNS = frozenset(
    {
        "get",
        "getFirst",
        "getLast",
        "peekFirst",
        "peekLast",
        "poll",
        "pollFirst",
        "pollLast",
        "pop",
        "element",
        "first",
        "last",
        "next",
        "previous",
        "orElse",
        "orElseGet",
        "orElseThrow",
        "removeFirst",
        "removeLast",
    }
)
"""Methods of a container that return one of its elements (``List.get(int)``, ``Optional.get()``,
``Iterator.next()``)."""

IDENTITY = {"java.util.Objects": frozenset({"requireNonNull"})}
"""JDK static methods (by class) whose result is their first argument, of its static type
(``Objects.requireNonNull(action, "action").asConsumer()`` is ``action.asConsumer()``)."""

OBJECT_METHODS = frozenset({"equals", "hashCode", "toString"})
"""Abstract methods an interface may redeclare from Object without counting as its functional method."""


def lambda_element(method: str, lambda_param: int) -> bool:
    """Whether parameter ``lambda_param`` of a lambda given first to container method ``method`` is an
    element."""
    return (method in ELEMENT_LAMBDAS and lambda_param == 0) or (method in COMPARING and lambda_param < 2)


def split_top(text: str) -> list[str]:
    """``A<B, C>, D`` -> ``["A<B, C>", "D"]``: split at the commas outside angle brackets."""
    out, depth, current = [], 0, ""
    for ch in text:
        depth += (ch == "<") - (ch == ">")
        if ch == "," and depth == 0:
            out.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        out.append(current.strip())
    return out


def written_params(signature: str) -> list[str]:
    """The parameter types of ``name(T1, T2<A, B>)`` as written."""
    inner = signature.partition("(")[2].rpartition(")")[0]
    return split_top(inner)


def type_arguments(written: str) -> list[str]:
    """The type arguments of ``F<A, ? super B>`` (``["A", "B"]``: a wildcard's bound is the parameter's type,
    JLS 9.9); ``?`` alone is None's place, an empty string."""
    if "<" not in written:
        return []
    inner = written.partition("<")[2].rpartition(">")[0]
    args = []
    for arg in split_top(inner):
        arg = arg.replace(" ", "")
        args.append(arg.removeprefix("?super").removeprefix("?extends").removeprefix("?"))
    return args
