"""Keep each page's reader's notebook (book/X.ipynb) generated from its source (book/X.md).

    python -m runnable_book.pipeline.execute_pages sync [PAGE.md ...]   # the pages alone (the benchmarks'; no graph)
    python -m runnable_book.pipeline.execute_pages sync --force          # re-execute every page
    python -m runnable_book.pipeline.execute_pages check                 # fail if a .ipynb is not what its .md makes
    python -m runnable_book.pipeline.execute_pages check --skip-synced   # the same, but for the pages as the build left them

(`make outputs` runs the build graph, runnable_book/pipeline/artefact_graph.py, whose `outputs` step calls
:func:`sync_page` for each page, and puts the tree back if the build fails: tree_rollback.py.)

The .md is what people edit; the .ipynb is generated from it: the reader's notebook that
launch links open (assembled by runnable_book/pipeline/reader_notebook.py, markdown converted from MyST, a first
install cell of ours) holding the outputs the book shows, which nbval re-checks on every
`make test`. ``sync`` rewrites each .ipynb from its .md and re-executes a page only when
its inputs changed: its code cells, or the ``chapter_lib`` definitions its code reaches
(runnable_book/pipeline/page_inputs.py; jupyter-cache keys on a page's own cells only, and would
miss a change made in an earlier section). The inputs, itemized, and their digest are
stored in the notebook's metadata, and ``sync`` ends with a change report: why each page
ran and how its outputs changed (runnable_book/pipeline/change_report.py). Stored notebooks hold
no timestamps, timings or random cell ids, so an unchanged page rewrites to the same bytes. ``check`` regenerates every notebook in memory from its .md and the
outputs it stores, and requires the very bytes that are committed.

Executing a page (its kernels, the two runs compared, a failure named by page, cell and line)
is runnable_book/pipeline/page_kernel.py's.

The HTML book (runnable_book/sphinx_ext/page_outputs.py) renders the .md itself, with the outputs
of :func:`page_with_stored_outputs`: each .md code cell gets the outputs of its stored
counterpart, matched one to one.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import re
import sys
from pathlib import Path

import nbformat

from runnable_book.pipeline import change_report, exercise_contract, synced_pages
from runnable_book.common.files import write_atomically
from runnable_book.pipeline.change_report import PageRun
from runnable_book.pipeline.page_inputs import inputs, inputs_digest
from runnable_book.pipeline.myst_to_notebook import ConversionError
# (The executing of a page is page_kernel.py's; sync_page calls execute through this module, which
# the tests' markers stand in for.)
from runnable_book.pipeline.page_kernel import execute, merged_streams, page_code, page_failed
from runnable_book.pipeline.reader_notebook import is_added_cell, reader_notebook
from runnable_book.pipeline.pages import FAILED_RUNS, BookError, shown, code_cells, notebook_pages, read_page

# The notebook metadata key holding {"inputs_sha256": ..., "inputs": {...}, "sources_sha256": ...}:
# named for the tool, as a notebook of any book it builds carries it.
DIGEST_KEY = "runnable_book"
# Never an inputs digest: a notebook stored so (by an older build) is re-executed, whatever changed.
FAILED_DIGEST = "failed"
REGENERATE = "make outputs"


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


def stored_path(md: Path) -> Path:
    return md.with_suffix(".ipynb")


def failed_run_path(md: Path) -> Path:
    """Where the build keeps a page's failed run (runnable_book/pipeline/site_build.py)."""
    return FAILED_RUNS / stored_path(md).name


def normalized(nb, digest: str, language_info: dict | None = None, itemized: dict | None = None):
    """Strip what differs between runs and machines; keep every output."""
    nb.nbformat, nb.nbformat_minor = 4, 5
    record = {"inputs_sha256": digest, **({"inputs": itemized} if itemized else {}),
              "sources_sha256": sources_digest(nb)}
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
                svg = output.get("data", {}).get("image/svg+xml")
                if svg is not None:
                    output["data"]["image/svg+xml"] = stable_svg_ids("".join(svg) if isinstance(svg, list) else svg)
    return nb


# matplotlib names an SVG's clip paths, markers and hatches by a hash of their geometry's floats
# as `str()` writes them (backend_svg._make_id): a last-digit difference between two CPUs' float
# arithmetic (numpy's SIMD paths differ between machines) renames an element while every drawn
# coordinate, written at fewer digits, stays the same. Each such id is named again from the
# figure's text without its ids and the element's rank in it: the same figure gets the same
# bytes on any machine, and two figures never share a name (the print inlines them together).
SVG_ID = re.compile(r'(?<=id=")([a-z])([0-9a-f]{10})(?=")')


def stable_svg_ids(svg: str) -> str:
    found = list(dict.fromkeys(m.group(0) for m in SVG_ID.finditer(svg)))
    if not found:
        return svg
    skeleton = re.sub("|".join(map(re.escape, found)), "@", svg)
    figure = hashlib.sha256(skeleton.encode()).hexdigest()
    renamed = {old: old[0] + hashlib.sha256(f"{figure}:{rank}".encode()).hexdigest()[:10]
               for rank, old in enumerate(found)}
    return re.sub("|".join(map(re.escape, found)), lambda m: renamed[m.group(0)], svg)


def sources_digest(nb) -> str:
    """A digest of the notebook's cells as written (type and source): recorded when the
    notebook is written, so a hand edit of a stored notebook is found before it is overwritten."""
    cells = [[cell.cell_type, cell.source] for cell in nb.cells]
    return hashlib.sha256(json.dumps(cells).encode()).hexdigest()


def hand_edit(md: Path, stored) -> str | None:
    """How the stored notebook was edited by hand since it was written (None: it was not)."""
    recorded = stored.metadata.get(DIGEST_KEY, {}).get("sources_sha256")
    if recorded is None or recorded == sources_digest(stored):
        return None
    fresh_reader = reader_notebook(md, read_page(md))
    target = stored_path(md)
    number = next((n for n, (a, b) in enumerate(zip(stored.cells, fresh_reader.cells), start=1)
                   if a.cell_type != b.cell_type or a.source != b.source), min(len(stored.cells), len(fresh_reader.cells)) + 1)
    origin = shown(md)
    if number <= len(fresh_reader.cells) and not is_added_cell(fresh_reader.cells[number - 1]):
        cell = fresh_reader.cells[number - 1]
        if cell.cell_type == "code":
            rank = sum(c.cell_type == "code" and not is_added_cell(c) for c in fresh_reader.cells[:number])
            cells = code_cells(md)
            origin = cells[rank - 1].where if rank <= len(cells) else f"{shown(md)}, code cell {rank}"
        else:
            origin = f"{shown(md)}, markdown cell {sum(not is_added_cell(c) for c in fresh_reader.cells[:number])}"
    return (f"{shown(target)}, cell {number}, was edited by hand (its cells are not what was last written there); "
            f"it is generated from {origin}: make the edit there, or `git checkout -- {shown(target)}` "
            f"(or delete it) to discard it. Nothing was overwritten.")


def copy_stored_outputs(md: Path, fresh, stored) -> list[str]:
    """Give each code cell of fresh (the .md) the outputs of its stored counterpart.

    Code cells are matched one to one, in order; returns how they disagree (then
    nothing is copied), naming the cell by its rank in the .md, as messages do.
    """
    ranked = [(rank, c) for rank, c in enumerate(fresh.cells, start=1) if c.cell_type == "code"]
    old = page_code(stored)
    problems = [f"cell {rank} (code) differs: {first_differing_line(new.source, was.source)}"
                for (rank, new), was in zip(ranked, old) if new.source != was.source]
    if len(ranked) != len(old):
        problems.append(f"the .md has {len(ranked)} code cells, the .ipynb {len(old)}")
    if problems:
        return [f"{shown(md)} and {stored_path(md).name}: {p}" for p in problems]
    for (_, new), was in zip(ranked, old):
        new.outputs, new.execution_count = was.outputs, was.execution_count
    return []


def first_differing_line(md_source: str, stored_source: str) -> str:
    """The first line where a cell of the .md and its stored copy differ, both versions."""
    mine, theirs = md_source.splitlines(), stored_source.splitlines()
    for number, (a, b) in enumerate(zip(mine, theirs), start=1):
        if a != b:
            return f"its line {number} is {a[:80]!r} in the .md, {b[:80]!r} in the .ipynb"
    shorter = min(len(mine), len(theirs))
    extra = mine[shorter] if len(mine) > shorter else theirs[shorter]
    side = "the .md" if len(mine) > shorter else "the .ipynb"
    return f"its line {shorter + 1}, {extra[:80]!r}, is only in {side}"


def stale_reasons(md: Path, fresh, stored, force: bool = False) -> list[str]:
    """Why the page must be executed (empty: its stored outputs are reused, copied into fresh)."""
    if force:
        return ["FORCE=1"]
    if stored is None:
        return [f"it has no stored notebook yet ({stored_path(md).name})"]
    record = stored.metadata.get(DIGEST_KEY, {})
    if not python_version(stored):
        return ["it was never executed"]
    if record.get("inputs_sha256") == FAILED_DIGEST or (FAILED_RUNS / stored_path(md).name).is_file():
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
    failed_run = FAILED_RUNS / target.name
    if failed_run.is_file():  # the page's last run failed: the preview shows it, the error in place
        target = failed_run
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
    (runnable_book/pipeline/site_build.py marks a page that failed so that it is re-executed)."""
    itemized = inputs(executed)
    digest = digest or inputs_digest(executed, itemized)
    reader = reader_notebook(md, executed)
    return nbformat.writes(normalized(reader, digest, {**LANGUAGE_INFO, "version": version}, itemized)) + "\n"


def sync_page(md: Path, force: bool = False, twice: bool = True, execute_stale: bool = True) -> PageRun:
    """Rewrite md's stored notebook, executing the page only if its inputs changed.

    Returns what happened: status 'executed', 'updated' (rewritten from the stored outputs)
    or 'unchanged', and for an executed page why and how its outputs changed. With
    ``execute_stale`` False a page that must be executed is left as it is, status 'stale'
    (site_build.sync_outputs: another thread's pages are rewritten while one is executed).
    """
    fresh = read_page(md)
    target = stored_path(md)
    stored = nbformat.read(target, as_version=4) if target.exists() else None
    if stored is not None:
        edited = hand_edit(md, stored)
        if edited:
            raise BookError(edited)
    why = stale_reasons(md, fresh, stored, force)
    if why and not execute_stale:
        return PageRun(md, "stale", why)
    if why:
        try:
            contract = exercise_contract.kernel_cell(md)
            printed = execute(md, fresh, twice=twice, after=contract)
            if contract is not None:
                since = change_report.reasons(stored.metadata.get(DIGEST_KEY, {}).get("inputs") if stored else None,
                                              inputs(fresh))
                problems = exercise_contract.broken(md, fresh, printed, since)
                if problems:
                    raise page_failed(md, fresh, "\n".join(problems))
        except BookError as error:
            error.reasons = why
            raise
    text = reader_text(md, fresh, python_version(fresh if why else stored))
    run = PageRun(md, "executed" if why else "updated", why)
    if why:
        # Against the notebook as last reported: a run stopped before its report may have
        # rewritten it since (change_report.UNREPORTED).
        last_reported = change_report.unreported().get(md.stem)
        before = nbformat.read(last_reported[0], as_version=4) if last_reported and last_reported[0] else (
            None if last_reported else stored)
        # The stored bytes against the stored bytes: the notebook as it is written (normalized:
        # each SVG's ids renamed, streams merged), never the kernel's raw outputs, whose SVG
        # ids differ from the stored ones and so made an unchanged figure look changed.
        run.output_diff = outputs_changed(md, before, nbformat.reads(text, as_version=4))
        # Every executed page, changed outputs or not: a run stopped before its report
        # (Ctrl-C) leaves it up to date, and the next report still names it.
        change_report.remember_unreported(md, target.read_text() if target.exists() else None, why)
    if target.exists() and target.read_text() == text:
        run.status = "executed" if why else "unchanged"
        return run
    write_atomically(target, text)
    return run


def with_unreported_runs(runs: list[PageRun]) -> list[PageRun]:
    """``runs``, with the pages a run stopped before its report rewrote (Ctrl-C, a crash), which
    this run found up to date: each as executed then, its outputs against the last report's."""
    pending = change_report.unreported()
    merged = []
    for run in runs:
        if run.page.stem in pending and run.status in ("unchanged", "updated"):
            last_reported, why = pending[run.page.stem]
            before = nbformat.read(last_reported, as_version=4) if last_reported else None
            now = nbformat.read(stored_path(run.page), as_version=4)
            run = PageRun(run.page, "executed", why, outputs_changed(run.page, before, now), unreported=True)
        merged.append(run)
    return merged


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
    def without_sources_digest(metadata) -> dict:  # (it follows the cells: a differing cell says it)
        metadata = copy.deepcopy(dict(metadata))
        metadata.get(DIGEST_KEY, {}).pop("sources_sha256", None)
        return metadata

    if without_sources_digest(want.metadata) != without_sources_digest(have.metadata):
        found.append(f"its notebook metadata differs (the inputs digest if chapter_lib changed): "
                     f"expected {dict(want.metadata)}, found {dict(have.metadata)}")
    return found or ["its text differs (formatting: rewrite it with `make outputs`)"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["sync", "check"])
    parser.add_argument("--force", action="store_true", help="re-execute every page")
    parser.add_argument("--run-once", action="store_true",
                        help="execute a page once, without comparing two runs (what the comparison costs: make bench-outputs)")
    parser.add_argument("--skip-synced", action="store_true",
                        help="check: leave out the pages whose every input is as the build last synced them "
                             "(runnable_book/pipeline/synced_pages.py; `make check`'s, not `make test`'s)")
    parser.add_argument("pages", nargs="*", type=Path, help="only these .md pages")
    args = parser.parse_intermixed_args(argv)  # (flags before or after the pages)
    pages = [p.resolve() for p in args.pages] or notebook_pages()
    if args.command == "check":
        if args.skip_synced:
            synced = synced_pages.as_synced(pages, failed_run_path)
            pages = [md for md in pages if md not in synced]
        problems = [p for md in pages for p in pairing_problems(md)]
        for p in problems:
            print(p, file=sys.stderr)
        if problems:
            print(f"Run `{REGENERATE}` to regenerate the stored notebooks.", file=sys.stderr)
        return 1 if problems else 0
    runs = []
    try:
        for md in pages:
            runs.append(sync_page(md, force=args.force, twice=not args.run_once))
            print(f"{runs[-1].status:>9}  {shown(stored_path(md))}", flush=True)
    except BookError as err:  # ConversionError too: it names page and cell
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(change_report.report(with_unreported_runs(runs), stored_path, len(notebook_pages())))
    change_report.forget_unreported([run.page for run in runs])
    return 0


if __name__ == "__main__":
    sys.exit(main())
