"""The command line follows the ecosystem's conventions: --version, no option prefixes, suggestions, the
usage of the command that was actually given."""

from __future__ import annotations

import pytest

from igg.interfaces.cli import igg_version, main


def _fail(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    return capsys.readouterr().err


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out.strip()
    assert out == f"igg {igg_version()}" and out != "igg 0+unknown"


def test_a_mistyped_command_gets_a_suggestion(capsys: pytest.CaptureFixture[str]) -> None:
    err = _fail(["rnu", "fixtures/auth/request.json"], capsys)
    assert "invalid choice: 'rnu'" in err and "did you mean 'run'?" in err


def test_option_prefixes_are_not_accepted_and_the_subcommand_usage_is_shown(
        capsys: pytest.CaptureFixture[str]) -> None:
    err = _fail(["run", "fixtures/auth/request.json", "--js"], capsys)
    assert err.startswith("usage: igg run "), err
    assert "unrecognized arguments: --js; did you mean '--json'?" in err


def test_an_unknown_option_far_from_any_known_one_gets_no_guess(capsys: pytest.CaptureFixture[str]) -> None:
    err = _fail(["sessions", "--zzzzzz"], capsys)
    assert err.startswith("usage: igg sessions ")
    assert "unrecognized arguments: --zzzzzz" in err and "did you mean" not in err
