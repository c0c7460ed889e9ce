"""Nothing lost: where a run's result is kept when the command line names no place, and what an interrupted
run leaves behind.

* A run (``igg run``, ``igg map-code``) given neither ``--out``, ``--store``, ``--export`` nor ``$IGG_STORE``
  is kept in the store every session command reads without ``--store`` (``igg.store.resolve_store_path``):
  ``./.igg/sessions.sqlite`` when that file exists, else the **default store** ``$IGG_HOME/sessions.sqlite``,
  else ``$XDG_DATA_HOME/igg/sessions.sqlite``, else ``~/.local/share/igg/sessions.sqlite``. One line on
  standard error says where, with the commands that show and export it. A new run of a session id the store
  holds is refused there as in any store, saying how to see it, replace it (``--force``) or resume it, so
  nothing is replaced without being asked. ``--no-store`` keeps nothing.
* Ctrl-C (SIGINT) during a run: every committed iteration is already in the store (its session then reads
  ``interrupted``) and in ``--out``'s ``records.jsonl``; ``interrupted`` writes ``--out``'s ``graph.json``
  and ``summary.json`` (stop reason ``interrupted``) from them, says in one line how to resume, and the
  command exits 130.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

from igg.errors import SessionExists
from igg.io.urls import mask_url
from igg.store.location import (
    HOME_ENV,
    PROJECT_STORE,
    StoreLocation,
    resolve_store_path,
    store_text,
)

if TYPE_CHECKING:  # the graph and its models load when a run is kept, not when the options are registered
    from igg.graph.journal import Mutation
    from igg.graph.state import GraphState
    from igg.models.request import Request
    from igg.record.records import IterationRecord, RunResult, StopReason
    from igg.record.steps import StepRecord, UpdateStep

INTERRUPTED = "interrupted"
"""The stop reason written into ``summary.json`` (and ``--json``) of a run stopped by Ctrl-C."""


def default_store() -> StoreLocation:
    """The store a run given no place is kept in, and the session commands read without ``--store``."""
    return resolve_store_path(None)


@dataclass(frozen=True, kw_only=True)
class Keeping:
    """Where a run is kept: ``store`` (None: in no store), whether it is the default store (chosen by no
    option, so it is announced), and whether a session of the same id there is replaced (``--force``)."""

    store: str | None
    implicit: bool = False
    force: bool = False


def keeping(args: argparse.Namespace, session_id: str | None, *, explicit_store: str | None) -> Keeping:
    """The store a run command keeps its session in (``explicit_store``: ``--store`` or ``$IGG_STORE``; else
    ``default_store()``, unless ``--no-store``, ``--out`` or ``--export`` says where the result goes)."""
    force = bool(getattr(args, "force", False))
    if explicit_store:
        return Keeping(store=explicit_store, force=force)
    if (
        getattr(args, "no_store", False)
        or getattr(args, "out", None) is not None
        or getattr(args, "export", None)
    ):
        return Keeping(store=None, force=force)
    path = default_store()
    if not isinstance(path, Path):
        return Keeping(store=store_text(path), implicit=True, force=force)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        from igg.errors import IGGError

        raise IGGError(
            f"cannot create the default store's directory {path.parent}: {exc.strerror or exc}; "
            f"set {HOME_ENV} to a writable directory, or pass --store PATH or --no-store"
        ) from None
    return Keeping(store=str(path), implicit=True, force=force)


def kept_store(args: argparse.Namespace, *, explicit_store: str | None) -> str | None:
    """The store ``keeping`` will keep a run in (no side effects): ``explicit_store``, else none for
    ``--no-store``/``--out``/``--export``, else ``default_store()``."""
    if explicit_store:
        return explicit_store
    if (
        getattr(args, "no_store", False)
        or getattr(args, "out", None) is not None
        or getattr(args, "export", None)
    ):
        return None
    return store_text(default_store())


def announce(keep: Keeping, session_id: str, *, log_format: str = "console") -> None:
    """The one line saying where a run without ``--out``/``--store``/``--export`` was kept (with
    ``--log-format json``, the log event ``session_kept``, so standard error stays one JSON object a line)."""
    if not (keep.implicit and keep.store):
        return
    sid, store = shlex.quote(session_id), shlex.quote(mask_url(keep.store))
    show = f"igg show {sid} --store {store}"
    export = f"igg export {sid} --store {store} --format graphml"
    if log_format == "json":
        from igg.record.logs import configured_structlog

        configured_structlog().get_logger("igg").info(
            "session_kept", session_id=session_id, store=mask_url(keep.store), show=show, export=export
        )
        return
    where = "the project store" if Path(keep.store) == PROJECT_STORE else "the default store"
    print(
        f"igg: kept session {session_id} in {where} {mask_url(keep.store)}: see it with `{show}`, export it "
        f"with `{export}`; --no-store keeps nothing",
        file=sys.stderr,
    )


class Witness:
    """A ``Recorder`` keeping the committed iterations of a run, so an interrupted run can write what it has.

    The live graph may be half way through an iteration when Ctrl-C comes; the graph as of the last
    committed iteration is rebuilt from the request and the committed records' mutations instead. A run that
    kept a planned step (a fresh static map's one step) has no records to rebuild it from: its graph is the
    live one, less what changed after the step (the journal since, reverted), not the bare seed."""

    def __init__(self) -> None:
        self.request: Request | None = None
        self.records: list[IterationRecord] = []
        self.steps: list[UpdateStep] = []
        self.state: GraphState | None = None
        """The live graph, once a planned step was kept."""

    def begin(self, request: Request, state: GraphState, records: list[IterationRecord]) -> None:
        if self.request is None:
            self.request = request
            self.records = list(records)

    def record(self, record: IterationRecord) -> None:
        self.records.append(record)

    def keep(
        self, step: StepRecord, mutations: Sequence[Mutation], state: GraphState, *, snapshot: bool = False
    ) -> None:
        """A planned step is noted with the live graph (its mutations are not kept: millions for a static
        map); other steps change no graph."""
        from igg.record.steps import UpdateStep

        if isinstance(step, UpdateStep):
            self.steps.append(step)
            self.state = state

    def finish(self, result: RunResult) -> None:
        pass

    def result(self, session_id: str) -> RunResult | None:
        """The run as far as it was committed, stop reason ``interrupted`` (None before it began)."""
        if self.request is None:
            return None
        from igg.record.records import RunResult
        from igg.request.load import build_state

        records = list(self.records)
        if self.state is not None:  # a planned step was kept: what changed after it is reverted
            state = self.state
            for mutation in reversed(state.take_journal()):
                state.revert_mutation(mutation)
            state.take_journal()
        else:
            state, _ = build_state(self.request)
            for record in records:
                for mutation in record.mutations:
                    state.apply_mutation(mutation)
            state.take_journal()
        limits = self.request.config.constraints
        return RunResult(
            session_id=self.request.session_id or session_id,
            stop_reason=cast("StopReason", INTERRUPTED),
            state=state,
            records=records,
            max_nodes=limits.max_nodes,
            max_edges=limits.max_edges,
            steps=list(self.steps),
        )


def interrupted(args: argparse.Namespace, witness: Witness, keep: Keeping, session_id: str) -> int:
    """After Ctrl-C: write ``--out``'s graph and summary, print the ``--json`` summary if asked, and the one
    line saying how to go on (``igg resume SESSION --store STORE``, which continues map-code sessions too).
    Returns the exit code (130)."""
    from igg.interfaces.codes import EXIT_INTERRUPTED

    result = witness.result(session_id)
    wrote = ""
    out = getattr(args, "out", None)
    if result is not None and out is not None and witness.request is not None:
        from igg.persistence.rundir import RunDirectory

        directory = RunDirectory(out)
        directory.request = witness.request
        directory.write_result(result)
        wrote = f"; wrote {Path(out) / 'graph.json'} and summary.json (stop reason {INTERRUPTED})"
    if result is not None and getattr(args, "json", False):
        import json

        sys.stdout.write(json.dumps(result.summary(), ensure_ascii=False) + "\n")
        sys.stdout.flush()
    done = (
        f"after iteration {result.iterations}"
        if result is not None and (result.records or result.steps)
        else "before any iteration"
    )
    sid = result.session_id if result is not None else session_id
    if keep.store:
        how = f"resume it with `{shlex.join(['igg', 'resume', sid, '--store', mask_url(keep.store)])}`"
    else:
        again = [
            "igg",
            *(a for a in command_line(args) if a != "--no-store"),
            "--store",
            str(default_store()),
        ]
        how = f"it was kept in no store, so it cannot be resumed; a run that can be: `{shlex.join(again)}`"
    print(f"igg: interrupted {done} of session {sid}{wrote}; {how}", file=sys.stderr)
    return EXIT_INTERRUPTED


def add_keep_option(parser: argparse.ArgumentParser) -> None:
    """``--no-store``: keep a run without ``--out``/``--store``/``--export`` nowhere (not in the default
    store)."""
    parser.add_argument(
        "--no-store",
        action="store_true",
        help="keep the run nowhere; without --out, --store or --export a run is otherwise kept in "
        "./.igg/sessions.sqlite if it exists, else the default store "
        f"(${HOME_ENV}/sessions.sqlite, else ~/.local/share/igg/sessions.sqlite)",
    )


def command_line(args: argparse.Namespace) -> list[str]:
    """The arguments the command was given (``main`` keeps them; else this process's)."""
    return list(getattr(args, "argv", None) or sys.argv[1:])


def session_exists(args: argparse.Namespace, session_id: str, store: str, *, another: str) -> SessionExists:
    """The refusal of a run whose session id the store already holds, with the exact commands that go on
    (``another``: how this command takes another id, e.g. ``give another --session``)."""
    from igg.store import SessionStore

    db = SessionStore(store)
    try:
        info = db.session(session_id)
    finally:
        db.close()
    shown = mask_url(store)  # a PostgreSQL URL's password never reaches a message
    sid, path = shlex.quote(session_id), shlex.quote(shown)
    what = (
        f"see it with `igg show {sid} --store {path}`"
        if info.status == "finished"
        else f"continue it with `igg resume {sid} --store {path}`"
    )
    again = ["igg", *(mask_url(a) for a in command_line(args) if a != "--force"), "--force"]
    return SessionExists(
        f"session {session_id!r} already exists in {shown} ({info.status}, {info.iteration} "
        f"iterations); {what}, replace it with `{shlex.join(again)}`, or {another}",
        session_id=session_id,
    )
