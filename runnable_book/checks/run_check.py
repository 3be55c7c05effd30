"""Run every code cell of built pages in headless Chromium, as a reader would with
"Run in your browser", and compare each cell's output with the stored notebook's.

Usage:
    python -m runnable_book.checks.run_check _build/html [--page book/15_01_corpus_and_search_stub.html ...]

Shared by the site tests (tests/test_browser_run.py) and the benchmark
(runnable_book/bench/run_in_browser.py). The standard is nbval's: a cell's stream text (stdout,
stderr) and the text/plain of its values must equal the stored notebook's exactly.
Page cells are matched to stored cells by their source text, not their position, so a
stored cell that the page does not show (e.g. a hidden setup cell) changes nothing.
A cell that draws figures (it imports matplotlib) must also show, for each stored image,
a figure drawn in the page (a PNG the page's Python made, not the stored file) carrying
the stored image's alt text; the figure's text/plain is compared like any value's.
The page is run by the browser driver, runnable_book/browser/page_runner.py.
"""

from __future__ import annotations

import argparse
import ast
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from runnable_book.browser.chromium import shorten
from runnable_book.browser.local_site import find_pages
from runnable_book.browser.page_runner import BrowserRunner, PageRun
from runnable_book.repository import ROOT

BOOK = ROOT / "book"
LOADER_ID = "browser-run-loader"


# --------------------------------------------------------------------------
# What the stored notebook says
# --------------------------------------------------------------------------


def imports_matplotlib(source: str) -> bool:
    """The test's own rule for a figure cell: an import of matplotlib (read with ast)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
            [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
        if any(name.split(".")[0] == "matplotlib" for name in names):
            return True
    return False


def expected_outputs(cell) -> list[tuple[str, str]]:
    """A stored cell's outputs as nbval compares them: stream text (consecutive writes to
    one stream joined) and each value's text/plain."""
    outputs: list[tuple[str, str]] = []
    for output in cell.outputs:
        if output.output_type == "stream":
            if outputs and outputs[-1][0] == output.name:
                outputs[-1] = (output.name, outputs[-1][1] + output.text)
            else:
                outputs.append((output.name, output.text))
        elif output.output_type in ("execute_result", "display_data") and "text/plain" in output.data:
            outputs.append(("text/plain", output.data["text/plain"]))
        elif output.output_type == "error":
            outputs.append(("error", output.ename))
    return outputs


def check_figures(cell: dict, stored_cell) -> list[str]:
    """A figure cell as the page shows it after running: one image drawn in the page per
    stored image, each loaded and visible with the stored image's alt text, and no stored
    image left showing."""
    stored = sum("image/png" in o.get("data", {}) for o in stored_cell.outputs)
    images = cell["images"]
    problems = []
    if len(images) != stored:
        problems.append(f"{len(images)} figures drawn in the page, the stored notebook has {stored}")
    for n, image in enumerate(images):
        alt = cell["storedAlts"][n] if n < len(cell["storedAlts"]) else ""
        if not (image["drawnInPage"] and image["loaded"] and image["visible"]):
            problems.append(f"figure {n + 1} is not a visible image drawn in the page: {shorten(str(image))}")
        if not image["alt"] or image["alt"] != alt:
            problems.append(f"figure {n + 1} has alt text {image['alt']!r}, the stored figure {alt!r}")
    if cell["storedImagesShown"]:
        problems.append("the stored figure still shows beside the one drawn in the page")
    return problems


def stored_notebook(page: str) -> Path:
    """book/x.html -> book/x.ipynb in the repository (what nbval checks)."""
    return ROOT / Path(page).with_suffix(".ipynb")


def pages_with_code(site: Path) -> list[str]:
    """Built pages that carry the loader, i.e. have code cells."""
    return [p for p in find_pages(site) if f'id="{LOADER_ID}"' in (site / p).read_text(encoding="utf-8")]


# --------------------------------------------------------------------------
# One page's run, against its stored notebook
# --------------------------------------------------------------------------


@dataclass
class Comparison:
    matched: int = 0  # cells whose output equals the stored one
    runnable: int = 0  # every code cell of the page
    figures: int = 0  # figure cells that drew each of their figures in the page
    problems: list[str] = field(default_factory=list)


def compare(run: PageRun, notebook: Path) -> Comparison:
    """Every page cell against its stored cell, found by source text."""
    stored = {}
    for cell in nbformat.read(notebook, as_version=4).cells:
        if cell.cell_type == "code":
            stored.setdefault(cell.source.rstrip("\n"), cell)
    result = Comparison(problems=list(run.problems))
    for cell in run.cells:
        where = f"{run.page}, code cell {cell['number']}"
        stored_cell = stored.get(cell["source"].rstrip("\n"))
        if stored_cell is None:
            result.problems.append(f"{where}: no cell of {notebook.name} has this source")
            continue
        if imports_matplotlib(stored_cell.source):
            figure_problems = check_figures(cell, stored_cell)
            result.problems += [f"{where}: {problem}" for problem in figure_problems]
            result.figures += not figure_problems
        result.runnable += 1
        expected = [list(o) for o in expected_outputs(stored_cell)]
        if cell["outputs"] == expected:
            result.matched += 1
        else:
            result.problems.append(
                f"{where} ({cell['state']}): output differs from {notebook.name}\n"
                f"  expected: {expected!r}\n  got:      {cell['outputs']!r}")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path)
    parser.add_argument("--page", action="append", dest="pages")
    args = parser.parse_args(argv)
    failed = 0
    with BrowserRunner(args.site) as runner:
        for page in args.pages or pages_with_code(args.site):
            run = runner.run_page(page)
            result = compare(run, stored_notebook(page))
            print(f"{page}: {result.matched}/{result.runnable} cells match, {result.figures} figure cells drawn, "
                  f"first output {run.seconds_to_first_output:.1f} s, all {run.seconds_to_all_outputs:.1f} s")
            for problem in result.problems:
                print("  " + problem)
            failed += bool(result.problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
