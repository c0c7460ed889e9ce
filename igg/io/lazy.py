"""Public names imported on first use (PEP 562's module ``__getattr__``): a package lists where each of its
names lives and gets a ``__getattr__`` that imports the home module when the name is first asked for, and
keeps the value, so the next look-up is a plain attribute. ``import igg`` (and the command line's start) then
costs no more than the package files themselves."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping


def lazy_names(package: str, homes: Mapping[str, str]) -> Callable[[str], object]:
    """The module ``__getattr__`` of ``package`` for the names of ``homes`` (name -> the module it lives
    in)."""
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> object:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        namespace[name] = value
        return value

    return __getattr__


__all__ = ["lazy_names"]
