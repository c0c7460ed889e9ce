#!/usr/bin/env python3
"""A stream of facts in time with its known truth, for valid time's tests and benchmark (issue 43).

People work at companies one at a time (``WORKS_AT``, ``one_at_a_time``), hold one title at a time
(``Person.title``), and know each other for a while (``KNOWS``: scoped, many at a time). Each person's career
is a run of jobs with distinct start times (months, days, and date-times with zone offsets); some jobs end
explicitly before the next begins (a gap), some last jobs end without a successor. The facts arrive shuffled
(out of order: a later job often arrives before an earlier one), and some are stated twice.

The truth is what the generator decided, not what IGG computed: each job holds from its start to its explicit
end or the next job's start, whichever is first; each title from its start to the next title's; each
acquaintance from its start to its end. ``truth_at(t)`` is the graph valid at ``t`` as canonical sets.

    python scripts/gen_temporal.py OUT --entities 1000 --facts 10000 --seed 1

writes ``OUT/request.json`` and ``OUT/transcript.jsonl`` (the node adds first, then the facts in turns of
``--turn`` actions) for ``igg run OUT/request.json --agent script:OUT/transcript.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from igg.models.validtime import instant  # noqa: E402

SCHEMA = {
    "node_types": ["Person", "Company"],
    "edge_types": ["WORKS_AT", "KNOWS"],
    "valid_time": {"WORKS_AT": {"one_at_a_time": True}, "KNOWS": {}, "Person": {"properties": ["title"]}},
}
TITLES = ["intern", "engineer", "senior engineer", "lead", "manager", "director", "VP", "CTO"]
ZONES = ["Z", "+02:00", "-05:00", "+09:30"]


@dataclass
class Stream:
    """The request, the actions in the order they arrive, and the truth."""

    request: dict[str, Any]
    nodes: list[dict[str, Any]]
    facts: list[dict[str, Any]]
    jobs: list[tuple[str, str, datetime, datetime | None]] = field(default_factory=list)
    """(person, company, from, to) of every WORKS_AT, to None: still open."""
    knows: list[tuple[str, str, datetime, datetime | None]] = field(default_factory=list)
    titles: list[tuple[str, str, datetime, datetime | None]] = field(default_factory=list)
    """(person, title, from, to)."""

    def turns(self, size: int) -> list[dict[str, Any]]:
        """The transcript: one turn of node adds, then the facts ``size`` at a time; the last says
        finished."""
        chunks = [self.facts[i : i + size] for i in range(0, len(self.facts), size)]
        out = [{"reasoning": "the people and companies", "actions": self.nodes}]
        out += [
            {"reasoning": f"facts {i * size + 1}-{i * size + len(c)}", "actions": c}
            for i, c in enumerate(chunks)
        ]
        out[-1]["finished"] = True
        return out

    def truth_at(self, at: datetime) -> tuple[set[tuple[str, str, str]], dict[str, str]]:
        """(edges as (type, from name, to name), title by person name) valid at ``at``."""

        def valid(start: datetime, end: datetime | None) -> bool:
            return start <= at and (end is None or at < end)

        edges = {("WORKS_AT", p, c) for p, c, s, e in self.jobs if valid(s, e)}
        edges |= {("KNOWS", a, b) for a, b, s, e in self.knows if valid(s, e)}
        titles = {p: t for p, t, s, e in self.titles if valid(s, e)}
        return edges, titles


def _time(rng: random.Random, moment: datetime) -> str:
    """``moment`` written as a month, a day, or a date-time with a zone (the instant is then exactly it)."""
    kind = rng.random()
    if kind < 0.4 and moment.day == 1 and moment.hour == 0:
        return moment.strftime("%Y-%m")
    if kind < 0.8 and moment.hour == 0:
        return moment.strftime("%Y-%m-%d")
    zone = rng.choice(ZONES)
    if zone == "Z":
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    sign = 1 if zone[0] == "+" else -1
    offset = timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6])) * sign
    return (moment + offset).strftime("%Y-%m-%dT%H:%M:%S") + zone


def _moments(rng: random.Random, count: int) -> list[datetime]:
    """``count`` distinct increasing instants between 2000 and 2030 (months, days or hours)."""
    picked: set[datetime] = set()
    while len(picked) < count:
        year, month = rng.randint(2000, 2029), rng.randint(1, 12)
        roll = rng.random()
        if roll < 0.4:
            picked.add(datetime(year, month, 1, tzinfo=UTC))
        elif roll < 0.8:
            picked.add(datetime(year, month, rng.randint(1, 28), tzinfo=UTC))
        else:
            picked.add(datetime(year, month, rng.randint(1, 28), rng.randint(1, 23), tzinfo=UTC))
    return sorted(picked)


def generate(entities: int = 1000, facts: int = 10_000, seed: int = 1, repeat: float = 0.05) -> Stream:
    """A stream of about ``facts`` facts over ``entities`` people and companies (a fifth companies)."""
    rng = random.Random(seed)
    companies = [f"Company {i}" for i in range(max(2, entities // 5))]
    people = [f"Person {i}" for i in range(entities - len(companies))]
    per_person = max(3, round(facts * (1 - repeat) / len(people)))
    stream = Stream(
        request={
            "session_id": f"temporal-{seed}",
            "goal_prompt": "Careers over thirty years.",
            "context_data": "(a generated stream: no text)",
            "config": {
                "max_iterations": 10_000,
                "stuck_after": 10_000,
                "schema": SCHEMA,
                "constraints": {
                    "max_nodes": entities + 10,
                    "max_edges": facts * 2,
                    "max_actions_per_response": 10_000,
                },
            },
        },
        nodes=[{"type": "ADD_NODE", "label": "Company", "properties": {"name": c}} for c in companies]
        + [{"type": "ADD_NODE", "label": "Person", "properties": {"name": p}} for p in people],
        facts=[],
    )
    out = stream.facts
    for person in people:
        n_jobs = max(1, per_person * 5 // 12)
        n_titles = max(1, per_person * 4 // 12)
        n_knows = max(0, per_person - n_jobs - n_titles)
        employers = rng.sample(companies, min(n_jobs, len(companies)))
        starts = _moments(rng, len(employers))
        for i, (company, start) in enumerate(zip(employers, starts, strict=True)):
            nxt = starts[i + 1] if i + 1 < len(starts) else None
            end: datetime | None = None
            action = {
                "type": "ADD_EDGE",
                "label": "WORKS_AT",
                "from": {"name": person},
                "to": {"name": company},
                "valid_from": _time(rng, start),
            }
            if rng.random() < 0.15:  # left before the next job (or for good): an explicit end
                limit = nxt if nxt is not None else datetime(2031, 1, 1, tzinfo=UTC)
                gap = _moments(rng, 3)
                inside = [g for g in gap if start < g < limit]
                if inside:
                    end = inside[0]
                    action["valid_to"] = _time(rng, end)
            truth_end = end if end is not None else nxt
            stream.jobs.append((person, company, instant(action["valid_from"]), truth_end))
            out.append(action)
        title_starts = _moments(rng, n_titles)
        for i, start in enumerate(title_starts):
            title = TITLES[min(i, len(TITLES) - 1)]
            out.append(
                {
                    "type": "UPDATE_NODE",
                    "node": {"name": person},
                    "properties": {"title": title},
                    "valid_from": _time(rng, start),
                }
            )
            stream.titles.append((person, title, start, title_starts[i + 1] if i + 1 < n_titles else None))
        friends = rng.sample([p for p in people if p != person], min(n_knows, len(people) - 1))
        for friend in friends:
            start, end = _moments(rng, 2)
            open_ended = rng.random() < 0.3
            action = {
                "type": "ADD_EDGE",
                "label": "KNOWS",
                "from": {"name": person},
                "to": {"name": friend},
                "valid_from": _time(rng, start),
            }
            if not open_ended:
                action["valid_to"] = _time(rng, end)
            stream.knows.append((person, friend, start, None if open_ended else end))
            out.append(action)
    out.extend(rng.sample(out, round(len(out) * repeat)))  # stated again: changes nothing
    rng.shuffle(out)
    return stream


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("out", type=Path)
    parser.add_argument("--entities", type=int, default=1000)
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--turn", type=int, default=500, help="facts per turn (default 500)")
    args = parser.parse_args()
    stream = generate(args.entities, args.facts, args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "request.json").write_text(json.dumps(stream.request, indent=1) + "\n")
    with (args.out / "transcript.jsonl").open("w") as f:
        for turn in stream.turns(args.turn):
            f.write(json.dumps(turn) + "\n")
    print(
        f"{args.out}: {len(stream.nodes)} nodes, {len(stream.facts)} facts ({len(stream.jobs)} jobs, "
        f"{len(stream.titles)} titles, {len(stream.knows)} acquaintances)"
    )


if __name__ == "__main__":
    main()
