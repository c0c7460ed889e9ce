"""Token and cost accounting for the LLM agent, and the budget check made *before* every call.

Usage comes from the server's ``usage`` field; when a server omits it, both sides are estimated from the
text (and the turn's usage says ``estimated``). Cost needs a price table (``config.llm.prices``).

The check refuses a call that *could* overspend: the prompt's estimate plus the most the completion may
use (``max_output_tokens``) must fit in what remains of ``token_budget`` (and likewise of ``cost_budget``),
so a run ends with ``budget_exhausted`` before it spends past its budget, never after. Prompt estimates
are calibrated by the ratio of reported to estimated prompt tokens seen so far, never below 1.
"""

from __future__ import annotations

from dataclasses import dataclass

from igg.errors import BudgetExhausted, Problem, RequestInvalid
from igg.models.request import LLMConfig
from igg.observe import estimate_tokens
from igg.record.records import Usage

MESSAGE_OVERHEAD_TOKENS = 4
"""Tokens a chat message costs beyond its text (role and separators), as OpenAI's guidance counts them."""


@dataclass(kw_only=True)
class Totals:
    """What a session spent so far."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None
    estimated_calls: int = 0
    """Calls whose usage the server did not report (estimated)."""

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, object]:
        return {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
            "cost": self.cost,
            "estimated_calls": self.estimated_calls,
        }


class Budget:
    """Accounts usage per call and refuses a call that could overspend the token or cost budget."""

    def __init__(self, config: LLMConfig) -> None:
        if config.cost_budget is not None and config.prices is None:
            raise RequestInvalid(
                [
                    Problem(
                        "config.llm.cost_budget",
                        "a cost budget needs a price table: set "
                        "config.llm.prices {input_per_million, output_per_million}",
                    )
                ]
            )
        self.config = config
        self.totals = Totals(cost=0.0 if config.prices else None)
        self._ratio = 1.0

    def usage(
        self,
        *,
        prompt_tokens: int | None,
        completion_tokens: int | None,
        prompt_estimate: int,
        completion_text: str,
    ) -> Usage:
        """The usage of one call (estimated for whatever the server left out), priced, and added to the
        totals."""
        estimated = prompt_tokens is None or completion_tokens is None
        if prompt_tokens is None:
            prompt_tokens = round(prompt_estimate * self._ratio)
        elif prompt_estimate > 0:
            self._ratio = max(1.0, prompt_tokens / prompt_estimate)
        if completion_tokens is None:
            completion_tokens = estimate_tokens(completion_text) if completion_text else 0
        usage = Usage(
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            estimated=estimated,
            cost=self.cost(prompt_tokens, completion_tokens),
        )
        t = self.totals
        t.calls += 1
        t.prompt_tokens += prompt_tokens
        t.completion_tokens += completion_tokens
        t.estimated_calls += estimated
        if usage.cost is not None:
            t.cost = (t.cost or 0.0) + usage.cost
        return usage

    def add_spent(self, spent: Usage) -> None:
        """Count what earlier calls spent (a continued session's), without counting them as calls here."""
        t = self.totals
        t.prompt_tokens += spent.prompt_tokens
        t.completion_tokens += spent.completion_tokens
        if spent.cost is not None and t.cost is not None:
            t.cost += spent.cost

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        """The price of a call, or None without a price table."""
        prices = self.config.prices
        if prices is None:
            return None
        return (
            prompt_tokens * prices.input_per_million + completion_tokens * prices.output_per_million
        ) / 1e6

    def check(self, prompt_estimate: int, max_output_tokens: int) -> None:
        """Raise ``BudgetExhausted`` when a call with this prompt could overspend either budget."""
        prompt = round(prompt_estimate * self._ratio)
        worst = prompt + max_output_tokens
        t, c = self.totals, self.config
        if c.token_budget is not None and t.total_tokens + worst > c.token_budget:
            raise BudgetExhausted(
                f"token budget: {t.total_tokens} of {c.token_budget} tokens spent; the next call could use "
                f"{worst} (prompt ~{prompt} + max_output_tokens {max_output_tokens}), which would overspend"
            )
        if c.cost_budget is not None:
            worst_cost = self.cost(prompt, max_output_tokens) or 0.0
            spent = t.cost or 0.0
            if spent + worst_cost > c.cost_budget:
                raise BudgetExhausted(
                    f"cost budget: {spent:.6f} of {c.cost_budget:.6f} spent; the next call could cost "
                    f"{worst_cost:.6f} (prompt ~{prompt} + max_output_tokens {max_output_tokens} tokens), "
                    "which would overspend"
                )


def messages_tokens(messages: list[dict[str, str]]) -> int:
    """Estimated prompt tokens of a chat request."""
    return sum(estimate_tokens(m["content"]) + MESSAGE_OVERHEAD_TOKENS for m in messages) + 3
