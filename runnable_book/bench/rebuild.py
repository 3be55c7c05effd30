"""How long the edit-and-look loop takes: `make book` against Jupyter Book's own build.

    python -m runnable_book.bench.rebuild [--repeat 3] [--page book/15_07_structured_stores.md]

Measures, each --repeat times (median reported), on the working tree (restored after):
* ``make book`` after a one-phrase prose edit of one page;
* ``jupyter-book build .`` after the same edit (its stored notebook re-paired first,
  untimed, so Sphinx does the same work: our extension refuses a stale pairing);
* ``make book`` with nothing changed.
Writes _build/bench/rebuild.json. Timings on a shared machine are noisy: rerun on a quiet one.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from runnable_book.repository import ROOT

JUPYTER_BOOK = ROOT / ".venv" / "bin" / "jupyter-book"
PY = ROOT / ".venv" / "bin" / "python"
PHRASE = " (A one-phrase edit for the benchmark.)"


def run(command: list[str]) -> float:
    started = time.monotonic()
    subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - started


def first_prose_line(text: str) -> int:
    """Index of the first paragraph line outside top-matter, fences and headings."""
    lines, fenced, front = text.split("\n"), False, text.startswith("---")
    for index, line in enumerate(lines):
        if front:
            front = not (index > 0 and line.strip() == "---")
            continue
        if line.startswith(("```", ":::")):
            fenced = not fenced
            continue
        if not fenced and line.strip() and line[0].isalpha():
            return index
    raise SystemExit("no prose line to edit")


def edited(text: str) -> str:
    lines = text.split("\n")
    index = first_prose_line(text)
    lines[index] += PHRASE
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--page", type=Path, default=ROOT / "book" / "15_07_structured_stores.md")
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "bench" / "rebuild.json")
    args = parser.parse_args(argv)
    page = args.page.resolve()
    original = page.read_text()
    make_book, jupyter_book, no_op = [], [], []
    try:
        run(["make", "book"])  # start from a built book
        for _ in range(args.repeat):
            page.write_text(edited(original))
            make_book.append(run(["make", "book"]))
            page.write_text(original)
            run(["make", "book"])
            page.write_text(edited(original))
            run([str(PY), "-m", "runnable_book.pipeline.execute_pages", "sync", str(page)])
            jupyter_book.append(run([str(JUPYTER_BOOK), "build", "."]))
            page.write_text(original)
            run(["make", "book"])
            no_op.append(run(["make", "book"]))
    finally:
        page.write_text(original)
        run(["make", "book"])
    result = {
        "page": str(page.relative_to(ROOT)),
        "make_book_after_prose_edit_s": round(statistics.median(make_book), 2),
        "jupyter_book_build_after_same_edit_s": round(statistics.median(jupyter_book), 2),
        "ratio": round(statistics.median(make_book) / statistics.median(jupyter_book), 2),
        "no_op_make_book_s": round(statistics.median(no_op), 2),
        "runs": {"make_book": make_book, "jupyter_book": jupyter_book, "no_op": no_op},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    for key, value in result.items():
        if key != "runs":
            print(f"{key:>40}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
