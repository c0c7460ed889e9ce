"""Every exception class IGG defines lives in ``igg/errors.py`` or is drawn in its docstring's tree."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import igg
import igg.errors


def test_every_exception_class_is_drawn_in_the_errors_module():
    found: dict[str, str] = {}
    for info in pkgutil.walk_packages(igg.__path__, "igg."):
        if info.name.endswith("__main__"):  # running them would start the command line
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if (
                inspect.isclass(obj)
                and issubclass(obj, BaseException)
                and obj.__module__ == info.name
                and not name.startswith("_")
            ):
                found[name] = info.name
    assert "SessionBusy" in found and "QueryError" in found  # the walk saw both kinds
    drawing = igg.errors.__doc__ or ""
    missing = sorted(
        f"{module}.{name}" for name, module in found.items() if not re.search(rf"\b{name}\b", drawing)
    )
    assert missing == []
