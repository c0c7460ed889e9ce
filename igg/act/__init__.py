"""The act step: validation rules and applying actions with a verdict for each.

``Actor``, ``ApplyMode`` and ``RULES`` are imported on first use (PEP 562's module ``__getattr__``), so a
module of the package that needs none of them (``igg.act.counts``) is imported without the graph and its
models.
"""

import typing

from igg.io.lazy import lazy_names as _lazy_names

if typing.TYPE_CHECKING:
    from igg.act.apply import Actor, ApplyMode
    from igg.act.rules import RULES

__getattr__ = _lazy_names(
    __name__, {"Actor": "igg.act.apply", "ApplyMode": "igg.act.apply", "RULES": "igg.act.rules"}
)

__all__ = ["RULES", "Actor", "ApplyMode"]
