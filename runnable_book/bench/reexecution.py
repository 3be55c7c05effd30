"""What the author's loop costs: pages executed and wall time, and what the build's checks add.

    python -m runnable_book.bench.reexecution [--repeat 3]

In a scratch copy of the committed book (git's files, in _build/bench/reexecution/), so
the working tree is never touched:
* ``make outputs`` after a `# @save` edit that one later page uses: a line added to
  ``token_count`` (saved on 15.8, imported by 15.11 alone);
* ``make outputs FORCE=1``, which re-executes every page;
each with the reproducibility check (every executed page run twice at once, in two kernels,
outputs compared: what `make outputs` does) and without it (``--run-once``): its cost.
Then, on the working tree (restored after; without a PDF, as a fresh clone's `make book`): the
build graph's own cost, on a built book:
`artefact_graph status` (every artefact's inputs checked, by content), a no-change `make book`,
and a prose-only edit's `make book` beside a bare `jupyter-book build .` of the same edit.
Each is run --repeat times (median reported). The copy's pages import the copy's chapter_lib
(PYTHONPATH), not the installed one. Writes _build/bench/reexecution.json; timings on a
shared machine are noisy: rerun on a quiet one.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

from runnable_book.repository import ROOT

SCRATCH = ROOT / "_build" / "bench" / "reexecution"
PAGE = "book/15_08_long_context_rag_cache.md"
EDIT = ('    return len(tokenize(text))\n', '    count = len(tokenize(text))\n    return count\n')


def scratch_copy() -> None:
    shutil.rmtree(SCRATCH, ignore_errors=True)
    SCRATCH.mkdir(parents=True)
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        target = SCRATCH / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)


def timed(command: list[str]) -> float:
    started = time.monotonic()
    subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - started


def graph_costs(repeat: int) -> dict:
    """The graph's own cost on the built working tree: its up-to-date check, a no-change build,
    a prose-only edit's build beside Jupyter Book's own build of the same edit."""
    from runnable_book.bench.rebuild import JUPYTER_BOOK, edited

    graph = [sys.executable, "-m", "runnable_book.pipeline.artefact_graph"]
    page = ROOT / "book" / "15_07_structured_stores.md"
    original = page.read_text()
    costs = {"status": [], "no_change_book": [], "prose_edit_book": [], "prose_edit_jupyter_book": []}
    # Without a PDF, as after `make book` on a fresh clone: with one, `make book` prints it
    # again after a page edit (the author asked for it with `make pdf`), which a bare
    # `jupyter-book build` does not do. Put back after.
    from runnable_book.pipeline.artefact_steps import pdf_path  # (the build graph's: named for the book)

    pdf = pdf_path()
    aside = pdf.with_name(pdf.name + ".bench-aside")
    if pdf.is_file():
        pdf.replace(aside)
    try:
        timed(graph + ["book"])  # from a built, up-to-date book
        for _ in range(repeat):
            costs["status"].append(timed(graph + ["status"]))
            costs["no_change_book"].append(timed(graph + ["book"]))
            page.write_text(edited(original))
            costs["prose_edit_book"].append(timed(graph + ["book"]))
            page.write_text(original)
            timed(graph + ["book"])
            page.write_text(edited(original))
            timed([sys.executable, "-m", "runnable_book.pipeline.execute_pages", "sync", str(page)])  # (re-paired, untimed)
            costs["prose_edit_jupyter_book"].append(timed([str(JUPYTER_BOOK), "build", "."]))
            page.write_text(original)
            timed(graph + ["book"])
    finally:
        page.write_text(original)
        if aside.is_file():
            aside.replace(pdf)
        timed(graph + ["book"])
    result = {name: {"seconds_median": round(statistics.median(runs), 2), "seconds": [round(r, 2) for r in runs]}
              for name, runs in costs.items()}
    result["prose_edit_ratio"] = round(result["prose_edit_book"]["seconds_median"]
                                       / result["prose_edit_jupyter_book"]["seconds_median"], 2)
    return result


def outputs(*arguments: str) -> tuple[float, int, str]:
    """(seconds, pages executed, the change report) of one `make outputs` in the copy."""
    environment = {**os.environ, "PYTHONPATH": str(SCRATCH)}
    started = time.monotonic()
    for step in (["runnable_book.pipeline.extract_library"], ["runnable_book.pipeline.execute_pages", "sync", *arguments]):
        run = subprocess.run([sys.executable, "-m", *step], cwd=SCRATCH, env=environment,
                             capture_output=True, text=True)
        if run.returncode:
            raise SystemExit(f"{' '.join(step)} failed in {SCRATCH}:\n{run.stderr}")
    seconds = time.monotonic() - started
    executed = len(re.findall(r"^ executed  ", run.stdout, flags=re.M))
    return seconds, executed, run.stdout[run.stdout.index("Change report"):]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    results = {}
    cases = (("one `# @save` edit (token_count)", [], True),
             ("one `# @save` edit, without the reproducibility check", ["--run-once"], True),
             ("FORCE=1", ["--force"], False),
             ("FORCE=1, without the reproducibility check", ["--force", "--run-once"], False))
    for name, arguments, edit in cases:
        runs = []
        for _ in range(args.repeat):
            scratch_copy()
            if edit:
                page = SCRATCH / PAGE
                assert EDIT[0] in page.read_text(), f"{PAGE} no longer has the line the benchmark edits"
                page.write_text(page.read_text().replace(*EDIT, 1))
            runs.append(outputs(*arguments))
        results[name] = {"seconds_median": round(statistics.median(r[0] for r in runs), 1),
                         "seconds": [round(r[0], 1) for r in runs], "pages_executed": runs[0][1],
                         "report": runs[0][2]}
        print(f"{name}: {results[name]['pages_executed']} pages executed, "
              f"{results[name]['seconds_median']} s (median of {args.repeat}: {results[name]['seconds']})")
    print(results["one `# @save` edit (token_count)"]["report"])
    results["graph"] = graph_costs(args.repeat)
    for name, value in results["graph"].items():
        print(f"graph, {name}: {value}")
    (ROOT / "_build" / "bench").mkdir(parents=True, exist_ok=True)
    (ROOT / "_build" / "bench" / "reexecution.json").write_text(json.dumps(results, indent=1) + "\n")
    shutil.rmtree(SCRATCH, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
