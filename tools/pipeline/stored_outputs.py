"""Keep each page's reader's notebook (book/X.ipynb) generated from its source (book/X.md).

    python -m tools.pipeline.stored_outputs sync           # what `make outputs` runs
    python -m tools.pipeline.stored_outputs sync --force   # re-execute every page
    python -m tools.pipeline.stored_outputs check          # fail if a .ipynb is not what its .md makes

The .md is what people edit; the .ipynb is generated from it: the reader's notebook that
launch links open (assembled by tools/pipeline/reader_notebook.py, markdown converted from MyST, a first
install cell of ours) holding the outputs the book shows, which nbval re-checks on every
`make test`. ``sync`` rewrites each .ipynb from its .md and re-executes a page only when
its inputs changed: its code cells, or the ``chapter_lib`` definitions its code reaches
(tools/pipeline/page_inputs.py; jupyter-cache keys on a page's own cells only, and would
miss a change made in an earlier section). The inputs, itemized, and their digest are
stored in the notebook's metadata, and ``sync`` ends with a change report: why each page
ran and how its outputs changed (tools/pipeline/change_report.py). Stored notebooks hold
no timestamps, timings or random cell ids, so an unchanged page rewrites to the same bytes. ``check`` regenerates every notebook in memory from its .md and the
outputs it stores, and requires the very bytes that are committed.

The HTML book (tools/sphinx_ext/page_outputs.py) renders the .md itself, with the outputs
of :func:`page_with_stored_outputs`: each .md code cell gets the outputs of its stored
counterpart, matched one to one.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from tools.pipeline import change_report
from tools.pipeline.build_lib import write_atomically
from tools.pipeline.change_report import PageRun
from tools.pipeline.page_inputs import inputs, inputs_digest
from tools.pipeline.myst_to_notebook import ConversionError
from tools.pipeline.reader_notebook import draws_figures, is_added_cell, page_install_cell, reader_notebook
from tools.pipeline.pages import BookError, shown, code_cells, notebook_pages, read_page

DIGEST_KEY = "chapter15"  # notebook metadata key holding {"inputs_sha256": ..., "inputs": {...}}
# Never an inputs digest: a page whose last run failed is re-executed, whatever changed
# (tools/pipeline/build_book.py stores such a page with its error in place).
FAILED_DIGEST = "failed"
REGENERATE = "make outputs"
TIMEOUT_S = 120
# What ipykernel reports for Python, stored in full so that JupyterLab, filling it in when
# the kernel starts, finds nothing to change (a notebook otherwise opens marked unsaved).
# Its "version" is the Python that made the outputs: taken from the kernel when a page is
# executed and kept, like the outputs, until the page is executed again.
LANGUAGE_INFO = {
    "codemirror_mode": {"name": "ipython", "version": 3},
    "file_extension": ".py",
    "mimetype": "text/x-python",
    "name": "python",
    "nbconvert_exporter": "python",
    "pygments_lexer": "ipython3",
}


# Every figure is stored twice, made by the same run of the page's code: as PNG (what the
# HTML shows) and as SVG, vectors that the PDF prints (myst-nb picks by builder:
# nb_mime_priority_overrides in _config.yml). Our kernel setup, not the chapter's code: the
# cells are unchanged. The SVG's element ids (svg.hashsalt) and date (SOURCE_DATE_EPOCH)
# are fixed, so a re-executed page stores the same bytes.
KERNEL_ARGUMENTS = ["--InlineBackend.figure_formats=png", "--InlineBackend.figure_formats=svg",
                    "--InlineBackend.rc=svg.hashsalt=chapter15",
                    "--IPKernelApp.log_level=ERROR"]  # not its warning that it listens on TCP, once per page
KERNEL_ENVIRONMENT = {"SOURCE_DATE_EPOCH": "0"}


def stored_path(md: Path) -> Path:
    return md.with_suffix(".ipynb")


def normalized(nb, digest: str, language_info: dict | None = None, itemized: dict | None = None):
    """Strip what differs between runs and machines; keep every output."""
    nb.nbformat, nb.nbformat_minor = 4, 5
    record = {"inputs_sha256": digest, **({"inputs": itemized} if itemized else {})}
    nb.metadata = nbformat.from_dict({
        "kernelspec": nb.metadata.get("kernelspec", {}),
        "language_info": language_info or {"name": "python"},
        DIGEST_KEY: record,
    })
    for number, cell in enumerate(nb.cells, start=1):
        cell.id = f"cell-{number:02d}"  # deterministic: pairs with the .md cell of that rank
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            cell.outputs = merged_streams(cell.outputs)
            for output in cell.outputs:
                output.get("metadata", {}).pop("execution", None)
    return nb


def page_code(nb) -> list:
    """The code cells that come from the .md (a reader's notebook adds an install cell)."""
    return [c for c in nb.cells if c.cell_type == "code" and not is_added_cell(c)]


def merged_streams(outputs: list) -> list:
    """Consecutive stream outputs of the same name as one output (what a reader sees).

    The kernel flushes stdout in chunks whose boundaries vary from run to run, so storing
    the chunks would make an unchanged page rewrite its notebook; nbval coalesces them too.
    """
    merged = []
    for output in outputs:
        previous = merged[-1] if merged else None
        if (output.get("output_type") == "stream" and previous is not None
                and previous.get("output_type") == "stream" and previous.get("name") == output.get("name")):
            previous["text"] += output["text"]
        else:
            merged.append(output)
    return merged


def copy_stored_outputs(md: Path, fresh, stored) -> list[str]:
    """Give each code cell of fresh (the .md) the outputs of its stored counterpart.

    Code cells are matched one to one, in order; returns how they disagree (then
    nothing is copied), naming the cell by its rank in the .md, as messages do.
    """
    ranked = [(rank, c) for rank, c in enumerate(fresh.cells, start=1) if c.cell_type == "code"]
    old = page_code(stored)
    problems = [
        f"cell {rank} (code) differs: the .md has {new.source[:60]!r}…, the .ipynb {was.source[:60]!r}…"
        for (rank, new), was in zip(ranked, old) if new.source != was.source
    ]
    if len(ranked) != len(old):
        problems.append(f"the .md has {len(ranked)} code cells, the .ipynb {len(old)}")
    if problems:
        return [f"{shown(md)} and {stored_path(md).name}: {p}" for p in problems]
    for (_, new), was in zip(ranked, old):
        new.outputs, new.execution_count = was.outputs, was.execution_count
    return []


def stale_reasons(md: Path, fresh, stored, force: bool = False) -> list[str]:
    """Why the page must be executed (empty: its stored outputs are reused, copied into fresh)."""
    if force:
        return ["FORCE=1"]
    if stored is None:
        return [f"it has no stored notebook yet ({stored_path(md).name})"]
    record = stored.metadata.get(DIGEST_KEY, {})
    if not python_version(stored):
        return ["it was never executed"]
    if record.get("inputs_sha256") == FAILED_DIGEST:
        return ["its last run failed"]
    itemized = inputs(fresh)
    if record.get("inputs_sha256") != inputs_digest(fresh, itemized):
        return change_report.reasons(record.get("inputs"), itemized)
    problems = copy_stored_outputs(md, fresh, stored)
    return ["its stored notebook's cells do not pair with the page's"] if problems else []


def page_with_stored_outputs(md: Path):
    """(the .md's notebook with the outputs its .ipynb stores, problems): what the HTML shows."""
    fresh = read_page(md)
    target = stored_path(md)
    if not target.exists():
        return fresh, [f"{shown(target)} is missing"]
    problems = copy_stored_outputs(md, fresh, nbformat.read(target, as_version=4))
    return normalized(fresh, inputs_digest(fresh)), problems


def python_version(nb) -> str | None:
    """The Python version of the kernel that made nb's outputs (None: not recorded)."""
    return nb.metadata.get("language_info", {}).get("version")


def reader_text(md: Path, executed, version: str, digest: str | None = None) -> str:
    """The bytes of md's reader's notebook, from its notebook with outputs (``executed``)
    and the version of the Python that made them; ``digest`` replaces the inputs digest
    (tools/pipeline/build_book.py marks a page that failed so that it is re-executed)."""
    itemized = inputs(executed)
    digest = digest or inputs_digest(executed, itemized)
    reader = reader_notebook(md, executed)
    return nbformat.writes(normalized(reader, digest, {**LANGUAGE_INFO, "version": version}, itemized)) + "\n"


def execute(md: Path, nb) -> None:
    """Run the page top to bottom in its own folder, as a reader's kernel would.

    The reader's notebook's install cell runs first, in the same kernel (it installs
    nothing here), so the page's cells are executions 2, 3, ... and the notebook's
    counts read naturally from its first cell; the install cell itself is not kept in nb.
    """
    if draws_figures(nb):
        # On a new machine matplotlib builds its font cache at first import and says so on
        # stderr: built here first, that note never becomes one of the page's outputs.
        import matplotlib.font_manager  # noqa: F401 (imported for its side effect)
    install = page_install_cell(nb)
    page_cells = nb.cells
    if install is not None:
        nb.cells = [install, *page_cells]
    client = NotebookClient(
        nb, timeout=TIMEOUT_S, kernel_name="python3", record_timing=False,
        resources={"metadata": {"path": str(md.parent)}}, extra_arguments=KERNEL_ARGUMENTS,
    )
    try:
        try:
            client.execute(env={**os.environ, **KERNEL_ENVIRONMENT})
        finally:
            nb.cells = page_cells
    except CellExecutionError as err:
        error = BookError(f"{failure(md, nb) or shown(md)}; {stored_path(md).name} was not changed.\n"
                          f"{ANSI.sub('', err.traceback or '')}".rstrip())
        error.notebook = nb  # outputs up to the error: tools/pipeline/build_book.py shows them in the page
        raise error from None


ANSI = re.compile(r"\x1b\[[0-9;]*m")


def failure(md: Path, nb) -> str | None:
    """Where and what the error in an executed page is, as a person looks for it:
    ``book/x.md, code cell 6 (line 153), line 158: KeyError: 'missing'``."""
    cells = code_cells(md)
    for number, cell in enumerate(page_code(nb)):
        error = next((o for o in cell.get("outputs", []) if o.get("output_type") == "error"), None)
        if error is None:
            continue
        where = cells[number].where if number < len(cells) else f"{shown(md)}, code cell {number + 1}"
        traceback = ANSI.sub("", "\n".join(error.get("traceback", [])))
        in_cell = re.search(r"(?:Cell In\[\d+\]|<cell line: \d+>|Input In \[\d+\]), line (\d+)", traceback)
        line = ""
        if in_cell and number < len(cells) and cells[number].line:
            line = f", line {md_line(md, cells[number], int(in_cell.group(1)))}"
        return f"{where}{line}: {error.get('ename')}: {error.get('evalue')}"
    return None


def md_line(md: Path, cell, line_in_cell: int) -> int:
    """The .md line of a cell's line (its code starts after the fence and any options)."""
    lines = md.read_text().splitlines()
    first = cell.source.split("\n", 1)[0]
    start = next((i for i in range(cell.line, len(lines)) if lines[i] == first), cell.line)
    return start + line_in_cell


def sync_page(md: Path, force: bool = False) -> PageRun:
    """Rewrite md's stored notebook, executing the page only if its inputs changed.

    Returns what happened: status 'executed', 'updated' (rewritten from the stored outputs)
    or 'unchanged', and for an executed page why and how its outputs changed.
    """
    fresh = read_page(md)
    target = stored_path(md)
    stored = nbformat.read(target, as_version=4) if target.exists() else None
    why = stale_reasons(md, fresh, stored, force)
    if why:
        try:
            execute(md, fresh)
        except BookError as error:
            error.reasons = why
            raise
    text = reader_text(md, fresh, python_version(fresh if why else stored))
    run = PageRun(md, "executed" if why else "updated", why)
    if why:
        run.output_diff = outputs_changed(md, stored, fresh)
    if target.exists() and target.read_text() == text:
        run.status = "executed" if why else "unchanged"
        return run
    write_atomically(target, text)
    return run


def outputs_changed(md: Path, stored, executed) -> list[str]:
    """The diff of the stored and the new outputs, per code cell (empty: the same)."""
    cells = code_cells(md)
    where = [cell.where for cell in cells] if len(cells) == len(page_code(executed)) else [
        f"{shown(md)}, code cell {n}" for n in range(1, len(page_code(executed)) + 1)]
    return change_report.output_diff(page_code(stored) if stored is not None else [], page_code(executed), where)


def pairing_problems(md: Path) -> list[str]:
    """How md's committed .ipynb differs from the one its .md makes (empty when equal).

    The notebook is regenerated in memory from the .md and the outputs the .ipynb stores,
    as `make outputs` would write it, and must be the committed bytes.
    """
    fresh, problems = page_with_stored_outputs(md)
    if problems:
        return problems
    target = stored_path(md)
    version = python_version(nbformat.read(target, as_version=4)) or "(none: run `make outputs`)"
    try:
        expected = reader_text(md, fresh, version)
    except ConversionError as err:
        return [str(err)]
    committed = target.read_text()
    if committed == expected:
        return []
    return [f"{shown(target)} is not what {shown(md)} makes: {p}" for p in differences(expected, committed)]


def differences(expected: str, committed: str) -> list[str]:
    """Where two notebooks' texts differ, cell by cell, for a message a person can act on."""
    try:
        want, have = nbformat.reads(expected, as_version=4), nbformat.reads(committed, as_version=4)
    except Exception as err:  # noqa: BLE001 - a hand-broken file: say so, whatever broke
        return [f"it does not read as a notebook ({err})"]
    found = []
    md_rank = 0  # the .md cell a notebook cell comes from (the converter adds some cells)
    for number, (a, b) in enumerate(zip(want.cells, have.cells), start=1):
        md_rank += not is_added_cell(a)
        origin = "ours, added to the notebook" if is_added_cell(a) else f"from cell {md_rank} of the .md"
        if a != b:
            what = "source" if a.source != b.source else "outputs" if a.get("outputs") != b.get("outputs") else "metadata"
            found.append(f"its cell {number} ({a.cell_type}, id {a.id}, {origin}) has other {what}: "
                         f"expected {a.source[:60]!r}…, found {b.source[:60]!r}…")
    if len(want.cells) != len(have.cells):
        found.append(f"it has {len(have.cells)} cells, not {len(want.cells)}")
    if want.metadata != have.metadata:
        found.append(f"its notebook metadata differs (the inputs digest if chapter_lib changed): "
                     f"expected {dict(want.metadata)}, found {dict(have.metadata)}")
    return found or ["its text differs (formatting: rewrite it with `make outputs`)"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["sync", "check"])
    parser.add_argument("--force", action="store_true", help="re-execute every page")
    parser.add_argument("pages", nargs="*", type=Path, help="only these .md pages")
    args = parser.parse_args(argv)
    pages = [p.resolve() for p in args.pages] or notebook_pages()
    if args.command == "check":
        problems = [p for md in pages for p in pairing_problems(md)]
        for p in problems:
            print(p, file=sys.stderr)
        if problems:
            print(f"Run `{REGENERATE}` to regenerate the stored notebooks.", file=sys.stderr)
        return 1 if problems else 0
    runs = []
    try:
        for md in pages:
            runs.append(sync_page(md, force=args.force))
            print(f"{runs[-1].status:>9}  {shown(stored_path(md))}", flush=True)
    except BookError as err:  # ConversionError too: it names page and cell
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(change_report.report(runs, stored_path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
