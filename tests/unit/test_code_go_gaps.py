"""Go calls the receiver of which is typed through a named slice, map or channel type (``type Flags []Flag``:
``fs[0].Names()``, ``range fs``), a channel receive (``v := <-ch``, ``case v := <-ch``), a generic type behind
an alias (``type BoolFlag = Base[bool]``), a type assertion in an ``if`` (``if x, ok := v.(T); ok``), or an
interface, judged by go/types (``tests/gooracle``); and ``--update`` after the underlying type of a named type
changes gives the fresh map."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gooracle import f1, go_list, missing, program
from tests.integration.test_code_go import _calls, _map, _oracle_calls, _write
from tests.integration.test_code_go_update import _igg, _updated_and_fresh

TREE = {
    "go.mod": "module example.com/gaps\n\ngo 1.19\n",
    "flags/flags.go": "\n".join(
        [
            "package flags",
            "",
            "type Flag interface {",
            "\tNames() []string",
            "}",
            "",
            "type Flags []Flag",
            "",
            "type ByName map[string]*Base[int]",
            "",
            "type Base[T any] struct{ value T }",
            "",
            "func (b *Base[T]) Names() []string { return nil }",
            "",
            "func (b *Base[T]) Get() T { return b.value }",
            "",
            "type BoolFlag = Base[bool]",
            "",
            "type Feed chan *BoolFlag",
            "",
            "func First(fs Flags) []string { return fs[0].Names() }",
            "",
            "func All(fs Flags) int {",
            "\tn := 0",
            "\tfor _, f := range fs {",
            "\t\tn += len(f.Names())",
            "\t}",
            "\treturn n",
            "}",
            "",
            'func Lookup(m ByName) int { return m["a"].Get() }',
            "",
            "func Alias() bool {",
            "\tb := &BoolFlag{}",
            "\t_ = b.Names()",
            "\treturn b.Get()",
            "}",
            "",
            "func Receive(ch chan *BoolFlag, feed Feed, done chan struct{}) bool {",
            "\tv := <-ch",
            "\t_ = v.Get()",
            "\tselect {",
            "\tcase w := <-feed:",
            "\t\treturn w.Get()",
            "\tcase <-done:",
            "\t}",
            "\treturn false",
            "}",
            "",
            "func Assert(f Flag) []string {",
            "\tif b, ok := f.(*BoolFlag); ok {",
            "\t\treturn b.Names()",
            "\t}",
            "\treturn f.Names()",
            "}",
            "",
        ]
    ),
}


@pytest.mark.skipif(missing() is not None, reason=missing() or "")
def test_receivers_typed_through_named_types_aliases_and_channels_are_the_checkers(tmp_path: Path) -> None:
    root = _write(tmp_path / "gaps", TREE)
    model, _ = _map(root)
    truth = program(root, go_list(root))
    ours, expected = _calls(model), _oracle_calls(truth)
    for call in [
        ("flags/flags.go", "First", "flags/flags.go", "Flag.Names"),
        ("flags/flags.go", "All", "flags/flags.go", "Flag.Names"),
        ("flags/flags.go", "Lookup", "flags/flags.go", "Base.Get"),
        ("flags/flags.go", "Alias", "flags/flags.go", "Base.Names"),
        ("flags/flags.go", "Receive", "flags/flags.go", "Base.Get"),
        ("flags/flags.go", "Assert", "flags/flags.go", "Base.Names"),
    ]:
        assert call in expected, call  # the checker's naming is the one described
    precision, recall, _ = f1(ours, expected)
    assert ours == expected, (sorted(ours - expected), sorted(expected - ours))
    assert precision == recall == 1.0


def test_a_changed_underlying_type_updates_to_the_fresh_map(tmp_path: Path) -> None:
    tree = _write(
        tmp_path / "tree",
        {
            "go.mod": "module example.com/u\n\ngo 1.21\n",
            "a/types.go": "package a\n\ntype One struct{}\n\nfunc (One) Hi() int { return 1 }\n\n"
            'type Two struct{}\n\nfunc (Two) Hi() string { return "2" }\n\ntype List []One\n',
            "a/use.go": "package a\n\nfunc Use(l List) any { return l[0].Hi() }\n",
        },
    )
    assert (
        _igg("map-code", "tree", "--store", "s.db", "--session", "m", "--quiet", cwd=tmp_path).returncode == 0
    )
    types = tree / "a" / "types.go"
    types.write_text(types.read_text().replace("type List []One", "type List []Two"))
    result, (_, edges) = _updated_and_fresh(tmp_path)
    calls = {b for a, label, b in edges if label == "CALLS"}
    assert calls == {"Hi() string"} and result["files"]["changed"] == ["a/types.go"], calls
