"""Build hook: ship the repository's ``schemas/*.json`` inside the package as ``igg/_schemas``.

``schemas/`` stays the documented, user-facing copy at the top of the repository; an installed IGG (a wheel,
``pip install .``, ``pipx install .``) reads the same files from ``igg/_schemas``. Everything else about the
package is declared in ``pyproject.toml``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


class BuildWithSchemas(build_py):
    """``build_py`` that also copies ``schemas/*.json`` into the built package."""

    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "igg" / "_schemas"
        target.mkdir(parents=True, exist_ok=True)
        for source in sorted((HERE / "schemas").glob("*.json")):
            shutil.copyfile(source, target / source.name)


setup(cmdclass={"build_py": BuildWithSchemas})
