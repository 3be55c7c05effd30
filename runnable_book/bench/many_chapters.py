"""A book of many chapters beside this one: do the build's costs stay flat as a book grows?

    python -m runnable_book.bench.many_chapters [--chapters 20] [--steps clean,prose,saved,check,reader,pdf] [--repeats 3] [--reuse]

Two copies of this repository's sources (clean_build_compare.sources_copy: no environment, no
builds) under _build/bench/many-chapters/: the book as it is, one chapter, and the same book
grown to --chapters chapters by renamed copies of sections 15.1-15.10 (benchmark data, never
published; the opening, the exercises and the references stay single). Chapter c's pages are
book/c_nn_*.md titled "c.n ...", and every name chapter 15 saves is renamed ``name_cC`` where
code uses it (a name is saved once in a book), figure names likewise. In each copy, timed:

* ``clean``: every stored notebook removed, then the graph's ``book`` (the library, every page
  executed, the assets, the diagrams, the HTML): seconds, and seconds per page;
* ``prose``: a phrase added to 15.7's first paragraph (as runnable_book/bench/rebuild.py does), then
  ``book``; --repeats times, the books taking turns, the median taken;
* ``saved``: ``token_count`` (saved on 15.8, used there and on 15.11) edited, then ``book``:
  the same pages re-execute in both books, so what differs is what the book's size costs;
  --repeats times (the edit, then its revert), the books taking turns, the median taken;
* ``check``: after that edit, the part of ``make check`` that reads the book (the library in
  sync, every stored notebook paired, the edited page under nbval). The rest of ``make check``
  is this chapter's own tests, which a generated book fails by design (its pages are not the
  chapter delivered);
* ``reader``: what a reader meets in each built site, in headless Chromium, served as a static
  host serves it: a first visit to 15.2 (runnable_book/bench/first_visit.py: the bytes until the
  page is kept offline, the bytes with the data saver on, when only the page itself loads) and
  15.1's click to its first output, cold and cached (runnable_book/bench/run_in_browser.py
  --timing-only). Its figures are bytes and seconds, not a build's cost: their ratios are
  printed apart;
* ``pdf``: every PDF of the book printed again from its one-page build (`make pdf`'s second
  half; the build made first, untimed, when missing): the seconds of all of them, and of
  chapter 15's, whose pages are the same in both books (in a book of several it is printed from
  those pages cut out of the whole book's). Printed apart, as the reader's figures.

Prints each step's seconds in both books and their ratio, on the clock and of CPU (the CPU's
ratio is the one that holds on a busy machine); writes _build/bench/many_chapters.json.
Minutes: the clean build of 20 chapters executes about 200 pages. Quote it from a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import re
import shutil
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from runnable_book.bench import rebuild
from runnable_book.checks.clean_build_compare import python_in, sources_copy
from runnable_book.pipeline.library_names import defined_names
from runnable_book.repository import ROOT, TOOL

OUT = ROOT / "_build" / "bench"
SCRATCH = OUT / "many-chapters"
STEPS = ["clean", "prose", "saved", "check", "reader", "pdf"]
BUILD_STEPS = STEPS[:-2]  # (costs of the build; reader is what its site costs a reader, pdf its prints)
FIRST = 15  # the book's chapter, the one copied
PROSE_PAGE, SAVED_PAGE = "book/15_07_structured_stores.md", "book/15_08_long_context_rag_cache.md"
SAVED_EDIT = ("    return len(tokenize(text))", "    return len(list(tokenize(text)))")
VISITED_PAGE, CLICKED_PAGE = "book/15_02_one_shot_rag.html", "book/15_01_corpus_and_search_stub.html"


def saved_names(book: Path) -> list[str]:
    """Every name chapter 15's module defines (private ones too), longest first."""
    import ast

    tree = ast.parse((book / "chapter_lib" / f"chapter{FIRST}.py").read_text())
    return sorted({name for name, _ in defined_names(tree)}, key=len, reverse=True)


def renamed(text: str, chapter: int, names: list[str]) -> str:
    """A section of chapter 15 as a section of ``chapter``: its title's number, the names it saves
    and uses (never an attribute: ``r.score`` stays), its figures' names."""
    text = re.sub(rf"^# {FIRST}\.(\d+) ", rf"# {chapter}.\1 ", text, flags=re.M)
    text = re.sub(r"\bfig-([\w-]+)", rf"fig-\1-c{chapter}", text)
    text = text.replace(f"chapter_lib.chapter{FIRST}", f"chapter_lib.chapter{chapter}")
    pattern = re.compile(r"(?<![.\w])(" + "|".join(map(re.escape, names)) + r")\b")
    return pattern.sub(lambda m: f"{m.group(1)}_c{chapter}", text)


def grow(book: Path, chapters: int) -> int:
    """Add chapters 16.. to the copy at ``book``, each a renamed copy of 15.1-15.10; the page count."""
    names = saved_names(book)
    sections = sorted(p for p in (book / "book").glob(f"{FIRST}_*.md") if "exercises" not in p.name)
    toc = book / "_toc.yml"
    entries = []
    for chapter in range(FIRST + 1, FIRST + chapters):
        for page in sections:
            copy = book / "book" / page.name.replace(f"{FIRST}_", f"{chapter}_", 1)
            copy.write_text(renamed(page.read_text(), chapter, names))
            entries.append(f"  - file: book/{copy.stem}\n")
    text = toc.read_text()
    toc.write_text(text.replace("  - file: book/references\n", "".join(entries) + "  - file: book/references\n"))
    return len(re.findall(r"^\s*- file: ", toc.read_text(), re.M)) + 1  # (and the root)


@dataclass(frozen=True)
class Cost:
    """A step's seconds on the clock and of CPU (user and system, of the step's processes and
    the kernels they ran): the clock's figure is the one to quote from a quiet machine; the
    CPU's holds on a busy one, where the clock's is the machine's as much as the step's."""

    wall: float
    cpu: float

    def __add__(self, other: "Cost") -> "Cost":
        return Cost(self.wall + other.wall, self.cpu + other.cpu)


def python(book: Path, *args: str) -> Cost:
    """``python *args`` in the copy (its kernels import the copy's chapter_lib); its cost, also
    said as it ends (a run of many chapters takes long: what it has measured so far shows)."""
    started, cpu = time.monotonic(), children_cpu()
    done = python_in(book, *args)
    if done.returncode != 0:
        raise SystemExit(f"{book.name}: {' '.join(args)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    cost = Cost(time.monotonic() - started, children_cpu() - cpu)
    print(f"  {book.name}: {' '.join(args[-2:])}: {cost.wall:.1f} s ({cost.cpu:.1f} s of CPU)", flush=True)
    return cost


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    if old not in text:
        raise SystemExit(f"{path}: {old!r} not found (the benchmark's edit)")
    path.write_text(text.replace(old, new, 1))


GRAPH = ("-m", "runnable_book.pipeline.artefact_graph", "book")


def measure(book: Path, steps: list[str]) -> dict[str, Cost]:
    """The ``clean`` and ``check`` steps in one book (``prose`` and ``saved``: taking_turns)."""
    graph, seconds = GRAPH, {}
    if "clean" in steps:
        for stored in (book / "book").glob("*.ipynb"):
            stored.unlink()
    if "clean" in steps or not (book / "_build" / "html" / "index.html").is_file():
        seconds["clean"] = python(book, *graph)  # (the other steps start from a built book)
    if "check" in steps:
        stored = Path(SAVED_PAGE).with_suffix(".ipynb").as_posix()
        seconds["check"] = (python(book, "-m", "runnable_book.pipeline.extract_library", "--check", "--skip-recorded")
                            + python(book, "-m", "runnable_book.pipeline.execute_pages", "check", "--skip-synced")
                            + python(book, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval",
                                     "--nbval-current-env", stored))
    if "clean" not in steps:
        seconds.pop("clean", None)
    return seconds


def edit_prose(book: Path) -> None:
    prose = book / PROSE_PAGE
    prose.write_text(rebuild.edited(prose.read_text()))  # (the rebuild benchmark's one-phrase edit)


def edit_saved(book: Path) -> None:
    saved = book / SAVED_PAGE  # (edited, or back as it was when the run before this one edited it)
    edit(saved, *(SAVED_EDIT if SAVED_EDIT[0] in saved.read_text() else SAVED_EDIT[::-1]))


def taking_turns(books: dict[str, Path], repeats: int, edit_book) -> dict[str, Cost]:
    """``edit_book(book)`` then ``book``, in every book, the median of ``repeats`` such builds
    each. The books take turns, edit by edit: such a build takes seconds, and a machine whose
    speed drifts over a minute (another tenant, a warmer disk cache) would otherwise give one
    book its slow minute."""
    costs: dict[str, list[Cost]] = {label: [] for label in books}
    for _ in range(repeats):
        for label, book in books.items():
            edit_book(book)
            costs[label].append(python(book, *GRAPH))
    return {label: Cost(statistics.median(c.wall for c in runs), statistics.median(c.cpu for c in runs))
            for label, runs in costs.items()}


def reader_figures(book: Path, label: str, repeats: int) -> dict[str, float]:
    """A reader's figures in ``book``'s built site (the ``reader`` step), each bench's report
    kept beside this one's (``_build/bench/many-chapters-<label>-*.json``)."""
    from runnable_book.bench import first_visit, run_in_browser

    site, visit, click = book / "_build" / "html", OUT / f"many-chapters-{label}-first-visit.json", \
        OUT / f"many-chapters-{label}-click.json"
    first_visit.main([str(site), "--page", VISITED_PAGE, "--out", str(visit)])
    run_in_browser.main([str(site), "--page", CLICKED_PAGE, "--timing-only", "--skip-figure",
                         "--repeat", str(repeats), "--out", str(click)])
    visited, clicked = json.loads(visit.read_text()), json.loads(click.read_text())["timing"]["first_output"]
    return {"first visit, kB until kept offline": round(visited["first_visit"]["bytes"] / 1e3, 1),
            "first visit, kB with the data saver": round(visited["first_visit_data_saver"]["bytes"] / 1e3, 1),
            "first visit, s until kept offline": visited["first_visit"]["seconds_until_kept"],
            "click to first output, cold, s": clicked["cold"]["median"],
            "click to first output, cached, s": clicked["cached"]["median"]}


def pdf_figures(book: Path, label: str) -> dict[str, float]:
    """The ``pdf`` step: ``book``'s PDFs printed again into _build/bench/many-chapters-<label>-pdf/,
    as print_pdf.py says each one's seconds."""
    from runnable_book.pipeline.artefact_steps import PDF_FOLDER, SINGLEHTML

    singlehtml = book / SINGLEHTML.relative_to(ROOT)
    if not (singlehtml / "index.html").is_file():
        python(book, "-m", "runnable_book.pipeline.artefact_graph", "pdf")
        # (and the PDFs it printed taken away: a book with a PDF prints it again on every
        # `book`, and the build steps are measured as an author without one meets them)
        shutil.rmtree(book / PDF_FOLDER.relative_to(ROOT))
    out = OUT / f"many-chapters-{label}-pdf"
    shutil.rmtree(out, ignore_errors=True)
    started = time.monotonic()
    done = python_in(book, "-m", "runnable_book.pipeline.print_pdf", str(singlehtml), str(out))
    if done.returncode != 0:
        raise SystemExit(f"{book.name}: printing its PDFs failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    every = time.monotonic() - started
    printed = {Path(name).name: float(seconds) for name, seconds
               in re.findall(r"^(\S+\.pdf): .* printed in ([\d.]+) s$", done.stdout, re.M)}
    print(f"  {book.name}: {len(printed)} PDFs printed in {every:.1f} s", flush=True)
    return {"every PDF, s": round(every, 1), "PDFs": len(printed),
            f"chapter {FIRST}'s PDF, s": printed[f"chapter{FIRST}.pdf"]}


def merged(last: dict, new: dict) -> dict:
    """``last`` with ``new``'s values in, nested dictionaries merged the same way."""
    return {**last, **{key: merged(last[key], value) if isinstance(value, dict) and isinstance(last.get(key), dict)
                       else value for key, value in new.items()}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chapters", type=int, default=20)
    parser.add_argument("--steps", default=",".join(STEPS), help=f"some of {','.join(STEPS)}")
    parser.add_argument("--repeats", type=int, default=3,
                        help="prose edits, and saved edits, per book, their median taken (default 3)")
    parser.add_argument("--reuse", action="store_true",
                        help="the two books of the last run, with this repository's tool copied in and built "
                             "once untimed (a change to the tool measured in minutes, not after the clean "
                             "build's half hour); not with the clean step")
    args = parser.parse_args(argv)
    steps = [s for s in args.steps.split(",") if s]
    if unknown := sorted(set(steps) - set(STEPS)):
        parser.error(f"unknown steps {unknown}; the steps are {STEPS}")
    if args.reuse and "clean" in steps:
        parser.error("--reuse measures the steps after a clean build: leave `clean` out of --steps")
    books, pages = {}, {}
    if args.reuse:
        for label in ("one", "many"):
            books[label] = book = SCRATCH / label
            if not (book / "_build" / "html" / "index.html").is_file():
                parser.error(f"--reuse: {book} has no built book: run without --reuse first")
            shutil.rmtree(book / TOOL.name)
            shutil.copytree(TOOL, book / TOOL.name, ignore=shutil.ignore_patterns("__pycache__", "node_modules"))
            python(book, "-m", "runnable_book.pipeline.artefact_graph", "book")  # (the tool's change, absorbed)
            pages[label] = len(re.findall(r"^\s*- file: ", (book / "_toc.yml").read_text(), re.M)) + 1
    else:
        shutil.rmtree(SCRATCH, ignore_errors=True)
        for label, chapters in (("one", 1), ("many", args.chapters)):
            book = sources_copy(ROOT, SCRATCH / label)
            python(book, "-m", "runnable_book.pipeline.extract_library")  # (the copies' chapters need their modules first)
            pages[label] = grow(book, chapters) if chapters > 1 else len(
                re.findall(r"^\s*- file: ", (book / "_toc.yml").read_text(), re.M)) + 1
            books[label] = book
    costs = {label: measure(book, [step for step in steps if step == "clean"]) for label, book in books.items()}
    for step, edit_book in (("prose", edit_prose), ("saved", edit_saved)):
        if step in steps or (step == "saved" and "check" in steps):  # (check reads what the saved edit left)
            for label, cost in taking_turns(books, args.repeats, edit_book).items():
                costs[label][step] = cost
    for label, book in books.items():
        costs[label].update(measure(book, [step for step in steps if step == "check"]))
    readers = ({label: reader_figures(book, label, args.repeats) for label, book in books.items()}
               if "reader" in steps else {})
    prints = {label: pdf_figures(book, label) for label, book in books.items()} if "pdf" in steps else {}
    results = {label: {step: cost.wall for step, cost in steps_.items()} for label, steps_ in costs.items()}
    cpu = {label: {step: cost.cpu for step, cost in steps_.items()} for label, steps_ in costs.items()}
    report = {"chapters": {"one": 1, "many": args.chapters}, "pages": pages, "load_average": os.getloadavg(),
              "seconds": results, "ratio": {step: round(results["many"][step] / results["one"][step], 2) for step in results["one"]},
              "cpu_seconds": cpu, "cpu_ratio": {step: round(cpu["many"][step] / cpu["one"][step], 2) for step in cpu["one"]}}
    if readers:
        report["reader"] = {**readers, "ratio": {figure: round(readers["many"][figure] / readers["one"][figure], 2)
                                                 for figure in readers["one"]}}
    if prints:
        report["pdf"] = {**prints, "ratio": {figure: round(prints["many"][figure] / prints["one"][figure], 2)
                                             for figure in prints["one"]}}
    if "clean" in results["one"]:
        report["seconds_per_page"] = {label: round(results[label]["clean"] / pages[label], 2) for label in results}
    OUT.mkdir(parents=True, exist_ok=True)
    written = OUT / "many_chapters.json"
    if args.reuse and written.is_file():  # (the same two books: the steps not run keep their last figures)
        report = merged(json.loads(written.read_text()), report)
    written.write_text(json.dumps(report, indent=1) + "\n")
    print(f"{'step':<8}{'1 chapter':>12}{f'{args.chapters} chapters':>14}{'ratio':>8}{'CPU ratio':>11}")
    for step in results["one"]:
        print(f"{step:<8}{results['one'][step]:>11.1f}s{results['many'][step]:>13.1f}s{report['ratio'][step]:>8.2f}"
              f"{report['cpu_ratio'][step]:>11.2f}")
    for figure, ratio in (report["reader"]["ratio"].items() if readers else ()):  # (measured by this run)
        print(f"reader: {figure}: {readers['one'][figure]:g} and {readers['many'][figure]:g}, ratio {ratio:.2f}")
    for figure, ratio in (report["pdf"]["ratio"].items() if prints else ()):
        print(f"pdf: {figure}: {prints['one'][figure]:g} and {prints['many'][figure]:g}, ratio {ratio:.2f}")
    print(f"pages: {pages['one']} and {pages['many']}" + (
        f"; clean build per page: {report['seconds_per_page']['one']} s and {report['seconds_per_page']['many']} s"
        if "seconds_per_page" in report else "") + f"; load average at the end: {report['load_average'][0]:.1f}")
    print(f"written: {(OUT / 'many_chapters.json').relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
