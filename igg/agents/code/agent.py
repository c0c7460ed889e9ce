"""The code agent: a deterministic static-analysis agent that builds a code graph through the loop.

It proposes actions the way an LLM would, one turn per iteration, file by file: the nodes a file
introduces, then the edges it states. It reads the graph (``observation.state``) instead of trusting its
memory, so nothing that exists is proposed again (which also makes a resumed session pick up where it
stopped), and it obeys limits and verdicts:

- an edge whose endpoint does not exist yet waits until its target's file has been proposed;
- a rejection that can change (TOO_MANY_ACTIONS, ROLLED_BACK, NODE_NOT_FOUND) is retried; one that
  cannot (a schema or property rule, AMBIGUOUS_REFERENCE, a grounding rule) is never proposed again, and
  edges to a refused node are dropped;
- it proposes no more nodes once max_nodes is used up (nor edges past max_edges), and never more actions
  per turn than max_actions_per_response;
- when nothing is left it answers ``finished`` (in a turn of its own, after the last verdicts).

Sources come from the constructor (``igg map-code`` parses files concurrently and passes their facts) or,
when none were given, from the request's ``context_data`` split on file markers (``sources.split_context``).
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Sequence
from typing import Any

from igg.agents.base import AgentCapabilities, Observation
from igg.agents.code.mapping import SchemaFit
from igg.codemap.facts import FileFacts
from igg.codemap.link import CodeModel, FilePlan, Relation, link
from igg.codemap.sources import SourceFile, analyze_all, split_context
from igg.errors import AgentFailed
from igg.models.verdicts import ErrorCode
from igg.record.logs import get_logger

log = get_logger("igg.code")

RETRY = frozenset({ErrorCode.TOO_MANY_ACTIONS, ErrorCode.ROLLED_BACK, ErrorCode.DELETION_LIMIT_EXCEEDED})
"""Rejections that can change on a later turn: the action is proposed again."""
EXISTS = frozenset({ErrorCode.DUPLICATE_NODE, ErrorCode.DUPLICATE_EDGE})
"""Rejections that mean the element is already there: nothing to do."""
Item = tuple[str, Any]
"""("node", symbol key) or ("edge", Relation)."""


class CodeAgent(AgentCapabilities):
    """Maps Python and Java sources into the request's schema, one file per turn (see the module doc)."""

    name = "code"
    reads_markdown = False
    """It reads ``observation.state`` directly, so the loop need not render the markdown observation."""
    plain_responses = True
    """Its actions are built from the code model's strings, integers and booleans."""

    def __init__(
        self,
        *,
        sources: Sequence[SourceFile] | None = None,
        facts: Sequence[FileFacts] | None = None,
        model: CodeModel | None = None,
        fit: SchemaFit | None = None,
        files_per_turn: int = 1,
        external_imports: bool = True,
    ) -> None:
        self._sources = sources
        self._facts = facts
        self.model = model
        self.files_per_turn = max(1, files_per_turn)
        self.external_imports = external_imports
        self.fit: SchemaFit | None = fit
        """The model placed in the request's schema (given: ``model``'s, in the schema of the state it maps
        into; else made on the first turn)."""
        self.skipped: Counter[str] = Counter()
        """Why symbols and relations were not proposed (or were refused), with counts."""
        self.accepted: Counter[str] = Counter()
        self._files: deque[FilePlan] = deque()
        self._current: deque[Item] = deque()
        self._current_path: str | None = None
        self._pending: list[Relation] = []
        self._waiting: dict[str, list[Relation]] = {}
        """Edges waiting for a node, by the symbol key of that node (released when it is created)."""
        self._created_last: set[str] = set()
        self._retry: deque[Item] = deque()
        self._last: list[Item] = []
        self._refused: set[str] = set()
        self._not_found: Counter[Relation] = Counter()
        self._lifted: set[Relation] = set()
        self._nodes_full = self._edges_full = False
        self._started = False
        self.finished = False

    # ---- setup ---------------------------------------------------------------------------------------
    def _start(self, obs: Observation) -> None:
        if obs.state is None:
            raise AgentFailed("the code agent needs the graph state in its observation (an in-process loop)")
        if self.model is None:
            facts = self._facts
            if facts is None:
                sources = self._sources
                if sources is None:
                    context = obs.request.context_data if obs.request is not None else obs.context
                    sources = [s for s in split_context(context) if s.language]
                if not sources:
                    raise AgentFailed(
                        "the code agent found no source file of a language it reads in the context (mark each"
                        " file with a line such as '// File: src/App.java' or '# File: app/main.py')"
                    )
                facts = analyze_all(sources)
            self.model = link(facts, external_imports=self.external_imports)
        if self.fit is None or self.fit.model is not self.model or self.fit.schema != obs.state.schema:
            self.fit = SchemaFit(self.model, obs.state.schema)
        for key, why in self.fit.left_out.items():
            self.skipped[f"left out: {why}"] += 1
            self._refused.add(key)
        self._files = deque(self.model.files)
        self._started = True
        log.info(
            "code_agent_started",
            files=len(self._files),
            symbols=len(self.model.symbols),
            relations=self.model.relation_count(),
            placed=len(self.fit.placed),
        )

    # ---- the turn ------------------------------------------------------------------------------------
    def __call__(self, obs: Observation) -> dict[str, Any]:
        if not self._started:
            self._start(obs)
        state = obs.state
        assert state is not None and self.fit is not None
        self._read_verdicts(obs)
        limits = obs.request.config.constraints if obs.request is not None else None
        cap = limits.max_actions_per_response if limits else 50
        node_room = (limits.max_nodes - state.node_count) if limits else 10**9
        edge_room = (limits.max_edges - state.edge_count) if limits else 10**9
        turn = _Turn(self, state, cap, node_room, edge_room)
        while self._retry and not turn.full:
            turn.offer(self._retry.popleft())
        everything = not self._files and not self._current
        # in the order the waits began (never a set's order, which changes with PYTHONHASHSEED)
        for key in [k for k in self._waiting if everything or k in self._created_last]:
            self._pending.extend(self._waiting.pop(key))
        self._created_last = set()
        pending, self._pending = self._pending, []
        for r in pending:
            if turn.full or not turn.offer(("edge", r), wait=False):
                self._pending.append(r)
        files_done = 0
        while not turn.full:
            if not self._current:
                if files_done >= self.files_per_turn and turn.actions:
                    break
                if not self._files:
                    break
                plan = self._files.popleft()
                files_done += 1
                self._current_path = plan.path
                turn.files.append(plan.path)
                if plan.error:
                    log.info("code_file_partial", path=plan.path, error=plan.error)
                self._current = deque([*(("node", k) for k in plan.symbols), *self._edges_of(plan)])
            while self._current and not turn.full:
                turn.offer(self._current.popleft())
        self._last = turn.items
        if not turn.actions and not self._current and not self._files and not self._retry:
            dropped = len(self._pending) + sum(len(w) for w in self._waiting.values())
            if dropped:
                self.skipped["edge endpoint never created"] += dropped
                self._pending, self._waiting = [], {}
            self.finished = True
            return {"reasoning": self._closing(state), "actions": [], "finished": True}
        return {"reasoning": turn.reasoning(), "actions": turn.actions}

    def _edges_of(self, plan: FilePlan) -> list[Item]:
        """The file's relations, each followed by the type-level one it implies (once) when the schema
        cannot attach members to types."""
        assert self.fit is not None
        items: list[Item] = []
        for r in plan.relations:
            items.append(("edge", r))
            lifted = self.fit.lifted(r)
            if lifted is not None and lifted not in self._lifted:
                self._lifted.add(lifted)
                items.append(("edge", lifted))
        return items

    def _read_verdicts(self, obs: Observation) -> None:
        last, self._last = self._last, []
        for v in obs.last_verdicts:
            if v.index >= len(last):
                continue
            kind, what = last[v.index]
            if v.accepted:
                self.accepted[kind] += 1
                if kind == "node":
                    self._created_last.add(what)
                continue
            code = v.code
            if code in EXISTS:
                continue
            if code in RETRY:
                self._retry.append((kind, what))
            elif code == ErrorCode.NODE_NOT_FOUND and kind == "edge" and self._not_found[what] < 2:
                self._not_found[what] += 1
                self._pending.append(what)
            elif code == ErrorCode.MAX_NODES_EXCEEDED:
                self._nodes_full = True
                self._refused.add(what)
                self.skipped["max_nodes reached"] += 1
            elif code == ErrorCode.MAX_EDGES_EXCEEDED:
                self._edges_full = True
                self.skipped["max_edges reached"] += 1
            else:
                if kind == "node":
                    self._refused.add(what)
                self.skipped[f"rejected {code}"] += 1
                log.info("code_action_refused", kind=kind, code=str(code), message=v.message[:200])

    def _closing(self, state: Any) -> str:
        nodes, edges = state.counts_by_type()
        shown = ", ".join(f"{n} {t}" for t, n in nodes.items() if n)
        left = "; ".join(f"{n} {why}" for why, n in self.skipped.most_common(6))
        return (
            f"Mapped {len(self.model.files) if self.model else 0} files: {shown or 'nothing'}, "
            f"{sum(edges.values())} edges." + (f" Not proposed: {left}." if left else "")
        )

    def summary(self) -> dict[str, Any]:
        """Counts for a run summary: files, symbols, relations, and why anything was left out."""
        model = self.model
        return {
            "files": len(model.files) if model else 0,
            "symbols": len(model.symbols) if model else 0,
            "relations": model.relation_count() if model else 0,
            "skipped": dict(self.skipped),
        }


class _Turn:
    """The actions of one turn being assembled, with the limits they must respect."""

    def __init__(self, agent: CodeAgent, state: Any, cap: int, node_room: int, edge_room: int) -> None:
        self.agent, self.state, self.cap = agent, state, cap
        self.node_room, self.edge_room = node_room, edge_room
        assert agent.fit is not None
        self.sites = agent.fit.edge_properties()
        """(edge type, source key, target key) -> the edge's properties (its sites)."""
        self.actions: list[dict[str, Any]] = []
        self.items: list[Item] = []
        self.files: list[str] = []
        self.added: set[str] = set()
        self.edges: set[tuple[str, str, str]] = set()
        """(edge type, source key, target key) of the edges this turn proposes: two relations that become one
        edge (an imported symbol's IMPORTS beside its module's, a member's call lifted to its type) are
        proposed once, never answered DUPLICATE_EDGE by the act step."""
        self.counts: Counter[str] = Counter()
        self.waiting = 0

    @property
    def full(self) -> bool:
        return len(self.actions) >= self.cap

    def _exists(self, key: str) -> str | None:
        """The node id of symbol ``key`` in the graph, or "" when this turn adds it, or None."""
        if key in self.added:
            return ""
        placed = self.agent.fit.placed.get(key)  # type: ignore[union-attr]
        if placed is None:
            return None
        found: str | None = self.state.find_identity(placed.label, placed.identity)
        return found

    def offer(self, item: Item, wait: bool = True) -> bool:
        """Propose ``item`` if it is due; an edge whose endpoint does not exist yet waits for that node
        (``wait=False``: a waiting edge offered again, not counted twice). Returns True (handled)."""
        agent, fit = self.agent, self.agent.fit
        assert fit is not None
        kind, what = item
        if kind == "node":
            if what in agent._refused or self._exists(what) is not None:
                return True
            if agent._nodes_full or self.node_room <= 0:
                agent._nodes_full = True
                agent._refused.add(what)
                agent.skipped["max_nodes reached"] += 1
                return True
            placed = fit.placed[what]
            self.actions.append({"type": "ADD_NODE", "label": placed.label, "properties": placed.properties})
            self.items.append(item)
            self.added.add(what)
            self.node_room -= 1
            self.counts[placed.label] += 1
            return True
        r: Relation = what
        label = fit.edge_label(r)
        if label is None:
            if r.source in fit.placed and r.target in fit.placed:
                agent.skipped[f"no edge type or pattern for {r.label}"] += 1
            else:
                agent.skipped["edge endpoint not in the schema"] += 1
            return True
        if r.source in agent._refused or r.target in agent._refused:
            agent.skipped["edge endpoint refused or over the limit"] += 1
            return True
        src, dst = self._exists(r.source), self._exists(r.target)
        if src is None or dst is None:
            missing = r.source if src is None else r.target
            agent._waiting.setdefault(missing, []).append(r)
            if wait:
                self.waiting += 1
            return True
        if src and dst and self.state.edge_between(src, label, dst) is not None:
            return True
        if (label, r.source, r.target) in self.edges:
            return True
        if agent._edges_full or self.edge_room <= 0:
            agent._edges_full = True
            agent.skipped["max_edges reached"] += 1
            return True
        action = {"type": "ADD_EDGE", "label": label, "from": fit.ref(r.source), "to": fit.ref(r.target)}
        sites = self.sites.get((label, r.source, r.target))
        if sites is not None:  # where the source states it (CONTAINS has no sites)
            action["properties"] = sites
        self.actions.append(action)
        self.items.append(item)
        self.edges.add((label, r.source, r.target))
        self.edge_room -= 1
        self.counts[label] += 1
        return True

    def reasoning(self) -> str:
        where = ", ".join(self.files) if self.files else "edges whose endpoints now exist"
        shown = ", ".join(f"{n} {t}" for t, n in self.counts.most_common())
        wait = f"; {self.waiting} edges wait for nodes of later files" if self.waiting else ""
        return f"Static analysis of {where}: {shown or 'nothing new'}{wait}."
