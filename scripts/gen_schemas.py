"""Write schemas/*.schema.json from the models (``--check``: fail when a file has drifted)."""

from __future__ import annotations

import sys
from pathlib import Path

from igg.models.jsonschema import SCHEMA_MODELS, json_schema_text

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    check = "--check" in sys.argv[1:]
    stale = []
    for name in SCHEMA_MODELS:
        path = ROOT / "schemas" / f"{name}.schema.json"
        text = json_schema_text(name)
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        if check:
            stale.append(path.name)
        else:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}")
    if stale:
        print(f"schemas out of date: {', '.join(stale)}; run: python scripts/gen_schemas.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
