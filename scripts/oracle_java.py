"""IGG's Java types, supertypes and class-level calls against the compiler's, on any source tree.

    python scripts/oracle_java.py SRC_DIR

``SRC_DIR`` must compile with ``javac`` alone (add stubs for missing annotations). The tree is compiled and
read back with ``javap -c -p -s`` (``tests/javaoracle.py``), mapped by IGG, and compared: precision, recall
and F1 of types, EXTENDS/IMPLEMENTS and class-level CALLS, with examples of what differs.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from igg.agents.code.link import link  # noqa: E402
from igg.agents.code.walk import walk  # noqa: E402
from igg.codemap.prepare import parse_all  # noqa: E402
from tests.javaoracle import compile_and_read, f1, igg_truth  # noqa: E402


def main(root: Path) -> int:
    with tempfile.TemporaryDirectory() as out:
        truth = compile_and_read(root, Path(out))
    facts, _ = parse_all(walk([root]).files, jobs=1)
    ours = igg_truth(link(facts))
    for name, want, got in (("types", set(truth.types), set(ours.types)),
                            ("EXTENDS/IMPLEMENTS", truth.supertypes, ours.supertypes),
                            ("class-level CALLS", truth.calls, ours.calls)):
        score = f1(want, got)
        print(f"{name:20} F1 {score['f1']:.3f}  precision {score['precision']:.3f}  recall {score['recall']:.3f}  "
              f"({len(want)} in javap)")
        if score["f1"] < 1.0:
            print(f"    missing {sorted(want - got)[:5]}\n    extra   {sorted(got - want)[:5]}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(Path(sys.argv[1])))
