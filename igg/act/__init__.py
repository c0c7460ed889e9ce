"""The act step: validation rules and applying actions with a verdict for each."""

from igg.act.apply import Actor, ApplyMode
from igg.act.rules import RULES

__all__ = ["RULES", "Actor", "ApplyMode"]
