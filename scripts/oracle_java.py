"""IGG's Java types, supertypes and class-level calls against the compiler's, on any source tree.

    python scripts/oracle_java.py SRC_DIR [--stubs STUB_DIR] [--show N]

``SRC_DIR`` must compile with ``javac`` alone: a tree whose only outside dependencies are a few types can
name a folder of stand-in sources for them with ``--stubs`` (compiled apart, onto the class path; they are
not mapped nor counted). The tree is compiled and read back with ``javap -c -p -s`` (``tests/javaoracle.py``),
mapped by IGG, and compared: precision, recall and F1 of types, EXTENDS/IMPLEMENTS and class-level CALLS,
with up to N (default 5) examples of what differs.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from igg.codemap.link import link  # noqa: E402
from igg.codemap.walk import walk  # noqa: E402
from igg.mapping.prepare import parse_all  # noqa: E402
from tests.javaoracle import compile_and_read, f1, igg_truth  # noqa: E402


def main(root: Path, stubs: Path | None = None, show: int = 5) -> int:
    with tempfile.TemporaryDirectory() as out:
        truth = compile_and_read(root, Path(out) / "classes", stubs)
    facts, _ = parse_all(walk([root]).files, jobs=1)
    ours = igg_truth(link(facts))
    print(f"{root}: {sum(1 for _ in root.rglob('*.java'))} .java files")
    for name, want, got in (
        ("types", set(truth.types), set(ours.types)),
        ("EXTENDS/IMPLEMENTS", truth.supertypes, ours.supertypes),
        ("class-level CALLS", truth.calls, ours.calls),
    ):
        score = f1(want, got)
        print(
            f"{name:20} F1 {score['f1']:.3f}  precision {score['precision']:.3f}  recall"
            f" {score['recall']:.3f}  ({len(want)} in javap)"
        )
        if score["f1"] < 1.0:
            print(f"    missing {len(want - got)}:")
            for item in sorted(want - got)[:show]:
                print(f"      {item}")
            print(f"    extra {len(got - want)}:")
            for item in sorted(got - want)[:show]:
                print(f"      {item}")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("src", type=Path)
    parser.add_argument("--stubs", type=Path, default=None, help="stand-in sources for outside dependencies")
    parser.add_argument("--show", type=int, default=5, help="examples of each difference to print")
    args = parser.parse_args()
    sys.exit(main(args.src, args.stubs, args.show))
