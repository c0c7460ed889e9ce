"""Reading the rules file: ``igg.toml`` (a ``rules`` array), or ``pyproject.toml``'s ``[tool.igg]``.

Every problem is reported at once as a ``RequestInvalid`` (exit 2) whose entries name the rule (its position
and name) and the field, with what would pass: ``rules[2] 'util-not-db': field 'from': required``. Beyond the
models' shape, rule names must be unique, and the edge types a rule reads must exist in the graph's schema
when one is given (a typo such as ``IMPORT`` would otherwise match nothing and pass for ever).
"""

from __future__ import annotations

import tomllib
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from igg.errors import Problem, RequestInvalid
from igg.models.rules import RULE_ADAPTER, RULE_KINDS, Rule

MAX_DEPTH = 8
"""Deepest nesting of arrays and tables in a rule (the deepest a valid rule goes is 4: a list of selector
tables holding a list of types); deeper is refused before it is read, not left to overflow the stack."""

RULES_FILES = ("igg.toml", "pyproject.toml")
"""Where ``find_rules_file`` looks, in order, in each folder."""


def find_rules_file(folders: Sequence[Path]) -> Path | None:
    """The first ``igg.toml``, or ``pyproject.toml`` with a ``[tool.igg]`` table, in ``folders`` (in
    order)."""
    for folder in folders:
        for name in RULES_FILES:
            path = folder / name
            if not path.is_file():
                continue
            if name == "igg.toml" or b"[tool.igg" in path.read_bytes():
                return path
    return None


def load_rules(path: Path, edge_types: Collection[str] | None = None) -> list[Rule]:
    """The rules of the file at ``path`` (see the module doc); ``edge_types``: the schema's, to check
    against."""
    source = str(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise RequestInvalid(
            [Problem("--rules", f"cannot read {path}: {exc.strerror or exc}")], source="the command line"
        ) from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise RequestInvalid(
            [Problem("(file)", f"not valid TOML: {exc}")], source=f"rules file {source}"
        ) from None
    except RecursionError:  # the TOML reader recurses per nested array
        raise RequestInvalid(
            [
                Problem(
                    "(file)", f"arrays or tables nested too deeply (a rule nests at most {MAX_DEPTH} levels)"
                )
            ],
            source=f"rules file {source}",
        ) from None
    if path.name == "pyproject.toml":
        data = data.get("tool", {}).get("igg", {})
        where = "tool.igg."
    else:
        where = ""
    return parse_rules(data, source=f"rules file {source}", prefix=where, edge_types=edge_types)


def parse_rules(
    data: Any, *, source: str = "rules", prefix: str = "", edge_types: Collection[str] | None = None
) -> list[Rule]:
    """Rules from a decoded document ``{"rules": [...]}``; raises ``RequestInvalid`` naming each problem."""
    if not isinstance(data, dict):
        raise RequestInvalid(
            [Problem(prefix.rstrip(".") or "(file)", "expected a table with a 'rules' array")], source=source
        )
    unknown = sorted(set(data) - {"rules"})
    problems = [
        Problem(f"{prefix}{k}", "unknown key: the rules file holds a 'rules' array ([[rules]] tables)")
        for k in unknown
    ]
    raw = data.get("rules")
    if not isinstance(raw, list) or not raw:
        problems.append(
            Problem(
                f"{prefix}rules",
                (
                    "no rules: add [[rules]] tables (name, kind and its fields; see docs/rules.md)"
                    if raw is None or raw == []
                    else "must be an array of tables ([[rules]])"
                ),
            )
        )
        raise RequestInvalid(problems, source=source)
    rules: list[Rule] = []
    names: dict[str, int] = {}
    for index, item in enumerate(raw):
        if _too_deep(item):
            problems.append(
                Problem(
                    _where(prefix, index, item.get("name") if isinstance(item, dict) else None),
                    f"arrays or tables nested more than {MAX_DEPTH} levels deep: a rule is a table "
                    "of names, selectors and lists of them",
                )
            )
            continue
        rule, found = _one_rule(index, item, prefix, edge_types)
        problems.extend(found)
        if rule is None:
            continue
        if rule.name in names:
            problems.append(
                Problem(
                    _where(prefix, index, rule.name) + ".name",
                    f"the name is taken by rules[{names[rule.name]}]: give each rule its own",
                )
            )
        names.setdefault(rule.name, index)
        rules.append(rule)
    if problems:
        raise RequestInvalid(problems, source=source)
    return rules


def _too_deep(value: Any) -> bool:
    """Whether ``value`` nests lists and dicts deeper than ``MAX_DEPTH`` (found without recursion)."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return False


def _where(prefix: str, index: int, name: object) -> str:
    return f"{prefix}rules[{index}]" + (f" {name!r}" if isinstance(name, str) and name else "")


def _one_rule(
    index: int, item: Any, prefix: str, edge_types: Collection[str] | None
) -> tuple[Rule | None, list[Problem]]:
    name = item.get("name") if isinstance(item, dict) else None
    where = _where(prefix, index, name)
    if not isinstance(item, dict):
        return None, [Problem(where, "must be a table ([[rules]] with name and kind)")]
    kind = item.get("kind")
    if kind not in RULE_KINDS:
        hint = f"{kind!r} is not a kind" if kind is not None else "required"
        return None, [Problem(f"{where}: field 'kind'", f"{hint}; use one of {', '.join(RULE_KINDS)}")]
    try:
        rule = RULE_ADAPTER.validate_python(item)
    except ValidationError as exc:
        return None, _problems(where, exc)
    problems = []
    if edge_types is not None:
        for edge in rule.edges:
            if edge not in edge_types:
                problems.append(
                    Problem(
                        f"{where}: field 'edges'",
                        f"{edge!r} is no edge type of the graph's "
                        f"schema; use one of {', '.join(sorted(edge_types))}",
                    )
                )
    return rule, problems


def _field(loc: tuple[Any, ...]) -> str:
    """A pydantic error location without the union's tag (``('forbidden', 'from')`` -> ``from``)."""
    parts = [str(p) for p in loc[1:]] if loc and loc[0] in RULE_KINDS else [str(p) for p in loc]
    shown = []
    for p in parts:
        if p.isdigit():
            shown.append(f"[{p}]")
        elif p in (
            "str",
            "NodeSelector",
            "list[union[str,NodeSelector]]",
            "LayerGroup",
            "list[str]",
            "function-after[...]",
        ):
            continue  # the branch of a union pydantic tried: not a field the person wrote
        else:
            shown.append(("." if shown else "") + p)
    return "".join(shown) or "(rule)"


_SHAPES = {
    "string_type": "a string",
    "list_type": "a list",
    "dict_type": "a table",
    "model_type": "a table",
    "model_attributes_type": "a table",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
}
"""What a type error of pydantic asks for, as the person writing TOML reads it."""


def _problems(where: str, exc: ValidationError) -> list[Problem]:
    """One problem per field: the branches of a union pydantic tried become one 'expected A or B'."""
    by_field: dict[str, list[Any]] = {}
    for e in exc.errors():
        by_field.setdefault(_field(e["loc"]), []).append(e)
    problems = []
    for name, errors in by_field.items():
        too_long = [e for e in errors if e["type"] == "too_long"]
        if too_long:  # the right shape, too many items: the only thing to say
            problems.append(
                Problem(
                    f"{where}: field '{name}'",
                    f"at most {too_long[0]['ctx']['max_length']} items, "
                    f"got {too_long[0]['ctx']['actual_length']}: split the rule into several",
                )
            )
            continue
        shapes = [_SHAPES[e["type"]] for e in errors if e["type"] in _SHAPES]
        deeper = any(other.startswith((f"{name}.", f"{name}[")) for other in by_field)
        if deeper and len(shapes) == len(errors):
            # the value has the right shape for a branch whose own field is wrong: that field says it
            continue
        if len(shapes) == len(errors) and len(errors) > 1:
            got = type(errors[0]["input"]).__name__
            message = f"expected {' or '.join(dict.fromkeys(shapes))} (got {got} {errors[0]['input']!r})"
        else:
            message = "; ".join(dict.fromkeys(_message(e) for e in errors))
        problems.append(Problem(f"{where}: field '{name}'", message))
    return problems


def _message(error: Any) -> str:
    if error["type"] == "missing":
        return "required"
    if error["type"] == "extra_forbidden":
        return "unknown field (see schemas/rules.schema.json for the fields of each kind)"
    return str(error["msg"])
