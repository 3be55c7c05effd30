"""The floor under a prose edit: Jupyter Book alone on the same pages, none of this tool.

    python -m runnable_book.bench.sphinx_floor [--repeats 3]

A prose edit's rebuild on a book of 20 chapters should cost at most 1.25 times what it
costs this one-chapter book. Part of that rebuild is not ours to make faster: Jupyter Book itself
(Sphinx, MyST-NB, the theme, sphinxcontrib-mermaid, sphinxcontrib-bibtex) reading the edited page
and writing it, with a build environment that holds every page. This measures that part alone.

It takes the two books of runnable_book/bench/many_chapters.py (_build/bench/many-chapters/one
and many, with their stored notebooks: `make bench-chapters` makes them, in half an hour or more),
and makes of each a plain Jupyter Book in _build/bench/sphinx-floor/: the stored notebooks as
its pages (the same cells and outputs the site shows), the book's `_toc.yml`, bibliography and
`_config.yml` (this repository's) less everything of this tool's (its Sphinx extension and that extension's
settings), executing nothing. In each: one clean `jupyter-book build`, then --repeats times a
phrase added to 15.7's first paragraph and `jupyter-book build` again, the two books in turn.
Prints the median seconds of the edited rebuild in each book and their ratio, beside the tool's
own (from _build/bench/many_chapters.json, when there); writes _build/bench/sphinx_floor.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import yaml

from runnable_book.bench import rebuild
from runnable_book.bench.many_chapters import PROSE_PAGE, SCRATCH as BOOKS
from runnable_book.repository import ROOT

OUT = ROOT / "_build" / "bench"
SCRATCH = OUT / "sphinx-floor"
TOOL_EXTENSION = "runnable_book.sphinx_ext"
# Settings only this tool's extension reads (Sphinx would warn of each as unknown without it),
# or whose value is a plugin it registers (the round-bracketed citation style).
TOOL_SETTINGS = {"book_offline_copy", "nb_custom_formats", "chapter_pdf", "chapter_pdf_subject",
                 "bibtex_reference_style", "bibtex_default_style"}


def plain_book(book: Path, floor: Path) -> Path:
    """``book`` (a many_chapters copy) as a Jupyter Book of its stored notebooks at ``floor``."""
    shutil.rmtree(floor, ignore_errors=True)
    (floor / "book").mkdir(parents=True)
    # (This repository's settings, not the copy's: the copy may be older than the tool's name.)
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    sphinx = config.setdefault("sphinx", {})
    sphinx["extra_extensions"] = [e for e in sphinx.get("extra_extensions", []) if e != TOOL_EXTENSION]
    # (The tool's book excludes its stored notebooks, which it reads beside their pages.)
    config["exclude_patterns"] = [p for p in config.get("exclude_patterns", []) if not p.endswith(".ipynb")]
    sphinx["config"] = {k: v for k, v in sphinx.get("config", {}).items() if k not in TOOL_SETTINGS}
    # (Pyodide and the rest of what the tool's build serves: not a plain book's.)
    sphinx["config"]["html_static_path"] = ["book/_static"]
    (floor / "_config.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    shutil.copy(book / "_toc.yml", floor / "_toc.yml")
    # (And the diagrams the pages show as images: a page whose image is missing is read again
    # on every build, which would be a cost of the copy's, not of Jupyter Book's.)
    for folder in ("_static", "_diagrams"):
        if (book / "book" / folder).is_dir():
            shutil.copytree(book / "book" / folder, floor / "book" / folder)
    shutil.copy(book / "book" / "references.bib", floor / "book")
    missing = []
    for md in (book / "book").glob("*.md"):
        stored = md.with_suffix(".ipynb")
        if stored.exists():
            shutil.copy(stored, floor / "book")
        elif "```{code-cell}" in md.read_text():
            missing.append(md.name)
        else:  # (a page of prose only: the references, the opening)
            shutil.copy(md, floor / "book")
    if missing:
        raise SystemExit(f"{book}: no stored notebook for {', '.join(sorted(missing)[:3])}...: "
                         "run `make bench-chapters` (its clean build stores every page's notebook)")
    return floor


def build(floor: Path) -> tuple[float, float]:
    """`jupyter-book build` of ``floor``: its seconds, on the clock and of CPU (user and system:
    the figure that holds on a busy machine, where the clock's is the machine's as much as ours)."""
    started, cpu = time.monotonic(), children_cpu()
    done = subprocess.run([sys.executable, "-c", "import sys; from jupyter_book.cli.main import main; sys.exit(main())",
                           "build", str(floor), "--builder", "html"], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{floor}: jupyter-book build failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return time.monotonic() - started, children_cpu() - cpu


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def edit_prose(floor: Path) -> None:
    """The rebuild benchmark's one-phrase edit, in the stored notebook's first prose cell that takes it."""
    path = floor / Path(PROSE_PAGE).with_suffix(".ipynb")
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            try:
                cell.source = rebuild.edited(cell.source)
            except SystemExit:  # (a heading alone: no prose line in it)
                continue
            nbformat.write(notebook, path)
            return
    raise SystemExit(f"{path}: no prose cell took the benchmark's edit")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="edited rebuilds per book (default 3)")
    args = parser.parse_args(argv)
    floors = {label: plain_book(BOOKS / label, SCRATCH / label) for label in ("one", "many")}
    pages = {label: len(list((floor / "book").glob("*.ipynb"))) + len(list((floor / "book").glob("*.md")))
             for label, floor in floors.items()}
    clean = {label: build(floor) for label, floor in floors.items()}
    print(f"clean builds: {clean['one'][0]:.1f} s and {clean['many'][0]:.1f} s", flush=True)
    edited: dict[str, list[tuple[float, float]]] = {"one": [], "many": []}
    for repeat in range(args.repeats):
        for label, floor in floors.items():
            edit_prose(floor)
            edited[label].append(build(floor))
            print(f"  {label}: edited rebuild {repeat + 1}: {edited[label][-1][0]:.1f} s ({edited[label][-1][1]:.1f} s of CPU)",
                  flush=True)
    median = {label: statistics.median(wall for wall, _ in times) for label, times in edited.items()}
    median_cpu = {label: statistics.median(cpu for _, cpu in times) for label, times in edited.items()}
    report = {"pages": pages, "load_average": os.getloadavg(), "clean_seconds": clean,
              "prose_edit_seconds_and_cpu": edited, "prose_edit_median": median, "prose_edit_median_cpu": median_cpu,
              "ratio": round(median["many"] / median["one"], 2),
              "cpu_ratio": round(median_cpu["many"] / median_cpu["one"], 2)}
    tool = OUT / "many_chapters.json"
    if tool.exists():
        ours = json.loads(tool.read_text())
        report["tool_prose_edit"] = {"one": ours["seconds"]["one"].get("prose"),
                                     "many": ours["seconds"]["many"].get("prose"),
                                     "ratio": ours["ratio"].get("prose"),
                                     "cpu_ratio": ours.get("cpu_ratio", {}).get("prose")}
    (OUT / "sphinx_floor.json").write_text(json.dumps(report, indent=1) + "\n")
    print(f"Jupyter Book alone, a prose edit: {median['one']:.1f} s ({pages['one']} pages) and "
          f"{median['many']:.1f} s ({pages['many']} pages): {report['ratio']:.2f}x; of CPU: "
          f"{median_cpu['one']:.1f} s and {median_cpu['many']:.1f} s: {report['cpu_ratio']:.2f}x")
    if "tool_prose_edit" in report and report["tool_prose_edit"]["ratio"]:
        print(f"the tool's whole `make book`, the same edit (many_chapters.json): {report['tool_prose_edit']['ratio']:.2f}x"
              + (f"; of CPU: {report['tool_prose_edit']['cpu_ratio']:.2f}x" if report["tool_prose_edit"]["cpu_ratio"] else ""))
    print(f"written: {(OUT / 'sphinx_floor.json').relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
