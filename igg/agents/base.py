"""The agent protocol: the seam between IGG's loop and whatever does the "reason" step.

An agent is any callable ``agent(observation) -> turn``; an async agent is a callable returning an
awaitable. A turn may be:
  * an ``AgentTurn`` (raw text and/or a decoded response, with token usage and the raw exchange),
  * a ``dict`` (a decoded response object, as in DESIGN.md),
  * a ``str`` (raw model text: it goes through the shared response parser, like an LLM's output).
An agent that cannot produce a turn raises ``AgentFailed`` (the run stops with ``agent_error``) or
``BudgetExhausted`` (the run stops with ``budget_exhausted``).

``Agent`` and ``AsyncAgent`` are those two shapes as protocols. What an agent offers beyond being called is
DECLARED by subclassing ``AgentCapabilities`` (each capability with its default), never probed for by name:

* ``reads_markdown`` (default True): False when the agent reads ``Observation.state`` itself, so the loop
  skips rendering the markdown observation (the code agent's static pass);
* ``plain_responses`` (default False): True when the agent's response objects hold only JSON's own types,
  so the loop writes their record text the fast way (the code agent);
* ``validation_rules()`` (default none): rules the act step runs after the built-in rules of their action
  model class (``igg.act.rules.Rule``: ``(ctx, action, resolved) -> rejection | None``, ``resolved`` being
  what the action resolved to, see ``igg.act.context``; e.g. the code agents' grounding rule,
  UNGROUNDED_SYMBOL);
* ``aclose()`` (default: nothing to close): awaited once when the run that owns the agent ends (an HTTP
  client, a local model server).

``capabilities(agent)`` is how the engine reads them: a plain function is an agent with the defaults.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from igg.record.records import Usage

if TYPE_CHECKING:
    from igg.act.rules import Rule
    from igg.graph.state import GraphState
    from igg.models.request import Request
    from igg.models.verdicts import Verdict


@dataclass(kw_only=True)
class Observation:
    """What the agent sees at the start of an iteration."""

    session_id: str
    iteration: int
    """The iteration about to run, 1-based."""
    markdown: str
    """The budgeted markdown observation: goal, schema, limits and usage, graph, last verdicts, format."""
    tokens: int
    """Estimated tokens of ``markdown``."""
    context: str = ""
    """The current context chunk (the whole context_data when it fits its budget)."""
    chunk_index: int | None = None
    """0-based index of the current chunk, None when there is no context."""
    chunk_count: int = 0
    """How many chunks the context has (0 while a huge context has not been split to its end)."""
    chunk_label: str | None = None
    """E.g. a file path when the context was split on file boundaries."""
    last_verdicts: list[Verdict] = field(default_factory=list)
    """Verdicts of the previous iteration (also rendered in ``markdown``)."""
    request: Request | None = None
    state: GraphState | None = None
    """Read-only view of the graph for in-process agents (never mutate it: propose actions)."""


@dataclass(kw_only=True)
class AgentTurn:
    """One agent turn with its bookkeeping."""

    raw: str | None = None
    """Raw output text; parsed by the shared parser when ``response`` is None."""
    response: dict[str, Any] | None = None
    """An already-decoded response object."""
    usage: Usage | None = None
    truncated: bool = False
    """The output was cut off (e.g. finish_reason 'length'): only whole actions count."""
    exchange: dict[str, Any] | None = None
    """The raw request/response exchange, kept in the iteration record for replay."""
    note: str | None = None
    """Something the loop should show the agent next time (e.g. a refusal)."""


TurnLike: TypeAlias = "AgentTurn | dict[str, Any] | str"
"""What an agent may return for one turn."""


class Agent(Protocol):
    """A synchronous agent: called once per iteration with the observation, returns the turn."""

    def __call__(self, observation: Observation, /) -> TurnLike: ...


class AsyncAgent(Protocol):
    """An asynchronous agent: called once per iteration, returns an awaitable of the turn."""

    def __call__(self, observation: Observation, /) -> Awaitable[TurnLike]: ...


AnyAgent: TypeAlias = "Agent | AsyncAgent"
"""Either kind; the loop awaits what an async agent returns."""


class AgentCapabilities:
    """Subclass this to declare an agent's optional capabilities; every one has its default here."""

    @property
    def reads_markdown(self) -> bool:
        """Whether the agent reads ``Observation.markdown`` (False: the loop does not render it)."""
        return True

    @property
    def plain_responses(self) -> bool:
        """Whether every response object the agent returns holds only JSON's own types (dict with string keys,
        list, str, int, finite float, bool, None): the loop then writes its record text with orjson, about 8x
        faster than the standard library (an agent that breaks the promise still gets the standard path when
        orjson refuses the value). Default False."""
        return False

    def validation_rules(self) -> Mapping[type, Sequence[Rule[Any, Any]]]:
        """Extra act-step rules per action model class, run after the built-in ones (default: none)."""
        return {}

    async def aclose(self) -> None:
        """Release what the agent holds; awaited when the run that owns the agent ends (default: nothing)."""
        return None

    def count_spent(self, spent: Usage) -> None:
        """Told, before its first turn, what the earlier agent calls of a session it continues spent (its
        iterations and its turns held for review): an agent with a budget counts it (default: nothing)."""
        return None


_PLAIN = AgentCapabilities()


def capabilities(agent: object) -> AgentCapabilities:
    """The capabilities ``agent`` declares (an ``AgentCapabilities`` subclass), else the defaults."""
    return agent if isinstance(agent, AgentCapabilities) else _PLAIN


def as_turn(value: Any) -> AgentTurn:
    """Normalize what an agent returned into an ``AgentTurn``."""
    if isinstance(value, AgentTurn):
        return value
    if isinstance(value, dict):
        return AgentTurn(response=value)
    if isinstance(value, str):
        return AgentTurn(raw=value)
    raise TypeError(
        f"an agent must return an AgentTurn, a response dict or raw text; got {type(value).__name__}"
    )
